package derive

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
)

// runDir writes a small run directory: a manifest, metrics.jsonl with the
// given lines and, as trace.out, a trace generated for the analyzers' tests.
func runDir(t *testing.T, metrics string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(rundir.ManifestFile, []byte(`{"status": "complete", "config": {"target_url": "http://127.0.0.1:9/"}}`))
	write(rundir.MetricsFile, []byte(metrics))
	tr, err := os.ReadFile("../../analyze/testdata/go1.26/mixed.trace")
	if err != nil {
		t.Fatal(err)
	}
	write(rundir.TraceFile, tr)
	return dir
}

const goodLine = `{"t_s":1,"load":{"kind":"steady","step":0},"target":{"goroutines":10}}`

// Skipped metrics.jsonl lines are recorded in analysis.json and listed in
// summary.txt, each with its line number and reason.
func TestDirRecordsMetricsProblems(t *testing.T) {
	dir := runDir(t, goodLine+"\n{broken\n"+goodLine+"\n"+`{"t_s":3,"lo`)
	d, err := Dir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	an := d.Analysis
	if an.MetricsSkipped != 2 || len(an.MetricsProblems) != 2 || an.MetricsProblems[0].Line != 2 || !an.MetricsProblems[1].Cut {
		t.Errorf("analysis: skipped %d, problems %+v; want line 2 (corrupt) and line 4 (cut)", an.MetricsSkipped, an.MetricsProblems)
	}
	for _, want := range []string{"== metrics.jsonl: lines skipped\n- metrics.jsonl line 2 skipped: not a metrics line: ", "- metrics.jsonl line 4: cut short"} {
		if !strings.Contains(d.Summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, d.Summary)
		}
	}
	var written rundir.Analysis
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.AnalysisFile), &written); err != nil || written.MetricsSkipped != 2 {
		t.Errorf("analysis.json: %v, skipped %d", err, written.MetricsSkipped)
	}
}

// A derivation whose summary.txt cannot be written (here: a directory
// holds its name, so the rename fails, as a full disk fails the write)
// leaves a manifest, written last, that says the run is incomplete and
// that summary.txt is missing, not one that says complete.
func TestDirSaysWhatItCouldNotWrite(t *testing.T) {
	dir := runDir(t, goodLine+"\n")
	if err := os.MkdirAll(filepath.Join(dir, rundir.SummaryFile, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(context.Background(), dir); err == nil || !strings.Contains(err.Error(), rundir.SummaryFile) {
		t.Fatalf("Dir: %v, want an error naming %s", err, rundir.SummaryFile)
	}
	var m rundir.Manifest
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.ManifestFile), &m); err != nil {
		t.Fatal(err)
	}
	if m.Status != rundir.StatusIncomplete || !strings.Contains(m.Reason, rundir.SummaryFile) {
		t.Errorf("status %q reason %q, want %q naming %s", m.Status, m.Reason, rundir.StatusIncomplete, rundir.SummaryFile)
	}
	if len(m.Missing) != 1 || m.Missing[0].File != rundir.SummaryFile {
		t.Errorf("missing %+v, want %s", m.Missing, rundir.SummaryFile)
	}
}
