package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/sweep"
)

// TestSweepCPULimitEndToEnd: under a 1 CPU quota, a CPU-bound fixture at
// more than the quota serves is throttled more with GOMAXPROCS 2 (two
// threads spend the 100 ms in half a period) than with 1, which cannot use
// more than one CPU at a time. As root on a writable cgroup hierarchy,
// not under -short (about 12 s).
func TestSweepCPULimitEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("a real sweep of two lines: about 12 s")
	}
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	if _, _, err := sweep.PrepareCgroups(""); err != nil {
		t.Skip(err)
	}
	t.Setenv(envExec, "1") // the fixture is this test binary, run as schedscope
	dir := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", "--fixture", "cpu?us=2000", "--cpu-limits", "1", "--gomaxprocs", "1,2", "--rates", "600",
		"--duration", "2s", "--warmup", "1s", "--pause", "0s", "--iterations", "1", "--no-tui", "--out", dir}
	code, out, errOut := runCLI(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("sweep: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	share := map[int]float64{}
	for _, g := range []int{1, 2} {
		k := rundir.StepKey{GOMAXPROCS: g, CPULimit: 1, Iteration: 1, Rate: 600}
		b, err := os.ReadFile(filepath.Join(dir, rundir.StepsDir, k.File()))
		if err != nil {
			t.Fatal(err)
		}
		var st rundir.SweepStep
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		if st.Throttle == nil || st.Throttle.Periods == 0 {
			t.Fatalf("GOMAXPROCS %d: no throttling figures: %+v", g, st.Throttle)
		}
		share[g] = st.Throttle.Share()
		t.Logf("GOMAXPROCS %d: %+v", g, *st.Throttle)
	}
	if share[2] <= share[1] {
		t.Errorf("throttled share: GOMAXPROCS 2 %.2f, GOMAXPROCS 1 %.2f: want 2 throttled more", share[2], share[1])
	}
	if !strings.Contains(errOut, "limit 1 CPU, GOMAXPROCS 2 iteration 1: 600 req/s offered") || !strings.Contains(errOut, "throttled ") {
		t.Errorf("progress lines lack the limit or the throttling:\n%s", errOut)
	}
	// Each line's cgroup, named in its start line, is gone.
	started := 0
	for _, line := range strings.Split(errOut, "\n") {
		if _, cg, ok := strings.Cut(line, ", cgroup "); ok {
			started++
			cg = strings.TrimSuffix(cg, ")")
			if _, err := os.Stat(cg); !os.IsNotExist(err) {
				t.Errorf("cgroup %s left after the sweep: %v", cg, err)
			}
		}
	}
	if started != 2 {
		t.Errorf("%d start lines name a cgroup, want 2:\n%s", started, errOut)
	}
}
