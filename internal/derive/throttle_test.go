package derive

import (
	"cmp"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

// throttledRun is two steady phases of 10 s polled every second: the first
// at 0.2 cores and never throttled, the second at 0.5 cores (the limit) and
// throttled in throttledShare of its periods, with its p99 at p99 ms.
// parent puts the 0.5-core limit on the parent cgroup /pod instead of the
// target's own /pod/app
// offered is the second phase's offered rate; it achieves 250 req/s. (whose counters then stay at 0, as the kernel's do).
func throttledRun(throttledShare, p99, offered float64, parent bool) (*load.Result, []rundir.MetricsLine) {
	res := &load.Result{Model: "open", Phases: []load.PhaseResult{
		{Name: "step 1/2", StartS: 0, EndS: 10, OfferedRate: 100, OKPerS: 100, Latency: load.Percentiles{P99: 5}},
		{Name: "step 2/2", StartS: 10, EndS: 20, OfferedRate: offered, OKPerS: 250, Latency: load.Percentiles{P99: p99}},
	}}
	t0 := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
	var lines []rundir.MetricsLine
	var cpu, throttledS float64
	var periods, throttled, ok int64
	for s := 0; s <= 20; s++ {
		if s > 0 {
			periods += 10
			ok += 100
			cpu += 0.2
			if s > 10 {
				cpu += 0.3
				ok += 150
				throttled += int64(10 * throttledShare)
				throttledS += 0.4 * throttledShare
			}
		}
		cg := &rundir.CgroupCounters{Version: 1, Path: "/pod/app", QuotaCores: 0.5, PeriodUS: 100000,
			Periods: periods, Throttled: throttled, ThrottledSeconds: throttledS, TightestQuotaCores: 0.5, TightestPath: "/pod/app"}
		if parent {
			cg.QuotaCores, cg.PeriodUS, cg.Periods, cg.Throttled, cg.ThrottledSeconds = 0, 0, 0, 0, 0
			cg.TightestPath = "/pod"
			cg.TightestStat = &rundir.CgroupStat{Periods: periods, Throttled: throttled, ThrottledSeconds: throttledS}
		}
		lines = append(lines, rundir.MetricsLine{T: float64(s), Time: t0.Add(time.Duration(s) * time.Second),
			Load:   rundir.LoadPoint{OKTotal: ok},
			Target: rundir.TargetPoint{GOMAXPROCS: 4, HasProc: true},
			Proc:   &rundir.ProcCounters{CPUSeconds: cpu}, Cgroup: cg})
	}
	return res, lines
}

func TestPhaseCgroupFigures(t *testing.T) {
	for _, parent := range []bool{false, true} {
		res, lines := throttledRun(0.6, 80, 400, parent)
		phases := derivePhases(res, lines, -1, 4)
		first, second := phases[0].Cgroup, phases[1].Cgroup
		if first == nil || second == nil {
			t.Fatalf("parent %v: no cgroup figures: %+v", parent, phases)
		}
		if first.ThrottledPeriods != 0 || first.Periods != 100 || first.TightestCores != 0.5 {
			t.Errorf("parent %v: first phase %+v, want 100 periods, none throttled, a 0.5-core limit", parent, first)
		}
		c := second
		if c.Periods != 100 || c.ThrottledPeriods != 60 || !near(c.ThrottledShare, 0.6) || !near(c.ThrottledSeconds, 2.4) || !near(c.ThrottledPerS, 0.24) || !near(c.UseOfLimit, 1) {
			t.Errorf("parent %v: second phase %+v, want 60 of 100 periods, 2.4 s (0.24 s/s), 100 %% of the limit", parent, c)
		}
		if c.ParentLimit != parent || (parent && (c.LimitCores != 0 || c.TightestPath != "/pod")) {
			t.Errorf("parent %v: %+v", parent, c)
		}
		// The target used all of its limit and did not track: the limit is the ceiling.
		if ce := phases[1].Ceiling; ce == nil || ce.What != rundir.KindThrottled {
			t.Errorf("parent %v: ceiling %+v, want the CPU limit", parent, ce)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestDiagnoseThrottling(t *testing.T) {
	for _, tc := range []struct {
		name          string
		share, p99    float64
		offered       float64 // the second phase's; 250 (tracked) when 0
		parent        bool
		want          bool // a throttling cause
		titleHas      []string
		evidenceHas   []string
		changeHas     string
		parentFinding bool
	}{
		{name: "throttled in 60 % of the periods while p99 grew 16x", share: 0.6, p99: 80, want: true,
			titleHas:    []string{"/pod/app", "0.5-core", "60 %"},
			evidenceHas: []string{"60 of 100 periods throttled (60 %), 0.24 s throttled per second", "100 % of the quota, with GOMAXPROCS 4", "80.0 ms in step 2/2 against 5.0 ms"},
			changeHas:   "GOMAXPROCS 4 is above the 0.5-core limit: lower it to 2"},
		{name: "throttled but the p99 did not grow", share: 0.6, p99: 6},
		{name: "throttled in 5 % of the periods only", share: 0.05, p99: 80},
		{name: "the limit held the ceiling: a cause by the rate lost, p99 or not", share: 0.6, p99: 6, offered: 400, want: true,
			evidenceHas: []string{"the ceiling: the target used 0.50 cores of its 0.5-core CPU limit (/pod/app)"}, changeHas: "lower it to 2"},
		{name: "the limit is the parent's", share: 0.6, p99: 80, parent: true, want: true, parentFinding: true,
			titleHas:    []string{"the parent cgroup /pod "},
			evidenceHas: []string{"a CPU limit of 0.5 cores is set on the parent cgroup /pod, not on the target's own cgroup /pod/app: the Go runtime reads only its own cgroup's limit (golang/go#81180) and chose GOMAXPROCS 4", "would have chosen 2 (max(2, ceil(0.5)), at most the 4 CPUs)"},
			changeHas:   "set GOMAXPROCS=2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, lines := throttledRun(tc.share, tc.p99, cmp.Or(tc.offered, 250), tc.parent)
			m := &rundir.Manifest{}
			m.Target.GOMAXPROCS, m.Target.NumCPU, m.Machine.CPUs = 4, 4, 4
			an := &rundir.Analysis{Phases: derivePhases(res, lines, -1, 4)}
			d := diagnose(m, res, an)
			var c *rundir.Cause
			for i := range d.Causes {
				if d.Causes[i].Kind == rundir.KindThrottled {
					c = &d.Causes[i]
				}
			}
			if (c != nil) != tc.want {
				t.Fatalf("throttling cause %+v, want one: %v (causes %+v)", c, tc.want, d.Causes)
			}
			fs := rankFindings(findings(an.Phases, nil, res, d, 4))
			got := false
			for _, f := range fs {
				if f.Kind == rundir.KindParentCPULimit {
					got = true
					if f.Numbers["default_gomaxprocs_with_limit"] != 2 || f.Numbers["parent_limit_cores"] != 0.5 {
						t.Errorf("parent-limit finding numbers %v", f.Numbers)
					}
				}
			}
			if got != tc.parentFinding {
				t.Errorf("parent-limit finding: %v, want %v: %+v", got, tc.parentFinding, fs)
			}
			if c == nil {
				return
			}
			if tc.offered > 0 && !near(c.LostShare, 1-250.0/tc.offered) {
				t.Errorf("lost share %v, want %v", c.LostShare, 1-250.0/tc.offered)
			}
			if d.Causes[0].Kind != rundir.KindThrottled {
				t.Errorf("the throttling is not ranked first: %+v", d.Causes)
			}
			for _, s := range tc.titleHas {
				if !strings.Contains(c.Title, s) {
					t.Errorf("title %q lacks %q", c.Title, s)
				}
			}
			ev := strings.Join(c.Evidence, "\n")
			for _, s := range tc.evidenceHas {
				if !strings.Contains(ev, s) {
					t.Errorf("evidence lacks %q:\n%s", s, ev)
				}
			}
			if !strings.Contains(c.Change, tc.changeHas) {
				t.Errorf("change %q lacks %q", c.Change, tc.changeHas)
			}
		})
	}
}

// TestSummaryCgroupTable: the summary lists each phase's limit and
// throttling, and says when the limit is a parent's.
func TestSummaryCgroupTable(t *testing.T) {
	res, lines := throttledRun(0.6, 80, 250, true)
	an := &rundir.Analysis{Phases: derivePhases(res, lines, -1, 4)}
	var b strings.Builder
	writeSummary(&b, &rundir.Manifest{}, res, an)
	for _, want := range []string{"cgroup CPU limit (", "step 2/2  /pod/app  0.5    /pod (parent: the runtime does not see it)  100      60 (60%)   0.24", "100%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// TestDiagnoseThrottlingFromTrace: with a trace, the slow requests' time
// that saturated CPUs explain (runnable, and the socket queue of busy Ps) goes
// to the throttling when the quota ran out, not to the CPU.
func TestDiagnoseThrottlingFromTrace(t *testing.T) {
	for _, share := range []float64{0.6, 0} {
		res, lines := throttledRun(share, 80, 250, true)
		m := &rundir.Manifest{}
		m.Target.GOMAXPROCS, m.Target.NumCPU, m.Machine.CPUs = 2, 2, 2
		rep := &analyze.Report{Procs: analyze.ProcReport{GOMAXPROCS: 2, Utilisation: []analyze.ProcUse{{Fraction: 0.98}, {Fraction: 0.99}}},
			Requests: &analyze.RequestsReport{PerRequest: true, Requests: 100, Bands: []analyze.Band{{Name: ">=p99", Requests: 1,
				Split: []analyze.Share{{State: analyze.StateSocket, Pct: 70}, {State: analyze.StateRunnable, Pct: 25}, {State: analyze.StateRunning, Pct: 5}}}}}}
		an := &rundir.Analysis{Trace: rep, TraceStartS: 12, TraceEndS: 17, Phases: derivePhases(res, lines, 0.98, 2)}
		d := diagnose(m, res, an)
		want := rundir.KindThrottled
		if share == 0 {
			want = rundir.KindCPU
		}
		if len(d.Causes) != 1 || d.Causes[0].Kind != want || !near(d.Causes[0].Share, 1) {
			t.Errorf("throttled share %v: causes %+v, want all the time to %s", share, d.Causes, want)
		}
	}
}
