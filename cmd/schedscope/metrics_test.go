package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
)

// report and analyze --rederive say which metrics.jsonl lines they
// skipped, one line each on stderr; a last line cut by a killed run is
// only noted in the report and the summary.
func TestMetricsProblemsAreReported(t *testing.T) {
	good := `{"t_s":1,"load":{"kind":"steady","p50_ms":5,"p99_ms":9},"target":{"goroutines":10}}`
	for _, tc := range []struct {
		name, metrics string
		warnings      []string
	}{
		{"corrupt", good + "\n{garbage\n" + good + "\n" + strings.Repeat("x", rundir.MaxMetricsLine+1) + "\n",
			[]string{"metrics.jsonl line 2 skipped: not a metrics line", "metrics.jsonl line 4 skipped: longer than 16 MB"}},
		{"cut last line", good + "\n" + `{"t_s":2,"lo`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sweepTestWriteJSON(t, filepath.Join(dir, rundir.ManifestFile), rundir.Manifest{Status: rundir.StatusComplete})
			if err := os.WriteFile(filepath.Join(dir, rundir.MetricsFile), []byte(tc.metrics), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"report", dir}, {"analyze", "--rederive", dir}} {
				code, _, errOut := runCLI(t, context.Background(), args...)
				lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
				if errOut == "" {
					lines = nil
				}
				if code != 0 || len(lines) != len(tc.warnings) {
					t.Fatalf("%v: exit %d, stderr %q; want %d warnings", args, code, errOut, len(tc.warnings))
				}
				for i, w := range tc.warnings {
					if !strings.Contains(lines[i], "warning: "+dir+": "+w) {
						t.Errorf("%v: warning %q, want %q", args, lines[i], w)
					}
				}
			}
			sum, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
			if err != nil || !strings.Contains(string(sum), "== metrics.jsonl: lines skipped") {
				t.Errorf("summary.txt does not list the skipped lines: %v\n%s", err, sum)
			}
		})
	}
}
