package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/internal/collect"
	"github.com/schedscope/schedscope/internal/rundir"
)

func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(t.TempDir(), "target.log")
	os.WriteFile(existing, []byte("an earlier log"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--rate", "10"}, "no target URL"},
		{[]string{"run", "--rate", "10", "--trace-at", "150%", "http://127.0.0.1:1/"}, "--trace-at"},
		{[]string{"run", "--rate", "10", "--trace-at", "half", "http://127.0.0.1:1/"}, "--trace-at"},
		{[]string{"run", "--rate", "10", "--trace-window", "2h", "http://127.0.0.1:1/"}, "trace window"},
		{[]string{"run", "--rate", "10", "--pid", "1", "--cmd", "true", "http://127.0.0.1:1/"}, "not both"},
		{[]string{"run", "--rate", "10", "--snapshot-when", "latency>5ms", "http://127.0.0.1:1/"}, "unknown metric"},
		{[]string{"run", "--rate", "10", "--snapshot-when", "not-sent>0", "http://127.0.0.1:1/"}, `condition "not-sent>0": metric "not-sent" is now spelled "not_sent"`},
		{[]string{"run", "--rate", "10", "--snapshot-when", "ok/s<100", "http://127.0.0.1:1/"}, `metric "ok/s" is now spelled "ok_per_s"`},
		{[]string{"run", "--rate", "10", "--snapshot-when", "inflight>10", "http://127.0.0.1:1/"}, `metric "inflight" is now spelled "in_flight"`},
		{[]string{"run", "--rate", "10", "--snapshot-when", "p99>1s,sched-p99>5ms", "http://127.0.0.1:1/"}, `metric "sched-p99" is now spelled "sched.p99"`},
		{[]string{"run", "--rate", "10", "--snapshot-when", "pinned>0", "http://127.0.0.1:1/"}, `metric "pinned" is not available in a live run, only in a trace or a run directory (a live run has: cpu, `},
		{[]string{"run", "--rate", "10", "--snapshot-when", "p99>500", "http://127.0.0.1:1/"}, "p99 is a duration: write a unit: 500ms"},
		{[]string{"run", "--rate", "10", "--snapshot-when", "", "http://127.0.0.1:1/"}, "-snapshot-when: empty: want 'end' or conditions"},
		{[]string{"run", "--rate", "10", "--snapshot-when", "  ", "http://127.0.0.1:1/"}, "-snapshot-when: empty: want 'end' or conditions"},
		{[]string{"run", "--rate", "10", "--snapshot-when", "not_sent>101%", "http://127.0.0.1:1/"}, "not_sent is a count, not a percentage"},
		{[]string{"run", "--rate", "10", "--snapshot-when", "p99>-5ms", "http://127.0.0.1:1/"}, "a signed value (-5ms) is a change from A to B"},
		{[]string{"run", "--rate", "10", "--json", "x.json", "http://127.0.0.1:1/"}, "results.json"},
		{[]string{"run", "--rate", "10", "--poll", "1ms", "http://127.0.0.1:1/"}, "poll period"},
		{[]string{"run", "--rate", "10", "--out", dir, "--bogus", "http://127.0.0.1:1/"}, "flag provided but not defined"},
		{[]string{"run", "--rate", "10", "http://127.0.0.1:99999/"}, "port 99999: must be in [1, 65535]"},
		{[]string{"run", "--rate", "10", "--max-capture", "1KiB", "http://127.0.0.1:1/"}, "--max-capture 1 KiB: must be in [1 MiB, 64 GiB]"},
		{[]string{"run", "--rate", "10", "--max-capture", "100GiB", "http://127.0.0.1:1/"}, "--max-capture 100 GiB: must be in [1 MiB, 64 GiB]"},
		{[]string{"run", "--rate", "10", "--max-capture", "lots", "http://127.0.0.1:1/"}, `want a size such as 512MiB or 1GiB`},
		{[]string{"run", "--rate", "10", "--ready-timeout", "-1s", "http://127.0.0.1:1/"}, "--ready-timeout -1s: must be in (0, 10m0s]"},
		{[]string{"run", "--rate", "10", "--ready-timeout", "1h", "http://127.0.0.1:1/"}, "--ready-timeout 1h0m0s: must be in (0, 10m0s]"},
		{[]string{"run", "--rate", "10", "--cmd-log", "/nonexistent/log", "http://127.0.0.1:1/"}, "--cmd-log: open /nonexistent/log"},
		{[]string{"run", "--rate", "10", "--cmd-log", existing, "http://127.0.0.1:1/"}, "the file exists: remove it, or add --force to overwrite it"},
		{[]string{"run", "--rate", "10", "--out", dir, "--cmd-log", filepath.Join(dir, "log"), "http://127.0.0.1:1/"}, "is inside the run directory"},
	} {
		code, _, errOut := runCLI(t, context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

// A target that is not there: the run fails with one line, and its
// directory says why.
func TestRunUnreachableTarget(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, _, errOut := runCLI(t, context.Background(), "run", "--rate", "10", "--duration", "1s", "--no-tui",
		"--agent", "http://127.0.0.1:1/debug/schedscope/", "--out", out, "http://127.0.0.1:1/")
	if code != 1 || !strings.Contains(errOut, "agent http://127.0.0.1:1/debug/schedscope/") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(out, rundir.ManifestFile))
	if err != nil || !strings.Contains(string(b), `"status": "interrupted"`) {
		t.Errorf("manifest: %v %s", err, b)
	}
}

// An interruption exits 130 and says where the measurements are; when it
// cut the derivation, also how to finish it.
func TestRunExit(t *testing.T) {
	out := func(status string) *collect.Outcome {
		return &collect.Outcome{Dir: "d", Manifest: rundir.Manifest{Status: status, Reason: "interrupted (Ctrl-C or SIGTERM)"}}
	}
	for _, tc := range []struct {
		out  *collect.Outcome
		cut  bool
		code int
		want string
	}{
		{out(rundir.StatusComplete), false, 0, ""},
		{out(rundir.StatusInterrupted), false, 130, "interrupted (Ctrl-C or SIGTERM): d holds what was measured until then"},
		{&collect.Outcome{Dir: "d", Manifest: rundir.Manifest{Status: rundir.StatusInterrupted, Reason: "the target stopped answering"}}, false, 130,
			"interrupted (the target stopped answering): d holds what was measured until then"},
		{out(rundir.StatusInterrupted), true, 130, "d holds what was measured until then; its analysis was not derived: run 'schedscope analyze --rederive d'"},
		{out(rundir.StatusComplete), true, 130, "interrupted while deriving the analysis: d holds the whole run; its analysis was not derived: run 'schedscope analyze --rederive d'"},
	} {
		err := runExit(tc.out, tc.cut, nil)
		if tc.code == 130 && err != nil && strings.Contains(err.Error(), "interrupted (interrupted") {
			t.Errorf("%s cut %v: %v: the reason is repeated", tc.out.Manifest.Status, tc.cut, err)
		}
		var ee *exitError
		switch {
		case tc.code == 0 && err != nil:
			t.Errorf("%s cut %v: %v", tc.out.Manifest.Status, tc.cut, err)
		case tc.code != 0 && (!errors.As(err, &ee) || ee.code != tc.code || !strings.HasSuffix(err.Error(), tc.want)):
			t.Errorf("%s cut %v: %v; want exit %d and %q", tc.out.Manifest.Status, tc.cut, err, tc.code, tc.want)
		}
	}
}

// The dispatcher names the command once: an error a package already
// prefixed with the command's name ("run: trace window ...") is not
// printed as "schedscope run: run: ...". A few bad invocations of several
// commands, each one line with the prefix once.
func TestErrorPrefixOnce(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--rate", "10", "--trace-window", "2h", "http://127.0.0.1:1/"},
		{"run", "--rate", "10", "--poll", "1ms", "http://127.0.0.1:1/"},
		{"run", "--rate", "10", "--pid", "1", "--cmd", "true", "http://127.0.0.1:1/"},
		{"run", "--rate", "10", "--snapshot-when", "p99>", "http://127.0.0.1:1/"},
		{"load", "--rate", "0", "http://127.0.0.1:1/"},
		{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1"},
		{"compare", "--fail-on", "p99>", "a", "b"},
		{"analyze", "--fail-on", "p99>-1ms", "nowhere"},
		{"merge", "--out", "x"},
		{"report"},
	} {
		code, _, errOut := runCLI(t, context.Background(), args...)
		prefix := "schedscope " + args[0] + ": "
		if code == 0 || !strings.HasPrefix(errOut, prefix) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want one line starting %q", args, code, errOut, prefix)
			continue
		}
		if rest := strings.TrimPrefix(errOut, prefix); strings.HasPrefix(rest, args[0]+": ") {
			t.Errorf("%v: the prefix doubled: %q", args, errOut)
		}
	}
}
