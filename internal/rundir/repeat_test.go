package rundir_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/redact"
	"github.com/schedscope/schedscope/internal/rundir"
)

// WriteRepeat and ReadRepeat round-trip repeat.json, redacting the command
// line and the reason; RunDirs lists the runs that have a manifest, in
// repeat.json's order.
func TestRepeatRoundTrip(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)
	want := rundir.Repeat{
		Version: rundir.RepeatVersion, Count: 3,
		Runs:        []string{rundir.RepeatRunDir(1), rundir.RepeatRunDir(2), rundir.RepeatRunDir(3)},
		Args:        []string{"--repeat", "3", "-H", "Authorization: Bearer s3cret-zq", "http://127.0.0.1:9/"},
		FreshTarget: false, FreshNote: "the runs loaded one target process",
		Start: start, End: start.Add(time.Minute),
		Status: rundir.StatusInterrupted, Reason: "run 3: target http://u:pw-zq@127.0.0.1:9/ stopped answering",
	}
	if err := rundir.WriteRepeat(dir, want); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.RepeatFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cret-zq", "pw-zq"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("repeat.json holds %q:\n%s", secret, b)
		}
	}
	if kind, err := rundir.DirKindOf(dir); err != nil || kind != rundir.DirRepeat {
		t.Errorf("DirKindOf = %v, %v; want a repeat directory", kind, err)
	}

	got, err := rundir.ReadRepeat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 3 || !slices.Equal(got.Runs, want.Runs) || got.FreshTarget || got.FreshNote != want.FreshNote ||
		!got.Start.Equal(start) || !got.End.Equal(want.End) || got.Status != rundir.StatusInterrupted {
		t.Errorf("read back %+v\nwrote %+v", got, want)
	}
	if a := strings.Join(got.Args, " "); !strings.Contains(a, "Authorization: Bearer "+redact.Marker) {
		t.Errorf("args %q", a)
	}
	if !strings.Contains(got.Reason, "u:"+redact.Marker+"@") {
		t.Errorf("reason %q", got.Reason)
	}

	// run-01 and run-03 hold a manifest; run-02 was never started; run-04
	// is not listed. RunDirs gives run-01 and run-03, in order.
	for _, name := range []string{"run-01", "run-03", "run-04"} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, rundir.ManifestFile), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantDirs := []string{filepath.Join(dir, "run-01"), filepath.Join(dir, "run-03")}
	if dirs := got.RunDirs(dir); !slices.Equal(dirs, wantDirs) {
		t.Errorf("RunDirs = %v; want %v", dirs, wantDirs)
	}
	if rundir.RepeatRunDir(1) != "run-01" || rundir.RepeatRunDir(100) != "run-100" {
		t.Errorf("RepeatRunDir: %s, %s", rundir.RepeatRunDir(1), rundir.RepeatRunDir(100))
	}
}

func TestReadRepeatErrors(t *testing.T) {
	root := t.TempDir()
	mk := func(name, content string) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if content != "" {
			if err := os.WriteFile(filepath.Join(dir, rundir.RepeatFile), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tc := range []struct {
		dir, want string
	}{
		{mk("none", ""), "not a repeat directory (no repeat.json)"},
		{mk("bad", "{"), "repeat plan " + filepath.Join(root, "bad", rundir.RepeatFile)},
		{mk("future", `{"version": 99}`), "version 99, this schedscope reads 1"},
		// Runs outside the directory, or one run twice: more runs than made.
		{mk("up", `{"version": 1, "runs": ["run-01", "../none"]}`), `run "../none" is outside the repeat directory`},
		{mk("abs", `{"version": 1, "runs": ["`+root+`"]}`), `run "` + root + `" is outside the repeat directory`},
		{mk("twice", `{"version": 1, "runs": ["run-01", "run-01"]}`), filepath.Join(root, "twice", "run-01") + " is given twice"},
		{mk("spelled", `{"version": 1, "runs": ["run-01", "x/../run-01"]}`), " again: give each run once"},
	} {
		if _, err := rundir.ReadRepeat(tc.dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadRepeat(%s) = %v; want %q", filepath.Base(tc.dir), err, tc.want)
		}
	}
}

// CheckNewRepeatDir accepts only a new or empty directory and names what
// else is there; CheckNewRunDir refuses a repeat directory.
func TestCheckNewRepeatDir(t *testing.T) {
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
	repeat := mk("repeat", rundir.RepeatFile)
	for _, tc := range []struct {
		path, want string // want "": accepted
	}{
		{filepath.Join(root, "missing"), ""},
		{mk("empty"), ""},
		{mk("run", rundir.ManifestFile), "exists and is a run directory (manifest.json): choose a new or empty directory"},
		{mk("sweep", rundir.SweepFile), "exists and is a sweep directory (sweep.json)"},
		{repeat, "exists and is a repeat directory (repeat.json)"},
		{mk("other", "notes.txt"), "exists and holds other files (notes.txt)"},
		{file, "exists and is not a directory"},
	} {
		err := rundir.CheckNewRepeatDir(tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckNewRepeatDir(%s) = %v", filepath.Base(tc.path), err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "repeat directory "+tc.path+": "+tc.want)):
			t.Errorf("CheckNewRepeatDir(%s) = %v; want %q", filepath.Base(tc.path), err, tc.want)
		}
	}
	if err := rundir.CheckNewRunDir(repeat); err == nil || !strings.Contains(err.Error(), "is a repeat directory (repeat.json)") {
		t.Errorf("CheckNewRunDir over a repeat directory: %v", err)
	}
}

// A run that is a link: to another run of the same repeat it is that run
// again, out of the directory it is outside it.
func TestReadRepeatLinkedRuns(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "rep")
	for _, d := range []string{filepath.Join(dir, "run-01"), filepath.Join(root, "elsewhere")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("run-01", filepath.Join(dir, "run-02")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(dir, "run-03")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		runs []string
		want string
	}{
		{[]string{"run-01", "run-02"}, filepath.Join(dir, "run-02") + " is " + filepath.Join(dir, "run-01") + " again"},
		{[]string{"run-01", "run-03"}, `run "run-03" is outside the repeat directory`},
		{[]string{"run-01", "run-04"}, ""}, // not made yet: RunDirs leaves it out
	} {
		if err := rundir.WriteRepeat(dir, rundir.Repeat{Version: rundir.RepeatVersion, Runs: tc.runs}); err != nil {
			t.Fatal(err)
		}
		_, err := rundir.ReadRepeat(dir)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("runs %q: %v; want %q", tc.runs, err, tc.want)
		}
	}
}
