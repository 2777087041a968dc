package load

import (
	"bufio"
	"context"
	"io"
	"math"
	"net"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// engines runs f once per engine: the event loop (where the
// system has one) and a goroutine per connection.
func engines(t *testing.T, f func(t *testing.T, goroutines bool)) {
	t.Helper()
	for _, g := range []bool{false, true} {
		name := "event-loop"
		if g {
			name = "goroutines"
		}
		t.Run(name, func(t *testing.T) { f(t, g) })
	}
}

func hasEventLoop() bool {
	return runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64")
}

// The result names the engine that sent the requests.
func TestEngineReported(t *testing.T) {
	srv, _ := serve(t, sleepHandler(0))
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: srv.URL, Rate: 100, Duration: 100 * time.Millisecond}, "event-loop"},
		{Config{URL: srv.URL, Rate: 100, Duration: 100 * time.Millisecond, Goroutines: true}, "goroutines"},
		{Config{URL: srv.URL, Rate: 100, Duration: 100 * time.Millisecond, Client: NetHTTP}, "goroutines"},
		{Config{URL: srv.URL, Users: 1, Duration: 100 * time.Millisecond}, "event-loop"},
		{Config{URL: srv.URL, Users: 1, Duration: 100 * time.Millisecond, Goroutines: true}, "goroutines"},
	} {
		if tc.want == "event-loop" && !hasEventLoop() {
			tc.want = "goroutines"
		}
		res := mustRun(t, tc.cfg)
		if res.Engine != tc.want {
			t.Errorf("%+v: engine %q, want %q", tc.cfg, res.Engine, tc.want)
		}
		if p := one(t, res); p.OK != p.Sent || p.Sent == 0 {
			t.Errorf("%q: sent %d ok %d", res.Engine, p.Sent, p.OK)
		}
	}
}

// Every response shape the parsers know arrives intact over keep-alive
// connections, in both engines.
func TestEnginesReadResponses(t *testing.T) {
	if testing.Short() {
		t.Skip("2.5 s of loopback load per engine")
	}
	engines(t, func(t *testing.T, goroutines bool) {
		for _, tc := range parseCases {
			url := rawServer(t, false, tc.resp, tc.resp, tc.resp, tc.resp)
			res := mustRun(t, Config{URL: url, Method: tc.method, Rate: 100, Duration: 100 * time.Millisecond, Goroutines: goroutines})
			p := one(t, res)
			if p.Sent != 10 || p.Completed != 10 || p.Errors.Total() != p.Errors.Status {
				t.Errorf("%s: sent %d completed %d errors %+v, want 10 answered", tc.name, p.Sent, p.Completed, p.Errors)
			}
		}
	})
}

// A server that reads the next request on a kept-alive connection and then
// closes it unanswered (the race of a server closing an idle connection
// just as the client reuses it): the request is retried once on a fresh
// connection, so every request is answered and none counts as an error.
func TestEnginesRetryStaleConnection(t *testing.T) {
	engines(t, func(t *testing.T, goroutines bool) {
		var dropped atomic.Int64
		url := connServer(t, func(c net.Conn) {
			br := bufio.NewReader(c)
			if readRequest(br) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				if readRequest(br) {
					dropped.Add(1)
				}
			}
		})
		res := mustRun(t, Config{URL: url, Rate: 200, Duration: 300 * time.Millisecond, Goroutines: goroutines})
		p := one(t, res)
		if p.OK != 60 || p.Errors.Total() != 0 {
			t.Errorf("ok %d errors %+v, want all 60 answered", p.OK, p.Errors)
		}
		if dropped.Load() == 0 {
			t.Errorf("the server never dropped a reused connection's request: the retry went untested")
		}
	})
}

// A cold start at a rate that needs about 60 connections, more than
// maxDials: every request is sent and answered, whether it found an idle
// connection, dialled one, or waited for one (how many waited depends on
// how fast the dials complete, so it is not asserted).
func TestEnginesColdStartManyConnections(t *testing.T) {
	engines(t, func(t *testing.T, goroutines bool) {
		srv, c := serve(t, sleepHandler(30*time.Millisecond))
		res := mustRun(t, Config{URL: srv.URL, Rate: 2000, Duration: 300 * time.Millisecond, Goroutines: goroutines})
		p := one(t, res)
		if p.Sent != 600 || p.OK != 600 || p.NotSent != 0 {
			t.Errorf("sent %d ok %d not sent %d, want all 600 answered", p.Sent, p.OK, p.NotSent)
		}
		// 2,000 req/s x 30 ms: about 60 in progress at once, more than the
		// 8 concurrent dials. A busy machine spreads the load over a longer
		// time, so the bound is Little's law at the target, exactly: the
		// 600 handlers slept at least 30 ms each within the run, so on
		// average at least 600 x 30 ms / the run's length ran at once, and
		// the peak is no lower (it was: at least 40).
		atOnce := math.Floor(float64(p.OK) * 0.030 / res.ElapsedS)
		if peak := c.peakSeen.Load(); float64(peak) < atOnce {
			t.Errorf("target saw at most %d requests at once, want at least %.0f (600 x 30 ms in %.3f s)", peak, atOnce, res.ElapsedS)
		}
		if atOnce <= maxDials {
			t.Logf("the run took %.3f s: at least %.0f at once, not more than the %d dials; the cold start past them not shown", res.ElapsedS, atOnce, maxDials)
		}
		t.Logf("peak %d at the target, at least %.0f at once by Little's law, run %.3f s", c.peakSeen.Load(), atOnce, res.ElapsedS)
	})
}

// Cancelling a run against a target that never accepts (connections land
// in its backlog; nothing is ever answered) stops at once and accounts for
// every request sent.
func TestEnginesCancelWhileDialling(t *testing.T) {
	engines(t, func(t *testing.T, goroutines bool) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		res, err := Run(ctx, Config{URL: "http://" + ln.Addr().String() + "/", Rate: 500, Duration: 10 * time.Second,
			Timeout: 15 * time.Second, Goroutines: goroutines})
		if err != nil {
			t.Fatal(err)
		}
		// A run that did not stop at the cancellation lasts its 10 s; one
		// that did ends about 0.4 s in, and a busy machine would have to
		// delay it by 4.6 s to reach the bound.
		if took := time.Since(t0); took > 5*time.Second {
			t.Errorf("Run took %v after a cancellation at 400 ms of a 10-s run", took)
		}
		p := one(t, res)
		if !res.Interrupted || p.Sent == 0 || p.OK != 0 {
			t.Errorf("interrupted %v sent %d ok %d", res.Interrupted, p.Sent, p.OK)
		}
		if p.Completed+p.Unfinished != p.Sent {
			t.Errorf("completed %d + unfinished %d != sent %d: requests lost", p.Completed, p.Unfinished, p.Sent)
		}
	})
}

// Closed-model users think between requests, keep their connections
// across phases (warm-up, then steady), and never exceed their number.
func TestEnginesClosedModelThink(t *testing.T) {
	engines(t, func(t *testing.T, goroutines bool) {
		srv, c := serve(t, sleepHandler(0))
		// The control: how long a 20-ms sleep takes on this machine while
		// the run goes on (a busy machine wakes a user's think late).
		var naps []time.Duration
		probed := make(chan struct{})
		go func() {
			defer close(probed)
			for range 15 {
				t0 := time.Now()
				time.Sleep(20 * time.Millisecond)
				naps = append(naps, time.Since(t0))
			}
		}()
		res := mustRun(t, Config{URL: srv.URL, Users: 3, Think: 20 * time.Millisecond, Warmup: 100 * time.Millisecond,
			Duration: 400 * time.Millisecond, Goroutines: goroutines})
		<-probed
		slices.Sort(naps)
		p := one(t, res)
		// 3 users x 400 ms / (20 ms think + a fast response): about 55-60,
		// never more than 63 (the think is never short); at least half of
		// what the measured think and latency allow.
		cycle := naps[len(naps)/2] + time.Duration(p.Latency.Mean*float64(time.Millisecond))
		if want := 3 * float64(400*time.Millisecond) / float64(cycle); float64(p.OK) < want/2 || p.OK > 63 || p.Errors.Total() != 0 {
			t.Errorf("ok %d errors %+v, want about 3 x 400 ms / %v (a 20-ms sleep here, and the latency) = %.0f answered, at most 63", p.OK, p.Errors, cycle, want)
		}
		if peak := c.peakSeen.Load(); peak > 3 {
			t.Errorf("target saw %d requests at once with 3 users", peak)
		}
	})
}

func TestPlannedDuration(t *testing.T) {
	cfg := Config{URL: "http://127.0.0.1:1/", Rates: []float64{1, 2, 3}, Warmup: time.Second, Duration: 2 * time.Second, Pause: 500 * time.Millisecond}
	// warm-up 1 s, three 2 s steps, a pause before each step: 8.5 s.
	if got := cfg.PlannedDuration(); got != 8500*time.Millisecond {
		t.Errorf("PlannedDuration = %v, want 8.5s", got)
	}
	if got := (Config{URL: "http://127.0.0.1:1/"}).PlannedDuration(); got != 0 {
		t.Errorf("PlannedDuration of a config without a rate or users = %v, want 0", got)
	}
}
