package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// repeatRunArgs are a short run's flags: one 500 ms steady phase, a small trace
// window, quick polls.
func repeatRunArgs(extra ...string) []string {
	return append([]string{"run", "--no-tui", "--rate", "40", "--duration", "500ms", "--trace-window", "200ms", "--poll", "250ms"}, extra...)
}

// fixtureCmd is a --cmd that starts this test binary as `schedscope
// fixture` on addr (TestMain's envExec).
func fixtureCmd(t *testing.T, addr string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return envExec + "=1 " + exe + " fixture --addr " + addr
}

func readRepeat(t *testing.T, dir string) *rundir.Repeat {
	t.Helper()
	rep, err := rundir.ReadRepeat(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func readManifest(t *testing.T, dir string) rundir.Manifest {
	t.Helper()
	var m rundir.Manifest
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.ManifestFile), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Bad --repeat and --repeat-pause values, and an --out that is not new or
// empty, are refused with one line and exit 2 before anything is written:
// no directory is created or changed, no --cmd-log opened.
func TestRunRepeatBadInput(t *testing.T) {
	root := t.TempDir()
	runDir := filepath.Join(root, "run")
	sweepDir := filepath.Join(root, "sweep")
	repeatDir := filepath.Join(root, "repeat")
	other := filepath.Join(root, "other")
	for _, d := range []string{runDir, repeatDir, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweepTestWriteJSON(t, filepath.Join(runDir, rundir.ManifestFile), rundir.Manifest{Status: rundir.StatusComplete})
	writeTestSweep(t, sweepDir)
	if err := rundir.WriteRepeat(repeatDir, rundir.Repeat{Version: rundir.RepeatVersion, Count: 2, Status: rundir.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	newOut := filepath.Join(root, "new")
	cmdLog := filepath.Join(root, "target.log")
	args := func(extra ...string) []string {
		return append(repeatRunArgs(extra...), "http://127.0.0.1:9/")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args("--repeat", "0", "--out", newOut, "--cmd-log", cmdLog), "--repeat 0: must be in [2, 100] (1, the default, is a single run)"},
		{args("--repeat", "101", "--out", newOut), "--repeat 101: must be in [2, 100]"},
		{args("--repeat", "-2", "--out", newOut), "--repeat -2: must be in [2, 100]"},
		{args("--repeat", "two", "--out", newOut), `invalid value "two" for flag -repeat`},
		{args("--repeat", "2", "--repeat-pause", "-1s", "--out", newOut, "--cmd-log", cmdLog), "--repeat-pause -1s: must be in [0, 1h0m0s]"},
		{args("--repeat", "2", "--repeat-pause", "2h", "--out", newOut), "--repeat-pause 2h0m0s: must be in [0, 1h0m0s]"},
		{args("--repeat-pause", "1s", "--out", newOut), "--repeat-pause is the pause between the runs of --repeat N: give --repeat too"},
		{args("--repeat", "2", "--out", runDir, "--cmd-log", cmdLog), "repeat directory " + runDir + ": exists and is a run directory (manifest.json): choose a new or empty directory"},
		{args("--repeat", "2", "--out", sweepDir), "repeat directory " + sweepDir + ": exists and is a sweep directory (sweep.json)"},
		{args("--repeat", "2", "--out", repeatDir), "repeat directory " + repeatDir + ": exists and is a repeat directory (repeat.json)"},
		{args("--repeat", "2", "--out", other), "repeat directory " + other + ": exists and holds other files (notes.txt)"},
		{args("--out", repeatDir), "run directory " + repeatDir + ": exists and is a repeat directory (repeat.json)"},
		{args("--repeat", "2", "--out", newOut, "--cmd-log", filepath.Join(newOut, "log")), "is inside the repeat directory " + newOut},
		{args("--repeat", "2", "--out", newOut, "--pid", "1", "--cmd", "true"), "give --pid or --cmd, not both"},
	} {
		before := dirState(t, root)
		code, stdout, errOut := runCLI(t, context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, errOut, tc.want)
		}
		if stdout != "" {
			t.Errorf("%v: printed %q", tc.args, stdout)
		}
		if after := dirState(t, root); after != before {
			t.Errorf("%v changed %s:\nbefore %s\nafter  %s", tc.args, root, before, after)
		}
	}
}

// With --cmd, each run of a repeat starts its own target process: two run
// directories, each complete, with two different target PIDs, and
// repeat.json complete with FreshTarget. The output says which run each
// progress line belongs to, gives a line per run and the table, and how to
// compare.
func TestRunRepeatFreshTargets(t *testing.T) {
	addr := freeAddr(t)
	out := filepath.Join(t.TempDir(), "rep")
	start := time.Now()
	code, stdout, errOut := runCLI(t, context.Background(), append(repeatRunArgs("--repeat", "2", "--repeat-pause", "100ms",
		"--cmd", fixtureCmd(t, addr), "--out", out), "http://"+addr+"/sleep?ms=1")...)
	t.Logf("repeat 2 with --cmd took %v", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, stdout)
	}
	rep := readRepeat(t, out)
	wantRuns := []string{"run-01", "run-02"}
	if rep.Count != 2 || !slices.Equal(rep.Runs, wantRuns) || rep.Status != rundir.StatusComplete || rep.Reason != "" ||
		!rep.FreshTarget || rep.FreshNote != "" || rep.End.Before(rep.Start) || !slices.Contains(rep.Args, "--repeat") {
		t.Errorf("repeat.json: %+v", rep)
	}
	if dirs := rep.RunDirs(out); len(dirs) != 2 {
		t.Errorf("RunDirs: %v", dirs)
	}
	var pids []int
	for _, name := range wantRuns {
		m := readManifest(t, filepath.Join(out, name))
		if m.Status != rundir.StatusComplete || m.Target.PID == 0 {
			t.Errorf("%s: status %q, target pid %d", name, m.Status, m.Target.PID)
		}
		pids = append(pids, m.Target.PID)
		for _, f := range []string{rundir.ResultsFile, rundir.AnalysisFile, rundir.SummaryFile} {
			if _, err := os.Stat(filepath.Join(out, name, f)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	if pids[0] == pids[1] {
		t.Errorf("both runs loaded target pid %d: want a fresh process each", pids[0])
	}
	if answers(addr) {
		t.Errorf("the target at %s still answers after the repeat ended", addr)
	}
	for _, want := range []string{
		"run 1/2: writing " + filepath.Join(out, "run-01") + "\n",
		"\nrun 1/2 ", "\nrun 2/2 ", // progress lines
		"run 1/2: " + filepath.Join(out, "run-01") + " complete: steady 2xx/s ",
		"run 2/2: " + filepath.Join(out, "run-02") + " complete: steady 2xx/s ",
		"pause 100ms before run 2/2\n",
		"\nrun     status    2xx/s",
		"\nrun-02  complete  ",
		"\ncompare them: schedscope compare " + out + " -- OTHER\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "note:") {
		t.Errorf("a repeat with --cmd printed the shared-target note:\n%s", stdout)
	}
}

// Without --cmd the runs share one target process: repeat.json says so,
// and so does the output, once.
func TestRunRepeatSharedTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("two loopback runs; the fresh-target test covers the repeat in -short")
	}
	base := startFixture(t)
	out := filepath.Join(t.TempDir(), "rep")
	code, stdout, errOut := runCLI(t, context.Background(), append(repeatRunArgs("--repeat", "2", "--repeat-pause", "0",
		"--out", out), base+"/sleep?ms=1")...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, stdout)
	}
	rep := readRepeat(t, out)
	if rep.FreshTarget || rep.FreshNote != sharedTargetNote || rep.Status != rundir.StatusComplete || len(rep.Runs) != 2 {
		t.Errorf("repeat.json: %+v", rep)
	}
	if n := strings.Count(stdout, sharedTargetNote); n != 1 {
		t.Errorf("the note is printed %d times:\n%s", n, stdout)
	}
	if strings.Contains(stdout, "pause ") {
		t.Errorf("--repeat-pause 0 still paused:\n%s", stdout)
	}
}

// A Ctrl-C in the pause after the first run: no further run starts,
// run-01 stays complete, repeat.json says interrupted and why, exit 130
// with one line, without waiting out the pause.
func TestRunRepeatInterruptedBetweenRuns(t *testing.T) {
	base := startFixture(t)
	out := filepath.Join(t.TempDir(), "rep")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		code           int
		stdout, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, errOut := runCLI(t, ctx, append(repeatRunArgs("--repeat", "3", "--repeat-pause", "1m",
			"--out", out), base+"/sleep?ms=1")...)
		done <- result{code, stdout, errOut}
	}()
	// run-01 is derived (its summary.txt written) before the pause.
	summary := filepath.Join(out, "run-01", rundir.SummaryFile)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(summary); err == nil {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("ended before run-01 was derived: exit %d, %s\n%s", r.code, r.errOut, r.stdout)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("run-01 not derived within 30 s")
		}
	}
	cancel()
	canceled := time.Now()
	var r result
	select {
	case r = <-done:
	case <-time.After(exitBound):
		t.Fatalf("still running %v after the cancellation", exitBound)
	}
	t.Logf("ended %v after the cancellation", time.Since(canceled).Round(time.Millisecond))
	want := "schedscope run: interrupted before run 2/3: " + out + " keeps run-01\n"
	if r.code != 130 || r.errOut != want {
		t.Errorf("exit %d, stderr %q; want 130 and %q", r.code, r.errOut, want)
	}
	rep := readRepeat(t, out)
	if rep.Status != rundir.StatusInterrupted || rep.Reason != "interrupted (Ctrl-C or SIGTERM) before run 2 of 3" ||
		!slices.Equal(rep.Runs, []string{"run-01"}) || rep.End.IsZero() {
		t.Errorf("repeat.json: %+v", rep)
	}
	if m := readManifest(t, filepath.Join(out, "run-01")); m.Status != rundir.StatusComplete {
		t.Errorf("run-01: %s (%s)", m.Status, m.Reason)
	}
	if _, err := os.Stat(filepath.Join(out, "run-02")); err == nil {
		t.Errorf("run-02 was started")
	}
	if !strings.Contains(r.stdout, "\nrun-01  complete  ") || strings.Contains(r.stdout, "compare them") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

// A Ctrl-C during the second run: that run keeps what it measured, and
// repeat.json lists it and says interrupted; exit 130.
func TestRunRepeatInterruptedDuringRun(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a run and a half")
	}
	base := startFixture(t)
	out := filepath.Join(t.TempDir(), "rep")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		code           int
		stdout, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, errOut := runCLI(t, ctx, "run", "--no-tui", "--rate", "40", "--duration", "3s", "--trace-window", "200ms",
			"--poll", "250ms", "--repeat", "2", "--repeat-pause", "0", "--out", out, base+"/sleep?ms=1")
		done <- result{code, stdout, errOut}
	}()
	metrics := filepath.Join(out, "run-02", rundir.MetricsFile)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if fi, err := os.Stat(metrics); err == nil && fi.Size() > 0 {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("ended before run-02 measured: exit %d, %s\n%s", r.code, r.errOut, r.stdout)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("run-02 measured nothing within 60 s")
		}
	}
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(exitBound):
		t.Fatalf("still running %v after the cancellation", exitBound)
	}
	if r.code != 130 || !strings.Contains(r.errOut, "run 2/2: interrupted (Ctrl-C or SIGTERM): "+filepath.Join(out, "run-02")+" holds what was measured until then; no further run started") ||
		strings.Count(r.errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", r.code, r.errOut)
	}
	rep := readRepeat(t, out)
	if rep.Status != rundir.StatusInterrupted || rep.Reason != "run 2 of 2: interrupted (Ctrl-C or SIGTERM)" ||
		!slices.Equal(rep.Runs, []string{"run-01", "run-02"}) {
		t.Errorf("repeat.json: %+v", rep)
	}
	if m := readManifest(t, filepath.Join(out, "run-01")); m.Status != rundir.StatusComplete {
		t.Errorf("run-01: %s", m.Status)
	}
	if m := readManifest(t, filepath.Join(out, "run-02")); m.Status != rundir.StatusInterrupted {
		t.Errorf("run-02: %s", m.Status)
	}
	if _, err := os.Stat(filepath.Join(out, "run-02", rundir.ResultsFile)); err != nil {
		t.Errorf("run-02 kept no results: %v", err)
	}
}

// A target that does not start in the second run stops the repeat with
// its error (exit 1, one line); run-01 is kept, run-02 is not among the
// runs, and repeat.json says why.
func TestRunRepeatTargetFailsToStart(t *testing.T) {
	addr := freeAddr(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "rep")
	started := filepath.Join(dir, "started")
	// The first start leaves a mark; the second sees it and exits at once.
	cmd := "if [ -e " + started + " ]; then exit 3; fi; touch " + started + "; " + fixtureCmd(t, addr)
	code, stdout, errOut := runCLI(t, context.Background(), append(repeatRunArgs("--repeat", "3", "--repeat-pause", "0",
		"--cmd", cmd, "--out", out), "http://"+addr+"/sleep?ms=1")...)
	if code != 1 || !strings.HasPrefix(errOut, "schedscope run: run 2/3 did not start, so the repeat stopped ("+out+" keeps run-01): ") ||
		strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q\n%s", code, errOut, stdout)
	}
	rep := readRepeat(t, out)
	if rep.Status != rundir.StatusInterrupted || !strings.HasPrefix(rep.Reason, "run 2 of 3 did not start: ") ||
		!slices.Equal(rep.Runs, []string{"run-01"}) || !rep.FreshTarget {
		t.Errorf("repeat.json: %+v", rep)
	}
	if m := readManifest(t, filepath.Join(out, "run-01")); m.Status != rundir.StatusComplete {
		t.Errorf("run-01: %s (%s)", m.Status, m.Reason)
	}
	if _, err := os.Stat(filepath.Join(out, "run-03")); err == nil {
		t.Errorf("run-03 was started")
	}
}

// A target that dies during a run ends the repeat as a Ctrl-C does: the
// run keeps what it measured, no further run starts, repeat.json says
// interrupted and why, exit 130.
func TestRunRepeatTargetDies(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a run of about 2 s")
	}
	addr := freeAddr(t)
	out := filepath.Join(t.TempDir(), "rep")
	// The target ends itself 2 s after it starts, well before its 10 s run ends.
	cmd := fixtureCmd(t, addr) + " & sleep 2; kill $!; wait"
	code, stdout, errOut := runCLI(t, context.Background(), "run", "--no-tui", "--rate", "40", "--duration", "10s", "--poll", "250ms",
		"--trace-window", "200ms", "--repeat", "2", "--repeat-pause", "0", "--cmd", cmd, "--out", out, "http://"+addr+"/sleep?ms=1")
	if code != 130 || !strings.Contains(errOut, "run 1/2: interrupted (the target stopped answering") ||
		!strings.Contains(errOut, "no further run started") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q\n%s", code, errOut, stdout)
	}
	rep := readRepeat(t, out)
	if rep.Status != rundir.StatusInterrupted || !strings.HasPrefix(rep.Reason, "run 1 of 2: the target stopped answering") ||
		!slices.Equal(rep.Runs, []string{"run-01"}) {
		t.Errorf("repeat.json: %+v", rep)
	}
	if m := readManifest(t, filepath.Join(out, "run-01")); m.Status != rundir.StatusInterrupted {
		t.Errorf("run-01: %s (%s)", m.Status, m.Reason)
	}
	if _, err := os.Stat(filepath.Join(out, "run-02")); err == nil {
		t.Errorf("run-02 was started")
	}
}

// --fail-on with --repeat checks every run of the repeat: exit 4 when a
// condition holds in one of them.
func TestRunRepeatFailOn(t *testing.T) {
	if testing.Short() {
		t.Skip("two loopback runs; the fresh-target test covers the repeat in -short")
	}
	base := startFixture(t)
	out := filepath.Join(t.TempDir(), "rep")
	code, stdout, errOut := runCLI(t, context.Background(), append(repeatRunArgs("--repeat", "2", "--repeat-pause", "0",
		"--fail-on", "p99>1us", "--out", out), base+"/sleep?ms=1")...)
	if code != 4 || !strings.Contains(errOut, "--fail-on p99 = ") || !strings.Contains(errOut, filepath.Join(out, "run-01")) ||
		!strings.Contains(errOut, filepath.Join(out, "run-02")) {
		t.Errorf("exit %d, stderr %q\n%s", code, errOut, stdout)
	}
	if rep := readRepeat(t, out); rep.Status != rundir.StatusComplete || len(rep.Runs) != 2 {
		t.Errorf("repeat.json: %+v", rep)
	}
}
