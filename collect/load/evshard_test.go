package load

import (
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
		single := newPacer(kind, 20000, 1e9, 7, 1)
		want := make([]int64, arrivals)
		for i := range want {
			want[i] = single.next()
		}
		end := want[arrivals-1] + 1
		for n := 1; n <= 5; n++ {
			var union []int64
			for id := range n {
				s := newLoopSchedule(newPacer(kind, 20000, 1e9, 7, 1), id, n)
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

// withProcs runs f with GOMAXPROCS n: the event loop count follows it.
func withProcs(t *testing.T, n int, f func()) {
	t.Helper()
	old := runtime.GOMAXPROCS(n)
	defer runtime.GOMAXPROCS(old)
	f()
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
	withProcs(t, 3, func() {
		cfg := Config{URL: srv.URL, Rate: 2000, Arrivals: Poisson, Seed: 42, Duration: 500 * time.Millisecond, RecordRequests: true}
		d, err := cfg.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if n := evLoopCount(&d); n != 3 {
			t.Fatalf("GOMAXPROCS 3: %d loops, want 3", n)
		}
		res := mustRun(t, cfg)
		p := one(t, res)
		pc := newPacer(Poisson, 2000, 0, 42, 0)
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

	})
	// Closed model: 5 users on 3 loops (one per two Ps), kept across the
	// warm-up.
	withProcs(t, 6, func() {
		cfg := Config{URL: srv.URL, Users: 5, Think: 5 * time.Millisecond, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond}
		if n := evLoopCount(&cfg); n != 3 {
			t.Fatalf("GOMAXPROCS 6, closed model: %d loops, want 3", n)
		}
		p := one(t, mustRun(t, cfg))
		if p.Sent == 0 || p.OK != p.Sent || p.Completed != p.Sent || p.LatencyHist.TotalCount() != p.Completed {
			t.Errorf("closed: sent %d ok %d completed %d, latency histogram %d values", p.Sent, p.OK, p.Completed, p.LatencyHist.TotalCount())
		}
		// 5 users each sending every 5 ms or so for 300 ms: about 300; one
		// loop's users missing would leave at most 3/5 of that.
		if p.Sent < 200 {
			t.Errorf("closed: %d sent by 5 users thinking 5 ms for 300 ms, want about 300", p.Sent)
		}
	})
}

// The shared cap holds across loops: a slow target at a rate above what
// the cap lets through never sees more than the cap at once, and every
// arrival is either sent or counted as not sent.
func TestEvLoopsShareTheCap(t *testing.T) {
	if !hasEventLoop() {
		t.Skip("no event loop on this system")
	}
	srv, c := serve(t, sleepHandler(100*time.Millisecond))
	withProcs(t, 4, func() {
		p := one(t, mustRun(t, Config{URL: srv.URL, Rate: 400, Duration: 500 * time.Millisecond, MaxInflight: 6}))
		if p.Planned != 200 || p.Sent+p.NotSent != p.Planned || p.NotSent == 0 {
			t.Errorf("planned %d sent %d not sent %d: want 200 planned, some not sent, the two adding up", p.Planned, p.Sent, p.NotSent)
		}
		if peak := c.peakSeen.Load(); peak > 6 || p.PeakInFlight > 6 {
			t.Errorf("target saw %d at once, generator peak %d: want at most the cap 6", peak, p.PeakInFlight)
		}
		if got := c.total.Load(); got != p.Sent {
			t.Errorf("target received %d, generator sent %d", got, p.Sent)
		}
	})
}
