package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// sweep --out, run --out and report --out refuse a directory of another
// kind before writing anything: a sweep with finished steps (whose edited
// report.md was rewritten before the refusal), a finished run directory (a
// sweep took it over), a directory holding other files.
func TestOutRefusesOtherKinds(t *testing.T) {
	root := t.TempDir()
	sweepDir := filepath.Join(root, "sweep")
	writeTestSweep(t, sweepDir)
	if code, _, errOut := runCLI(t, context.Background(), "report", sweepDir); code != 0 {
		t.Fatalf("report: %d %s", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(sweepDir, "report.md"), []byte("my edits"), 0o644); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(root, "run")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sweepTestWriteJSON(t, filepath.Join(runDir, rundir.ManifestFile), rundir.Manifest{Status: rundir.StatusComplete})
	other := filepath.Join(root, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	sweepArgs := func(out string) []string {
		return []string{"sweep", "--cmd", "sleep 60", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10", "--no-tui", "--out", out}
	}
	runArgs := func(out string) []string {
		return []string{"run", "--no-tui", "--rate", "10", "--duration", "1s", "--out", out, "http://127.0.0.1:9/"}
	}
	for _, tc := range []struct {
		args []string
		code int
		dir  string
		want string
	}{
		{sweepArgs(sweepDir), 2, sweepDir, "already holds a sweep with 1 finished steps: use --resume"},
		{sweepArgs(runDir), 2, runDir, "is a run directory (manifest.json)"},
		{sweepArgs(other), 2, other, "holds other files (notes.txt)"},
		{runArgs(sweepDir), 2, sweepDir, "exists and is a sweep directory (sweep.json)"},
		{runArgs(runDir), 2, runDir, "exists and is a run directory (manifest.json)"},
		{runArgs(other), 2, other, "holds other files (notes.txt)"},
		{[]string{"report", "--out", runDir, sweepDir}, 1, runDir, "is a run directory (manifest.json)"},
		{[]string{"report", "--out", sweepDir, runDir}, 1, sweepDir, "is a sweep directory (sweep.json)"},
		{[]string{"report", "--out", other, runDir}, 1, other, "holds other files (notes.txt)"},
	} {
		before := dirState(t, tc.dir)
		code, _, errOut := runCLI(t, context.Background(), tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
		if after := dirState(t, tc.dir); after != before {
			t.Errorf("%v changed %s:\nbefore %s\nafter  %s", tc.args, tc.dir, before, after)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(sweepDir, "report.md")); string(b) != "my edits" {
		t.Errorf("the sweep's edited report.md was rewritten")
	}
}

// writeTestSweep writes a sweep directory with one finished step.
func writeTestSweep(t *testing.T, dir string) {
	t.Helper()
	plan := rundir.SweepPlan{Version: rundir.SweepVersion, URL: "http://127.0.0.1:9/cpu", Scenario: "cpu",
		GOMAXPROCS: []int{1}, Rates: []float64{10}, Iterations: 1, DurationS: 1}
	step := rundir.SweepStep{StepKey: rundir.StepKey{GOMAXPROCS: 1, Iteration: 1, Rate: 10}, DurationS: 1, Sent: 10, OK: 10,
		OKPerSec: 10, AnsweredPerSec: 10, P50MS: 1, P99MS: 2}
	if err := os.MkdirAll(filepath.Join(dir, rundir.StepsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	sweepTestWriteJSON(t, filepath.Join(dir, rundir.SweepFile), plan)
	sweepTestWriteJSON(t, filepath.Join(dir, rundir.StepsDir, step.File()), step)
}

// dirState describes every file under dir: path, size, modification time.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %s; ", path, fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
