package feed

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/collect"
	"github.com/schedscope/schedscope/internal/derive"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/tui"
)

func TestRunFrame(t *testing.T) {
	l := collect.Live{At: 12 * time.Second,
		Load: load.Progress{Name: "step 2", Phase: 3, Phases: 5, OfferedRate: 400, OKPerS: 310, Elapsed: 2 * time.Second,
			Errors:      load.ErrorCounts{Timeout: 3},
			IntervalP50: 40 * time.Millisecond, IntervalP95: 90 * time.Millisecond, IntervalP99: 120 * time.Millisecond},
		Target: rundir.TargetPoint{HasAgent: true, Goroutines: 260, GOMAXPROCS: 2, CPUUSPerReq: 210,
			Pools: []rundir.PoolPoint{
				{Name: "workers", Size: 8, InUse: 8, Waiting: 40, Saturated: true, CapacityPerS: 160, HoldMeanMS: 50},
				{Name: "db", Size: 0}, // unbounded: not shown
			}},
		Notes: []rundir.Note{
			{Kind: rundir.KindPoolSaturated, Text: "pool workers is full: 8/8 in use, 40 waiting"},
			{Kind: rundir.KindTargetGone, Text: "the target stopped answering"},
		},
	}
	f := RunFrame("schedscope run http://x/", l)
	if f.Phase.Index != 4 || f.Phase.RunElapsed != 12*time.Second || f.Runtime == nil || f.CPUPerRequest != 210*time.Microsecond {
		t.Errorf("frame: phase %+v runtime %v cpu %v", f.Phase, f.Runtime != nil, f.CPUPerRequest)
	}
	if f.Load.P50 != 40*time.Millisecond || f.Load.P95 != 90*time.Millisecond || f.Load.P99 != 120*time.Millisecond {
		t.Errorf("latency p50 %v p95 %v p99 %v, want the interval's 40ms 90ms 120ms", f.Load.P50, f.Load.P95, f.Load.P99)
	}
	if f.Runtime.PprofOnly {
		t.Error("a target with an agent is not pprof-only")
	}
	if len(f.Load.Errors) != 1 || f.Load.Errors[0] != (tui.ErrorCount{Class: "timeout", Count: 3}) {
		t.Errorf("errors by class: %+v", f.Load.Errors)
	}
	if len(f.Pools) != 1 || f.Pools[0].Name != "workers" {
		t.Errorf("pools: %+v, want the bounded one", f.Pools)
	}
	// The saturated pool is one verdict, from the pool's figures (its note
	// is not repeated); the other note keeps its kind.
	want := []tui.Verdict{
		{Kind: rundir.KindPoolSaturated, Title: "pool workers is saturated", Detail: "8/8 in use, 40 waiting; predicted capacity 160 req/s (Little's law: 8 / 50.0 ms)"},
		{Kind: rundir.KindTargetGone, Title: "the target stopped answering"},
	}
	if len(f.Verdicts) != len(want) {
		t.Fatalf("verdicts %+v, want %+v", f.Verdicts, want)
	}
	for i := range want {
		if f.Verdicts[i] != want[i] {
			t.Errorf("verdict %d: %+v, want %+v", i, f.Verdicts[i], want[i])
		}
	}
}

// A target with only net/http/pprof gives the runtime panel goroutines and
// threads; without any, the panel has nothing.
func TestFrameRuntimeSources(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target rundir.TargetPoint
		want   *tui.Runtime
	}{
		{"pprof, remote", rundir.TargetPoint{Goroutines: 57, Threads: 11},
			&tui.Runtime{PprofOnly: true, ThreadsCreated: true, Goroutines: 57, Threads: 11}},
		{"pprof, local (--cmd)", rundir.TargetPoint{Goroutines: 57, Threads: 7, HasProc: true, CPUCores: 0.5},
			&tui.Runtime{PprofOnly: true, Goroutines: 57, Threads: 7}},
		{"no poll yet", rundir.TargetPoint{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := RunFrame("schedscope run http://x/", collect.Live{Target: tc.target})
			switch {
			case tc.want == nil && f.Runtime != nil:
				t.Errorf("runtime %+v, want none", *f.Runtime)
			case tc.want != nil && (f.Runtime == nil || *f.Runtime != *tc.want):
				t.Errorf("runtime %+v, want %+v", f.Runtime, *tc.want)
			}
		})
	}
}

func TestFailedSummary(t *testing.T) {
	s := FailedSummary(errors.New("target http://127.0.0.1:1/: connection refused"))
	if s.Title != "run failed" || s.Err != "target http://127.0.0.1:1/: connection refused" || len(s.RunDirs) != 0 {
		t.Errorf("summary %+v", s)
	}
}

func TestRunSummary(t *testing.T) {
	out := &collect.Outcome{Dir: "run-x", Manifest: rundir.Manifest{Status: rundir.StatusInterrupted, Reason: "stopped before the end of the plan"},
		Result: &load.Result{Phases: []load.PhaseResult{{Name: "200 req/s", OfferedRate: 200, OKPerS: 158,
			Latency: load.Percentiles{P50: 40, P95: 90, P99: 120}}}}}
	d := &derive.Derived{Analysis: &rundir.Analysis{Findings: []rundir.Finding{
		{Kind: rundir.KindCeiling, Title: "200 req/s: 2xx/s stayed at 158", Detail: "pool workers"},
		{Kind: rundir.KindSchedLatency, Title: "sched latency p99 2 ms"},
	}}}
	s := RunSummary(out, d)
	if !s.Stopped || len(s.Table.Rows) != 1 || s.Table.Rows[0][2] != "158" || len(s.RunDirs) != 1 {
		t.Errorf("summary: %+v", s)
	}
	if got, want := strings.Join(s.Table.Header[3:6], " "), "p50 p95 p99"; got != want {
		t.Errorf("latency columns %q, want %q", got, want)
	} else if got, want := strings.Join(s.Table.Rows[0][3:6], " "), "40.0 ms 90.0 ms 120.0 ms"; got != want {
		t.Errorf("latency cells %q, want %q", got, want)
	}
	if len(s.Verdicts) != 2 || s.Verdicts[0].Kind != rundir.KindCeiling || s.Verdicts[1].Kind != rundir.KindSchedLatency {
		t.Errorf("findings keep their kinds: %+v", s.Verdicts)
	}
	if len(s.Notes) != 2 || s.Notes[1] != "summary: run-x/"+rundir.SummaryFile {
		t.Errorf("notes: %q", s.Notes)
	}
	if s := RunSummary(out, nil); len(s.Verdicts) != 0 {
		t.Errorf("no derivation, no verdicts: %+v", s.Verdicts)
	}
}
