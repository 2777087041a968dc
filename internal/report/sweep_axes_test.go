package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// A closed-model sweep over two models and a fixture flag, with a
// GOMAXPROCS above the machine's 2 CPUs: one table per line, p95 shown,
// the lines labelled, the recommendation judged per model.
func TestWriteSweepAxes(t *testing.T) {
	plan := rundir.SweepPlan{
		Version: rundir.SweepVersion, Fixture: "sleep?ms=20", URL: "http://127.0.0.1:9/sleep?ms=20", Scenario: "sleep",
		GOMAXPROCS: []int{2, 4}, Users: []int{2, 8}, ThinkS: 0, Models: []string{"goroutine", "pool"},
		Sets:       []rundir.SetAxis{{Name: "workers", Values: []string{"4"}}},
		Iterations: 1, DurationS: 1, Pinned: true,
		Machine: rundir.Machine{CPUs: 2, AllowedCPUs: "0-1", GOOS: "linux", GOARCH: "amd64", GoVersion: "go1.26.8"},
		Started: time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC),
	}
	dir := writeSweep(t, plan, plan.Steps(), func(k rundir.StepKey) rundir.SweepStep {
		thr, lat := float64(k.Users)/0.02, 20.0
		if k.Model == "pool" && thr > 200 {
			thr, lat = 200, float64(k.Users)/200*1000
		}
		st := rundir.SweepStep{StepKey: k, DurationS: 1, OK: int64(thr), OKPerSec: thr, AnsweredPerSec: thr,
			P50MS: lat, P95MS: lat * 1.05, P99MS: lat * 1.1, MeanMS: lat, TargetCPUCores: 0.05, CPUPerRequestUS: 50}
		return st
	})
	out := t.TempDir()
	r, err := WriteSweep(dir, out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"# Sweep over GOMAXPROCS, model and workers: sleep scenario",
		"- **pool, workers=4**: recommended GOMAXPROCS 2 (",
		"**pool, GOMAXPROCS 4 (> 2 CPUs), workers=4**\n\n| users | 2xx/s | answered | p50 ms | p95 ms | p99 ms |",
		"| 8 | 200 | 100.0 % | 40.0 | 42.0 | 44.0 | 0 | 0 | 50 µs | - | - / - | over |",
		"| pool, GOMAXPROCS 2, workers=4 | 2 | 200 | concurrency |",
		"| goroutine, GOMAXPROCS 2, workers=4 | 8 | >= 400 | - |",
		"| GOMAXPROCS | 2, 4 (> 2 CPUs);",
		"closed model (each user sends a request",
		"![2xx/s vs users, one line per combination of GOMAXPROCS, model and workers](throughput.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
	if len(r.Analysis.Levels) != 4 || r.Analysis.Recommendation.GOMAXPROCS != 0 {
		t.Errorf("%d lines, sweep-wide recommendation %d; want 4 and none", len(r.Analysis.Levels), r.Analysis.Recommendation.GOMAXPROCS)
	}
}

// The sweeps committed under docs/ (version 1) still report.
func TestReportsVersion1Sweeps(t *testing.T) {
	for _, name := range []string{"sweep-cpu", "sweep-sleep", "sweep-cpu-busy"} {
		r, err := AnalyzeSweep(filepath.Join("..", "..", "docs", name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(r.Analysis.Levels) != 2 || r.Analysis.Levels[0].Label != "GOMAXPROCS 1" || r.Analysis.Recommendation.GOMAXPROCS == 0 {
			t.Errorf("%s: %d lines, first %q, recommended %d", name, len(r.Analysis.Levels), r.Analysis.Levels[0].Label, r.Analysis.Recommendation.GOMAXPROCS)
		}
		var sb strings.Builder
		if err := RenderSweep(&sb, r, SweepPlots{}); err != nil || !strings.Contains(sb.String(), "# GOMAXPROCS sweep:") {
			t.Errorf("%s: render: %v", name, err)
		}
	}
}

func TestLineConcurrencyLimit(t *testing.T) {
	p := rundir.SweepPlan{Fixture: "sleep", Models: []string{"goroutine", "pool"}}
	w := rundir.Settings{}.With("workers", "20")
	for _, tt := range []struct {
		line rundir.Line
		want int
	}{
		{rundir.Line{GOMAXPROCS: 2, Model: "goroutine", Set: w}, 0},
		{rundir.Line{GOMAXPROCS: 2, Model: "pool", Set: w}, 20},
		{rundir.Line{GOMAXPROCS: 2, Model: "pool"}, 200},
		{rundir.Line{GOMAXPROCS: 32, Model: "threads"}, 256},
	} {
		if got := LineConcurrencyLimit(p, tt.line); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.line.Label(0), got, tt.want)
		}
	}
	// A --cmd sweep keeps its --concurrency.
	if got := LineConcurrencyLimit(rundir.SweepPlan{ConcurrencyLimit: 8}, rundir.Line{GOMAXPROCS: 1}); got != 8 {
		t.Errorf("plain plan: %d, want 8", got)
	}
}

// A CPU-limit sweep with GOMAXPROCS auto: the lines are labelled with the
// limit and the runtime's choice, and each table has the throttled and
// quota-use columns.
func TestWriteSweepCPULimits(t *testing.T) {
	plan := rundir.SweepPlan{
		Version: rundir.SweepVersion, Fixture: "cpu?us=2000", URL: "http://127.0.0.1:9/cpu?us=2000", Scenario: "cpu",
		GOMAXPROCS: []int{0, 2}, CPULimits: []float64{0.5, 1}, CgroupVersion: 1, Rates: []float64{100, 400},
		Iterations: 1, DurationS: 2,
		Machine: rundir.Machine{CPUs: 2, GOOS: "linux", GOARCH: "amd64", GoVersion: "go1.26.8"},
		Started: time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC),
	}
	dir := writeSweep(t, plan, plan.Steps(), func(k rundir.StepKey) rundir.SweepStep {
		ok := min(k.Rate, k.CPULimit/0.002)
		st := rundir.SweepStep{StepKey: k, DurationS: 2, OK: int64(2 * ok), OKPerSec: ok, AnsweredPerSec: ok, P50MS: 5, P95MS: 8, P99MS: 9, MeanMS: 5,
			TargetCPUCores: ok * 0.002, CPUPerRequestUS: 2000,
			Throttle: &rundir.Throttle{Periods: 20, Throttled: int64(20 * ok / (k.CPULimit / 0.002)), ThrottledS: 0.25, QuotaUse: ok * 0.002 / k.CPULimit}}
		if k.GOMAXPROCS == 0 {
			st.RuntimeGOMAXPROCS = 2
		}
		return st
	})
	out := t.TempDir()
	if _, err := WriteSweep(dir, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"# Sweep over GOMAXPROCS and CPU limit: cpu scenario",
		"| CPU limits | 0.5, 1 (CPUs; each target in a fresh cgroup v1",
		"**limit 0.5 CPU, GOMAXPROCS auto (2)**\n\n| offered req/s | 2xx/s | answered | p50 ms | p95 ms | p99 ms | errors | not sent | CPU/request | RSS MB | goroutines / threads | throttled | quota use | |",
		"| 400 | 250 | 62.5 % | 5.00 | 8.00 | 9.00 | 0 | 0 | 2.00 ms | - | - / - | 100 % (0.25 s) | 100 % |",
		"**limit 1 CPU, GOMAXPROCS 2**",
		"- **limit 1 CPU**: ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}

// The sweep (cpu?us=2000 under a 1-CPU limit, GOMAXPROCS 1 and 2,
// one rate of 700 req/s): every request answered in the end, but 480 2xx/s
// while the phase ran, p50 433 ms. The report must not call 700 the knee,
// quote 433 ms as a low-load service time or recommend a GOMAXPROCS from
// it: it says to offer lower rates.
func TestWriteSweepStartingOverCapacity(t *testing.T) {
	plan := rundir.SweepPlan{
		Version: rundir.SweepVersion, Fixture: "cpu?us=2000 --model goroutine", URL: "http://127.0.0.1:9/cpu?us=2000", Scenario: "cpu",
		GOMAXPROCS: []int{1, 2}, CPULimits: []float64{1}, CgroupVersion: 1, Rates: []float64{700},
		Iterations: 1, DurationS: 5,
		Machine: rundir.Machine{CPUs: 2, GOOS: "linux", GOARCH: "amd64", GoVersion: "go1.26.8"},
		Started: time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC),
	}
	dir := writeSweep(t, plan, plan.Steps(), func(k rundir.StepKey) rundir.SweepStep {
		return rundir.SweepStep{StepKey: k, DurationS: 5, OK: 3500, OKPerSec: 480, AnsweredPerSec: 700, P50MS: 433, P95MS: 800, P99MS: 900, MeanMS: 450,
			ServiceP50MS: 433, TargetCPUCores: 0.96, CPUPerRequestUS: 2000,
			Throttle: &rundir.Throttle{Periods: 50, Throttled: 5, ThrottledS: 0.1, QuotaUse: 0.96}}
	})
	out := t.TempDir()
	r, err := WriteSweep(dir, out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"| limit 1 CPU, GOMAXPROCS 1 | offer lower rates | 480 |",
		"**No recommendation.** Every line was over capacity already at its lowest rate: offer lower rates",
		"no low-load service time; offer lower rates",
		"- **limit 1 CPU: no recommendation.** Every line was over capacity already at its lowest rate: offer lower rates",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{"| **knee** |", "served up to", "| cpu-quota | 433 |", "**Recommended GOMAXPROCS", "**limit 1 CPU: GOMAXPROCS"} {
		if strings.Contains(md, bad) {
			t.Errorf("report says %q", bad)
		}
	}
	if r.Analysis.Recommendation.GOMAXPROCS != 0 {
		t.Errorf("recommended GOMAXPROCS %d", r.Analysis.Recommendation.GOMAXPROCS)
	}
	if t.Failed() {
		t.Log(md)
	}
}

// A query-parameter axis (--set '?mode=...') is said to be sent on the
// URL, not passed to the fixture as a flag "--?mode".
func TestWriteSweepQueryAxis(t *testing.T) {
	r, err := AnalyzeSweep(filepath.Join("..", "..", "docs", "sweep-split"))
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := RenderSweep(&sb, r, SweepPlots{}); err != nil {
		t.Fatal(err)
	}
	md := sb.String()
	if want := "| ?mode | serial, offload, parallel, oversized (each sent as the query parameter `mode=VALUE` of the URL) |"; !strings.Contains(md, want) {
		t.Errorf("report lacks %q", want)
	}
	if strings.Contains(md, "`--?") {
		t.Errorf("report names a query axis as a fixture flag:\n%s", md)
	}
}
