package analyze

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/trace"
	"sync"
	"testing"
	"time"
)

// request runs handler the way collect/agent's Middleware does: a task, the
// request log, the handler region.
func request(ctx context.Context, id string, intended time.Time, handler func(context.Context)) {
	ctx, task := trace.NewTask(ctx, RequestTaskType)
	defer task.End()
	msg := fmt.Sprint(time.Now().UnixNano())
	if id != "" {
		msg += fmt.Sprintf(" %s %d", id, intended.UnixNano())
	}
	trace.Log(ctx, RequestLogCategory, msg)
	trace.WithRegion(ctx, HandlerRegionType, func() { handler(ctx) })
}

// traced runs f under the execution tracer and analyzes the trace.
func traced(t *testing.T, opts Options, f func()) *RequestsReport {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("tracer busy: %v", err)
	}
	f()
	trace.Stop()
	r, err := Trace(context.Background(), &buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests == nil {
		t.Fatal("no requests report")
	}
	return r.Requests
}

func pct(shares []Share, st State, pool string) float64 {
	var p float64
	for _, s := range shares {
		if s.State == st && s.Pool == pool {
			p += s.Pct
		}
	}
	return p
}

func band(t *testing.T, r *RequestsReport, name string) Band {
	t.Helper()
	for _, b := range r.Bands {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("no band %q in %+v", name, r.Bands)
	return Band{}
}

// serial runs n requests one after another.
func serial(n int, handler func(context.Context)) {
	for i := range n {
		request(context.Background(), fmt.Sprintf("t-%d", i+1), time.Now(), handler)
	}
}

// TestAnatomySleep: a request that sleeps spends its time asleep. Noise
// (a thread the kernel ran late, -race's bookkeeping) adds running and
// runnable time to each request; a 20 ms sleep leaves it 2 ms of the median
// request before the 90 % bound, where a quiet machine adds tens of
// microseconds.
func TestAnatomySleep(t *testing.T) {
	r := traced(t, Options{}, func() {
		serial(20, func(context.Context) { time.Sleep(20 * time.Millisecond) })
	})
	if r.Requests != 20 || !r.PerRequest || r.Joined != 20 {
		t.Fatalf("requests %d per-request %v joined %d, want 20 true 20", r.Requests, r.PerRequest, r.Joined)
	}
	if p := pct(band(t, r, "<=p50").Split, StateSleep, ""); p < 90 {
		t.Errorf("sleep is %.1f%% of the p50 band, want >= 90: %+v", p, band(t, r, "<=p50").Split)
	}
	if len(r.Slowest) == 0 || len(r.Slowest[0].Timeline) == 0 {
		t.Errorf("no timeline for the slowest request: %+v", r.Slowest)
	}
}

func TestAnatomyPoolWaitRegion(t *testing.T) {
	sem := make(chan struct{}, 1)
	r := traced(t, Options{}, func() {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				request(context.Background(), fmt.Sprintf("t-%d", i+1), time.Now(), func(ctx context.Context) {
					rg := trace.StartRegion(ctx, WaitRegionPrefix+"db")
					sem <- struct{}{}
					rg.End()
					time.Sleep(5 * time.Millisecond)
					<-sem
				})
			})
		}
		wg.Wait()
	})
	// The p99 request waited behind 7 others' 5 ms in the pool and slept
	// 5 ms itself: about 87 % pool. Noise stretches the others' holds as
	// much as its own, so it moves the share little.
	b := band(t, r, ">=p99")
	if p := pct(b.Split, StatePool, "db"); p < 70 {
		t.Errorf("pool db is %.1f%% of the p99 band, want >= 70: %+v", p, b.Split)
	}
}

func TestAnatomyFanoutAndWorker(t *testing.T) {
	work := make(chan func(), 1)
	var workers sync.WaitGroup
	workers.Go(func() {
		for f := range work {
			f()
		}
	})
	r := traced(t, Options{}, func() {
		// Fan-out: three children sleeping, 20 ms so that noise (a child or
		// its parent run late) has 4 ms before the 80 % bounds.
		serial(5, func(ctx context.Context) {
			var wg sync.WaitGroup
			for range 3 {
				wg.Go(func() { time.Sleep(20 * time.Millisecond) })
			}
			wg.Wait()
		})
		// A worker running the request's work in a region of its context.
		serial(5, func(ctx context.Context) {
			done := make(chan struct{})
			rg := trace.StartRegion(ctx, WaitRegionPrefix+"workers")
			work <- func() {
				trace.WithRegion(ctx, "schedscope.work", func() { time.Sleep(20 * time.Millisecond) })
				close(done)
			}
			<-done
			rg.End()
		})
	})
	close(work)
	workers.Wait()
	var fan int
	for _, rq := range r.Slowest {
		if pct(rq.Split, StateFanout, "") >= 80 && pct(rq.Children, StateSleep, "") >= 80 && rq.ChildGoroutines >= 1 {
			fan++
		}
	}
	if fan < 8 {
		t.Errorf("%d of 10 requests waited >= 80%% on children that slept, want >= 8: %+v", fan, r.Slowest)
	}
}

func TestAnatomyCPU(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	r := traced(t, Options{}, func() {
		var wg sync.WaitGroup
		for i := range 4 * procs {
			wg.Go(func() {
				request(context.Background(), fmt.Sprintf("t-%d", i+1), time.Now(), func(context.Context) { spin(20 * time.Millisecond) })
			})
		}
		wg.Wait()
	})
	// Noise cannot move these much: a thread the kernel took away shows as
	// running (the goroutine still holds its P), and the p99 request waited
	// for three others' 20 ms spins (about 75 % runnable).
	b := band(t, r, ">=p99")
	if p := pct(b.Split, StateRunning, "") + pct(b.Split, StateRunnable, ""); p < 80 {
		t.Errorf("running + runnable is %.1f%% of the p99 band, want >= 80: %+v", p, b.Split)
	}
	if p := pct(b.Split, StateRunnable, ""); p < 30 {
		t.Errorf("runnable is %.1f%% of the p99 band with %d goroutines on %d Ps, want >= 30", p, 4*procs, procs)
	}
}

// TestAnatomyClientJoin: a request the client dated is measured from the
// client's send to its answer. The times are taken inside the trace (the
// tracer's start took over 20 ms on a busy machine, which once made a
// request dated before it the slowest), and the client's 50 ms latency
// leaves a 5 ms handler 42 ms of noise before its "after" part would vanish.
func TestAnatomyClientJoin(t *testing.T) {
	const latency = 50 * time.Millisecond
	client := map[int64]ClientRequest{} // filled in f, read after it
	r := traced(t, Options{RequestTag: "run1", Client: client}, func() {
		intended := time.Now().Add(-3 * time.Millisecond) // sent 3 ms before the handler starts
		client[7] = ClientRequest{SentUnixNs: intended.UnixNano() + int64(time.Millisecond), LatencyNs: int64(latency)}
		request(context.Background(), "run1-7", intended, func(context.Context) { time.Sleep(5 * time.Millisecond) })
		request(context.Background(), "other-8", time.Now(), func(context.Context) {})
		request(context.Background(), "", time.Time{}, func(context.Context) {})
	})
	// other-8 is another run's id: left out of the join, not joined.
	if r.Requests != 3 || r.Joined != 1 || r.ClientJoined != 1 || r.IDsLeftOut != (IDsLeftOut{ForeignTag: 1}) {
		t.Fatalf("requests %d joined %d client %d, left out %+v; want 3 1 1, one with a foreign tag", r.Requests, r.Joined, r.ClientJoined, r.IDsLeftOut)
	}
	rq := r.Slowest[0]
	if rq.Seq != 7 || rq.TotalNs != int64(latency) || !rq.ClientJoined {
		t.Fatalf("slowest %+v, want seq 7 with the client's %v", rq, latency)
	}
	var before, after, lag int64
	for _, s := range rq.Split {
		switch s.State {
		case StateLag:
			lag = s.Ns
			before += s.Ns
		case StateSocket, StateBefore:
			before += s.Ns
		case StateAfter:
			after = s.Ns
		}
	}
	if lag != int64(time.Millisecond) {
		t.Errorf("send lag %v, want the 1 ms between the intended and the actual send", time.Duration(lag))
	}
	// The parts add up to the total, to the float32 they are kept in (a
	// part over 2^24 ns, 16.8 ms, rounds to 8 ns or so).
	if sum := before + after + rq.HandlerNs; before < int64(3*time.Millisecond) || after <= 0 || sum < rq.TotalNs-rq.TotalNs>>22 || sum > rq.TotalNs+rq.TotalNs>>22 {
		t.Errorf("before %v + handler %v + after %v, want >= 3ms + handler + > 0 = %v",
			time.Duration(before), time.Duration(rq.HandlerNs), time.Duration(after), time.Duration(rq.TotalNs))
	}
}

// TestAnatomyIDsLeftOut: any client can send a well-formed request id;
// only this run's, intended within the run's window and as the
// generator recorded it, is joined. Three forged ones with an old intended
// time made the p99 band "16m40s or more", 100 % send lag.
func TestAnatomyIDsLeftOut(t *testing.T) {
	now := time.Now()
	old := now.Add(-1000 * time.Second)
	ns := func(t time.Time) int64 { return t.UnixNano() }
	opts := Options{RequestTag: "run1", IntendedFrom: ns(now.Add(-time.Minute)), IntendedTo: ns(now.Add(time.Minute)),
		Client: map[int64]ClientRequest{
			7: {IntendedUnixNs: ns(now), SentUnixNs: ns(now), LatencyNs: int64(time.Millisecond)},
			8: {IntendedUnixNs: ns(now), SentUnixNs: ns(now), LatencyNs: int64(time.Millisecond)},
			9: {IntendedUnixNs: ns(now.Add(-time.Second)), SentUnixNs: ns(now), LatencyNs: int64(time.Millisecond)},
		}}
	r := traced(t, opts, func() {
		noop := func(context.Context) {}
		request(context.Background(), "run1-7", now, noop)
		request(context.Background(), "run1-8", old, noop)                    // before the run's window
		request(context.Background(), "run1-9", now, noop)                    // not the recorded request 9
		request(context.Background(), "run1-10", now.Add(time.Hour), noop)    // after the window
		request(context.Background(), "other-7", old, noop)                   // another run's (or a forger's)
		request(context.Background(), "run1-11", now.Add(-time.Second), noop) // in the window, not recorded: joined
		request(context.Background(), "", time.Time{}, noop)
	})
	want := IDsLeftOut{ForeignTag: 1, OutsideWindow: 2, NotTheRecord: 1}
	if r.Requests != 7 || r.Joined != 2 || r.ClientJoined != 1 || r.IDsLeftOut != want || r.IDsLeftOut.Total() != 4 {
		t.Errorf("requests %d joined %d client %d, left out %+v; want 7 2 1, %+v", r.Requests, r.Joined, r.ClientJoined, r.IDsLeftOut, want)
	}
	for _, rq := range r.Slowest {
		if rq.TotalNs >= int64(100*time.Second) || rq.Seq != 0 && rq.Seq != 7 && rq.Seq != 11 {
			t.Errorf("request %+v: a left-out id's intended time was taken", rq)
		}
	}
	for _, b := range r.Bands {
		if b.FromNs >= int64(100*time.Second) {
			t.Errorf("band %s from %v: a left-out id's intended time was taken", b.Name, time.Duration(b.FromNs))
		}
	}
}

func TestAnatomyWithoutTasks(t *testing.T) {
	r := traced(t, Options{}, func() {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { spin(5 * time.Millisecond) })
		}
		wg.Wait()
	})
	if r.PerRequest || r.Note == "" || len(r.Bands) != 0 || len(r.Classes) == 0 {
		t.Fatalf("a trace without tasks: %+v, want the per-class split and a note", r)
	}
}

func spin(d time.Duration) {
	end := time.Now().Add(d)
	x := 1
	for time.Now().Before(end) {
		for i := range 1000 {
			x = x*31 + i
		}
	}
	_ = x
}
