package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/sweep"
)

// Every flag --set may vary is a real flag of `schedscope fixture`, read
// from its own usage.
func TestSetFlagsAreFixtureFlags(t *testing.T) {
	code, out, errOut := runCLI(t, context.Background(), "fixture", "-h")
	usage := out + errOut
	if code != 0 || !strings.Contains(usage, "-workers") {
		t.Fatalf("fixture -h: exit %d, %q", code, usage)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(usage, -1) {
		flags[m[1]] = true
	}
	for _, name := range sweep.FixtureFlags {
		if !flags[name] {
			t.Errorf("sweep.FixtureFlags holds %q, which schedscope fixture does not define", name)
		}
	}
	if !flags["model"] {
		t.Error("schedscope fixture has no --model, which --models passes")
	}
}

func TestSweepAxesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--fixture", "sleep", "--gomaxprocs", "1", "--rates", "10", "--users", "2"}, "either --rates (open model) or --users (closed model)"},
		{[]string{"sweep", "--fixture", "sleep", "--gomaxprocs", "1", "--users", "2,x"}, `--users: "x" is not an integer`},
		{[]string{"sweep", "--cmd", "x", "--url", "http://127.0.0.1:9/", "--gomaxprocs", "1", "--rates", "10", "--models", "pool"}, "need --fixture"},
		{[]string{"sweep", "--fixture", "sleep", "--gomaxprocs", "1", "--rates", "10", "--set", "bogus=1"}, "--set bogus: not a fixture flag"},
		{[]string{"sweep", "--fixture", "sleep", "--gomaxprocs", "1", "--rates", "10", "--set", "workers"}, "want NAME=V1,V2"},
		{[]string{"sweep", "--fixture", "sleep --workers 8", "--gomaxprocs", "1", "--rates", "10", "--set", "workers=4"}, "give it in --set only"},
	} {
		code, _, errOut := runCLI(t, context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

// A real multi-axis sweep of the fixture: two models, a --set, closed-model
// users; then a resume of a step removed from it. About 6 s on 2 cores.
func TestSweepModelsSetUsersEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("a real sweep of four steps and a resume: about 6 s")
	}
	t.Setenv(envExec, "1") // the fixture is this test binary, run as schedscope
	dir := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", "--fixture", "sleep?ms=20", "--models", "goroutine,pool", "--set", "workers=4", "--users", "2,8",
		"--gomaxprocs", "1", "--duration", "1s", "--warmup", "0s", "--pause", "0s", "--iterations", "1", "--no-tui", "--out", dir}
	code, out, errOut := runCLI(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("sweep: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	for _, f := range []string{
		"gomaxprocs-001_model-goroutine_workers=4_iter-01_users-2.json", "gomaxprocs-001_model-goroutine_workers=4_iter-01_users-8.json",
		"gomaxprocs-001_model-pool_workers=4_iter-01_users-2.json", "gomaxprocs-001_model-pool_workers=4_iter-01_users-8.json",
	} {
		b, err := os.ReadFile(filepath.Join(dir, rundir.StepsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		var st rundir.SweepStep
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		if st.Users == 0 || st.Model == "" || st.P95MS <= 0 || st.P95MS > st.P99MS+1e-9 || st.OK == 0 {
			t.Errorf("%s: users %d model %q p95 %v p99 %v ok %d", f, st.Users, st.Model, st.P95MS, st.P99MS, st.OK)
		}
	}
	// The fixture got the line's model and workers.
	log, err := os.ReadFile(filepath.Join(dir, rundir.LogsDir, "gomaxprocs-001_model-pool_workers=4_iter-01.log"))
	if err != nil || !strings.Contains(string(log), "model pool, workers 4") {
		t.Errorf("pool line's fixture log: %v\n%s", err, log)
	}
	// The summary lists lines. A pool of 4 with 20 ms sleeps serves at most
	// 200 req/s: 2 users (about 100 req/s) is its knee, 8 users would want
	// about 400. Unbounded goroutines serve the 8 users' ~390 req/s.
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		if label, rest, ok := strings.Cut(line, ", GOMAXPROCS 1, workers=4"); ok {
			rows[label] = strings.Fields(rest)
		}
	}
	pool, gor := rows["pool"], rows["goroutine"]
	if len(pool) < 3 || len(gor) < 3 {
		t.Fatalf("summary lacks a line per model:\n%s", out)
	}
	// The pool's ceiling is bounded by Little's law (4 / 20 ms = 200 req/s):
	// a busy machine only lowers it, so "under 250" holds on any machine.
	if pool[0] != "2" || atof(t, pool[1]) > 250 {
		t.Errorf("pool knee %s ceiling %s; want 2 users, under 250 2xx/s\n%s", pool[0], pool[1], out)
	}
	// The goroutine line's "over 300" needs the CPU the 8 users' requests
	// take: a busy machine lowers it, so it is judged only when capacity did
	// not find that line starved of CPU (its own measured verdict).
	goroutineJudged := gor[len(gor)-1] != "cpu-starved"
	if goroutineJudged && atof(t, gor[1]) < 300 {
		t.Errorf("goroutine ceiling %s; want over 300 2xx/s (8 users / 20 ms)\n%s", gor[1], out)
	}
	if !strings.Contains(out, "pool, workers=4: scaling") {
		t.Errorf("summary does not judge scaling per model:\n%s", out)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "**pool, GOMAXPROCS 1, workers=4**") || !strings.Contains(string(md), "| users | 2xx/s |") {
		t.Errorf("report.md lacks the per-line tables: %v", err)
	}

	// Resume after losing a step: only that step's line runs again.
	gone := filepath.Join(dir, rundir.StepsDir, "gomaxprocs-001_model-pool_workers=4_iter-01_users-8.json")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, context.Background(), "sweep", "--resume", dir, "--no-tui")
	if code != 0 || !strings.Contains(errOut, "resuming: 3 steps already done") || strings.Contains(errOut, "goroutine, GOMAXPROCS 1, workers=4 iteration 1: started") {
		t.Errorf("resume: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(gone); err != nil {
		t.Errorf("the removed step was not measured again: %v", err)
	}
	if !goroutineJudged && !t.Failed() {
		t.Skipf("the goroutine line was starved of CPU (ceiling %s 2xx/s): its over-300 ceiling not judged\n%s", gor[1], out)
	}
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}
