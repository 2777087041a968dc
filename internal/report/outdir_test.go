package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// A report never writes into a directory of another kind: a run or sweep
// directory other than its input, or a directory holding other files. It
// refuses before writing anything.
func TestReportOutDir(t *testing.T) {
	sweepDir := writeSweepDir(t, false)
	runDir := t.TempDir()
	writeFile(t, filepath.Join(runDir, rundir.ManifestFile), map[string]any{"status": "complete"})
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Another sweep with an edited report of its own.
	edited := writeSweepDir(t, false)
	if _, err := WriteSweep(edited, ""); err != nil {
		t.Fatal(err)
	}
	mdPath := filepath.Join(edited, ReportFile)
	if err := os.WriteFile(mdPath, []byte("my edits"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		write func(out string) error
		out   string
		want  string
	}{
		{"sweep report into a run directory", func(out string) error { _, err := WriteSweep(sweepDir, out); return err }, runDir, "is a run directory"},
		{"sweep report into another sweep", func(out string) error { _, err := WriteSweep(sweepDir, out); return err }, edited, "is a sweep directory"},
		{"run report into a sweep", func(out string) error { _, err := WriteRun(runDir, out); return err }, edited, "is a sweep directory"},
		{"run report into other files", func(out string) error { _, err := WriteRun(runDir, out); return err }, other, "holds other files (notes.txt)"},
		{"comparison into one of its sweeps", func(out string) error { _, err := WriteComparison([]string{sweepDir, edited}, out); return err }, edited, "is a sweep directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, tc.out)
			err := tc.write(tc.out)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line with %q", err, tc.want)
			}
			if after := snapshot(t, tc.out); after != before {
				t.Errorf("%s changed:\nbefore %s\nafter  %s", tc.out, before, after)
			}
		})
	}
	if b, _ := os.ReadFile(mdPath); string(b) != "my edits" {
		t.Errorf("the edited report.md was rewritten: %q", b)
	}
	// Allowed: the input directory itself, a new or empty directory, and
	// one holding only an earlier report.
	fresh := filepath.Join(t.TempDir(), "new")
	for _, out := range []string{sweepDir, "", fresh, fresh} {
		if _, err := WriteSweep(sweepDir, out); err != nil {
			t.Errorf("WriteSweep into %q: %v", out, err)
		}
	}
	if _, err := WriteRun(runDir, runDir); err != nil {
		t.Errorf("WriteRun into its own directory: %v", err)
	}
}

// snapshot describes dir's entries, sizes and modification times.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %s; ", e.Name(), fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
	}
	return b.String()
}
