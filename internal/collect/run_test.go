package collect

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/derive"
	"github.com/schedscope/schedscope/internal/fixtures"
	"github.com/schedscope/schedscope/internal/fixtures/fixtureagent"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

func TestMain(m *testing.M) {
	if os.Getenv(targetEnv) != "" {
		serveTarget() // this test binary is the target of TestKilledTarget
		return
	}
	if os.Getenv(proxyEnv) != "" {
		serveProxy() // ... and the reverse proxy of TestAnatomyReverseProxyCPU
		return
	}
	goleak.VerifyTestMain(m,
		// database/sql's connection opener and modernc's sqlite may outlive a
		// closed DB by a moment; pgx not used here.
		goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
	)
}

// startFixture starts the fixture with the agent mounted (withAgent) and
// returns it; it is shut down when the test ends.
func startFixture(t *testing.T, cfg fixtures.Config, withAgent bool) *fixtures.Server {
	t.Helper()
	if !withAgent {
		return startFixtureWith(t, cfg, nil)
	}
	return startFixtureWith(t, cfg, &agent.Options{FlightRecorder: agent.FlightRecorderOptions{MinAge: 2 * time.Second}})
}

// startFixtureWith starts the fixture with an agent made from opts (none
// when nil).
func startFixtureWith(t *testing.T, cfg fixtures.Config, opts *agent.Options) *fixtures.Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	var fa *fixtureagent.Agent
	if opts != nil {
		var err error
		fa, err = fixtureagent.New(*opts)
		if err != nil {
			t.Fatal(err)
		}
	}
	srv, err := fixtureagent.Start(context.Background(), cfg, fa)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("fixture shutdown: %v", err)
		}
		if fa != nil {
			fa.Close()
		}
	})
	return srv
}

// ranRun is a run and what derive made of its directory.
type ranRun struct {
	*Outcome
	Analysis *rundir.Analysis
	Summary  string
}

// runOnce runs cfg into a fresh directory, derives analysis.json and
// summary.txt as `schedscope run` does, and checks that deriving them again
// from the files alone, in place or in a copy elsewhere, gives the same
// bytes.
func runOnce(t *testing.T, ctx context.Context, cfg Config) *ranRun {
	t.Helper()
	if cfg.Out == "" {
		cfg.Out = filepath.Join(t.TempDir(), "run")
	}
	r, err := NewRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	d, err := derive.Dir(context.Background(), out.Dir)
	if err != nil {
		t.Fatalf("derive: %v", err)
	}
	first := readFiles(t, out.Dir, rundir.AnalysisFile, rundir.SummaryFile, rundir.ManifestFile)
	if _, err := derive.Dir(context.Background(), out.Dir); err != nil {
		t.Fatalf("derive again: %v", err)
	}
	again := readFiles(t, out.Dir, rundir.AnalysisFile, rundir.SummaryFile, rundir.ManifestFile)
	for name, b := range first {
		if !bytes.Equal(b, again[name]) {
			t.Errorf("%s derived again from the files differs from the first derivation", name)
		}
	}
	// A copy of the directory elsewhere derives the same bytes.
	cp := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(cp, os.DirFS(out.Dir)); err != nil {
		t.Fatal(err)
	}
	if _, err := derive.Dir(context.Background(), cp); err != nil {
		t.Fatalf("derive a copy: %v", err)
	}
	copied := readFiles(t, cp, rundir.AnalysisFile, rundir.SummaryFile)
	for name, b := range copied {
		if !bytes.Equal(b, first[name]) {
			t.Errorf("%s derived in a copy of the run directory differs from the original's", name)
		}
	}
	out.Manifest = d.Run.Manifest
	return &ranRun{Outcome: out, Analysis: d.Analysis, Summary: d.Summary}
}

func readFiles(t *testing.T, dir string, names ...string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		m[n] = b
	}
	return m
}

// checkDir checks that a run directory holds the files named and that its
// JSON files parse; it returns the manifest.
func checkDir(t *testing.T, dir string, want ...string) rundir.Manifest {
	t.Helper()
	for _, name := range want {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("run directory lacks %s: %v", name, err)
			continue
		}
		if fi.Size() == 0 {
			t.Errorf("%s is empty", name)
		}
	}
	var m rundir.Manifest
	readJSON(t, filepath.Join(dir, rundir.ManifestFile), &m)
	var an rundir.Analysis
	readJSON(t, filepath.Join(dir, rundir.AnalysisFile), &an)
	var res load.Result
	readJSON(t, filepath.Join(dir, rundir.ResultsFile), &res)
	b, err := os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	prevT := -1.0
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var ml rundir.MetricsLine
		if err := json.Unmarshal([]byte(line), &ml); err != nil {
			t.Fatalf("metrics.jsonl line %d: %v", i+1, err)
		}
		if ml.T <= prevT {
			t.Errorf("metrics.jsonl line %d: t_s %.3f not after %.3f", i+1, ml.T, prevT)
		}
		prevT = ml.T
	}
	return m
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func findingKinds(an *rundir.Analysis) []string {
	var out []string
	for _, f := range an.Findings {
		out = append(out, string(f.Kind)+": "+f.Title)
	}
	return out
}

var everyFile = []string{rundir.ManifestFile, rundir.ResultsFile, rundir.HLogFile, rundir.MetricsFile, rundir.TraceFile, rundir.AnalysisFile, rundir.SummaryFile,
	rundir.ProfileFile("goroutine"), rundir.ProfileFile("block"), rundir.ProfileFile("mutex"), rundir.ProfileFile("threadcreate"), rundir.ProfileFile("fgprof")}

// TestPoolModelCeiling: 2 workers and 50 ms sleeps fit 40 req/s; offered
// 80 req/s, the worker pool is the ceiling and the run says so.
func TestPoolModelCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("an 8 s loopback run past a worker pool's ceiling")
	}
	fc := fixtures.DefaultConfig()
	fc.Model, fc.Workers, fc.QueueSize = fixtures.ModelPool, 2, 10_000
	srv := startFixture(t, fc, true)
	var lives int
	var sawPool, sawNote bool
	out := runOnce(t, context.Background(), Config{
		Load:        load.Config{URL: srv.URL() + "/sleep?ms=50", Rate: 80, Duration: 4 * time.Second, Timeout: 10 * time.Second},
		TraceWindow: time.Second,
		PollEvery:   250 * time.Millisecond,
		Live: func(l Live) {
			lives++
			for _, p := range l.Target.Pools {
				if p.Name == "workers" && p.Size == 2 {
					sawPool = true
				}
			}
			for _, n := range l.Notes {
				sawNote = sawNote || (n.Kind == rundir.KindPoolSaturated && strings.HasPrefix(n.Text, "pool workers is full"))
			}
		},
	})
	if testing.Verbose() {
		t.Log(out.Summary)
	}
	m := checkDir(t, out.Dir, everyFile...)
	if m.Status != rundir.StatusComplete || m.Target.Source != rundir.SourceAgent {
		t.Errorf("manifest: status %q source %q reason %q", m.Status, m.Target.Source, m.Reason)
	}
	if lives < 10 || !sawPool || !sawNote {
		t.Errorf("live feed: %d values, saw workers pool %v, saw its saturated-pool note %v", lives, sawPool, sawNote)
	}
	an := out.Analysis
	if len(an.Phases) != 1 {
		t.Fatalf("phases: %+v", an.Phases)
	}
	ph := an.Phases[0]
	if ph.Tracking || ph.Ceiling == nil || ph.Ceiling.Pool != "workers" {
		t.Fatalf("ceiling: tracking %v %+v; findings %v", ph.Tracking, ph.Ceiling, findingKinds(an))
	}
	var workers *rundir.PoolFigures
	for i := range ph.Pools {
		if ph.Pools[i].Name == "workers" {
			workers = &ph.Pools[i]
		}
	}
	// Little's law: 2 workers / 50 ms = 40 req/s at most. The hold comes
	// from the fixture's own count of each request's time in its worker, and
	// a sleep only overshoots, so it is at least 50 ms whatever the machine's
	// load. (Mean in use / 2xx per second, the fallback, came out at 48.6 ms
	// in one CI run: the 2xx rate's edges are not exact.)
	if workers == nil || workers.HoldFrom != "pool" || workers.MeanHoldMS < 50 || workers.CapacityPerS > 40 || workers.SaturatedShare < derive.SaturatedShareLimit {
		t.Errorf("workers pool: %+v", workers)
	}
	if an.Trace == nil || an.TraceCapture != "window" {
		t.Errorf("trace: capture %q error %q", an.TraceCapture, an.TraceError)
	}
	if !slices.ContainsFunc(an.Profiles, func(p rundir.ProfileSummary) bool { return p.Name == "fgprof" && len(p.Top) > 0 }) {
		t.Errorf("no fgprof summary: %+v", an.Profiles)
	}
	// The run directory is what `schedscope analyze RUNDIR` reads.
	if p, err := rundir.FindTrace(out.Dir); err != nil || filepath.Base(p) != rundir.TraceFile {
		t.Errorf("rundir.FindTrace: %q %v", p, err)
	}
	sum, _ := os.ReadFile(filepath.Join(out.Dir, rundir.SummaryFile))
	for _, s := range []string{"the ceiling was pool workers", "fgprof profile", "Little's law"} {
		if !strings.Contains(string(sum), s) {
			t.Errorf("summary.txt lacks %q", s)
		}
	}
}

const targetEnv = "SCHEDSCOPE_COLLECT_TEST_TARGET"

// serveTarget runs the fixture with the agent until killed.
func serveTarget() {
	fa, err := fixtureagent.New(agent.Options{})
	if err != nil {
		os.Exit(3)
	}
	cfg := fixtures.DefaultConfig()
	cfg.Addr = os.Getenv(targetEnv)
	if _, err := fixtureagent.Start(context.Background(), cfg, fa); err != nil {
		os.Exit(3)
	}
	select {}
}

// TestDBPoolCeiling: goroutine model, a database pool of 2 and 50 ms
// queries fit 40 req/s; offered 100 req/s, the database pool is the ceiling.
// The trace is a flight-recorder snapshot taken when p99 first exceeds 200 ms
// (the first of two conditions to hold), from an agent whose recorder runs
// on demand: the run arms it.
func TestDBPoolCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("an 8 s loopback run past a database pool's ceiling")
	}
	fc := fixtures.DefaultConfig()
	fc.Model, fc.DBPool, fc.DBDelay = fixtures.ModelGoroutine, 2, 50*time.Millisecond
	srv := startFixtureWith(t, fc, &agent.Options{FlightRecorder: agent.FlightRecorderOptions{MinAge: 2 * time.Second}})
	out := runOnce(t, context.Background(), Config{
		Load:         load.Config{URL: srv.URL() + "/db", Rate: 100, Duration: 4 * time.Second, Timeout: 8 * time.Second},
		SnapshotWhen: "not_sent>1000000, p99 > 200ms",
		PollEvery:    250 * time.Millisecond,
	})
	if testing.Verbose() {
		t.Log(out.Summary)
	}
	m := checkDir(t, out.Dir, everyFile...)
	if m.Status != rundir.StatusComplete {
		t.Errorf("status %q %q", m.Status, m.Reason)
	}
	if m.Target.FlightRecorder != "on" {
		t.Errorf("target's flight recorder %q after the run armed it, want on", m.Target.FlightRecorder)
	}
	an := out.Analysis
	if len(an.Phases) != 1 || an.Phases[0].Ceiling == nil || an.Phases[0].Ceiling.Pool != "db" {
		t.Fatalf("want the db pool as the ceiling; phases %+v findings %v", an.Phases, findingKinds(an))
	}
	for _, p := range an.Phases[0].Pools {
		switch p.Name {
		case "db":
			// Hold time from the pool's own counters: the 50 ms query, so
			// Little's law predicts 2 / 50 ms = 40 req/s (less if queries overshoot).
			if p.HoldFrom != "pool" || p.MeanHoldMS < 50 || p.CapacityPerS > 40.5 || p.CapacityPerS < 10 {
				t.Errorf("db pool: %+v", p)
			}
		case "workers":
			if p.Size != 0 {
				t.Errorf("goroutine model's workers pool should be unbounded: %+v", p)
			}
		}
	}
	if an.TraceCapture != "flight-recorder" || !strings.Contains(an.TraceReason, "p99>200ms") || an.Trace == nil {
		t.Errorf("trace: capture %q reason %q error %q", an.TraceCapture, an.TraceReason, an.TraceError)
	}
}

// TestPprofOnlyTarget: a target with net/http/pprof and no agent gives
// fewer figures, and the run says what is missing.
func TestPprofOnlyTarget(t *testing.T) {
	fc := fixtures.DefaultConfig()
	srv := startFixture(t, fc, false)
	out := runOnce(t, context.Background(), Config{
		Load:        load.Config{URL: srv.URL() + "/sleep?ms=5", Rate: 50, Duration: 3 * time.Second},
		TraceWindow: time.Second,
		PollEvery:   250 * time.Millisecond,
	})
	m := checkDir(t, out.Dir, rundir.ManifestFile, rundir.ResultsFile, rundir.HLogFile, rundir.MetricsFile, rundir.TraceFile, rundir.AnalysisFile, rundir.SummaryFile,
		rundir.ProfileFile("goroutine"), rundir.ProfileFile("block"))
	if m.Target.Source != rundir.SourcePprof || m.Status != rundir.StatusComplete {
		t.Fatalf("manifest: source %q status %q %q", m.Target.Source, m.Status, m.Reason)
	}
	if _, err := os.Stat(filepath.Join(out.Dir, rundir.ProfileFile("fgprof"))); err == nil {
		t.Error("fgprof.pb.gz from a target without the agent")
	}
	if !slices.ContainsFunc(m.Missing, func(x rundir.Missing) bool { return strings.Contains(x.Why, "not schedscope's agent") }) {
		t.Errorf("missing does not say the agent is absent: %+v", m.Missing)
	}
	if len(out.Analysis.Phases) != 1 || out.Analysis.Phases[0].PeakGoroutines < 5 {
		t.Errorf("goroutine counts from the goroutine profile: %+v", out.Analysis.Phases)
	}
	if out.Analysis.Trace == nil {
		t.Errorf("no trace from /debug/pprof/trace: %s", out.Analysis.TraceError)
	}
	if !strings.Contains(out.Summary, "not collected") {
		t.Error("summary does not list what was not collected")
	}
}

// TestRequestsFile: a run tags its requests and, having captured a trace,
// leaves requests.tsv: the records of the requests intended in the trace's
// window (widened by the client timeout before it), under the manifest's
// tag, which rundir.ReadRequests reads back.
func TestRequestsFile(t *testing.T) {
	srv := startFixture(t, fixtures.DefaultConfig(), true)
	const timeout = 300 * time.Millisecond
	out := runOnce(t, context.Background(), Config{
		Load:        load.Config{URL: srv.URL() + "/sleep?ms=2", Rate: 100, Duration: 2 * time.Second, Timeout: timeout},
		TraceWindow: 400 * time.Millisecond,
		PollEvery:   250 * time.Millisecond,
	})
	m := checkDir(t, out.Dir, rundir.ManifestFile, rundir.ResultsFile, rundir.TraceFile, rundir.RequestsFile)
	if m.Schema != rundir.ManifestSchema || load.CheckRequestTag(m.RequestTag) != nil || m.Trace == nil {
		t.Fatalf("manifest: schema %d, request tag %q, trace %+v", m.Schema, m.RequestTag, m.Trace)
	}
	if !slices.ContainsFunc(m.Files, func(f rundir.FileEntry) bool { return f.Name == rundir.RequestsFile && f.Bytes > 0 }) {
		t.Errorf("manifest does not list %s: %+v", rundir.RequestsFile, m.Files)
	}
	rl, err := rundir.ReadRequests(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if rl.Tag != m.RequestTag || out.Result.RequestTag != m.RequestTag || rl.Skipped != 0 || rl.Truncated {
		t.Errorf("requests.tsv: tag %q (manifest %q, result %q), %d skipped, truncated %v", rl.Tag, m.RequestTag, out.Result.RequestTag, rl.Skipped, rl.Truncated)
	}
	at := func(s float64) int64 { return m.LoadStart.UnixNano() + int64(s*1e9) }
	lo, hi := at(m.Trace.StartS)-int64(timeout), at(m.Trace.EndS)
	// 100 req/s over a 400 ms window and the 300 ms before it: about 70.
	t.Logf("%d rows of %d requests, trace %.3f-%.3f s", len(rl.Requests), out.Result.Phases[0].Completed, m.Trace.StartS, m.Trace.EndS)
	if n := len(rl.Requests); n < 30 || int64(n) >= out.Result.Phases[0].Completed {
		t.Errorf("%d rows of %d requests: want those of the trace's window, about 70", n, out.Result.Phases[0].Completed)
	}
	for i, q := range rl.Requests {
		if q.IntendedUnixNs < lo || q.IntendedUnixNs > hi || q.Outcome != load.OutcomeOK || q.Status != 200 {
			t.Errorf("row %d: %+v, want a 2xx intended in [%d, %d]", i, q, lo, hi)
		}
		if i > 0 && q.Seq != rl.Requests[i-1].Seq+1 {
			t.Errorf("row %d: seq %d after %d: want every request of the window, in order", i, q.Seq, rl.Requests[i-1].Seq)
		}
	}
}

// TestInterruptedBySIGINT: SIGINT mid-run, delivered the way main wires
// it (signal.NotifyContext), leaves a valid directory marked interrupted.
func TestInterruptedBySIGINT(t *testing.T) {
	srv := startFixture(t, fixtures.DefaultConfig(), true)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	timer := time.AfterFunc(2500*time.Millisecond, func() { syscall.Kill(os.Getpid(), syscall.SIGINT) })
	defer timer.Stop()
	out := runOnce(t, ctx, Config{
		Load:      load.Config{URL: srv.URL() + "/sleep?ms=5", Rate: 50, Duration: 20 * time.Second},
		PollEvery: 250 * time.Millisecond,
	})
	m := checkDir(t, out.Dir, rundir.ManifestFile, rundir.ResultsFile, rundir.HLogFile, rundir.MetricsFile, rundir.AnalysisFile, rundir.SummaryFile, rundir.ProfileFile("goroutine"))
	// The reason is the context's cause: signal.NotifyContext's names the
	// signal ("interrupt signal received"), as schedscope's own does
	// ("interrupted (SIGINT)").
	if m.Status != rundir.StatusInterrupted || !strings.Contains(m.Reason, "interrupt") {
		t.Errorf("manifest: status %q reason %q", m.Status, m.Reason)
	}
	if out.Result == nil || !out.Result.Interrupted || out.Result.Phases[0].OK == 0 {
		t.Errorf("results: %+v", out.Result)
	}
	// Noise lengthens the run, but the margin is 12.5 s past the 2.5-s
	// signal (a run that ignored it would go on to its 20 s plan).
	if m.End.Sub(m.Start) > 15*time.Second {
		t.Errorf("the run went on for %v after SIGINT", m.End.Sub(m.Start))
	}
	if _, err := os.Stat(filepath.Join(out.Dir, rundir.RequestsFile)); err == nil || m.Trace != nil {
		t.Errorf("%s written although no trace was captured (trace %+v)", rundir.RequestsFile, m.Trace)
	}
}

// TestKilledTarget: the target (started with Command) is killed mid-run;
// the run stops, and the directory is valid and marked interrupted.
func TestKilledTarget(t *testing.T) {
	addr, err := target.FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(targetEnv, addr)
	dir := filepath.Join(t.TempDir(), "run")
	killed := make(chan int, 1)
	go func() {
		// Wait for the target's PID in the manifest, let the load run, kill it.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			var m rundir.Manifest
			if b, err := os.ReadFile(filepath.Join(dir, rundir.ManifestFile)); err == nil && json.Unmarshal(b, &m) == nil && m.Target.PID > 0 && !m.LoadStart.IsZero() {
				time.Sleep(1500 * time.Millisecond)
				syscall.Kill(-m.Target.PID, syscall.SIGKILL) // its process group
				killed <- m.Target.PID
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		killed <- 0
	}()
	out := runOnce(t, context.Background(), Config{
		Out:       dir,
		Load:      load.Config{URL: "http://" + addr + "/sleep?ms=5", Rate: 50, Duration: 20 * time.Second, Timeout: time.Second},
		Command:   os.Args[0],
		PollEvery: 250 * time.Millisecond,
	})
	if pid := <-killed; pid == 0 {
		t.Fatal("never saw the target's PID in the manifest")
	}
	m := checkDir(t, out.Dir, rundir.ManifestFile, rundir.ResultsFile, rundir.HLogFile, rundir.MetricsFile, rundir.AnalysisFile, rundir.SummaryFile)
	if m.Status != rundir.StatusInterrupted || !strings.Contains(m.Reason, "stopped answering") {
		t.Errorf("manifest: status %q reason %q", m.Status, m.Reason)
	}
	// As after SIGINT: a run that missed the death would go on for its
	// 20 s plan; noise cannot add the 10 s and more this bound leaves.
	if m.End.Sub(m.Start) > 15*time.Second {
		t.Errorf("the run went on for %v after the target died", m.End.Sub(m.Start))
	}
	if out.Result == nil || !out.Result.Interrupted {
		t.Errorf("results: %+v", out.Result)
	}
	var local bool
	for _, p := range out.Analysis.Phases {
		local = local || p.CPUFromProc
	}
	if !local {
		t.Errorf("no CPU from /proc for a --cmd target: %+v", out.Analysis.Phases)
	}
	// Its cgroup's limit and throttling counters, where this machine has a
	// CPU controller to read (the target runs in the test's own cgroup).
	if want, err := target.ReadCgroup(os.Getpid()); err == nil {
		lines, _, err := rundir.ReadMetrics(filepath.Join(out.Dir, rundir.MetricsFile))
		if err != nil || len(lines) == 0 {
			t.Fatalf("metrics.jsonl: %d lines, %v", len(lines), err)
		}
		if c := lines[0].Cgroup; c == nil || c.Version != want.Version || c.Path != want.Path {
			t.Errorf("metrics.jsonl's first line: cgroup %+v, want the test's own (%+v)", c, want)
		}
	} else {
		t.Logf("no cgroup CPU controller here (%v): cgroup counters not checked", err)
	}
}

// requestWindow spans a trace window from the client timeout before its
// start to its end; a flight-recorder snapshot from the beginning; nothing
// when the trace's place on the load's clock is not known.
func TestRequestWindow(t *testing.T) {
	origin := time.Unix(1_800_000_000, 0)
	o := origin.UnixNano()
	for _, tc := range []struct {
		name   string
		tr     rundir.TraceCapture
		origin time.Time
		lo, hi int64
		known  bool
	}{
		{"window", rundir.TraceCapture{Mode: rundir.TraceWindow, StartS: 2, EndS: 3.5}, origin, o + 1e9, o + 3.5e9, true},
		{"flight recorder", rundir.TraceCapture{Mode: rundir.TraceFlightRecorder, EndS: 4}, origin, math.MinInt64, o + 4e9, true},
		{"no load clock", rundir.TraceCapture{Mode: rundir.TraceWindow, StartS: 2, EndS: 3}, time.Time{}, 0, 0, false},
		{"no end", rundir.TraceCapture{Mode: rundir.TraceWindow}, origin, 0, 0, false},
	} {
		lo, hi, known := requestWindow(&tc.tr, tc.origin, time.Second)
		if lo != tc.lo || hi != tc.hi || known != tc.known {
			t.Errorf("%s: [%d, %d] known %v, want [%d, %d] %v", tc.name, lo, hi, known, tc.lo, tc.hi, tc.known)
		}
	}
}
