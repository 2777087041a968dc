package derive

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
)

// A derivation its context stops writes nothing: files derived before stay
// as they were, and none appear where there were none.
func TestDirStoppedWritesNothing(t *testing.T) {
	dir := runDir(t, goodLine+"\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := Dir(ctx, dir)
	if d != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Dir on a cancelled context: %v, %v", d, err)
	}
	for _, name := range []string{rundir.AnalysisFile, rundir.SummaryFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s written by a stopped derivation (%v)", name, err)
		}
	}
	if _, err := Dir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, rundir.AnalysisFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(ctx, dir); err == nil {
		t.Error("a stopped rederivation: no error")
	}
	if after, _ := os.ReadFile(filepath.Join(dir, rundir.AnalysisFile)); string(after) != string(before) {
		t.Error("a stopped rederivation replaced analysis.json")
	}
}

// AfterRun: after an interruption the derivation gets its budget, and one
// that does not fit is cut (nothing written, no error); one that fits
// derives as usual.
func TestAfterRun(t *testing.T) {
	interrupted, cancel := context.WithCancel(context.Background())
	cancel()
	dir := runDir(t, goodLine+"\n")
	d, cut, err := AfterRun(interrupted, dir, 0)
	if d != nil || !cut || err != nil {
		t.Errorf("no budget: %v, cut %v, %v; want cut", d, cut, err)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.AnalysisFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cut derivation wrote analysis.json (%v)", err)
	}
	d, cut, err = AfterRun(interrupted, dir, Timeout)
	if d == nil || cut || err != nil {
		t.Errorf("ample budget: %v, cut %v, %v; want a derivation", d, cut, err)
	}
	d, cut, err = AfterRun(context.Background(), dir, 0)
	if d == nil || cut || err != nil {
		t.Errorf("not interrupted: %v, cut %v, %v; want a derivation (the budget is for interruptions)", d, cut, err)
	}
}
