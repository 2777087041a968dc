package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// A CPU-limit sweep of a CPU-bound target: GOMAXPROCS 2 throttled at the
// rates the 1-CPU quota carries, GOMAXPROCS 1 not; the report has the
// limit x GOMAXPROCS grid, the ranked verdicts with their figures, the
// GOMAXPROCS per limit, the sizing for the target p99 and the throttled plot.
func TestWriteSweepQuota(t *testing.T) {
	plan := rundir.SweepPlan{
		Version: rundir.SweepVersion, Fixture: "cpu?us=2000", URL: "http://127.0.0.1:9/cpu?us=2000", Scenario: "cpu",
		GOMAXPROCS: []int{0, 1, 2}, CPULimits: []float64{1, 2}, CgroupVersion: 1, Rates: []float64{200, 450, 750},
		Iterations: 1, DurationS: 5, TargetP99MS: 50,
		Machine: rundir.Machine{CPUs: 2, AllowedCPUs: "0-1", GOOS: "linux", GOARCH: "amd64", GoVersion: "go1.26.8"},
		Started: time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC),
	}
	dir := writeSweep(t, plan, plan.Steps(), func(k rundir.StepKey) rundir.SweepStep {
		gmp := k.GOMAXPROCS
		if gmp == 0 {
			gmp = 2
		}
		served, p99, share := k.Rate, 6.0, 0.0
		if top := 500 * min(k.CPULimit, float64(gmp)); k.Rate > top {
			served, p99, share = top, 1500, 0.4
		} else if gmp > 1 && k.CPULimit == 1 && k.Rate > 200 {
			p99, share = 190, 0.7
		}
		st := rundir.SweepStep{StepKey: k, DurationS: 5, OK: int64(5 * served), Sent: int64(5 * k.Rate), OKPerSec: served, AnsweredPerSec: served,
			P50MS: 3, P95MS: p99 / 2, P99MS: p99, MeanMS: 3, ServiceP50MS: 2.5, TargetCPUCores: served * 0.002, CPUPerRequestUS: 2000,
			Throttle: &rundir.Throttle{Periods: 50, Throttled: int64(50 * share), ThrottledS: 3 * share, QuotaUse: served * 0.002 / k.CPULimit}}
		if k.GOMAXPROCS == 0 {
			st.RuntimeGOMAXPROCS = rundir.DefaultGOMAXPROCS(2, k.CPULimit)
		}
		return st
	})
	out := t.TempDir()
	r, err := WriteSweep(dir, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Files) != 4 || filepath.Base(r.Files[3]) != ThrottledPlot {
		t.Errorf("files %v, want the throttled plot too", r.Files)
	}
	b, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"## CPU limits",
		"| limit | GOMAXPROCS auto | GOMAXPROCS 1 | GOMAXPROCS 2 |",
		"| limit 1 CPU | (2) 500 / 6.00 ms / 70 % | 500 / 6.00 ms / 40 % | 500 / 6.00 ms / 70 % |",
		"| limit 2 CPUs | (2) >= 750 / 6.00 ms / 0 % | 500 / 6.00 ms / 40 % | >= 750 / 6.00 ms / 0 % |",
		"- **limit-too-tight**: limit 1 CPU is too tight for 750 req/s: at 2 ms of CPU per request the load needs 1.50 CPUs",
		"- **throttled**: limit 1 CPU, GOMAXPROCS 2 was throttled in 70 % of its 100 ms periods at 450 req/s",
		"so throttling cost 184 ms of p99, 1.8 periods of 100 ms",
		"- **gomaxprocs-above-limit**: limit 1 CPU, GOMAXPROCS auto (2): GOMAXPROCS 2 is above the 1-CPU limit",
		"- **limit 1 CPU: GOMAXPROCS 1.** Ceilings within 5 % of each other (500 2xx/s at GOMAXPROCS 1); it served up to 450 req/s within the p99 rule (p99 6 ms, throttled in 0 % of periods); GOMAXPROCS 2 only up to 200 req/s (at 450 req/s: p99 190 ms, throttled in 70 %); the runtime's default here is 2.",
		"- **limit 2 CPUs: GOMAXPROCS 2.** The highest ceiling under limit 2 CPUs (750 2xx/s); the runtime's default agrees.",
		"the runtime's default here is 2",
		"### The smallest limit for p99 <= 50.0 ms",
		"| 200 | limit 1 CPU | limit 1 CPU, GOMAXPROCS 1 | 6.00 | 200 |",
		"| 450 | limit 1 CPU | limit 1 CPU, GOMAXPROCS 1 | 6.00 | 450 |",
		"| 750 | limit 2 CPUs | limit 2 CPUs, GOMAXPROCS 2 | 6.00 | 750 |",
		"![throttled share of periods vs offered rate, one line per combination of GOMAXPROCS and CPU limit](throttled.png)",
		"| 450 | 450 | 100.0 % | 3.00 | 95.0 | 190 | 0 | 0 | 2.00 ms | - | - / - | 70 % (2.10 s) | 90 % | over |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Ranked: the limit too tight first, each verdict once.
	if i, j := strings.Index(md, "- **limit-too-tight**"), strings.Index(md, "- **throttled**"); i < 0 || j < i {
		t.Error("the verdicts are not ranked: the limit too tight should come first")
	}
	if n := strings.Count(md, "- **throttled**: limit 1 CPU, GOMAXPROCS 2 was"); n != 1 {
		t.Errorf("the GOMAXPROCS 2 throttling verdict printed %d times", n)
	}
	if t.Failed() {
		t.Log(md)
	}
}
