package main

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/collect"
	"github.com/schedscope/schedscope/internal/derive"
	"github.com/schedscope/schedscope/internal/rundir"
)

// fixedRun is a finished run's outcome and analysis, from fixed data.
func fixedRun(status, reason string) (*collect.Outcome, *rundir.Analysis) {
	start := time.Date(2026, 12, 4, 18, 20, 0, 0, time.UTC)
	res := &load.Result{Target: "http://127.0.0.1:18090/sleep?ms=100", Method: "GET", Arrivals: load.Uniform, MaxInflight: 3000,
		TimeoutS: 10, Client: load.Lean, Engine: "event-loop", GOMAXPROCS: 2, Phases: []load.PhaseResult{
			{Name: "steady", Kind: load.Steady, OfferedRate: 200, Planned: 1000, Sent: 1000, OK: 1000, OKPerS: 199.6,
				Verdicts: []string{"below-capacity: 2xx/s 200 tracks the offered 200 req/s (99.8 %)"}},
		}}
	for i := range res.Phases {
		res.Phases[i].Latency = load.Percentiles{P50: 101.2, P90: 102, P95: 102.4, P99: 103.1, P999: 105, Max: 105, Count: res.Phases[i].OK}
		res.Phases[i].Service = res.Phases[i].Latency
	}
	out := &collect.Outcome{Dir: "runs/run-20261204-182000", Result: res, Manifest: rundir.Manifest{
		Config: rundir.ManifestConfig{TargetURL: "http://127.0.0.1:18090/sleep?ms=100"},
		Start:  start, End: start.Add(9 * time.Second), Status: status, Reason: reason,
		Target:    rundir.TargetInfo{Source: "agent", GoVersion: "go1.26.8", GOMAXPROCS: 2, NumCPU: 2},
		Generator: rundir.ProcessInfo{GoVersion: "go1.26.8", GOMAXPROCS: 2}, Machine: rundir.Machine{CPUs: 2},
		Files: []rundir.FileEntry{{Name: rundir.ManifestFile, What: "what this directory holds", Bytes: 2048}},
	}}
	an := &rundir.Analysis{
		Phases:     []rundir.PhaseFigures{{Name: "steady", OfferedRate: 200, OKPerS: 199.6, AchievedPerS: 199.6}},
		Findings:   []rundir.Finding{{Kind: rundir.KindPassed, Title: "below-capacity", Detail: "2xx/s 200 tracks the offered 200 req/s (99.8 %)"}},
		TraceError: "no trace window: the run ended before its scheduled capture",
	}
	return out, an
}

// TestRunEndGolden prints the end of a plain `schedscope run` (--no-tui or
// not a terminal) from fixed data, as finishRun does, and compares it with
// testdata/TestRunEndGolden/*.golden (-update rewrites them): a run that
// completed, one that was interrupted, one whose analysis was not derived,
// and one that failed before it had a directory (nothing printed: main
// prints the error's one line).
func TestRunEndGolden(t *testing.T) {
	for _, c := range []struct {
		name, status, reason string
		derived, dir         bool
	}{
		{"complete", rundir.StatusComplete, "", true, true},
		{"interrupted", rundir.StatusInterrupted, "interrupt: the target died (connection refused)", true, true},
		{"underived", rundir.StatusInterrupted, "interrupt", false, true},
		{"failed-at-start", "", "", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, an := fixedRun(c.status, c.reason)
			var d *derive.Derived
			if c.derived {
				d = &derive.Derived{Summary: derive.SummaryText(&out.Manifest, out.Result, an)}
			}
			if !c.dir {
				out = nil
			}
			var b strings.Builder
			writeRunEnd(&b, out, d)
			s := b.String()
			for i, l := range strings.Split(s, "\n") {
				if f := strings.Fields(l); len(f) == 1 && strings.Contains("✗✓•▲-", f[0]) {
					t.Errorf("line %d is a lone mark %q", i+1, l)
				}
			}
			if out != nil && !strings.HasSuffix(s, "\nrun directory: runs/run-20261204-182000 ("+c.status+")\n") {
				t.Errorf("the end does not name the run directory and its status:\n%s", s)
			}
			golden.RequireEqual(t, s)
		})
	}
}
