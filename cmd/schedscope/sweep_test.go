package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
)

func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--rates", "10"}, "no GOMAXPROCS values"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1,two", "--rates", "10"}, `--gomaxprocs: "two" is not an integer`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "auto", "--cpu-limits", "0", "--rates", "10"}, `--cpu-limits: CPU limit 0: must be above 0.01`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--cpu-limits", "one", "--rates", "10"}, `--cpu-limits: "one" is not a number`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "0", "--rates", "10"}, "GOMAXPROCS 0"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "auto", "--cpu-limits", "0.005", "--rates", "10"}, `--cpu-limits: CPU limit 0.005: must be above 0.01`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "auto", "--cpu-limits", "1000", "--rates", "10"}, `--cpu-limits: CPU limit 1000: at most the`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--cpu-limits", "1", "--cpu-limit-on", "pod", "--rates", "10"}, `--cpu-limit-on "pod": want leaf or parent`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--cpu-limit-on", "parent", "--rates", "10"}, `--cpu-limit-on parent places the --cpu-limits quotas: give --cpu-limits`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--target-p99", "50ms", "--rates", "10"}, `--target-p99 sizes the CPU limit: give --cpu-limits`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--cpu-limits", "1", "--target-p99", "-5ms", "--rates", "10"}, `--target-p99 -5ms: must be positive`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--cpu-limits", "1", "--target-p99", "50ms", "--users", "10"}, `--target-p99 sizes the CPU limit for offered rates`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "fast"}, `--rates: "fast" is not a number`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1"}, "no offered rates"},
		{[]string{"sweep", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10"}, "no target command"},
		{[]string{"sweep", "--cmd", "x", "--gomaxprocs", "1", "--rates", "10"}, "no url given"},
		{[]string{"sweep", "--fixture", "sleep", "--cmd", "x", "--gomaxprocs", "1", "--rates", "10"}, "drop --cmd/--url"},
		{[]string{"sweep", "--fixture", "nap --model pool", "--gomaxprocs", "1", "--rates", "10"}, `unknown scenario "nap"`},
		{[]string{"sweep", "--live", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10"}, "give --agent URL"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10", "--target-cpus", "3-1"}, "--target-cpus"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10", "extra"}, `unexpected argument "extra"`},
		{[]string{"sweep", "--bogus"}, "flag provided but not defined"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10", "--iterations", "0"}, "--iterations 0: must be in [1, 100]"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10", "--iterations", "101"}, "iterations 101: must be in [1, 100]"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10", "--timeout", "-1s"}, "--timeout -1s: must be > 0"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10", "--timeout", "2h"}, "timeout 2h0m0s: at most 1h0m0s"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10", "--client", "curl"}, `client "curl": want lean or net/http`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10", "--duration", "100h"}, "duration 100h0m0s: at most 24h0m0s"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", sweepSeq(101)}, "101 rates: at most 100"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", sweepSeq(65), "--rates", "10"}, "65 GOMAXPROCS values: at most 64"},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10", "--concurrency", "-3"}, "concurrency -3"},
		// A list with an empty item, or an empty list given, is refused:
		// never a sweep with fewer values than were typed, or none.
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--cpu-limits", ",", "--rates", "10"}, `--cpu-limits: ",": an empty item`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--cpu-limits", "", "--rates", "10"}, `--cpu-limits "": an empty list`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--cpu-limits", "1,,2", "--rates", "10"}, `--cpu-limits: "1,,2": an empty item`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", ",", "--rates", "10"}, `--gomaxprocs: ",": an empty item`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1,2,", "--rates", "10"}, `--gomaxprocs: "1,2,": an empty item`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "50,"}, `--rates: "50,": an empty item`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", " "}, `--rates " ": an empty list`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--users", "10,"}, `--users: "10,": an empty item`},
		{[]string{"sweep", "--fixture", "sleep", "--gomaxprocs", "1", "--rates", "10", "--models", "pool,"}, `--models: "pool,": an empty item`},
		{[]string{"sweep", "--fixture", "sleep", "--gomaxprocs", "1", "--rates", "10", "--set", "workers="}, `--set workers: no values`},
		{[]string{"sweep", "--fixture", "sleep", "--gomaxprocs", "1", "--rates", "10", "--set", "workers=4,,8"}, `"4,,8": an empty item`},
		{[]string{"load", "--rates", ",", "http://127.0.0.1:9/"}, `--rates ",": want positive rates separated by commas`},
		{[]string{"report"}, "want a directory"},
		{[]string{"report", dir, dir}, "needs --out DIR"},
		{[]string{"report", filepath.Join(dir, "missing")}, "not a directory"},
	} {
		code, _, errOut := runCLI(t, context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
	// Resuming something that is not a sweep fails with one line, exit 1.
	code, _, errOut := runCLI(t, context.Background(), "sweep", "--resume", dir, "--no-report")
	if code != 1 || !strings.Contains(errOut, "not a sweep directory") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("resume of an empty dir: exit %d, stderr %q", code, errOut)
	}
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	plan := rundir.SweepPlan{Version: rundir.SweepVersion, URL: "http://127.0.0.1:9/cpu", Scenario: "cpu",
		GOMAXPROCS: []int{1}, Rates: []float64{10}, Iterations: 1, DurationS: 1}
	step := rundir.SweepStep{StepKey: rundir.StepKey{GOMAXPROCS: 1, Iteration: 1, Rate: 10}, DurationS: 1, Sent: 10, OK: 10,
		OKPerSec: 10, AnsweredPerSec: 10, P50MS: 1, P99MS: 2}
	sweepTestWriteJSON(t, filepath.Join(dir, rundir.SweepFile), plan)
	if err := os.MkdirAll(filepath.Join(dir, rundir.StepsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	sweepTestWriteJSON(t, filepath.Join(dir, rundir.StepsDir, step.File()), step)
	code, out, errOut := runCLI(t, context.Background(), "report", dir)
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, "report.md") {
		t.Fatalf("report: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "# GOMAXPROCS sweep: cpu scenario") {
		t.Errorf("report.md: %v\n%s", err, md)
	}
	cmp := filepath.Join(t.TempDir(), "cmp")
	if code, out, errOut := runCLI(t, context.Background(), "report", "--out", cmp, dir, dir); code != 0 || !strings.Contains(out, "report.md") {
		t.Errorf("comparison: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func sweepTestWriteJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sweepSeq is "1,2,...,n".
func sweepSeq(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(s, ",")
}
