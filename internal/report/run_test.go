package report

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/rundir/rundirtest"
)

func TestWriteRun(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, rundir.ManifestFile), map[string]any{
		"config":  map[string]any{"target_url": "http://127.0.0.1:9/sleep"},
		"machine": map[string]any{"cpus": 2, "goos": "linux", "goarch": "amd64"},
		"target":  map[string]any{"source": "agent", "gomaxprocs": 2, "go_version": "go1.26.8"},
		"status":  "interrupted", "reason": "SIGINT",
	})
	writeFile(t, filepath.Join(dir, rundir.ResultsFile), load.Result{Model: "open", Arrivals: load.Uniform, Client: load.Lean, MaxInflight: 5000, TimeoutS: 10,
		Phases: []load.PhaseResult{{Name: "200 req/s", OfferedRate: 200, DurationS: 10, OKPerS: 158.2, NotSent: 3,
			Latency:        load.Percentiles{P50: 900, P95: 1800, P99: 2100, P999: 2200, Max: 2300},
			Verdicts:       []string{"over-capacity: 2xx/s 158 of the offered 200 req/s"},
			VerdictDetails: []load.Verdict{{Kind: load.OverCapacity}}},
			// As a results.json from before p95 reads: no p95.
			{Name: "100 req/s", OfferedRate: 100, DurationS: 10, OKPerS: 100, Latency: load.Percentiles{P50: 5, P99: 9, P999: 9.5, Max: 10}}}})
	var lines []string
	for i := 0; i < 20; i++ {
		lines = append(lines, fmt.Sprintf(`{"t_s":%g,"load":{"kind":"steady","ok_per_s":158,"p50_ms":%d,"p99_ms":%d},"target":{"goroutines":%d,"runnable":1,"threads":7}}`,
			float64(i)/2, 50+40*i, 60+100*i, 20+i*2))
	}
	lines = append(lines, `{"t_s":10.5,"load":{"kind":`) // cut short by a kill
	if err := os.WriteFile(filepath.Join(dir, rundir.MetricsFile), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := WriteRun(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 20 || len(r.Files) != 3 {
		t.Fatalf("points %d files %v: want 20 points (the truncated line dropped) and 3 files", len(r.Points), r.Files)
	}
	if w := r.Warnings(); len(w) != 0 {
		t.Errorf("a last line cut by a kill is normal, not a warning: %q", w)
	}
	b, err := os.ReadFile(r.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"# Run: `http://127.0.0.1:9/sleep`",
		"> **Run interrupted** (SIGINT)",
		"| 200 req/s | 200 | 10s | 158 | 900.0 | 1800.0 | 2100.0 | 2200.0 | 2300.0 | 0 | 3 | over-capacity |",
		"| 100 req/s | 100 | 10s | 100 | 5.0 | - | 9.0 | 9.5 | 10.0 | 0 | 0 |  |",
		"![goroutines and threads over time](goroutines.png)",
		"> The run ended mid-write; the figures over time come from the 20 whole lines of metrics.jsonl:\n> - metrics.jsonl line 21: cut short",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q\n%s", want, md)
		}
	}
	if _, err := WriteRun(t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "neither a sweep directory") {
		t.Errorf("empty dir: err = %v", err)
	}
}

// A corrupt metrics.jsonl is reported line by line: where, why, and the
// good lines after a bad one still make the plots.
func TestWriteRunCorruptMetrics(t *testing.T) {
	for _, tc := range []struct {
		name       string
		lines      []string
		wantPoints int
		warnings   []string
	}{
		{"corrupt and over-long lines", []string{okLine(0), "{garbage", okLine(1), strings.Repeat("x", rundir.MaxMetricsLine+1), okLine(2)}, 3,
			[]string{"metrics.jsonl line 2 skipped: not a metrics line: ", "metrics.jsonl line 4 skipped: longer than 16 MB"}},
		{"garbage only", []string{"\x00\x01\x02", "not json either"}, 0,
			[]string{"metrics.jsonl line 1 skipped: ", "metrics.jsonl line 2 skipped: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, rundir.ManifestFile), map[string]any{"status": "complete"})
			if err := os.WriteFile(filepath.Join(dir, rundir.MetricsFile), []byte(strings.Join(tc.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := WriteRun(dir, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Points) != tc.wantPoints {
				t.Errorf("%d points, want %d", len(r.Points), tc.wantPoints)
			}
			w := r.Warnings()
			if len(w) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %d", w, len(tc.warnings))
			}
			for i, want := range tc.warnings {
				if !strings.HasPrefix(w[i], want) || strings.Contains(w[i], "\n") {
					t.Errorf("warning %q, want one line starting %q", w[i], want)
				}
			}
			md, err := os.ReadFile(filepath.Join(dir, ReportFile))
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("> **metrics.jsonl: %d lines skipped**", len(tc.warnings)); !strings.Contains(string(md), want) {
				t.Errorf("report.md lacks %q:\n%s", want, md)
			}
		})
	}
}

func okLine(i int) string {
	return fmt.Sprintf(`{"t_s":%d,"load":{"kind":"steady","p50_ms":5,"p99_ms":9},"target":{"goroutines":10,"threads":5}}`, i)
}

// A load.hlog that disagrees with results.json (cut short in a run marked
// complete) is a warning of the report, carried as data.
func TestWriteRunHLogMismatch(t *testing.T) {
	dir := rundirtest.Write(t, filepath.Join(t.TempDir(), "run"), rundirtest.Run{Phases: []rundirtest.Phase{
		{Rate: 100, Latencies: rundirtest.Spread(10*time.Millisecond, 10)},
		{Rate: 200, Latencies: rundirtest.Spread(20*time.Millisecond, 20)},
	}})
	r, err := WriteRun(dir, filepath.Join(t.TempDir(), "report"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.HLogMismatches) != 0 || len(r.Warnings()) != 0 {
		t.Fatalf("whole log: mismatches %+v warnings %q, want none", r.HLogMismatches, r.Warnings())
	}
	rundirtest.CutHLog(t, dir, "#phase 1")
	r, err = WriteRun(dir, filepath.Join(t.TempDir(), "report"))
	if err != nil {
		t.Fatal(err)
	}
	want := []rundir.HLogMismatch{{Phase: 1, Name: "step 2/2", HLog: 0, Results: 20}}
	if !slices.Equal(r.HLogMismatches, want) || len(r.Warnings()) != 1 {
		t.Errorf("mismatches %+v warnings %q, want %+v and its warning", r.HLogMismatches, r.Warnings(), want)
	}
}
