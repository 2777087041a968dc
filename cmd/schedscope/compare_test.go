package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/compare"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/rundir/rundirtest"
)

// fakeRuns writes n run directories of one phase at rate, their latencies
// around center, named prefix-1..n under dir.
func fakeRuns(t *testing.T, dir, prefix string, n int, rate float64, center time.Duration) []string {
	t.Helper()
	var out []string
	for i := range n {
		lat := rundirtest.Spread(center+time.Duration(i)*center/100, 200)
		out = append(out, rundirtest.Write(t, filepath.Join(dir, prefix+"-"+string(rune('1'+i))), rundirtest.Run{
			Command: "schedscope fixture --model " + prefix,
			Phases:  []rundirtest.Phase{{Rate: rate, Latencies: lat}},
		}))
	}
	return out
}

// Five runs a side, B's p99 twice A's: the table shows the regression as
// significant, the JSON carries it, and a gate on it exits 4 with its line.
func TestCompareRepeats(t *testing.T) {
	tmp := t.TempDir()
	a := fakeRuns(t, tmp, "goroutine", 5, 100, 50*time.Millisecond)
	b := fakeRuns(t, tmp, "pool", 5, 100, 100*time.Millisecond)
	args := append(append(append([]string{"compare"}, a...), "--"), b...)
	code, out, errOut := runCLI(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"A: goroutine, 5 runs", "B: pool, 5 runs", "phase 1: steady, 100 req/s", "(p=0.008 n=5) worse"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	gate := append([]string{"compare", "--fail-on", "p99>+10%, errors>1%"}, args[1:]...)
	code, _, errOut = runCLI(t, context.Background(), gate...)
	if code != 4 || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "schedscope compare: --fail-on p99 changed +") ||
		!strings.Contains(errOut, "> +10% (phase 1: steady, 100 req/s; pool vs goroutine)") {
		t.Errorf("gate: exit %d, stderr %q; want 4 and one line for the p99", code, errOut)
	}
	js := append([]string{"compare", "--json"}, args[1:]...)
	code, out, _ = runCLI(t, context.Background(), js...)
	var c compare.Comparison
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil || len(c.Groups) == 0 || c.A.Label != "goroutine" {
		t.Fatalf("--json: exit %d, %.200s", code, out)
	}
	for _, r := range c.Groups[0].Rows {
		if r.Metric == "p99" && (!r.Significant || r.Judgement != "worse" || len(r.B.Values) != 5) {
			t.Errorf("p99 row %+v", r)
		}
	}
}

// Bad input is one line and a non-zero exit: a directory that is neither a
// run nor a sweep, runs at different rates, a flag after the paths, one
// side empty. A run cut short is compared with a warning.
func TestCompareBadInput(t *testing.T) {
	tmp := t.TempDir()
	a := fakeRuns(t, tmp, "a", 1, 100, time.Millisecond)[0]
	b := fakeRuns(t, tmp, "b", 1, 200, time.Millisecond)[0]
	other := filepath.Join(tmp, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "x.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compare", a, other}, 1, "neither a run directory (manifest.json), a sweep directory (sweep.json) nor a repeat directory (repeat.json)"},
		{[]string{"compare", a, b}, 1, "cannot compare: different offered loads: 100 req/s for 10s"},
		{[]string{"compare", a, b, "--json"}, 2, "--json: flags go before the paths"},
		{[]string{"compare", a}, 2, "want two paths, A and B"},
		{[]string{"compare", a, "--"}, 2, "want paths on both sides of --"},
		{[]string{"compare", "--fail-on", "lost.pct>1%", a, b}, 2, `metric "lost.pct" is not available in a run directory or a comparison`},
		{[]string{"compare", "--alpha", "0.7", a, b}, 2, "--alpha 0.7: must be in (0, 0.5)"},
		// compare reads no standard input, and says nothing that would send a user there.
		{[]string{"compare", "-", a}, 2, "-: compare reads no standard input"},
		{[]string{"compare", "/dev/zero", a}, 1, "/dev/zero: a device, not a regular file: copy the trace into a file and give that"},
	} {
		code, _, errOut := runCLI(t, context.Background(), tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", tc.args[1:], code, errOut, tc.code, tc.want)
		}
	}
	cut := rundirtest.Write(t, filepath.Join(tmp, "cut"), rundirtest.Run{Status: rundir.StatusInterrupted,
		Phases: []rundirtest.Phase{{Rate: 100, Duration: 3 * time.Second, Latencies: rundirtest.Spread(time.Millisecond, 30)}}})
	code, out, errOut := runCLI(t, context.Background(), "compare", a, cut)
	if code != 0 || !strings.Contains(out, "warning: "+cut+": the run is interrupted") {
		t.Errorf("interrupted run: exit %d, stderr %q, out\n%s", code, errOut, out)
	}
	code, _, _ = runCLI(t, context.Background(), "compare", "--force", a, b)
	if code != 0 {
		t.Errorf("--force: exit %d", code)
	}
}

// One run given twice, by any spelling, would count as two samples (and
// turn noise into a "significant" change): compare refuses it, as it
// refuses a repeat.json that lists a run twice or one outside its
// directory.
func TestCompareRepeatedPaths(t *testing.T) {
	tmp := t.TempDir()
	a := fakeRuns(t, tmp, "a", 2, 100, 50*time.Millisecond)
	b := fakeRuns(t, tmp, "b", 2, 100, 100*time.Millisecond)
	link := filepath.Join(tmp, "link")
	if err := os.Symlink(a[0], link); err != nil {
		t.Fatal(err)
	}
	rep := filepath.Join(tmp, "rep")
	writeRepeat := func(runs ...string) {
		t.Helper()
		if err := rundir.WriteRepeat(rep, rundir.Repeat{Version: rundir.RepeatVersion, Count: len(runs), Runs: runs, Status: rundir.StatusComplete}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(rep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b[1], filepath.Join(rep, "run-01")); err != nil {
		t.Fatal(err)
	}
	writeRepeat("run-01")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{a[0], a[0], a[0], "--", b[0], rep}, 2, a[0] + " is given twice: give each run once"},
		{[]string{a[0], a[0] + "/", "--", b[0], rep}, 2, a[0] + "/ is " + a[0] + " again"},
		{[]string{a[0], a[1], "--", b[0], filepath.Dir(b[0]) + "/./" + filepath.Base(b[0])}, 2, "/./" + filepath.Base(b[0]) + " is " + b[0] + " again: give each run once"},
		{[]string{a[0], link, "--", b[0], rep}, 2, link + " is " + a[0] + " again"},
		{[]string{a[0], a[1], "--", rep, filepath.Join(rep, "run-01")}, 2, filepath.Join(rep, "run-01") + " is given twice"},
	} {
		code, _, errOut := runCLI(t, context.Background(), append([]string{"compare", "--fail-on", "p99>+10%"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	// repeat.json: a run listed twice, outside the directory.
	for _, tc := range []struct {
		runs []string
		want string
	}{
		{[]string{"run-01", "run-01"}, "is given twice"},
		{[]string{"run-01", "./run-01/"}, "again"},
		{[]string{"run-01", "../" + filepath.Base(a[1])}, `run "../` + filepath.Base(a[1]) + `" is outside the repeat directory`},
		{[]string{"run-01", a[1]}, "is outside the repeat directory"},
	} {
		writeRepeat(tc.runs...)
		code, _, errOut := runCLI(t, context.Background(), "compare", a[0], rep)
		if code != 1 || !strings.Contains(errOut, "repeat plan "+filepath.Join(rep, rundir.RepeatFile)+": ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("repeat.json runs %q: exit %d, stderr %q; want 1 and %q", tc.runs, code, errOut, tc.want)
		}
	}
	writeRepeat("run-01")
	if code, _, errOut := runCLI(t, context.Background(), "compare", a[0], a[1], "--", b[0], rep); code != 0 {
		t.Errorf("distinct runs: exit %d, stderr %q", code, errOut)
	}
}

// In a comparison a signed value is a change from A to B and an unsigned
// one B's figure, whatever the unit: A's p99 is about 55ms, B's 110ms.
func TestCompareGateReadings(t *testing.T) {
	tmp := t.TempDir()
	a := fakeRuns(t, tmp, "a", 1, 100, 50*time.Millisecond)[0]
	b := fakeRuns(t, tmp, "b", 1, 100, 100*time.Millisecond)[0]
	for _, tc := range []struct {
		gate string
		code int
		want string
	}{
		{"p99>+10%", 4, "% > +10% (phase 1"},
		{"p99>+1ms", 4, "ms > +1ms (phase 1"},
		{"p99>+60ms", 0, ""},
		{"p99<-1ms", 0, ""},
		{"p99>-5ms", 4, "ms > -5ms (phase 1"},
		{"p99>100ms", 4, "ms > 100ms (phase 1"},
		{"p99>120ms", 0, ""},
		{"errors>150%", 2, "never holds: errors as a share of completed is never above 100%"},
		{"not_sent>=0", 2, "always holds: not_sent is never below 0"},
	} {
		code, _, errOut := runCLI(t, context.Background(), "compare", "--fail-on", tc.gate, a, b)
		if code != tc.code || !strings.Contains(errOut, tc.want) || code == 4 && !strings.Contains(errOut, "--fail-on p99 "+map[bool]string{true: "changed +", false: "= "}[strings.ContainsAny(tc.gate[4:5], "+-")]) {
			t.Errorf("--fail-on %s: exit %d, stderr %q; want %d with %q", tc.gate, code, errOut, tc.code, tc.want)
		}
	}
	// Outside a comparison there is no A: a signed value is refused.
	code, _, errOut := runCLI(t, context.Background(), "analyze", "--fail-on", "p99>-5ms", a)
	if code != 2 || !strings.Contains(errOut, "a signed value (-5ms) is a change from A to B, only for comparisons") {
		t.Errorf("analyze --fail-on p99>-5ms: exit %d, stderr %q", code, errOut)
	}
}

// --fail-on on a run directory checks each phase: exit 4 with one line per
// breach naming the phase; a condition it cannot read is warned about.
func TestAnalyzeRunDirFailOn(t *testing.T) {
	dir := rundirtest.Write(t, filepath.Join(t.TempDir(), "run"), rundirtest.Run{Phases: []rundirtest.Phase{
		{Rate: 100, Latencies: rundirtest.Spread(100*time.Millisecond, 100), Errors: 5},
		{Rate: 200, Latencies: rundirtest.Spread(300*time.Millisecond, 100), NotSent: 3},
	}})
	code, _, errOut := runCLI(t, context.Background(), "analyze", "--fail-on", "p99>250ms, errors>1%, not_sent>0, pool.saturated>0", dir)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	want := []string{
		"warning: --fail-on pool.saturated>0: no figure to check it on",
		"--fail-on p99 = 3",
		"--fail-on errors = 4.76% of completed > 1% (phase 1: step 1/2, 100 req/s",
		"--fail-on not_sent = 3 > 0 (phase 2",
	}
	if code != 4 || len(lines) != len(want) {
		t.Fatalf("exit %d, stderr %q; want 4 and %d lines", code, errOut, len(want))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d %q, want %q", i+1, lines[i], w)
		}
	}
	if code, _, errOut := runCLI(t, context.Background(), "analyze", "--fail-on", "p99>1s", dir); code != 0 {
		t.Errorf("a gate that holds nowhere: exit %d, %s", code, errOut)
	}
}

// A sweep directory is gated at its recommended GOMAXPROCS; two traces
// compare on the trace's figures.
func TestGateSweepAndCompareTraces(t *testing.T) {
	sweepDir := filepath.Join("..", "..", "docs", "sweep-cpu")
	code, _, errOut := runCLI(t, context.Background(), "analyze", "--fail-on", "knee<1000, gomaxprocs!=2", sweepDir)
	if code != 4 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "--fail-on knee = 200 < 1000 (at the recommended GOMAXPROCS") {
		t.Errorf("sweep gate: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, context.Background(), "analyze", "--fail-on", "p99>1ms", sweepDir); code != 4 || !strings.Contains(errOut, "p99 = 11.1ms > 1ms") {
		t.Errorf("the p99 at the knee, 11.1 ms: exit %d %q", code, errOut)
	}
	// Conditions are refused before anything runs, in the context of the command.
	for _, args := range [][]string{
		{"sweep", "--fail-on", "not_sent>0", "--fixture", "sleep", "--gomaxprocs", "1", "--rates", "10"},
		{"run", "--fail-on", "knee<10", "--rate", "10", "http://127.0.0.1:1/"},
	} {
		code, _, errOut := runCLI(t, context.Background(), args...)
		if code != 2 || !strings.Contains(errOut, "--fail-on: condition") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errOut)
		}
	}
	code, out, errOut := runCLI(t, context.Background(), "compare", "--fail-on", "pinned.locked>0", cgoTrace, filepath.Join(filepath.Dir(cgoTrace), "locked.trace"))
	if code != 4 || !strings.Contains(out, "new (n=1, untested)") || !strings.Contains(errOut, "pinned.locked = 21 > 0") {
		t.Errorf("traces: exit %d, stderr %q\n%s", code, errOut, out)
	}
}
