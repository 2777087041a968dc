package report

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/capacity"
	"github.com/schedscope/schedscope/internal/fixtures"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/sweep"
	"github.com/schedscope/schedscope/internal/target"
	"github.com/schedscope/schedscope/internal/target/targettest"
)

// The test binary doubles as the fixture server: a sweep starts it as a
// fresh target process per GOMAXPROCS value, with REPORT_TEST_FIXTURE set to
// "ADDR MODEL WORKERS QUEUE", and it serves until SIGTERM.
func TestMain(m *testing.M) {
	if spec := os.Getenv("REPORT_TEST_FIXTURE"); spec != "" {
		if err := serveFixture(spec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	goleak.VerifyTestMain(m)
}

func serveFixture(spec string) error {
	f := strings.Fields(spec)
	if len(f) != 4 {
		return fmt.Errorf("REPORT_TEST_FIXTURE %q: want ADDR MODEL WORKERS QUEUE", spec)
	}
	cfg := fixtures.DefaultConfig()
	cfg.Addr, cfg.Model = f[0], fixtures.Model(f[1])
	var err error
	if cfg.Workers, err = strconv.Atoi(f[2]); err != nil {
		return err
	}
	if cfg.QueueSize, err = strconv.Atoi(f[3]); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	srv, err := fixtures.Start(ctx, cfg)
	if err != nil {
		return err
	}
	<-ctx.Done()
	// Stop quickly: requests still queued after an overloaded phase are
	// of no interest, and the sweep kills a target that lingers.
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

// sweepFixture runs a real sweep (fresh fixture process per GOMAXPROCS
// value, real open-model load over loopback) and returns its analysis. The
// pool's queue is small, so an overloaded target answers the excess with a
// quick 503 and keeps serving at its ceiling: with a deep queue, once the
// queue wait passes the client timeout every request times out and the
// throughput collapses, which hides the ceiling (a lesson of its own).
func sweepFixture(t *testing.T, model string, workers, queue int, path string, rates []float64) *SweepReport {
	t.Helper()
	exe, addr := targettest.Self(t)
	t.Setenv("REPORT_TEST_FIXTURE", fmt.Sprintf("%s %s %d %d", addr, model, workers, queue))
	limit := 0
	if model != "goroutine" {
		limit = workers
	}
	dir := t.TempDir()
	var lines []string
	_, err := sweep.Run(context.Background(), sweep.Config{
		Argv: []string{exe}, URL: "http://" + addr + path, Model: model, Scenario: strings.Trim(path[:strings.IndexAny(path+"?", "?")], "/"),
		ConcurrencyLimit: limit,
		GOMAXPROCS:       []int{1, 2}, Rates: rates, Iterations: 1,
		Warmup: 500 * time.Millisecond, Duration: 2 * time.Second, Pause: 200 * time.Millisecond,
		Dir:    dir,
		Loader: sweep.LoadGenerator(load.Config{Timeout: 2 * time.Second}),
		Progress: func(e sweep.Event) {
			if l := sweep.FormatEvent(e); l != "" {
				lines = append(lines, l)
			}
		},
	})
	t.Log("\n" + strings.Join(lines, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := WriteSweep(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func levels(t *testing.T, a capacity.Analysis) (one, two capacity.Level) {
	t.Helper()
	if len(a.Levels) != 2 || a.Levels[0].GOMAXPROCS != 1 || a.Levels[1].GOMAXPROCS != 2 {
		t.Fatalf("levels = %+v, want GOMAXPROCS 1 and 2", a.Levels)
	}
	return a.Levels[0], a.Levels[1]
}

// TestReproduceSleepPoolIsFlatAtLittlesLaw: a pool of 2 workers in front of
// 50 ms sleeps (and a queue of 4) can serve at most 2 / 0.05 s = 40 req/s
// whatever GOMAXPROCS is. Offered 10 (served) and 80 req/s (twice the ceiling), the sustained
// 2xx/s must sit near the Little's-law prediction at both GOMAXPROCS 1 and 2,
// and the report must say so. The rates are low so that even the race-built
// fixture, on 2 shared cores, has CPU to spare: the pool must be the limit.
// The bounds are loose because this machine's 2 cores are shared with other
// engineers' builds, fuzzers and benchmarks.
//
// Noise (late wake-ups, a starved target) only lowers a pool's throughput and
// lengthens its service, so the saturation and the upper bound (the hard
// ceiling x1.15) hold on any machine. The lower bound and the flatness are
// noise's to breach: they are judged only when both lines' own control says
// the noise was small enough, that is their low-load service (the 10 req/s
// step, the same 50 ms sleep through the same pool) at most 10 % over the
// sleep; the flatness band (0.75-1.33x) and the floor (half the ceiling) are
// 2.5 and 5 times that noise. Otherwise the test skips with its figures.
// (How busy the machine's CPUs were is no control here: at load average 21,
// CPUs 100 % busy, the two lines served 51 and 55 ms and both ceilings were
// 39 req/s; the pool's sleeps need little CPU.)
func TestReproduceSleepPoolIsFlatAtLittlesLaw(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real target processes and drives load for ~15 s")
	}
	r := sweepFixture(t, "pool", 2, 4, "/sleep?ms=50", []float64{10, 80})
	one, two := levels(t, r.Analysis)
	const poolCeiling = 2 / 0.050 // workers / sleep: the pool's hard ceiling
	for _, l := range []capacity.Level{one, two} {
		if !l.Saturated {
			t.Errorf("GOMAXPROCS %d: 80 req/s was served; a pool of 2 x 50 ms cannot", l.GOMAXPROCS)
		}
		// The pool cannot exceed its ceiling, whatever the noise.
		if l.Ceiling > 1.15*poolCeiling {
			t.Errorf("GOMAXPROCS %d: ceiling %.0f req/s, above the pool's %.0f (workers / sleep)", l.GOMAXPROCS, l.Ceiling, poolCeiling)
		}
		// The report's own prediction uses the measured low-load service
		// time; when the machine had idle CPU and left that time near the
		// 50 ms sleep, the limit must be named as the pool.
		quiet := l.MachineBusy > 0 && l.MachineBusy < 0.9 && l.LowLoadService < 65*time.Millisecond
		if quiet && l.Limit != rundir.KindLimitConcurrency {
			t.Errorf("GOMAXPROCS %d: limit %q (%s), want the pool (concurrency)", l.GOMAXPROCS, l.Limit, l.LimitReason)
		}
	}
	b, err := os.ReadFile(filepath.Join(r.Sweep.Dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "GOMAXPROCS 1: Little's law predicts 2 in service / ") {
		t.Errorf("the report does not state the Little's-law prediction:\n%s", b)
	}
	figures := fmt.Sprintf("ceilings %.0f and %.0f req/s; Little's law %.0f and %.0f; low-load service %v and %v; limits %s and %s; machine busy %.0f %% and %.0f %%", one.Ceiling, two.Ceiling,
		one.LittlePrediction, two.LittlePrediction, one.LowLoadService, two.LowLoadService, one.Limit, two.Limit, 100*one.MachineBusy, 100*two.MachineBusy)
	t.Log(figures)
	const sleep = 50 * time.Millisecond
	for _, l := range []capacity.Level{one, two} {
		if l.LowLoadService <= 0 || l.LowLoadService > sleep*11/10 {
			t.Skipf("machine too busy to judge the floor and the flatness (GOMAXPROCS %d: a %v sleep served in %v at low load): %s",
				l.GOMAXPROCS, sleep, l.LowLoadService, figures)
		}
	}
	for _, l := range []capacity.Level{one, two} {
		if l.Ceiling < 0.5*poolCeiling {
			t.Errorf("GOMAXPROCS %d: ceiling %.0f req/s, want about the pool's %.0f (workers / sleep)", l.GOMAXPROCS, l.Ceiling, poolCeiling)
		}
	}
	if ratio := two.Ceiling / one.Ceiling; ratio < 0.75 || ratio > 1.33 {
		t.Errorf("ceiling went from %.0f to %.0f req/s (%.2fx) with GOMAXPROCS 1 -> 2; the sleep scenario must be flat", one.Ceiling, two.Ceiling, ratio)
	}
}

// TestReproduceCPUScalesWithGOMAXPROCS: each request burns a fixed number of
// SHA-256 rounds (a fixed amount of CPU, not of wall-clock time: about 10-12
// ms here, with fewer rounds under -race, which makes each round ~8x
// dearer), so one P serves at most about 80-100 req/s on a quiet machine and
// two about twice that. Offered 10 to 240 req/s, the highest 2xx/s must grow
// by more than 1.1x, and by at least 60 % of the CPU's growth, from
// GOMAXPROCS 1 to 2 when the machine gave the target at least 1.6x the CPU
// (the control, measured in the same sweep), and skips otherwise. Heavy requests
// keep the rates, and so the load generator's own CPU (in this test
// process), low. The pool model (8 workers, a queue of 8)
// answers the excess with 503 at once, so completions keep flowing at the
// CPU's rate whatever the overload; the geometric ladder puts some rate
// within 2x of the ceiling however much CPU the shared machine leaves.
//
// The assertion is deliberately loose: this machine has only 2 cores, shared
// by the target, the load generator (in this test binary) and other
// engineers' builds, so GOMAXPROCS 2 never gets two whole cores. The rates
// are modest to leave the generator little CPU to take.
func TestReproduceCPUScalesWithGOMAXPROCS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real target processes and drives load for ~15 s")
	}
	rounds := 120000
	if raceEnabled {
		rounds = 16000
	}
	r := sweepFixture(t, "pool", 8, 8, fmt.Sprintf("/cpu?rounds=%d", rounds), []float64{10, 20, 40, 80, 160, 240})
	one, two := levels(t, r.Analysis)
	if !one.Saturated {
		t.Fatalf("GOMAXPROCS 1 served 240 req/s of ~10 ms CPU requests: the ladder never reached the ceiling")
	}
	// Positive control: scaling can only show when the machine gave the
	// target more CPU at GOMAXPROCS 2. Busy Ps come from the target's /proc
	// CPU time at its ceiling. On these 2 shared cores the load generator
	// (in this race-built test process) and other engineers' processes take
	// their share, so GOMAXPROCS 2 rarely gets two whole cores: when it got
	// less than 1.6x the CPU of GOMAXPROCS 1, the test says so and skips (the
	// classification itself is covered by analyze/capacity's table tests).
	cpuRatio := two.BusyPs / one.BusyPs
	ratio := two.Ceiling / one.Ceiling
	t.Logf("ceilings %.0f and %.0f req/s (%.2fx); busy Ps %.2f and %.2f (%.2fx); limits %s and %s; scaling %s; load average %s",
		one.Ceiling, two.Ceiling, ratio, one.BusyPs, two.BusyPs, cpuRatio, one.Limit, two.Limit, r.Analysis.Scaling.Kind, target.LoadAverage())
	// The control's margin: the ceiling must grow by more than 1.1x, and
	// the lowest ratio of ceiling to CPU growth seen on a quiet machine was
	// 0.72 (below), so the CPU must have grown by at least 1.6x
	// (1.1 / 0.72 = 1.53, and a little more) before a ceiling short of 1.1x
	// can be the code's fault rather than the machine's. Below that the
	// target may look flat (and be called blocking-bound) because other
	// processes had its second core: the test skips with the verdict.
	if one.BusyPs <= 0 || cpuRatio < 1.6 {
		t.Skipf("the machine gave the target only %.2fx the CPU at GOMAXPROCS 2 (%.2f and %.2f cores busy, load average %s): too busy to measure scaling; ceilings %.0f and %.0f req/s (%.2fx), scaling %s",
			cpuRatio, one.BusyPs, two.BusyPs, target.LoadAverage(), one.Ceiling, two.Ceiling, ratio, r.Analysis.Scaling.Kind)
	}
	if r.Analysis.Scaling.Kind == capacity.BlockingBound {
		t.Errorf("CPU work called blocking-bound while the target got %.2fx the CPU: %s", cpuRatio, r.Analysis.Scaling.Reason)
	}
	// Throughput must follow the CPU the Ps got. The race-built target's
	// CPU per request rises at GOMAXPROCS 2 (9.1-9.7 ms against 7.0-8.5 ms
	// at 1, in the runs that scaled least), so the ceiling grows less than
	// the CPU: over twelve runs with the target given 1.73-1.83x the CPU
	// (quiet machine, load under 1.4) it grew 1.28x to 2.11x (median 1.56x),
	// 0.72-1.08 of the CPU ratio; work that does not scale stays near 1x.
	// So: more than 1.1x, and at least 60 % of the CPU ratio (the lowest
	// seen was 72 %); work that does not scale stays near 1x whatever CPU it
	// is given.
	if ratio <= 1.1 || ratio < 0.6*cpuRatio {
		t.Errorf("ceiling grew %.2fx while the target got %.2fx the CPU; CPU work must follow the CPU (> 1.1x, >= 60 %% of the CPU's growth)", ratio, cpuRatio)
	}
}
