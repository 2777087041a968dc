package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
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
			Latency:        load.Percentiles{P50: 900, P99: 2100, P999: 2200, Max: 2300},
			Verdicts:       []string{"over-capacity: 2xx/s 158 of the offered 200 req/s"},
			VerdictDetails: []load.Verdict{{Kind: load.OverCapacity}}}}})
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
	b, err := os.ReadFile(r.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"# Run: `http://127.0.0.1:9/sleep`",
		"> **Run interrupted** (SIGINT)",
		"| 200 req/s | 200 | 10s | 158 | 900.0 | 2100.0 | 2200.0 | 2300.0 | 0 | 3 | over-capacity |",
		"![goroutines and threads over time](goroutines.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q\n%s", want, md)
		}
	}
	if _, err := WriteRun(t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "neither a sweep directory") {
		t.Errorf("empty dir: err = %v", err)
	}
}
