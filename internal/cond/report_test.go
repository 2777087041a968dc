package cond

import (
	"testing"
	"time"

	"github.com/schedscope/schedscope/analyze"
)

func TestReportSource(t *testing.T) {
	r := &analyze.Report{}
	r.Pinned.Events = []analyze.PinnedEvent{{Kind: "cgo"}, {Kind: "cgo"}, {Kind: "locked"}}
	r.Pinned.Dropped = 4
	r.Pinned.LockedGoroutines = []analyze.LockedGoroutine{{GoID: 7}}
	r.Sched.PercentilesNs = analyze.Percentiles{P50: 1000, P90: 2000, P95: 3500, P99: int64(7200 * time.Microsecond), P999: 9e6, Max: 12e6}
	r.Sched.TotalNs, r.Sched.Compat.TotalNs = 5e9, 4e9
	r.Sched.Creation.PercentilesNs.P99 = 3000
	r.Sleep.Sites = []analyze.SleepSite{
		{Overshoot: &analyze.Distribution{PercentilesNs: analyze.Percentiles{P99: 2e6, Max: 3e6}}},
		{}, // no known request: no overshoot
		{Overshoot: &analyze.Distribution{PercentilesNs: analyze.Percentiles{P99: 1e6, Max: 8e6}}},
	}
	r.Goroutines.Peak, r.Threads.Peak, r.GC.STWMaxNs = 19, 3, 250e3
	src := ReportSource(r)
	want := map[string]float64{
		"pinned": 7, "pinned.cgo": 2, "pinned.syscall": 0, "pinned.locked": 1, "locked": 1,
		"sched.p50": 1000, "sched.p90": 2000, "sched.p95": 3500, "sched.p99": 7.2e6, "sched.p999": 9e6, "sched.max": 12e6,
		"sched.total": 5e9, "sched.compat.total": 4e9, "creation.p99": 3000,
		"sleep.overshoot.p99": 2e6, "sleep.overshoot.max": 8e6,
		"goroutines.peak": 19, "threads.peak": 3, "gc.stw.max": 250e3, "lost.pct": 0,
	}
	for _, m := range Metrics(Trace) {
		v, ok := src.Value(m.Name)
		w, known := want[m.Name]
		if !ok || !known || v != w {
			t.Errorf("%s = %g, %v; want %g (listed in the test: %v)", m.Name, v, ok, w, known)
		}
	}
	if len(want) != len(Metrics(Trace)) {
		t.Errorf("the test checks %d metrics, the trace context has %d", len(want), len(Metrics(Trace)))
	}
	for _, name := range []string{"p99", "not_sent", "bogus", ""} {
		if _, ok := src.Value(name); ok {
			t.Errorf("%q readable from a report", name)
		}
	}
	r.Loss = &analyze.Loss{LostPct: 12.5}
	if v, _ := src.Value("lost.pct"); v != 12.5 {
		t.Errorf("lost.pct = %g after a loss, want 12.5", v)
	}

	// The --fail-on path: parse for the trace, evaluate, explain.
	for _, tc := range []struct {
		cond, explain string
		held          bool
	}{
		{"sched.p99>5ms", "sched.p99 = 7.2ms > 5ms", true},
		{"pinned.cgo == 2", "pinned.cgo = 2 == 2", true},
		{"pinned.syscall>0", "pinned.syscall = 0 > 0", false},
		{"lost.pct>10%", "lost.pct = 12.5% > 10%", true},
		{"sleep.overshoot.max<=5ms", "sleep.overshoot.max = 8ms <= 5ms", false},
	} {
		c, err := Parse(tc.cond, Trace)
		if err != nil {
			t.Fatal(err)
		}
		v, held, ok := c.Eval(src)
		if !ok || held != tc.held || c.Explain(v) != tc.explain {
			t.Errorf("%s: held %v ok %v %q; want held %v, %q", tc.cond, held, ok, c.Explain(v), tc.held, tc.explain)
		}
	}
}
