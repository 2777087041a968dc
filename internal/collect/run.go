// Package collect runs load against a target while collecting what the Go
// scheduler did meanwhile, into a run directory (package rundir): the load
// generator's results and HDR log, the target's runtime metrics polled once
// a second on the load's clock, an execution trace, and blocking and
// wall-clock profiles. It writes raw files only and imports no analysis:
// package derive turns the directory into analysis.json and summary.txt.
//
// Runner.Run is the entry point (`schedscope run` calls it, then derive).
// The in-target agent lives in collect/agent (its own module), the load
// generator in collect/load, the target's process and clients in package
// target.
package collect

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/redact"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// Defaults applied to zero fields of Config.
const (
	DefaultTraceAt      = 0.5
	DefaultTraceWindow  = 5 * time.Second
	DefaultPollEvery    = time.Second
	DefaultReadyTimeout = 30 * time.Second
	// MaxTraceWindow bounds Config.TraceWindow.
	MaxTraceWindow = 60 * time.Second
	// MaxReadyTimeout bounds Config.ReadyTimeout.
	MaxReadyTimeout = 10 * time.Minute
)

// Config describes one run. Zero optional fields take the documented defaults.
type Config struct {
	// Load is the load to drive (its URL is the target). Progress and
	// Interval must be nil: the run sets them (use Live). The run tags
	// every request (RequestTag: a random tag of 8 hex digits unless one
	// is given, recorded in the manifest) and records them
	// (RecordRequests), for requests.tsv.
	Load load.Config
	// Out is the run directory; it must not exist or be empty. Required.
	Out string

	// AgentURL is the agent's base URL (".../debug/schedscope/"); PprofURL
	// a net/http/pprof base (".../debug/pprof/") for targets without the
	// agent. When both are empty the run looks for either on the target's
	// host, and runs with the load and /proc only when neither answers.
	AgentURL, PprofURL string
	// Token is sent as a bearer token to the agent or pprof endpoints.
	Token string

	// TraceAt places the trace window's middle in the last steady phase, as
	// a fraction of it (0.5: the middle). Zero means DefaultTraceAt.
	TraceAt float64
	// TraceWindow is the trace window's length. Zero means DefaultTraceWindow.
	TraceWindow time.Duration
	// SnapshotWhen, when set, replaces the trace window by a flight-recorder
	// snapshot: "end" takes it when the load ends; conditions (package
	// cond's language, cond.Live metrics, comma-separated: "p99>500ms" or
	// "p99>500ms, not_sent>0") take it the first time one of them holds,
	// or at the end if none ever does.
	SnapshotWhen string
	// SleepProbe, when its Goroutines is not zero, runs the agent's sleep
	// probe in the last steady phase, after the trace window (or after the
	// fgprof pieces, with SnapshotWhen), and writes its result to
	// rundir.SleepProbeFile.
	SleepProbe SleepProbe

	// PID is the target's process ID when it runs on this machine: its CPU
	// and RSS are read from /proc. Command, instead, is a shell command that
	// starts the target: the run starts it, waits until Load.URL answers
	// (ReadyTimeout), reads its process group from /proc, and stops it at the
	// end (SIGTERM, then SIGKILL). At most one of them.
	PID     int
	Command string
	// CommandLog receives the started target's stdout and stderr; nil discards them.
	CommandLog io.Writer
	// ReadyTimeout bounds the wait for a started target. Zero means DefaultReadyTimeout.
	ReadyTimeout time.Duration

	// PollEvery is the polling period. Zero means DefaultPollEvery (1 Hz).
	PollEvery time.Duration

	// Limits bound every read from the target: each poll and profile in
	// size and time, each trace window and snapshot in size and to its
	// window plus a margin (zero fields: target's defaults). A read past
	// one fails with an error naming it, recorded like any other failure.
	Limits target.Limits

	// Args is the command line, recorded in the manifest.
	Args []string

	// Live, when set, receives a Live value with every load progress
	// snapshot and after every poll, from the run's goroutines (never two at
	// once). It must return quickly. It is not called after Run returns.
	Live func(Live)

	// LoadProgress and LoadInterval, when set, also receive the load's
	// progress snapshots and interval histograms, from the load's own
	// goroutine, as load.Config's Progress and Interval would: to export
	// them (schedscope run --prometheus). They must return quickly and
	// only read the histograms, which the run writes to load.hlog.
	LoadProgress func(load.Progress)
	LoadInterval func(load.Interval)
}

// SleepProbe is the sleep probe's shape: Goroutines goroutines each calling
// time.Sleep(Sleep) over and over, for the probe's length: ten sleeps, at
// least a second (SleepProbeLength), cut to what the phase leaves.
type SleepProbe struct {
	Goroutines int
	Sleep      time.Duration
}

// SleepProbeLength is how long a probe of sleeps of d runs, when the phase
// leaves the time: ten sleeps, at least a second.
func SleepProbeLength(d time.Duration) time.Duration { return max(time.Second, 10*d) }

// Outcome is what a run produced: its raw files. analysis.json and
// summary.txt are derived from them afterwards (package derive). After an
// interrupted run it holds what was measured until then.
type Outcome struct {
	Dir      string
	Manifest rundir.Manifest
	Result   *load.Result
}

// Runner is one run. Create it with NewRunner, call Run once; Stop and
// TraceNow may be called from other goroutines while Run runs.
type Runner struct {
	cfg Config
	// snapshotWhen are SnapshotWhen's conditions; nil for "" and "end".
	snapshotWhen []cond.Condition

	mu        sync.Mutex
	stop      context.CancelCauseFunc // set while Run runs
	stopEarly bool                    // Stop came before Run set stop
	ran       bool                    // Run was called
	reqs      chan captureReq
	done      chan struct{} // closed when the run's capturer has stopped
}

// errStopped is the cause of a run stopped by Runner.Stop.
var errStopped = errors.New("stopped before the end of the plan")

// errTargetGone is the cause of a run whose target stopped answering.
var errTargetGone = errors.New("the target stopped answering")

// NewRunner validates cfg and applies its defaults. Nothing starts until Run.
func NewRunner(cfg Config) (*Runner, error) {
	if cfg.Out == "" {
		return nil, errors.New("run: no output directory")
	}
	if err := rundir.CheckNewRunDir(cfg.Out); err != nil {
		return nil, err // before anything is written: never into a directory of another kind
	}
	if cfg.Load.Progress != nil || cfg.Load.Interval != nil {
		return nil, errors.New("run: Load.Progress and Load.Interval are set by the run; use Config.Live")
	}
	if err := cfg.Load.Validate(); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	if cfg.Load.RequestTag == "" {
		tag, err := newRequestTag()
		if err != nil {
			return nil, fmt.Errorf("run: %w", err)
		}
		cfg.Load.RequestTag = tag
	}
	cfg.Load.RecordRequests = true
	if cfg.TraceAt == 0 {
		cfg.TraceAt = DefaultTraceAt
	}
	if sp := cfg.SleepProbe; sp.Goroutines != 0 {
		if sp.Goroutines < 1 || sp.Goroutines > agent.MaxProbeGoroutines {
			return nil, fmt.Errorf("run: sleep probe: %d goroutines: want 1 to %d", sp.Goroutines, agent.MaxProbeGoroutines)
		}
		if sp.Sleep < agent.MinProbeSleep || sp.Sleep > agent.MaxProbeSleep {
			return nil, fmt.Errorf("run: sleep probe: sleep %v: want %v to %v", sp.Sleep, agent.MinProbeSleep, agent.MaxProbeSleep)
		}
	}
	if cfg.TraceAt < 0 || cfg.TraceAt > 1 {
		return nil, fmt.Errorf("run: trace-at %g: want a fraction in (0, 1]", cfg.TraceAt)
	}
	if cfg.TraceWindow == 0 {
		cfg.TraceWindow = DefaultTraceWindow
	}
	if cfg.TraceWindow < 100*time.Millisecond || cfg.TraceWindow > MaxTraceWindow {
		return nil, fmt.Errorf("run: trace window %v: want 100ms to %v", cfg.TraceWindow, MaxTraceWindow)
	}
	if cfg.PollEvery == 0 {
		cfg.PollEvery = DefaultPollEvery
	}
	if cfg.PollEvery < 100*time.Millisecond || cfg.PollEvery > time.Minute {
		return nil, fmt.Errorf("run: poll period %v: want 100ms to 1m", cfg.PollEvery)
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = DefaultReadyTimeout
	}
	if cfg.ReadyTimeout < 0 || cfg.ReadyTimeout > MaxReadyTimeout {
		return nil, fmt.Errorf("run: ready timeout %v: want (0, %v]", cfg.ReadyTimeout, MaxReadyTimeout)
	}
	if l := cfg.Limits; l.JSON < 0 || l.Profile < 0 || l.Capture < 0 || l.Read < 0 || l.Margin < 0 {
		return nil, fmt.Errorf("run: limits %+v: must not be negative", l)
	}
	if cfg.PID != 0 && cfg.Command != "" {
		return nil, errors.New("run: give --pid or --cmd, not both")
	}
	if cfg.PID < 0 {
		return nil, fmt.Errorf("run: pid %d: must be positive", cfg.PID)
	}
	r := &Runner{cfg: cfg, reqs: make(chan captureReq), done: make(chan struct{})}
	switch w := strings.TrimSpace(cfg.SnapshotWhen); w {
	case "", "end":
		r.cfg.SnapshotWhen = w
	default:
		cs, err := cond.ParseList(w, cond.Live)
		if err != nil {
			return nil, fmt.Errorf("run: snapshot-when: %w", err)
		}
		r.cfg.SnapshotWhen, r.snapshotWhen = w, cs
	}
	return r, nil
}

// newRequestTag makes a run's request tag: 8 random hex digits.
func newRequestTag() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("request tag: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Stop ends the run early, as Ctrl-C does: the load stops, what was
// measured is written and the directory is marked interrupted.
func (r *Runner) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop != nil {
		r.stop(errStopped)
	} else {
		r.stopEarly = true
	}
}

// captureReq asks the capturer for an extra trace window now.
type captureReq struct {
	reply chan captureReply
}

type captureReply struct {
	path string
	err  error
}

// TraceNow asks the running run for an extra trace window of
// Config.TraceWindow now, written as trace-<seconds>s.out in the run
// directory (not analyzed). It waits for the window and returns the file's
// path; it fails when the run is not running, another capture holds the
// target, or ctx ends.
func (r *Runner) TraceNow(ctx context.Context) (string, error) {
	req := captureReq{reply: make(chan captureReply, 1)}
	select {
	case r.reqs <- req:
	case <-r.done:
		return "", errors.New("the run is over")
	case <-ctx.Done():
		return "", ctx.Err()
	}
	select {
	case rep := <-req.reply:
		return rep.path, rep.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Run drives the load and collects into the run directory until the plan
// ends, ctx is cancelled, Stop is called or the target stops answering. It
// returns an error only when the run could not start (bad directory, target
// that never answered) or a file could not be written; an interrupted run
// returns its Outcome with Manifest.Status == rundir.StatusInterrupted and a
// nil error.
//
// It runs in three stages: attach to the target (start or find its process,
// find what answers inside it), drive the load while polling and capturing,
// and finish the directory, which runs even after an interruption.
func (r *Runner) Run(ctx context.Context) (*Outcome, error) {
	if err := r.claim(); err != nil {
		return nil, err
	}
	rd, err := rundir.Create(r.cfg.Out)
	if err != nil {
		return nil, err
	}
	if err := rd.UpdateManifest(func(m *rundir.Manifest) { *m = r.initialManifest() }); err != nil {
		return nil, err
	}
	tg, err := r.attach(ctx, rd)
	if err != nil {
		return nil, errors.Join(err, r.failStart(rd, err))
	}
	defer tg.close()
	st, err := newRunState(r, rd, tg)
	if err != nil {
		return nil, err
	}
	defer st.files.close()
	runCtx, cancel := r.cancellable(ctx)
	defer cancel(nil)
	st.cancel = cancel
	res, loadErr := st.drive(runCtx)
	return st.finish(runCtx, res, loadErr)
}

// claim marks the Runner used; a second Run is an error.
func (r *Runner) claim() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ran {
		return errors.New("run: Runner.Run called twice")
	}
	r.ran = true
	return nil
}

// cancellable derives the run's context, which Stop cancels (also when it
// came before Run got here).
func (r *Runner) cancellable(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	runCtx, cancel := context.WithCancelCause(ctx)
	r.mu.Lock()
	r.stop = cancel
	if r.stopEarly {
		cancel(errStopped)
	}
	r.mu.Unlock()
	return runCtx, func(cause error) {
		r.mu.Lock()
		r.stop = nil
		r.mu.Unlock()
		cancel(cause)
	}
}

// attached is the target a run talks to: its process when local, and what
// answers inside it.
type attached struct {
	proc   *target.Process              // nil unless the run started it
	usage  func() (target.Usage, error) // nil when the target is not local
	pid    int                          // the local target's process; 0 when not local
	client target.Client
}

// close ends what attach started: the client's connections, then the
// process the run started.
func (a *attached) close() {
	a.client.Close()
	if a.proc != nil {
		a.proc.Stop()
	}
}

// attach starts the target (Config.Command) or finds it (Config.PID),
// discovers what answers inside it, arms an on-demand flight recorder when
// the run wants a snapshot, and records all of it in the manifest.
func (r *Runner) attach(ctx context.Context, rd *rundir.Writer) (*attached, error) {
	cfg := &r.cfg
	a := &attached{}
	switch {
	case cfg.Command != "":
		proc, err := target.Start(target.Spec{Command: cfg.Command, Log: cfg.CommandLog})
		if err != nil {
			return nil, fmt.Errorf("starting the target: %w", err)
		}
		a.proc = proc
		if err := target.WaitReady(ctx, proc, cfg.Load.URL, cfg.ReadyTimeout); err != nil {
			proc.Stop()
			return nil, fmt.Errorf("target %q: %w", redact.Text(cfg.Command), err)
		}
		if exited, err := proc.Exited(); exited {
			// Something else answered at the target's address.
			return nil, fmt.Errorf("target %q exited (%v) although %s answered: is another server on that address?", redact.Text(cfg.Command), err, redact.URL(cfg.Load.URL))
		}
		a.usage = func() (target.Usage, error) {
			if exited, err := proc.Exited(); exited {
				return target.Usage{}, fmt.Errorf("the target process exited: %v", err)
			}
			return proc.Usage()
		}
		a.pid = proc.PID()
	case cfg.PID != 0:
		if _, err := target.ReadUsage(cfg.PID); err != nil {
			return nil, fmt.Errorf("--pid: %w", err)
		}
		a.usage = func() (target.Usage, error) { return target.ReadUsage(cfg.PID) }
		a.pid = cfg.PID
	}
	client, err := target.Discover(ctx, cfg.Load.URL, cfg.AgentURL, cfg.PprofURL, cfg.Token, target.WithLimits(cfg.Limits))
	if err != nil {
		if a.proc != nil {
			a.proc.Stop()
		}
		return nil, err
	}
	a.client = client
	r.armFlightRecorder(ctx, client)
	err = rd.UpdateManifest(func(m *rundir.Manifest) {
		m.Target.PID = a.pid
		r.describeTarget(m, client)
	})
	if err == nil {
		err = r.recordMissingUpFront(rd, client, a.pid)
	}
	if err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// runFiles are the files a run appends to as it measures.
type runFiles struct {
	hlogFile *rundir.Appender
	hlog     *load.HLog
	metrics  *rundir.Appender
}

// close closes both files (a second close is harmless), returning the
// first error.
func (f *runFiles) close() error {
	return errors.Join(f.hlogFile.Close(), f.metrics.Close())
}

// newRunState opens the run's appended files and prepares the state its
// goroutines share.
func newRunState(r *Runner, rd *rundir.Writer, tg *attached) (*runState, error) {
	hlogFile, err := rd.CreateAppender(rundir.HLogFile)
	if err != nil {
		return nil, err
	}
	metrics, err := rd.CreateAppender(rundir.MetricsFile)
	if err != nil {
		hlogFile.Close()
		return nil, err
	}
	st := &runState{r: r, rd: rd, client: tg.client, usage: tg.usage, pid: tg.pid,
		files:           runFiles{hlogFile: hlogFile, hlog: load.NewHLog(hlogFile), metrics: metrics},
		progress:        make(chan load.Progress, 1),
		snapshotTrigger: make(chan string, 1),
		loadDone:        make(chan struct{}),
		steadySteps:     max(1, len(r.cfg.Load.Rates)),
		view:            pollView{polledAt: -1},
	}
	if r.cfg.Load.Users > 0 {
		st.steadySteps = 1
	}
	return st, nil
}

// drive runs the load to its end while the poller and the capturer run
// beside it, and returns when all three have stopped.
func (st *runState) drive(ctx context.Context) (*load.Result, error) {
	lcfg := st.r.cfg.Load
	lcfg.Progress = st.onProgress
	lcfg.Interval = func(iv load.Interval) {
		if st.r.cfg.LoadInterval != nil {
			st.r.cfg.LoadInterval(iv)
		}
		_ = st.files.hlog.Write(iv) // the first error is kept; Close reports it
	}

	st.baseline(ctx)
	var wg sync.WaitGroup
	pollCtx, stopPolling := context.WithCancel(ctx)
	wg.Add(2)
	go func() { defer wg.Done(); st.pollLoop(pollCtx) }()
	go func() { defer wg.Done(); st.captureLoop(ctx) }()

	res, loadErr := load.Run(ctx, lcfg)
	close(st.loadDone)
	stopPolling()
	wg.Wait()
	if loadErr != nil {
		st.cancel(loadErr)
	}
	return res, loadErr
}

// finish writes what the load and the captures left (results, the closed
// logs, profiles) and the manifest's end, status and trace. Every step runs
// even after an interruption, so the directory is consistent; the error
// joins every write that failed.
func (st *runState) finish(runCtx context.Context, res *load.Result, loadErr error) (*Outcome, error) {
	rd := st.rd
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if res != nil {
		if err := rd.WriteFile(rundir.ResultsFile, func(w io.Writer) error { return load.WriteJSON(w, res) }); err != nil {
			keep(err)
		} else {
			keep(rd.RecordFile(rundir.ResultsFile, "load generator's results (load.Result)"))
		}
		keep(st.writeRequests(res))
		if err := st.files.hlog.Close(res.Start); err != nil {
			keep(fmt.Errorf("%s: %w", rundir.HLogFile, err))
		}
	}
	keep(st.files.close())
	keep(rd.RecordFile(rundir.HLogFile, "load generator's HdrHistogram interval log, latency in ns"))
	keep(rd.RecordFile(rundir.MetricsFile, "one poll of the target per line, t_s on the load's clock"))
	keep(st.writeProfiles())

	status, reason := endStatus(context.Cause(runCtx), res, loadErr)
	keep(rd.UpdateManifest(func(m *rundir.Manifest) {
		m.End = time.Now()
		m.Status, m.Reason = status, reason
		m.Trace = st.caps.traceInfo()
	}))
	st.mu.Lock()
	keep(st.writeErr)
	st.mu.Unlock()
	if loadErr != nil && res == nil {
		keep(loadErr)
	}
	return &Outcome{Dir: st.r.cfg.Out, Result: res, Manifest: rd.Manifest()}, errors.Join(errs...)
}

// writeRequests writes requests.tsv when a trace was captured: the load
// generator's records of the requests whose intended send time falls in
// the trace's window widened by the client timeout before its start (a
// request intended then may still be in flight in the window), or of every
// request when the window is not known. A window some of whose records
// were dropped (load.MaxRecordedRequests) is recorded as missing.
func (st *runState) writeRequests(res *load.Result) error {
	tr := st.caps.traceInfo()
	if tr == nil || res.RequestTag == "" {
		return nil
	}
	st.mu.Lock()
	origin := st.tally.start // the load's clock, which tr is on
	st.mu.Unlock()
	reqs := res.Requests
	lo, hi, known := requestWindow(tr, origin, time.Duration(res.TimeoutS*float64(time.Second)))
	if known {
		reqs = make([]load.RequestRecord, 0, len(res.Requests))
		for _, q := range res.Requests {
			if q.IntendedUnixNs >= lo && q.IntendedUnixNs <= hi {
				reqs = append(reqs, q)
			}
		}
	}
	var errs []error
	if res.RequestsDropped > 0 && (!known || len(res.Requests) == 0 || res.Requests[0].IntendedUnixNs > lo) {
		errs = append(errs, st.rd.RecordMissing("records of some requests in the trace's window ("+rundir.RequestsFile+")",
			fmt.Errorf("the load generator keeps the records of %d requests at most; %d earlier ones were dropped", load.MaxRecordedRequests, res.RequestsDropped)))
	}
	err := st.rd.WriteFile(rundir.RequestsFile, func(w io.Writer) error { return rundir.WriteRequests(w, res.RequestTag, reqs) })
	if err == nil {
		err = st.rd.RecordFile(rundir.RequestsFile, "load generator's record of each request around the trace window, joined with the trace's requests through their "+load.RequestHeader+" header (rundir.RequestLog)")
	}
	return errors.Join(append(errs, err)...)
}

// requestWindow is the span of intended send times, in Unix ns, whose
// requests may show in trace tr: from timeout before its start to its end.
// A flight-recorder snapshot's start is not known: it runs from the
// beginning. known is false when tr does not say where it lies on the
// load's clock (origin).
func requestWindow(tr *rundir.TraceCapture, origin time.Time, timeout time.Duration) (lo, hi int64, known bool) {
	if origin.IsZero() || tr.EndS <= 0 || tr.EndS < tr.StartS {
		return 0, 0, false
	}
	at := func(s float64) int64 { return origin.UnixNano() + int64(math.Round(s*1e9)) }
	lo = math.MinInt64
	if tr.Mode != rundir.TraceFlightRecorder {
		lo = at(tr.StartS) - int64(timeout)
	}
	return lo, at(tr.EndS), true
}

// endStatus is how a run ended: complete, or interrupted and why.
func endStatus(cause error, res *load.Result, loadErr error) (status, reason string) {
	status = rundir.StatusComplete
	if cause != nil && (res == nil || res.Interrupted || !errors.Is(cause, context.Canceled)) {
		status, reason = rundir.StatusInterrupted, describeCause(cause)
	} else if res != nil && res.Interrupted {
		status, reason = rundir.StatusInterrupted, "interrupted"
	}
	if res == nil {
		status = rundir.StatusInterrupted
		if reason == "" && loadErr != nil {
			reason = loadErr.Error()
		}
	}
	return status, reason
}

func describeCause(cause error) string {
	switch {
	case errors.Is(cause, errStopped):
		return "stopped before the end of the plan"
	case errors.Is(cause, errTargetGone):
		return cause.Error()
	case errors.Is(cause, context.Canceled) && cause != context.Canceled:
		return cause.Error() // the caller's, naming the signal: "interrupted (SIGHUP)"
	case errors.Is(cause, context.Canceled):
		return "interrupted (Ctrl-C or SIGTERM)"
	case errors.Is(cause, context.DeadlineExceeded):
		return "deadline exceeded"
	}
	return cause.Error()
}

// failStart marks the directory interrupted by err, the reason the run
// could not start; it returns the manifest's write error.
func (r *Runner) failStart(rd *rundir.Writer, err error) error {
	return rd.UpdateManifest(func(m *rundir.Manifest) {
		m.End = time.Now()
		m.Status, m.Reason = rundir.StatusInterrupted, err.Error()
	})
}

func (r *Runner) initialManifest() rundir.Manifest {
	cfg := &r.cfg
	m := rundir.Manifest{
		Schema: rundir.ManifestSchema, Tool: "schedscope", Version: moduleVersion(), GoVersion: runtime.Version(),
		Args: cfg.Args,
		Config: rundir.ManifestConfig{TargetURL: cfg.Load.URL, AgentURL: cfg.AgentURL, PprofURL: cfg.PprofURL,
			TraceAt: cfg.TraceAt, TraceWindowS: cfg.TraceWindow.Seconds(), SnapshotWhen: cfg.SnapshotWhen,
			PID: cfg.PID, Command: cfg.Command, PollEveryS: cfg.PollEvery.Seconds()},
		Generator:  rundir.ProcessInfo{PID: os.Getpid(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()},
		Start:      time.Now(),
		Status:     rundir.StatusRunning,
		RequestTag: cfg.Load.RequestTag,
		Files:      []rundir.FileEntry{},
	}
	m.Machine = target.DescribeMachine()
	// A shard is named from the start, so merge can name it when its
	// process dies before results.json is written.
	if cfg.Load.Shard.Count > 1 {
		if sh, err := cfg.Load.ShardRun(); err == nil {
			m.Shard = sh
		}
	}
	return m
}

func (r *Runner) describeTarget(m *rundir.Manifest, c target.Client) {
	m.Target.Source = c.Source()
	switch c := c.(type) {
	case *target.Agent:
		m.Config.AgentURL = c.URL()
		if idx := c.Index(); idx != nil {
			m.Target.GoVersion, m.Target.GOMAXPROCS, m.Target.NumCPU = idx.GoVersion, idx.GOMAXPROCS, idx.NumCPU
			m.Target.FlightRecorder, m.Target.Pools = idx.FlightRecorder, idx.Pools
		}
	case *target.Pprof:
		m.Config.PprofURL = c.URL()
	}
}

// armFlightRecorder starts an agent's on-demand flight recorder for the
// run (and a minute more) when the run will want its snapshot, then
// rereads the agent's index. A failure leaves the index as it was: the run
// then takes a trace window instead and says so.
func (r *Runner) armFlightRecorder(ctx context.Context, c target.Client) {
	a, ok := c.(*target.Agent)
	if !ok || r.cfg.SnapshotWhen == "" {
		return
	}
	if idx := a.Index(); idx == nil || idx.FlightRecorder != agent.FlightRecorderOnDemand {
		return
	}
	d := min(r.cfg.Load.PlannedDuration()+r.cfg.Load.Timeout+time.Minute, agent.MaxArm)
	if err := a.ArmFlightRecorder(ctx, d); err != nil {
		return
	}
	_, _ = a.ReadIndex(ctx)
}

// recordMissingUpFront notes in the manifest what this target cannot give.
func (r *Runner) recordMissingUpFront(rd *rundir.Writer, c target.Client, pid int) error {
	var errs []error
	missing := func(what string, why error) { errs = append(errs, rd.RecordMissing(what, why)) }
	switch c.Source() {
	case rundir.SourcePprof:
		missing("runtime metrics (goroutines by state, sched latencies, GC pauses, GOMAXPROCS), pools, fgprof, flight recorder",
			errors.New("the target has net/http/pprof but not schedscope's agent: goroutine and thread counts come from the goroutine and threadcreate profiles, the trace from /debug/pprof/trace"))
	case rundir.SourceNone:
		missing("runtime metrics, pools, trace, profiles",
			errors.New("neither schedscope's agent nor net/http/pprof answered on the target's host"))
	}
	if pid == 0 {
		missing("target CPU and RSS from /proc, its cgroup's CPU limit and throttling", errors.New("the target is not local (no --pid or --cmd); CPU per request is the runtime's estimate, without kernel time"))
	} else if _, err := target.ReadCgroup(pid); err != nil {
		missing("the target's cgroup CPU limit and throttling", err)
	}
	if a, ok := c.(*target.Agent); ok && r.cfg.SnapshotWhen != "" {
		if idx := a.Index(); idx != nil && idx.FlightRecorder != "on" {
			missing("flight-recorder snapshot", fmt.Errorf("the agent's flight recorder is %q; a trace window is taken instead", idx.FlightRecorder))
		}
	}
	return errors.Join(errs...)
}

func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// runState is one Run's state, shared by the load's progress callback, the
// poller and the capturer. Each part says who writes it.
type runState struct {
	r      *Runner
	rd     *rundir.Writer
	client target.Client
	usage  func() (target.Usage, error) // nil when the target is not local
	pid    int                          // the local target's process, for its cgroup; 0 when not local
	files  runFiles
	cancel context.CancelCauseFunc // ends the run with a cause

	// From the load to the capturer.
	progress        chan load.Progress // latest progress (replace-latest)
	snapshotTrigger chan string        // the condition that held
	loadDone        chan struct{}
	steadySteps     int

	emitLock sync.Mutex // serializes Live callbacks
	// emittedAt is the latest Live.At handed to a callback (under
	// emitLock): a poll's and a progress tick's snapshots can be dated in
	// one order and handed over in the other, and a live view's clock must
	// never go back (a frame went back 0.6 ms at load 15).
	emittedAt time.Duration

	mu       sync.Mutex // guards tally, view, live and writeErr
	tally    loadTally  // written by the progress callback
	view     pollView   // written by the poller
	live     liveState  // written by every goroutine
	writeErr error      // the first manifest write error of a callback

	// The poller's own: the previous raw poll and the failures in a row.
	prev     target.Poll
	failures int

	// The capturer's own while the run runs; finish reads it after.
	caps captures
}

// loadTally is the load's clock and its running 2xx count, kept from the
// progress callback.
type loadTally struct {
	start       time.Time // zero until the first progress
	last        load.Progress
	okTotal     float64       // 2xx responses so far, every phase, from the progress ticks
	lastElapsed time.Duration // RunElapsed of the previous progress snapshot (not Done)
}

// pollView is the latest poll as Live shows it.
type pollView struct {
	point    rundir.TargetPoint
	polledAt time.Duration // load clock; -1 before any poll
}

// liveState is what Live says beside the figures.
type liveState struct {
	capture  string // what is being captured now
	notes    []rundir.Note
	condHeld bool // a snapshot condition held once
}

// captures is what the capturer took.
type captures struct {
	profStart, profEnd map[string][]byte
	profErr            map[string]error // the last failure of each profile not taken
	fgprofPieces       [][]byte
	trace              rundir.TraceCapture // Mode "" until trace.out is taken
}

// traceInfo describes trace.out for the manifest; nil when none was taken.
func (c *captures) traceInfo() *rundir.TraceCapture {
	if c.trace.Mode == "" {
		return nil
	}
	t := c.trace
	return &t
}

// keepWriteErr keeps the first error of a manifest write that a callback
// cannot return; finish reports it.
func (st *runState) keepWriteErr(err error) {
	if err == nil {
		return
	}
	st.mu.Lock()
	if st.writeErr == nil {
		st.writeErr = err
	}
	st.mu.Unlock()
}

// missing records what could not be collected, keeping a write error.
func (st *runState) missing(what string, why error) {
	st.keepWriteErr(st.rd.RecordMissing(what, why))
}

// onProgress is the load's Progress callback.
func (st *runState) onProgress(p load.Progress) {
	if st.r.cfg.LoadProgress != nil {
		st.r.cfg.LoadProgress(p)
	}
	st.mu.Lock()
	first := st.tally.start.IsZero()
	if first {
		st.tally.start = time.Now().Add(-p.RunElapsed)
	}
	start := st.tally.start
	st.tally.last = p
	if !p.Done {
		// OKPerS counts every 2xx since the previous report over the time
		// since the previous snapshot (the load's tick), so OKPerS x that
		// time is the 2xx count since then.
		if d := p.RunElapsed - st.tally.lastElapsed; d > 0 && st.tally.lastElapsed > 0 {
			st.tally.okTotal += p.OKPerS * d.Seconds()
		}
		st.tally.lastElapsed = p.RunElapsed
	}
	live := st.liveLocked()
	st.mu.Unlock()
	if first {
		st.keepWriteErr(st.rd.UpdateManifest(func(m *rundir.Manifest) { m.LoadStart = start }))
	}
	select {
	case <-st.progress:
	default:
	}
	st.progress <- p
	st.emit(live)
}

// liveLocked builds a Live value; the caller holds mu.
func (st *runState) liveLocked() Live {
	l := Live{Load: st.tally.last, Target: st.view.point, PolledAt: st.view.polledAt, Source: st.client.Source(), Capture: st.live.capture,
		Notes: append([]rundir.Note(nil), st.live.notes...)}
	if !st.tally.start.IsZero() {
		l.At = time.Since(st.tally.start)
	}
	for _, p := range st.view.point.Pools {
		if p.Saturated {
			l.Notes = append(l.Notes, rundir.Note{Kind: rundir.KindPoolSaturated,
				Text: fmt.Sprintf("pool %s is full: %d/%d in use, %d waiting", p.Name, p.InUse, p.Size, p.Waiting)})
		}
	}
	return l
}

// emit hands l to the Live callback and checks the snapshot conditions.
// Calls are serialized.
func (st *runState) emit(l Live) {
	if c, ok := firstHeld(st.r.snapshotWhen, LiveSource(&l)); ok {
		st.mu.Lock()
		first := !st.live.condHeld
		st.live.condHeld = true
		if first {
			st.live.notes = append(st.live.notes, rundir.Note{Kind: rundir.KindSnapshotCondition, Text: "snapshot condition " + c.String() + " held"})
		}
		st.mu.Unlock()
		if first {
			select {
			case st.snapshotTrigger <- c.String():
			default:
			}
		}
	}
	if f := st.r.cfg.Live; f != nil {
		st.emitLock.Lock()
		l.At = max(l.At, st.emittedAt)
		st.emittedAt = l.At
		f(l)
		st.emitLock.Unlock()
	}
}

// baseline takes the first poll before the load starts, so the first
// interval has something to subtract from.
func (st *runState) baseline(ctx context.Context) {
	st.prev, _ = st.read(ctx)
}

// read polls the target once.
func (st *runState) read(ctx context.Context) (target.Poll, []string) {
	ps := target.Poll{At: time.Now()}
	var errs []string
	// The local counters (/proc, /proc/stat, the cgroup) and the 2xx total
	// are read at the stamp, before the agent's answer: a throttled target
	// answers seconds late, and counters read after that, stamped ps.At,
	// skewed its CPU and 2xx rates (307 % of a quota measured that way).
	if st.usage != nil {
		u, err := st.usage()
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			ps.Proc = &rundir.ProcCounters{CPUSeconds: u.CPU.Seconds(), RSSBytes: u.RSS, Threads: u.Threads}
		}
	}
	if m, err := target.ReadMachineCPU(); err == nil {
		ps.Machine = &rundir.MachineCounters{Busy: m.Busy, Idle: m.Idle}
	}
	if st.pid != 0 {
		if c, err := target.ReadCgroup(st.pid); err == nil {
			ps.Cgroup = &c // a cgroup that cannot be read was recorded missing at the start
		}
	}
	st.mu.Lock()
	ps.OKTotal = int64(st.tally.okTotal)
	st.mu.Unlock()
	switch c := st.client.(type) {
	case *target.Agent:
		snap, err := c.Snapshot(ctx)
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			ps.Agent = snap
		}
	case *target.Pprof:
		g, t, err := c.Counts(ctx)
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			ps.Agent = &agent.Snapshot{Time: ps.At, Values: map[string]float64{rundir.MetricGoroutines: g, rundir.MetricThreadsCreated: t}}
		}
	}
	return ps, errs
}

// pollLoop polls every PollEvery until ctx ends, writing a metrics line per
// poll, and cancels the run when the target stops answering (3 polls in a
// row, or its process is gone).
func (st *runState) pollLoop(ctx context.Context) {
	t := time.NewTicker(st.r.cfg.PollEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st.pollOnce(ctx)
	}
}

func (st *runState) pollOnce(ctx context.Context) {
	ps, errs := st.read(ctx)
	if ctx.Err() != nil {
		return // a poll cut by the end of the run is not a failure
	}
	st.mu.Lock()
	if st.tally.start.IsZero() {
		st.mu.Unlock()
		return
	}
	tp := target.Point(st.prev, ps)
	if st.client.Source() == rundir.SourcePprof && ps.Agent != nil {
		tp.HasAgent = false
		tp.Goroutines = ps.Agent.Values[rundir.MetricGoroutines]
		if tp.Threads == 0 {
			tp.Threads = ps.Agent.Values[rundir.MetricThreadsCreated]
		}
		ps.Agent = nil
	}
	line := rundir.MetricsLine{T: ps.At.Sub(st.tally.start).Seconds(), Time: ps.At, Load: loadPoint(st.tally.last), Target: tp,
		Agent: ps.Agent, Proc: ps.Proc, Cgroup: ps.Cgroup, Machine: ps.Machine, Capture: st.live.capture}
	line.Load.OKTotal = ps.OKTotal
	if len(errs) > 0 {
		line.Error = strings.Join(errs, "; ")
	}
	gone := false
	lost := (st.client.Source() == rundir.SourceAgent && ps.Agent == nil) ||
		(st.client.Source() == rundir.SourcePprof && tp.Goroutines == 0) || (st.usage != nil && ps.Proc == nil)
	if lost {
		st.failures++
		gone = st.failures >= 3 || (st.usage != nil && ps.Proc == nil)
	} else {
		st.failures = 0
	}
	if ps.Agent != nil || ps.Proc != nil {
		st.prev = ps
	}
	st.view = pollView{point: tp, polledAt: ps.At.Sub(st.tally.start)}
	live := st.liveLocked()
	st.mu.Unlock()
	_ = st.files.metrics.Line(line) // a write error is reported when the file is closed
	st.emit(live)
	if gone {
		st.mu.Lock()
		st.live.notes = append(st.live.notes, rundir.Note{Kind: rundir.KindTargetGone, Text: "the target stopped answering"})
		st.mu.Unlock()
		st.cancel(fmt.Errorf("%w: %s", errTargetGone, line.Error))
	}
}
