package collect

import (
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/rundir"
)

// A full live update: every metric of the live context reads its figure,
// in the metric's base unit.
func TestLiveSource(t *testing.T) {
	l := &Live{
		Load: load.Progress{Completed: 10, Elapsed: 2 * time.Second, IntervalP50: 40 * time.Millisecond,
			IntervalP95: 400 * time.Millisecond, IntervalP99: 600 * time.Millisecond, OKPerS: 95.5, InFlight: 12, NotSent: 3,
			Errors: load.ErrorCounts{Status: 1, Timeout: 2}},
		Target: rundir.TargetPoint{HasAgent: true, Goroutines: 230, Runnable: 4, Threads: 9, CPUCores: 1.5,
			SchedLatencyP99MS: 2.5, GCPauseMaxMS: 0.25},
	}
	want := map[string]float64{
		"p50": 40e6, "p95": 400e6, "p99": 600e6, "ok_per_s": 95.5, "in_flight": 12, "not_sent": 3, "errors": 3,
		"goroutines": 230, "runnable": 4, "threads": 9, "cpu": 1.5, "sched.p99": 2.5e6, "gc.stw.max": 250e3,
	}
	src := LiveSource(l)
	for _, m := range cond.Metrics(cond.Live) {
		v, ok := src.Value(m.Name)
		w, known := want[m.Name]
		if !ok || !known || v != w {
			t.Errorf("%s = %g, %v; want %g (listed in the test: %v)", m.Name, v, ok, w, known)
		}
	}
	if len(want) != len(cond.Metrics(cond.Live)) {
		t.Errorf("the test checks %d metrics, the live context has %d", len(want), len(cond.Metrics(cond.Live)))
	}
	for _, name := range []string{"pinned", "sched.p50", "not-sent", ""} {
		if _, ok := src.Value(name); ok {
			t.Errorf("%q readable from a live update", name)
		}
	}
}

// What a live update cannot tell yet never holds: latency before anything
// completed, 2xx/s in a phase's first second, the target's figures before a
// poll answered (threads and CPU may come from /proc alone).
func TestLiveSourceUnreadable(t *testing.T) {
	parse := func(s string) cond.Condition {
		t.Helper()
		c, err := cond.Parse(s, cond.Live)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	p99 := parse("p99>500ms")
	hot := &Live{Load: load.Progress{Completed: 10, IntervalP99: 600 * time.Millisecond}}
	cold := &Live{Load: load.Progress{Completed: 10, IntervalP99: 400 * time.Millisecond}}
	empty := &Live{Load: load.Progress{IntervalP99: time.Second}} // nothing completed yet
	if !p99.Holds(LiveSource(hot)) || p99.Holds(LiveSource(cold)) || p99.Holds(LiveSource(empty)) {
		t.Errorf("p99>500ms: hot %v cold %v empty %v", p99.Holds(LiveSource(hot)), p99.Holds(LiveSource(cold)), p99.Holds(LiveSource(empty)))
	}
	if c := parse("ok_per_s<100"); c.Holds(LiveSource(&Live{Load: load.Progress{Elapsed: time.Second / 2}})) {
		t.Error("ok_per_s<100 held in the phase's first second")
	}
	noAgent := &Live{Target: rundir.TargetPoint{Goroutines: 500, Threads: 7, HasProc: true}}
	if c := parse("goroutines>100"); c.Holds(LiveSource(noAgent)) {
		t.Error("a goroutine condition held without an agent reading")
	}
	if c := parse("sched.p99<1ms"); c.Holds(LiveSource(noAgent)) {
		t.Error("a sched.p99 condition held without an agent reading")
	}
	if c := parse("threads>5"); !c.Holds(LiveSource(noAgent)) {
		t.Error("threads>5 did not hold on /proc's 7 threads")
	}
	if c := parse("threads>5"); c.Holds(LiveSource(&Live{Target: rundir.TargetPoint{Threads: 7}})) {
		t.Error("threads>5 held before any poll")
	}
}

func TestFirstHeld(t *testing.T) {
	cs, err := cond.ParseList("p99>1s, not_sent>0, errors>0", cond.Live)
	if err != nil {
		t.Fatal(err)
	}
	l := &Live{Load: load.Progress{Completed: 5, IntervalP99: 2 * time.Millisecond, NotSent: 1, Errors: load.ErrorCounts{Other: 1}}}
	if c, ok := firstHeld(cs, LiveSource(l)); !ok || c.String() != "not_sent>0" {
		t.Errorf("firstHeld = %s, %v; want not_sent>0", c, ok)
	}
	if _, ok := firstHeld(cs, LiveSource(&Live{})); ok {
		t.Error("a condition held on an empty update")
	}
}

// NewRunner parses SnapshotWhen for the live context: "end", a list of
// conditions, or a one-line error that names the fix.
func TestNewRunnerSnapshotWhen(t *testing.T) {
	lc := load.Config{URL: "http://127.0.0.1:1/", Rate: 10, Duration: time.Second}
	for _, tc := range []struct {
		when  string
		conds int
		err   string
	}{
		{"", 0, ""},
		{" end ", 0, ""},
		{"p99>500ms", 1, ""},
		{"p99>500ms, not_sent>0", 2, ""},
		{"not-sent>0", 0, `run: snapshot-when: condition "not-sent>0": metric "not-sent" is now spelled "not_sent"`},
		{"pinned>0", 0, `metric "pinned" is not available in a live run`},
		{"sched.p99>5", 0, `sched.p99 is a duration: write a unit: 5ms`},
		{",", 0, `no condition`},
	} {
		r, err := NewRunner(Config{Out: t.TempDir(), Load: lc, SnapshotWhen: tc.when})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.when, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.when, err)
		case len(r.snapshotWhen) != tc.conds:
			t.Errorf("%q: %d conditions, want %d", tc.when, len(r.snapshotWhen), tc.conds)
		}
	}
}
