package rundir_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
)

func TestDirKindOf(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, files ...string) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want rundir.DirKind
	}{
		{filepath.Join(root, "missing"), rundir.DirAbsent},
		{mk("empty"), rundir.DirEmpty},
		{mk("run", rundir.ManifestFile, rundir.MetricsFile), rundir.DirRun},
		{mk("sweep", rundir.SweepFile), rundir.DirSweep},
		{mk("other", "notes.txt"), rundir.DirOther},
		{file, rundir.NotDir},
	} {
		got, err := rundir.DirKindOf(tc.path)
		if err != nil || got != tc.want {
			t.Errorf("DirKindOf(%s) = %v, %v; want %v", filepath.Base(tc.path), got, err, tc.want)
		}
		err = rundir.CheckNewRunDir(tc.path)
		if ok := tc.want == rundir.DirAbsent || tc.want == rundir.DirEmpty; ok != (err == nil) {
			t.Errorf("CheckNewRunDir(%s) = %v", filepath.Base(tc.path), err)
		}
	}
	// Create refuses a directory of another kind before writing anything.
	sweep := mk("sweep2", rundir.SweepFile)
	if _, err := rundir.Create(sweep); err == nil || !strings.Contains(err.Error(), "a sweep directory") {
		t.Errorf("Create over a sweep directory: %v", err)
	}
	if names, _ := os.ReadDir(sweep); len(names) != 1 {
		t.Errorf("Create wrote into the sweep directory: %v", names)
	}
}
