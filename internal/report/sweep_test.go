package report

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/capacity"
	"github.com/schedscope/schedscope/internal/rundir"
)

// writeSweepDir writes a synthetic sweep directory: a pool of 8 workers in
// front of 50 ms sleeps, flat at 160 req/s for GOMAXPROCS 1 and 2.
func writeSweepDir(t *testing.T, skipLast bool) string {
	t.Helper()
	plan := rundir.SweepPlan{
		Version: rundir.SweepVersion, Fixture: "sleep --model pool --workers 8", URL: "http://127.0.0.1:9/sleep",
		Scenario: "sleep", Model: "pool", ConcurrencyLimit: 8,
		GOMAXPROCS: []int{1, 2}, Rates: []float64{50, 100, 200, 400}, Iterations: 1,
		WarmupS: 2, DurationS: 5, PauseS: 1, Pinned: true,
		Machine: rundir.Machine{CPUs: 2, GOOS: "linux", GOARCH: "amd64", GoVersion: "go1.26.8"},
		Started: time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC),
	}
	keys := plan.Steps()
	if skipLast {
		keys = keys[:len(keys)-1]
	}
	return writeSweep(t, plan, keys, func(k rundir.StepKey) rundir.SweepStep {
		st := rundir.SweepStep{StepKey: k, DurationS: 5, OKPerSec: 0.99 * k.Rate, AnsweredPerSec: k.Rate, P50MS: 50.5, P99MS: 52, CPUPerRequestUS: 80, RSSBytes: 12e6}
		if k.Rate > 159 {
			// the stragglers answered after the window inflate 2xx/s
			st.AnsweredPerSec, st.OKPerSec, st.P50MS, st.P99MS = 237, 158.4-float64(k.GOMAXPROCS)/10, 900, 2100
		}
		if k.Rate == 50 {
			st.GeneratorVerdict, st.GeneratorNote = true, "immaterial: send lag p99 1.60 ms"
		}
		return st
	})
}

// writeSweep writes a sweep directory of plan with the step that step makes
// for each of keys, and returns it.
func writeSweep(t *testing.T, plan rundir.SweepPlan, keys []rundir.StepKey, step func(rundir.StepKey) rundir.SweepStep) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, rundir.SweepFile), plan)
	if err := os.MkdirAll(filepath.Join(dir, rundir.StepsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		writeFile(t, filepath.Join(dir, rundir.StepsDir, k.File()), step(k))
	}
	return dir
}

func writeFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWriteSweep(t *testing.T) {
	dir := writeSweepDir(t, false)
	out := t.TempDir()
	r, err := WriteSweep(dir, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Files) != 3 {
		t.Fatalf("files = %v, want the report and two plots", r.Files)
	}
	b, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"# GOMAXPROCS sweep: sleep scenario, pool model",
		"**Recommended GOMAXPROCS: 1.**",
		"**Scaling: blocking-bound.**",
		"Little's law predicts 8 in service / 50.5 ms = 158 req/s; measured ceiling 158 2xx/s, 100 % of the prediction",
		"GOMAXPROCS 1: **concurrency**: only 0.01 of 1 Ps were busy and the ceiling is 100 % of the concurrency limit / low-load service time (Little's law): the concurrency limit (pool) is the limit",
		// One table per line; p95 is "-" where the steps did not record it.
		"**GOMAXPROCS 1**\n\n| offered req/s | 2xx/s | answered | p50 ms | p95 ms | p99 ms |",
		"| 100 | 99 | 100.0 % | 50.5 | - | 52.0 | 0 | 0 | 80 µs | 12.0 | - / - | **knee** |",
		"**GOMAXPROCS 2**\n\n",
		"| 400 | 158 | 59.2 % | 900 | - | 2100 | 0 | 0 | 80 µs | 12.0 | - / - | over |",
		"2 of 8 steps carried the load generator's generator-bound verdict",
		"![2xx/s vs offered rate, one line per GOMAXPROCS](throughput.png)",
		"| iterations | 1 (each figure is the median over iterations) |",
		"load needs about **0.03 Ps**",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q\n%s", want, md)
		}
	}
	if strings.Contains(md, "Unfinished") {
		t.Error("a complete sweep is called unfinished")
	}
	for _, name := range []string{ThroughputPlot, P99Plot} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != 480 || b.Dy() < 250 || b.Dy() > 320 {
			t.Errorf("%s is %v, want 480 px wide and about 300 high", name, b)
		}
	}
}

func TestWriteSweepUnfinished(t *testing.T) {
	dir := writeSweepDir(t, true)
	if _, err := WriteSweep(dir, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "**Unfinished sweep:** 1 of 8 steps are missing") {
		t.Errorf("report does not say the sweep is unfinished:\n%s", b)
	}
}

func TestWriteSweepErrors(t *testing.T) {
	if _, err := WriteSweep(t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "not a sweep directory") {
		t.Errorf("empty dir: err = %v", err)
	}
	dir := writeSweepDir(t, false)
	if err := os.RemoveAll(filepath.Join(dir, rundir.StepsDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteSweep(dir, ""); err == nil || !strings.Contains(err.Error(), "no finished step") {
		t.Errorf("no steps: err = %v", err)
	}
}

func TestWriteComparison(t *testing.T) {
	a, b := writeSweepDir(t, false), writeSweepDir(t, false)
	// the second sweep is the goroutine model: no ceiling in the ladder
	writeFile(t, filepath.Join(b, rundir.SweepFile), rundir.SweepPlan{
		Version: rundir.SweepVersion, URL: "http://127.0.0.1:9/sleep", Scenario: "sleep", Model: "goroutine",
		GOMAXPROCS: []int{1, 2}, Rates: []float64{50, 100, 200, 400}, Iterations: 1, DurationS: 5,
	})
	out := t.TempDir()
	c, err := WriteComparison([]string{a, b}, out)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(c.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Sweeps compared: sleep pool / sleep goroutine", "| sleep pool | `schedscope fixture`", "| sleep goroutine |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("comparison lacks %q:\n%s", want, md)
		}
	}
	if _, err := WriteComparison([]string{a}, out); err == nil {
		t.Error("a comparison of one sweep: no error")
	}
}

func TestSamplesCarryEveryFigure(t *testing.T) {
	st := rundir.SweepStep{StepKey: rundir.StepKey{GOMAXPROCS: 2, Iteration: 1, Rate: 100}, DurationS: 5, Sent: 490, NotSent: 10,
		OKPerSec: 98, AnsweredPerSec: 99, P50MS: 2, P99MS: 9, ServiceP50MS: 1.5, Errors: 3, TargetCPUS: 2.5,
		CPUPerRequestUS: 500, RSSBytes: 7, MachineBusy: 0.6, GeneratorBound: true, TargetCPUCores: 0.4,
		Threads: 5, Agent: &rundir.AgentFigures{Goroutines: 40, Threads: 7}}
	got := Samples([]rundir.SweepStep{st})[0]
	want := capacity.Sample{GOMAXPROCS: 2, Iteration: 1, OfferedRate: 100, OKPerSec: 98, Answered: 99,
		P50: 2 * time.Millisecond, P99: 9 * time.Millisecond, ServiceP50: 1500 * time.Microsecond, Errors: 3, NotSent: 10, Planned: 500,
		CPUCores: 0.4, MachineBusy: 0.6, Goroutines: 40, Threads: 7, CPUPerRequest: 500 * time.Microsecond, RSSBytes: 7, GeneratorBound: true}
	if got != want {
		t.Errorf("Samples = %+v\nwant      %+v", got, want)
	}
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   string
	}{
		{0, 283, "0 100 200"},
		{0, 40, "0 10 20 30 40"},
		{0.5, 2.2, "0.5 1 1.5 2"},
		{50, 300, "50 100 150 200 250 300"},
	}
	for _, tt := range tests {
		var labels []string
		for _, tk := range (NiceTicks{}).Ticks(tt.lo, tt.hi) {
			labels = append(labels, tk.Label)
		}
		if got := strings.Join(labels, " "); got != tt.want {
			t.Errorf("Ticks(%v, %v) = %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}
