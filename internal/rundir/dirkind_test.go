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

// Distinct refuses a path that names an earlier one by any spelling: the
// same string, a trailing slash, a ./ or x/.. detour, a symbolic link; a
// path that does not exist, by its cleaned absolute name.
func TestDistinct(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(root, "gone")
	for _, tc := range []struct {
		paths []string
		want  string // "" distinct
	}{
		{[]string{a, b}, ""},
		{[]string{a, b, gone}, ""},
		{nil, ""},
		{[]string{a, b, a}, a + " is given twice"},
		{[]string{a, a + "/"}, a + "/ is " + a + " again"},
		{[]string{a, root + "/b/../a"}, root + "/b/../a is " + a + " again"},
		{[]string{b, link, a}, a + " is " + link + " again"},
		{[]string{gone, root + "/./gone"}, root + "/./gone is " + gone + " again"},
	} {
		err := rundir.Distinct(tc.paths)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Distinct(%q) = %v; want %q", tc.paths, err, tc.want)
		}
	}
}

// Within: dir itself and anything under it, made yet or not; not a
// sibling that shares a prefix, a parent, or a link out of dir.
func TestWithin(t *testing.T) {
	root := t.TempDir()
	dir, other := filepath.Join(root, "shard"), filepath.Join(root, "other")
	for _, d := range []string{dir, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(other, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(other, "in")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{dir, true},
		{dir + "/", true},
		{filepath.Join(dir, "merged"), true},
		{filepath.Join(dir, "a", "b"), true},
		{filepath.Join(other, "in", "merged"), true},
		{filepath.Join(dir, "out", "merged"), false},
		{filepath.Join(dir, "..", "merged"), false},
		{dir + "-merged", false},
		{root, false},
		{other, false},
	} {
		if got := rundir.Within(tc.path, dir); got != tc.want {
			t.Errorf("Within(%s, %s) = %v, want %v", tc.path, dir, got, tc.want)
		}
	}
	if rundir.Within(filepath.Join(root, "nowhere", "x"), filepath.Join(root, "nowhere")) {
		t.Error("a directory that does not exist holds something")
	}
}
