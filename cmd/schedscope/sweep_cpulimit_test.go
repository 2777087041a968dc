package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/capacity"
	"github.com/schedscope/schedscope/internal/report"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/sweep"
)

// TestSweepCPULimitEndToEnd: under a 1 CPU quota, a CPU-bound fixture at
// more than the quota serves is throttled more with GOMAXPROCS 2 (two
// threads spend the 100 ms in half a period) than with 1, which cannot use
// more than one CPU at a time. As root on a writable cgroup hierarchy,
// not under -short (about 12 s).
func TestSweepCPULimitEndToEnd(t *testing.T) {
	needCgroups(t, "a real sweep of two lines: about 12 s")
	dir := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", "--fixture", "cpu?us=2000", "--cpu-limits", "1", "--gomaxprocs", "1,2", "--rates", "600",
		"--duration", "2s", "--warmup", "1s", "--pause", "0s", "--iterations", "1", "--no-tui", "--out", dir}
	code, out, errOut := runCLI(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("sweep: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	share, use := map[int]float64{}, map[int]float64{}
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
		share[g], use[g] = st.Throttle.Share(), st.Throttle.QuotaUse
		t.Logf("GOMAXPROCS %d: %+v", g, *st.Throttle)
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
	// The shape, last: it holds only when the machine gave the target its
	// quota. 600 x 2 ms is 1.2 CPUs; a machine whose other processes hold
	// the CPUs runs GOMAXPROCS 2's two threads one after the other, so it
	// spends its quota as slowly as GOMAXPROCS 1 and noise pushes the two
	// shares together. The control is the GOMAXPROCS 2 line's use of its
	// quota: under 90 %, the machine, not the quota, held it back.
	if use[2] < 0.9 {
		t.Skipf("GOMAXPROCS 2 used %.0f %% of its 1-CPU quota at 1.2 CPUs of demand (throttled %.2f, GOMAXPROCS 1 %.2f): the machine, not the quota, limited it, so the shares measure the machine", 100*use[2], share[2], share[1])
	}
	if share[2] <= share[1] {
		t.Errorf("throttled share: GOMAXPROCS 2 %.2f, GOMAXPROCS 1 %.2f (quota use %.2f and %.2f): want 2 throttled more", share[2], share[1], use[2], use[1])
	}
}

// needCgroups skips a real CPU-limit sweep under -short (why), without
// root or without a writable cgroup cpu controller, and runs the fixture
// as this test binary.
func needCgroups(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	if _, _, err := sweep.PrepareCgroups(""); err != nil {
		t.Skip(err)
	}
	t.Setenv(envExec, "1") // the fixture is this test binary, run as schedscope
}

// quotaSweep runs a CPU-limit sweep of the fixture with args and returns
// its analysis, as the report reads it. As root on a writable cgroup
// hierarchy, not under -short.
func quotaSweep(t *testing.T, args ...string) *report.SweepReport {
	t.Helper()
	needCgroups(t, "a real CPU-limit sweep")
	dir := filepath.Join(t.TempDir(), "sweep")
	args = append([]string{"sweep", "--iterations", "1", "--no-tui", "--out", dir}, args...)
	code, out, errOut := runCLI(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("sweep: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	r, err := report.AnalyzeSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, report.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("progress:\n%s\nreport:\n%s", errOut, b)
		}
	})
	return r
}

func quotaLevel(t *testing.T, r *report.SweepReport, gomaxprocs int) capacity.Level {
	t.Helper()
	for _, l := range r.Analysis.Levels {
		if l.Line.GOMAXPROCS == gomaxprocs {
			return l
		}
	}
	t.Fatalf("no line with GOMAXPROCS %d", gomaxprocs)
	return capacity.Level{}
}

func quotaCell(t *testing.T, l capacity.Level, rate float64) capacity.Cell {
	t.Helper()
	for _, c := range l.Cells {
		if c.OfferedRate == rate {
			return c
		}
	}
	t.Fatalf("%s: no cell at %v req/s", l.Label, rate)
	return capacity.Cell{}
}

func hasQuotaFinding(r *report.SweepReport, k capacity.QuotaKind, gomaxprocs int) bool {
	for _, f := range r.Analysis.Quota.Findings {
		if f.Kind == k && (gomaxprocs < 0 || f.Line.GOMAXPROCS == gomaxprocs) {
			return true
		}
	}
	return false
}

// TestQuotaShapes reproduces issue 16's shapes on this machine.
func TestQuotaShapes(t *testing.T) {
	// /cpu?us=2000 under a 1-CPU limit with Poisson arrivals (the bursts
	// a quota feels; evenly spaced sends hardly exceed it within a
	// period), at 350 req/s (0.75-0.85 CPU: the quota carries it), 450
	// (0.9-1.1 CPU: carried here on a quiet machine, not in CI, whose target
	// spent 2.3-2.4 ms per request) and 750 (1.5-1.8 CPUs: it cannot).
	// GOMAXPROCS 2 runs two requests at once and spends the quota early:
	// throttled in most periods at 750 and in many at 450 when carried;
	// GOMAXPROCS 1 cannot use more than one CPU and hardly is, at the same
	// throughput. Which p99 is lower is measured, not assumed: here
	// GOMAXPROCS 1's queue on one P cost about as much as GOMAXPROCS 2's
	// throttling (docs/readme-sweep.md); the advice follows the knees.
	t.Run("cpu-bound under a 1-CPU limit", func(t *testing.T) {
		r := quotaSweep(t, "--fixture", "cpu?us=2000", "--cpu-limits", "1", "--gomaxprocs", "1,2", "--rates", "350,450,750", "--arrivals", "poisson",
			"--duration", "3s", "--warmup", "1s", "--pause", "0s", "--target-p99", "50ms")
		l1, l2 := quotaLevel(t, r, 1), quotaLevel(t, r, 2)
		// carried mirrors capacity's rule for the throttled verdict: 99 % of
		// the offered rate answered, 2xx/s within 5 % of it.
		carried := func(c capacity.Cell) bool {
			return c.Answered >= 0.99*c.OfferedRate && c.OKPerSec >= 0.95*c.OfferedRate
		}
		// The verdicts are checked exactly against the rule on the
		// measured cells; the throttled shares, which noise moves, last.
		wantThrottledVerdict := false
		var shares []string // the share checks, run only when the control allows
		for _, rate := range []float64{350, 450, 750} {
			one, two := quotaCell(t, l1, rate), quotaCell(t, l2, rate)
			t.Logf("%v req/s: GOMAXPROCS 1 throttled %.2f quota use %.2f p99 %v 2xx/s %.0f; GOMAXPROCS 2 throttled %.2f quota use %.2f p99 %v 2xx/s %.0f (carried: %v)",
				rate, one.Throttled, one.QuotaUse, one.P99, one.OKPerSec, two.Throttled, two.QuotaUse, two.P99, two.OKPerSec, carried(two))
			if carried(two) && two.Throttled >= 0.10 {
				wantThrottledVerdict = true
			}
			if min := map[float64]float64{450: 0.3, 750: 0.5}[rate]; min > 0 && (rate == 750 || carried(two)) &&
				(two.Throttled < min || one.Throttled >= two.Throttled/2) {
				shares = append(shares, fmt.Sprintf("throttled share at %v req/s: GOMAXPROCS 2 %.2f, 1 %.2f: want 2 in at least %.0f %% of periods, 1 in under half as many", rate, two.Throttled, one.Throttled, 100*min))
			}
			// No throughput is compared between the lines: where the quota
			// carried both, each answered 99 % of the offered rate (carried
			// says so), and a 2xx/s figure beyond that is the completions'
			// span, which a stall shortens (it was held within 6 %).
		}
		if !hasQuotaFinding(r, capacity.QuotaAboveLimit, 2) {
			t.Errorf("no %s verdict for GOMAXPROCS 2: %+v", capacity.QuotaAboveLimit, r.Analysis.Quota.Findings)
		}
		if got := hasQuotaFinding(r, capacity.QuotaThrottled, 2); got != wantThrottledVerdict {
			t.Errorf("%s verdict for GOMAXPROCS 2: %v, want %v (a carried load throttled in >= 10 %% of periods): %+v",
				capacity.QuotaThrottled, got, wantThrottledVerdict, r.Analysis.Quota.Findings)
		}
		if !hasQuotaFinding(r, capacity.QuotaTooTight, -1) || hasQuotaFinding(r, capacity.QuotaThrottled, 1) {
			t.Errorf("want the limit too tight for 750 req/s, and no throttling verdict for GOMAXPROCS 1: %+v", r.Analysis.Quota.Findings)
		}
		// The advice's rule (capacity.advise): within 5 % of the best
		// ceiling, the higher knee, then a p99 at it lower by 10 %.
		p99At := func(l capacity.Level) time.Duration { return quotaCell(t, l, l.Knee).P99 }
		best := math.Max(l1.Ceiling, l2.Ceiling)
		want := 1
		switch {
		case l1.Ceiling < 0.95*best:
			want = 2
		case l2.Ceiling < 0.95*best:
		case l2.Knee > l1.Knee, l2.Knee == l1.Knee && l1.Knee > 0 && p99At(l2) < 9*p99At(l1)/10:
			want = 2
		}
		if a := r.Analysis.Quota.Advice; len(a) != 1 || a[0].GOMAXPROCS != want {
			t.Errorf("advice %+v, want GOMAXPROCS %d (knees: 1 at %v, 2 at %v req/s)", a, want, l1.Knee, l2.Knee)
		}
		// The shares hold only when the machine gave the target its quota:
		// other processes holding the CPUs run GOMAXPROCS 2's two threads
		// one after the other, so it spends its quota as slowly as
		// GOMAXPROCS 1 and noise pushes the two lines' shares together.
		// The control: GOMAXPROCS 2's use of its quota at 750 req/s (1.5
		// CPUs of demand); under 90 %, the machine held it back.
		if use := quotaCell(t, l2, 750).QuotaUse; use < 0.9 {
			t.Skipf("GOMAXPROCS 2 used %.0f %% of its 1-CPU quota at 750 req/s: the machine, not the quota, limited it, so the throttled shares measure the machine (%d share checks not made: %q)", 100*use, len(shares), shares)
		}
		for _, msg := range shares {
			t.Error(msg)
		}
	})
	// /sleep?ms=20 under a 0.5-CPU limit: the ceiling does not depend on
	// GOMAXPROCS while rate x CPU per request stays under the quota.
	t.Run("blocking under a 0.5-CPU limit", func(t *testing.T) {
		r := quotaSweep(t, "--fixture", "sleep?ms=20", "--cpu-limits", "0.5", "--gomaxprocs", "1,2", "--rates", "200,800",
			"--duration", "3s", "--warmup", "1s", "--pause", "0s")
		one, two := quotaCell(t, quotaLevel(t, r, 1), 800), quotaCell(t, quotaLevel(t, r, 2), 800)
		need := 800 * one.CPUPerRequest.Seconds()
		t.Logf("800 req/s: GOMAXPROCS 1 %.0f 2xx/s p99 %v, 2 %.0f 2xx/s p99 %v; CPU %v per request: %.2f CPUs needed of 0.5",
			one.OKPerSec, one.P99, two.OKPerSec, two.P99, one.CPUPerRequest, need)
		if need >= 0.5 {
			t.Skipf("the fixture needs %.2f CPUs at 800 req/s here: the quota is reached, the shape is not the one under test", need)
		}
		// The control: how busy the machine was. The fixture and the
		// generator need well under half of 2 CPUs here; with every CPU
		// busy, other processes held them, and the fixture's throughput
		// (and the verdicts drawn from it) measures the machine, not the
		// quota (at load 20: 397 and 574 2xx/s of 800, machine 100 % busy).
		if busy := max(one.MachineBusy, two.MachineBusy); busy >= 0.9 {
			t.Skipf("the machine's CPUs were %.0f %% busy at 800 req/s (2xx/s %.0f and %.0f): other processes, not the quota, limited the fixture", 100*busy, one.OKPerSec, two.OKPerSec)
		}
		if one.OKPerSec < 0.98*800 || two.OKPerSec < 0.98*800 {
			t.Errorf("2xx/s at 800 req/s: GOMAXPROCS 1 %.0f, 2 %.0f: want both to carry it", one.OKPerSec, two.OKPerSec)
		}
		for _, k := range []capacity.QuotaKind{capacity.QuotaBlockingLoss, capacity.QuotaTooTight} {
			if hasQuotaFinding(r, k, -1) {
				t.Errorf("a %s verdict for blocking work under the quota: %+v", k, r.Analysis.Quota.Findings)
			}
		}
	})
	// A limit on the parent cgroup only: auto takes the CPU count, the
	// sweep reports the throttling and the runtime's blind spot.
	// 500 req/s of 2 ms needs about 1.1 CPUs: over the quota, so the
	// parent is throttled whatever the arrivals' spacing (at 400 req/s,
	// 0.97 CPUs, evenly spaced sends were throttled in 0 of 30 periods).
	t.Run("parent-only limit", func(t *testing.T) {
		r := quotaSweep(t, "--fixture", "cpu?us=2000", "--cpu-limits", "1", "--cpu-limit-on", "parent", "--gomaxprocs", "auto", "--rates", "500",
			"--arrivals", "poisson", "--duration", "3s", "--warmup", "1s", "--pause", "0s")
		auto := quotaLevel(t, r, 0)
		c := quotaCell(t, auto, 500)
		t.Logf("parent limit 1 CPU, auto GOMAXPROCS %d at 500 req/s: throttled %.0f %% of periods (%.2f s), p99 %v",
			auto.GOMAXPROCS, 100*c.Throttled, c.ThrottledS, c.P99)
		if auto.GOMAXPROCS != runtime.NumCPU() {
			t.Errorf("auto under a parent-only limit chose GOMAXPROCS %d, want the %d CPUs", auto.GOMAXPROCS, runtime.NumCPU())
		}
		if !c.Quota {
			t.Errorf("no throttling figures read from the parent: %+v", c)
		}
		if !hasQuotaFinding(r, capacity.QuotaBlindSpot, 0) {
			t.Errorf("no blind-spot verdict: %+v", r.Analysis.Quota.Findings)
		}
		// Throttled only if the machine let the target reach its quota
		// (1.1 CPUs of demand): the control is its use of the quota.
		if c.QuotaUse < 0.9 {
			t.Skipf("the target used %.0f %% of its 1-CPU quota at 1.1 CPUs of demand (machine %.0f %% busy): the machine, not the quota, limited it, so its throttling is not compared", 100*c.QuotaUse, 100*c.MachineBusy)
		}
		if c.Throttled <= 0 {
			t.Errorf("no throttling read from the parent at %.0f %% of the quota used: %+v", 100*c.QuotaUse, c)
		}
	})
}
