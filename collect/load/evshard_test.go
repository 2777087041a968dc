package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The n loops' schedules are disjoint, each keeps the single schedule's
// order, and together they are exactly the single schedule: uniform and
// Poisson, for every loop count up to 5.
func TestLoopSchedulesUnionIsTheSchedule(t *testing.T) {
	const arrivals = 3000
	for _, kind := range []Arrivals{Uniform, Poisson} {
		single := newPacer(&Config{Arrivals: kind, Seed: 7}, phasePlan{index: 1, schedRate: 20000}, 1e9)
		want := make([]int64, arrivals)
		for i := range want {
			want[i] = single.next()
		}
		end := want[arrivals-1] + 1
		for n := 1; n <= 5; n++ {
			var union []int64
			for id := range n {
				s := newLoopSchedule(newPacer(&Config{Arrivals: kind, Seed: 7}, phasePlan{index: 1, schedRate: 20000}, 1e9), id, n)
				for k := id; ; k += n {
					at := s.next()
					if at >= end {
						break
					}
					if at != want[k] {
						t.Fatalf("%s, %d loops: loop %d's arrival %d at %d, want the schedule's arrival %d at %d", kind, n, id, (k-id)/n, at, k, want[k])
					}
					union = append(union, at)
				}
			}
			slices.Sort(union)
			if !slices.Equal(union, want) {
				t.Errorf("%s, %d loops: the union of the loops' schedules (%d arrivals) is not the schedule (%d)", kind, n, len(union), len(want))
			}
		}
	}
}

func TestLoopShare(t *testing.T) {
	for _, tc := range []struct{ total, n int }{{50, 2}, {50, 3}, {1, 2}, {7, 7}, {3, 8}} {
		sum := 0
		for id := range tc.n {
			share := loopShare(tc.total, id, tc.n)
			users := 0 // users u with u mod n == id
			for u := range tc.total {
				if u%tc.n == id {
					users++
				}
			}
			if share != users {
				t.Errorf("%d users on %d loops: loop %d runs %d, want %d", tc.total, tc.n, id, share, users)
			}
			sum += share
		}
		if sum != tc.total {
			t.Errorf("%d users on %d loops: the shares add up to %d", tc.total, tc.n, sum)
		}
	}
}

// Loops racing for the shared in-flight cap never hold more than it, and
// take exactly the cap when nothing is released.
func TestAcquireSlotHoldsTheCap(t *testing.T) {
	const limit = 100
	var inflight, taken, peak atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5000 {
				if !acquireSlot(&inflight, limit) {
					continue
				}
				n := inflight.Load()
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				inflight.Add(-1)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > limit {
		t.Errorf("peak %d in flight, cap %d", p, limit)
	}
	inflight.Store(0)
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				if acquireSlot(&inflight, limit) {
					taken.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if taken.Load() != limit || inflight.Load() != limit {
		t.Errorf("took %d slots (in flight %d) without releasing any, want exactly the cap %d", taken.Load(), inflight.Load(), limit)
	}
}

// The loop count: per loopRate of the highest open-model rate, per two Ps
// in the closed model, never more than the Ps, the in-flight cap or the
// users.
func TestEvLoopCount(t *testing.T) {
	for _, tc := range []struct {
		procs int
		cfg   Config
		want  int
	}{
		{2, Config{Rates: []float64{20000}, MaxInflight: 5000}, 1},
		{2, Config{Rates: []float64{60000}, MaxInflight: 5000}, 2},
		{8, Config{Rates: []float64{1000, 60000, 30000}, MaxInflight: 5000}, 3},
		{8, Config{Rates: []float64{1e6}, MaxInflight: 2}, 2},
		{2, Config{Users: 50}, 1},
		{6, Config{Users: 50}, 3},
		{8, Config{Users: 2}, 2},
		{1, Config{Users: 50}, 1},
		// A shard runs its own share: 60,000 req/s dealt to 4 is one loop.
		{8, Config{Rates: []float64{60000}, MaxInflight: 5000, Shard: Shard{Index: 1, Count: 4}}, 1},
	} {
		old := runtime.GOMAXPROCS(tc.procs)
		got := evLoopCount(&tc.cfg)
		runtime.GOMAXPROCS(old)
		if got != tc.want {
			t.Errorf("GOMAXPROCS %d, rates %v, users %d, cap %d: %d loops, want %d", tc.procs, tc.cfg.Rates, tc.cfg.Users, tc.cfg.MaxInflight, got, tc.want)
		}
	}
}

// Precise timeouts for a loop pacing up to preciseLoopRate of its own,
// the default slack above it and in the closed model.
func TestLoopTimerSlack(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		loops int
		want  int
	}{
		{Config{Rates: []float64{2500}}, 1, 1000},
		{Config{Rates: []float64{10000}}, 1, 1000},
		{Config{Rates: []float64{20000}}, 1, 0},
		{Config{Rates: []float64{20000}}, 2, 1000},
		{Config{Rates: []float64{10000, 40000}, Shard: Shard{Index: 0, Count: 4}}, 1, 1000},
		{Config{Users: 50}, 1, 0},
	} {
		if got := loopTimerSlack(&tc.cfg, tc.loops); got != tc.want {
			t.Errorf("rates %v, shard %v, users %d, %d loops: slack %d ns, want %d", tc.cfg.Rates, tc.cfg.Shard, tc.cfg.Users, tc.loops, got, tc.want)
		}
	}
}

func runN(t *testing.T, cfg Config, loops int) *Result {
	t.Helper()
	res, err := runLoops(context.Background(), cfg, loops)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// With three loops, an open-model run sends exactly the single schedule
// (every intended time, each once, numbered 1..N), counts every request
// once, and its merged histograms equal the ones built from the requests'
// own records; a closed-model run's users all run and their counts merge.
func TestEvLoopsMergeExactly(t *testing.T) {
	if !hasEventLoop() {
		t.Skip("no event loop on this system")
	}
	srv, c := serve(t, sleepHandler(0))
	{
		cfg := Config{URL: srv.URL, Rate: 2000, Arrivals: Poisson, Seed: 42, Duration: 500 * time.Millisecond, RecordRequests: true}
		res := runN(t, cfg, 3)
		p := one(t, res)
		pc := newPacer(&Config{Arrivals: Poisson, Seed: 42}, phasePlan{index: 0, schedRate: 2000}, 0)
		var want []int64
		for at := pc.next(); at < int64(cfg.Duration); at = pc.next() {
			want = append(want, at)
		}
		if p.Planned != int64(len(want)) || p.Sent != p.Planned || p.OK != p.Sent || p.NotSent != 0 {
			t.Fatalf("planned %d sent %d ok %d not sent %d, want the schedule's %d all answered", p.Planned, p.Sent, p.OK, p.NotSent, len(want))
		}
		if got := c.total.Load(); got != p.Sent {
			t.Errorf("target received %d, generator sent %d", got, p.Sent)
		}
		if len(res.Requests) != len(want) {
			t.Fatalf("%d records, want %d", len(res.Requests), len(want))
		}
		got := make([]int64, len(res.Requests))
		lat, lag := newHist(), newHist()
		for i, q := range res.Requests {
			if q.Seq != uint64(i+1) {
				t.Fatalf("record %d has seq %d: want each of 1..%d once", i, q.Seq, len(want))
			}
			got[i] = q.IntendedUnixNs
			_ = lat.RecordValue(q.LatencyNs)
			_ = lag.RecordValue(clampNS(q.SentUnixNs - q.IntendedUnixNs))
		}
		slices.Sort(got)
		for i := range got { // the phase's start is unknown to the ns: compare offsets from the first arrival
			if got[i]-got[0] != want[i]-want[0] {
				t.Fatalf("arrival %d intended at +%d ns, the schedule says +%d ns", i, got[i]-got[0], want[i]-want[0])
			}
		}
		if !p.LatencyHist.Equals(lat) || !p.SendLagHist.Equals(lag) {
			t.Errorf("merged histograms (latency %d, lag %d values) differ from the records' (%d, %d)",
				p.LatencyHist.TotalCount(), p.SendLagHist.TotalCount(), lat.TotalCount(), lag.TotalCount())
		}

	}
	// Closed model: 5 users on 3 loops, kept across the warm-up.
	{
		var mu sync.Mutex
		conns := map[string]int{} // requests by the target's view of the connection
		csrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			conns[r.RemoteAddr]++
			mu.Unlock()
		}))
		defer csrv.Close()
		cfg := Config{URL: csrv.URL, Users: 5, Think: 5 * time.Millisecond, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond}
		p := one(t, runN(t, cfg, 3))
		if p.Sent == 0 || p.OK != p.Sent || p.Completed != p.Sent || p.LatencyHist.TotalCount() != p.Completed {
			t.Errorf("closed: sent %d ok %d completed %d, latency histogram %d values", p.Sent, p.OK, p.Completed, p.LatencyHist.TotalCount())
		}
		// Every user ran: each keeps a connection of its own, so the
		// target saw 5 (one loop's users missing would leave 3 or 4). This
		// counted the requests before (at least 200 of about 300), which
		// a busy machine's slower users could breach.
		mu.Lock()
		defer mu.Unlock()
		if len(conns) < 5 {
			t.Errorf("closed: the target saw %d connections of 5 users (%v), %d sent in the phase", len(conns), conns, p.Sent)
		}
		t.Logf("closed: %d sent in the phase by 5 users on %d connections", p.Sent, len(conns))
	}
}

// The shared cap holds across loops: a slow target at a rate above what
// the cap lets through never sees more than the cap at once, and every
// arrival is either sent or counted as not sent.
func TestEvLoopsShareTheCap(t *testing.T) {
	if !hasEventLoop() {
		t.Skip("no event loop on this system")
	}
	srv, c := serve(t, sleepHandler(100*time.Millisecond))
	{
		p := one(t, runN(t, Config{URL: srv.URL, Rate: 400, Duration: 500 * time.Millisecond, MaxInflight: 6}, 4))
		if p.Planned != 200 || p.Sent+p.NotSent != p.Planned || p.NotSent == 0 {
			t.Errorf("planned %d sent %d not sent %d: want 200 planned, some not sent, the two adding up", p.Planned, p.Sent, p.NotSent)
		}
		if peak := c.peakSeen.Load(); peak > 6 || p.PeakInFlight > 6 {
			t.Errorf("target saw %d at once, generator peak %d: want at most the cap 6", peak, p.PeakInFlight)
		}
		if got := c.total.Load(); got != p.Sent {
			t.Errorf("target received %d, generator sent %d", got, p.Sent)
		}
	}
}

// The open model's behaviours hold on three loops: a warmed-up ladder with
// pauses plans and answers exactly each phase's schedule (and the interval
// callback sees every latency), requests to a stalled target all time out
// at about the timeout, and a cancelled run stops at once with the
// abandoned requests unfinished.
func TestEvLoopsOpenModel(t *testing.T) {
	if !hasEventLoop() {
		t.Skip("no event loop on this system")
	}
	if testing.Short() {
		t.Skip("2.5 s of loopback load on three loops")
	}
	t.Run("ladder", func(t *testing.T) {
		srv, c := serve(t, sleepHandler(0))
		var mu sync.Mutex
		intervals := map[int]int64{}
		res := runN(t, Config{URL: srv.URL, Rates: []float64{50, 100}, Warmup: 300 * time.Millisecond,
			Duration: 500 * time.Millisecond, Pause: 200 * time.Millisecond, IntervalEvery: 100 * time.Millisecond,
			Interval: func(iv Interval) {
				mu.Lock()
				defer mu.Unlock()
				intervals[iv.Phase] += iv.Latency.TotalCount()
			}}, 3)
		if res.Warmup == nil || res.Warmup.Planned != 15 || res.Warmup.OK != 15 || len(res.Phases) != 2 {
			t.Fatalf("warm-up %+v, %d phases: want 15 planned and answered, then 2 phases", res.Warmup, len(res.Phases))
		}
		for i, want := range []int64{25, 50} {
			if p := res.Phases[i]; p.Planned != want || p.OK != want || p.LatencyHist.TotalCount() != want {
				t.Errorf("phase %d: planned %d ok %d latencies %d, want %d each", i, p.Planned, p.OK, p.LatencyHist.TotalCount(), want)
			}
		}
		if c.total.Load() != 90 {
			t.Errorf("target got %d requests, want 15+25+50", c.total.Load())
		}
		mu.Lock()
		defer mu.Unlock()
		for idx, want := range map[int]int64{0: 15, 2: 25, 4: 50} {
			if intervals[idx] != want {
				t.Errorf("intervals of phase %d hold %d latencies, want %d", idx, intervals[idx], want)
			}
		}
	})
	t.Run("timeouts", func(t *testing.T) {
		srv, _ := serveStalled(t)
		p := one(t, runN(t, Config{URL: srv.URL, Rate: 30, Duration: 500 * time.Millisecond, Timeout: 100 * time.Millisecond}, 3))
		if p.Sent != 15 || p.Errors.Timeout != p.Sent || p.Completed != p.Sent {
			t.Fatalf("sent %d completed %d timeouts %d: want all 15 to time out", p.Sent, p.Completed, p.Errors.Timeout)
		}
		// Timeouts are timed: at about the timeout. Never before it (from
		// the send; HDR's 3 digits aside), and not much after it but for
		// the generator's own lateness, which its send lag measures in the
		// same run (a busy machine delays noticing a deadline as it
		// delays a send; a 400-ms bound on the latency alone did not
		// allow for it).
		if svc, late := p.Service.P50, p.SendLag.Max; svc < 99.9 || svc > 400+late {
			t.Errorf("timed-out service time p50 = %.1f ms (send lag max %.1f ms), want about 100", svc, late)
		}
	})
	t.Run("interrupt", func(t *testing.T) {
		srv, _ := serve(t, sleepHandler(2*time.Second))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(300*time.Millisecond, cancel)
		t0 := time.Now()
		res, err := runLoops(ctx, Config{URL: srv.URL, Rate: 100, Duration: 5 * time.Second}, 3)
		if err != nil {
			t.Fatal(err)
		}
		// Not stopped it would run its 5 s; stopped, about 0.3 s.
		if took := time.Since(t0); took > 3*time.Second {
			t.Errorf("Run took %v, want it to stop at the cancellation", took)
		}
		p := one(t, res)
		if !res.Interrupted || p.Sent < 20 || p.Unfinished != p.Sent || p.Errors.Total() != 0 {
			t.Errorf("interrupted %v sent %d unfinished %d errors %d: want the abandoned requests unfinished", res.Interrupted, p.Sent, p.Unfinished, p.Errors.Total())
		}
	})
}
