package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/cmd/schedscope/internal/feed"
	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/collect/load/promload"
	"github.com/schedscope/schedscope/internal/collect"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/derive"
	"github.com/schedscope/schedscope/internal/redact"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
	"github.com/schedscope/schedscope/internal/tui"
)

const runSynopsis = "run [load flags] [--agent URL | --pprof URL] [--out DIR] [--trace-at 50%] [--trace-window 5s] [--snapshot-when end|COND] [--pid N | --cmd 'COMMAND'] [--no-tui] [--repeat N [--repeat-pause 2s]] [--sleep-probe N:D] URL"

// runFlags are the flags `schedscope run` adds to the load's.
type runFlags struct {
	agent, pprof string
	token        *tokenFile
	out          string
	traceAt      string
	traceWindow  time.Duration
	snapshotWhen snapshotFlag
	pid          int
	cmd          string
	cmdLog       string
	readyTimeout time.Duration
	poll         time.Duration
	noTUI        bool
	maxCapture   byteSize
	gates        gateFlag
	repeat       int
	repeatPause  time.Duration
	sleepProbe   string
}

// snapshotFlag is --snapshot-when: "end" or a list of live conditions,
// checked as it is set, so a bad one is a usage error before anything
// starts, and a blank one is refused rather than taken for no snapshot
// (a trace window).
type snapshotFlag string

func (f *snapshotFlag) String() string { return string(*f) }

func (f *snapshotFlag) Set(v string) error {
	w := strings.TrimSpace(v)
	if w == "" {
		return errors.New("empty: want 'end' or conditions, e.g. 'p99>500ms' (leave the flag out for a trace window)")
	}
	if w != "end" {
		if _, err := cond.ParseList(w, cond.Live); err != nil {
			return err
		}
	}
	*f = snapshotFlag(w)
	return nil
}

func runRun(ctx context.Context, s *stdio, args []string) error {
	fs, lf := newLoadFlagSet(s.out)
	fs.Usage = func() {
		fmt.Fprintf(s.out, "usage: schedscope %s\n\nflags (the load flags are schedscope load's):\n", runSynopsis)
		fs.SetOutput(s.out)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		fmt.Fprintf(s.out, "\n--snapshot-when conditions: METRIC OP VALUE, OP one of > >= < <= == !=, METRIC one of:\n%s", cond.Help(cond.Live))
	}
	var f runFlags
	fs.StringVar(&f.agent, "agent", "", "base URL of schedscope's agent in the target (default: look for /debug/schedscope/, then /debug/pprof/, on the target's host)")
	fs.StringVar(&f.pprof, "pprof", "", "base URL of net/http/pprof, for a target without the agent (fewer figures)")
	f.token = addTokenFile(fs, "token-file", "sent to the agent or pprof")
	fs.StringVar(&f.out, "out", "", "run directory to create (default run-YYYYMMDD-HHMMSS, or with --repeat the repeat directory repeat-YYYYMMDD-HHMMSS)")
	fs.StringVar(&f.traceAt, "trace-at", "50%", "where the trace window's middle falls in the last steady phase")
	fs.DurationVar(&f.traceWindow, "trace-window", collect.DefaultTraceWindow, "length of the trace window")
	fs.Var(&f.snapshotWhen, "snapshot-when", "instead of a trace window, a flight-recorder snapshot: 'end', or when a condition first holds, e.g. 'p99>500ms' or 'p99>500ms, not_sent>0' (metrics below)")
	fs.IntVar(&f.pid, "pid", 0, "the target's process ID, when local: CPU and RSS from /proc")
	fs.StringVar(&f.cmd, "cmd", "", "shell command that starts the target: started, waited for, measured from /proc and stopped by the run")
	fs.StringVar(&f.cmdLog, "cmd-log", "", "file for the started target's stdout and stderr (default: discarded)")
	fs.DurationVar(&f.readyTimeout, "ready-timeout", collect.DefaultReadyTimeout, "how long to wait for a --cmd target to answer")
	fs.DurationVar(&f.poll, "poll", collect.DefaultPollEvery, "polling period of the target's metrics")
	fs.BoolVar(&f.noTUI, "no-tui", false, "plain progress lines and a final summary, even on a terminal (--repeat always prints plain lines: the dashboard is for a single run)")
	fs.Var(&f.gates, "fail-on", "at the end, exit 4 when a condition holds in any steady phase (with --repeat, of any run), e.g. 'p99>250ms, errors>1%, not_sent>0' (metrics: schedscope compare -h)")
	f.maxCapture = target.DefaultMaxCapture
	fs.Var(&f.maxCapture, "max-capture", "largest trace window or flight-recorder snapshot kept, e.g. 512MiB or 4GiB (1 MiB to 64 GiB); a trace past it is cut there and the manifest says so")
	fs.IntVar(&f.repeat, "repeat", 1, "make N runs of this configuration, one after another, into one repeat directory (--out) holding run-01 ... run-NN, for 'schedscope compare'; N in [2, 100], 1 is a single run. With --cmd each run starts its own target process; without it the runs share one")
	fs.StringVar(&f.sleepProbe, "sleep-probe", "", "N:D, e.g. 100:1ms: N goroutines of the agent's sleep probe each calling time.Sleep(D) in the last steady phase, after the trace window, for max(1s, 10 x D) or what the phase leaves; how late they woke goes to sleepprobe.json and the summary")
	fs.DurationVar(&f.repeatPause, "repeat-pause", defaultRepeatPause, "with --repeat: pause between runs, so that what the previous run left queued in the target drains before the next one measures it (0: none)")

	if err := refuseSecretFlag(args, "token", "--token-file PATH or $"+tokenEnv); err != nil {
		return err
	}
	lcfg, err := parseLoadArgs(fs, lf, args)
	if err != nil {
		return err
	}
	if lf.jsonOut != "" || lf.hdrLog != "" {
		return usageErr("--json and --hdr-log are schedscope load's: a run writes results.json and load.hlog into its directory")
	}
	if f.maxCapture < minCapture || f.maxCapture > maxCapture {
		return usageErr("--max-capture %s: must be in [1 MiB, 64 GiB]", &f.maxCapture)
	}
	if f.readyTimeout <= 0 || f.readyTimeout > collect.MaxReadyTimeout {
		return usageErr("--ready-timeout %v: must be in (0, %v]", f.readyTimeout, collect.MaxReadyTimeout)
	}
	if err := checkRepeatFlags(fs, f.repeat, f.repeatPause); err != nil {
		return err
	}
	if f.repeat > 1 && !lcfg.StartAt.IsZero() {
		return usageErr("--start-at with --repeat %d: only the first run could begin at the shared instant; repeat the sharded run as a whole instead", f.repeat)
	}
	conds, err := f.gates.parse(cond.Run)
	if err != nil {
		return err
	}
	token, _, err := f.token.read()
	if err != nil {
		return err
	}
	cfg := collect.Config{
		Load: lcfg, Out: f.out, AgentURL: f.agent, PprofURL: f.pprof, Token: token,
		TraceWindow: f.traceWindow, SnapshotWhen: string(f.snapshotWhen), PID: f.pid, Command: f.cmd,
		ReadyTimeout: f.readyTimeout, PollEvery: f.poll, Args: args,
		Limits: target.Limits{Capture: int64(f.maxCapture)},
	}
	if cfg.SleepProbe, err = parseSleepProbe(f.sleepProbe); err != nil {
		return usageErr("--sleep-probe %q: %v", f.sleepProbe, err)
	}
	if cfg.TraceAt, err = parseFraction(f.traceAt); err != nil {
		return usageErr("--trace-at %q: %v", f.traceAt, err)
	}
	dirName, outPrefix := "run directory", "run-"
	if f.repeat > 1 {
		dirName, outPrefix = "repeat directory", "repeat-"
	}
	if cfg.Out == "" {
		cfg.Out = outPrefix + time.Now().Format("20060102-150405")
	}
	if lf.promAddr != "" && f.repeat > 1 {
		return usageErr("--prometheus with --repeat: not supported; expose one run at a time")
	}
	var repeat *repeatPlan
	if f.repeat > 1 {
		if repeat, err = newRepeatPlan(cfg, f.repeat, f.repeatPause); err != nil {
			return err
		}
	}
	if f.cmdLog != "" {
		if inside(f.cmdLog, cfg.Out) {
			return usageErr("--cmd-log %s is inside the %s %s, which must start empty: put the log elsewhere", f.cmdLog, dirName, cfg.Out)
		}
		outs, err := openOutputs(lf.force, output{"--cmd-log", f.cmdLog})
		if err != nil {
			return err
		}
		defer outs[0].close()
		cfg.CommandLog = outs[0]
	}
	var ps *promServer
	if lf.promAddr != "" {
		m := promload.New(filepath.Base(cfg.Out))
		cfg.LoadProgress, cfg.LoadInterval = m.Progress, m.Interval
		if ps, err = startPrometheus(lf.promAddr, m, s.errOut); err != nil {
			return err
		}
	}
	sayStartWait(s.errOut, "run", cfg.Load.StartAt, time.Now())
	switch {
	case repeat != nil:
		repeat.cfg.CommandLog = cfg.CommandLog
		err = repeat.run(ctx, s)
	case f.noTUI || !tui.IsTerminal(s.out):
		err = runPlain(ctx, s, cfg)
	default:
		err = runWithDashboard(ctx, s, cfg)
	}
	ps.stop(ctx, time.Now())
	if err != nil || len(conds) == 0 {
		return err
	}
	return gateDir(ctx, s, cfg.Out, conds)
}

// parseFraction reads "50%" or "0.5" as a fraction in (0, 1].
func parseFraction(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, errors.New("want a percentage such as 50% or a fraction such as 0.5")
	}
	if strings.HasSuffix(s, "%") {
		v /= 100
	}
	if !(v > 0 && v <= 1) {
		return 0, errors.New("must be in (0, 100%]")
	}
	return v, nil
}

// runPlain prints a progress line about every second and the summary at the end.
func runPlain(ctx context.Context, s *stdio, cfg collect.Config) error {
	cfg.Live = plainProgress(s.out, "")
	r, err := collect.NewRunner(cfg)
	if err != nil {
		return usageErr("%v", err)
	}
	fmt.Fprintf(s.out, "schedscope run: writing %s\n", cfg.Out)
	out, d, cut, err := runAndDerive(ctx, r, derive.InterruptedBudget)
	return finishRun(s, out, d, cut, err)
}

// interruptedWithin is how soon after an interruption `schedscope run`
// ends: the derivation after an interrupted run gets what is left of it
// (at most derive.InterruptedBudget), after the run has written what it
// measured.
const interruptedWithin = 900 * time.Millisecond

// runAndDerive runs r, then derives analysis.json and summary.txt from the
// run directory it wrote (derive.AfterRun: after an interruption within what
// is left of interruptedWithin, capped at budget; a signal during the
// derivation cuts it). cut: the derivation was cut and wrote nothing; the
// directory holds what was measured, and `schedscope analyze --rederive
// DIR` derives it later.
func runAndDerive(ctx context.Context, r *collect.Runner, budget time.Duration) (out *collect.Outcome, d *derive.Derived, cut bool, err error) {
	interrupted := make(chan time.Time, 1)
	stop := context.AfterFunc(ctx, func() { interrupted <- time.Now() })
	defer stop()
	out, err = r.Run(ctx)
	if out == nil {
		return nil, nil, false, err
	}
	if ctx.Err() != nil {
		at := <-interrupted // AfterFunc runs once ctx is done
		budget = min(budget, time.Until(at.Add(interruptedWithin)))
	}
	d, cut, derr := derive.AfterRun(ctx, out.Dir, budget)
	if d != nil {
		out.Manifest = d.Run.Manifest
	}
	return out, d, cut, errors.Join(err, derr)
}

// finishRun prints the summary and maps an interrupted run to exit 130.
func finishRun(s *stdio, out *collect.Outcome, d *derive.Derived, cut bool, err error) error {
	writeRunEnd(s.out, out, d)
	return runExit(out, cut, err)
}

// writeRunEnd is the end of a plain `schedscope run`: the derived summary
// (summary.txt; d nil when the derivation failed or was cut) and the run
// directory with its status (out nil when the run failed before it had one:
// the error, printed by main, says why).
func writeRunEnd(w io.Writer, out *collect.Outcome, d *derive.Derived) {
	if d != nil {
		fmt.Fprintf(w, "\n%s", d.Summary)
	}
	if out != nil {
		fmt.Fprintf(w, "\nrun directory: %s (%s)\n", out.Dir, out.Manifest.Status)
	}
}

// runExit maps a run's outcome onto the exit status: err when there is one,
// else 130 when the run or its derivation was interrupted (its directory
// holds what was measured until then; cut: analysis.json and summary.txt
// are left to `schedscope analyze --rederive`).
func runExit(out *collect.Outcome, cut bool, err error) error {
	if err != nil {
		return err
	}
	finish := ""
	if cut {
		finish = fmt.Sprintf("; its analysis was not derived: run 'schedscope analyze --rederive %s'", out.Dir)
	}
	if out.Manifest.Status == rundir.StatusInterrupted {
		why := out.Manifest.Reason // "interrupted (SIGHUP)", or "the target stopped answering"...
		if !strings.HasPrefix(why, "interrupted") {
			why = "interrupted (" + why + ")"
		}
		return withCode(130, fmt.Errorf("%s: %s holds what was measured until then%s", why, out.Dir, finish))
	}
	if cut {
		return withCode(130, fmt.Errorf("interrupted while deriving the analysis: %s holds the whole run%s", out.Dir, finish))
	}
	return nil
}

// plainProgress returns a collect.Config.Live that prints a progress line
// (liveLine, led by prefix) about every second, and the last one. Like
// Live, it is not safe for concurrent calls.
func plainProgress(w io.Writer, prefix string) func(collect.Live) {
	last := -time.Hour
	return func(l collect.Live) {
		if l.At-last < time.Second && !l.Load.Done {
			return
		}
		last = l.At
		fmt.Fprintln(w, prefix+liveLine(l))
	}
}

// liveLine is a plain progress line: the load's, then the target's figures.
func liveLine(l collect.Live) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%6.1fs %s", l.At.Seconds(), load.FormatProgress(l.Load))
	tp := l.Target
	if tp.HasAgent || tp.Goroutines > 0 {
		fmt.Fprintf(&b, " | goroutines %.0f threads %.0f", tp.Goroutines, tp.Threads)
	}
	if tp.HasAgent {
		fmt.Fprintf(&b, " sched p99 %.2fms", tp.SchedLatencyP99MS)
	}
	if tp.CPUUSPerReq > 0 {
		fmt.Fprintf(&b, " cpu %.0fus/req", tp.CPUUSPerReq)
	}
	for _, p := range tp.Pools {
		if p.Size > 0 && (p.InUse > 0 || p.Waiting > 0) {
			fmt.Fprintf(&b, " | %s %d/%d waiting %d", p.Name, p.InUse, p.Size, p.Waiting)
		}
	}
	if l.Capture != "" {
		fmt.Fprintf(&b, " [%s]", l.Capture)
	}
	return b.String()
}

// runWithDashboard shows the live dashboard while the run runs.
func runWithDashboard(ctx context.Context, s *stdio, cfg collect.Config) error {
	title := "schedscope run " + redact.URL(cfg.Load.URL) // screens get captured and shared too
	frames := newStream(16, endFrame)
	cfg.Live = func(l collect.Live) { frames.send(feed.RunFrame(title, l)) }
	r, err := collect.NewRunner(cfg)
	if err != nil {
		return usageErr("%v", err)
	}
	dashboard := func(fs <-chan tui.Frame) error {
		_, err := tui.RunDashboard(ctx, tui.Terminal{Out: s.out}, tui.DashboardConfig{
			Title: title, Frames: fs, Stop: r.Stop, TakeTrace: r.TraceNow,
		})
		return err
	}
	var cut bool // written by produce, read after withView has waited for it
	out, err := withView(ctx, frames, dashboard, r.Stop, func(ctx context.Context) (*collect.Outcome, error) {
		out, d, c, err := runAndDerive(ctx, r, derive.InterruptedBudget)
		cut = c
		switch {
		case out != nil:
			frames.send(tui.Frame{Title: title, End: feed.RunSummary(out, d)})
		case err != nil: // failed at the start: say why now, not after q
			frames.send(tui.Frame{Title: title, End: feed.FailedSummary(err)})
		}
		return out, err
	})
	if out == nil {
		return err
	}
	fmt.Fprintf(s.out, "run directory: %s (%s)\n", out.Dir, out.Manifest.Status)
	return runExit(out, cut, err)
}

// parseSleepProbe reads --sleep-probe N:D; "" is no probe.
func parseSleepProbe(v string) (collect.SleepProbe, error) {
	if v == "" {
		return collect.SleepProbe{}, nil
	}
	n, d, ok := strings.Cut(v, ":")
	if !ok {
		return collect.SleepProbe{}, errors.New("want N:D, goroutines and the sleep, e.g. 100:1ms")
	}
	k, err := strconv.Atoi(n)
	if err != nil || k < 1 || k > agent.MaxProbeGoroutines {
		return collect.SleepProbe{}, fmt.Errorf("goroutines %q: want an integer in [1, %d]", n, agent.MaxProbeGoroutines)
	}
	sleep, err := time.ParseDuration(d)
	if err != nil || sleep < agent.MinProbeSleep || sleep > agent.MaxProbeSleep {
		return collect.SleepProbe{}, fmt.Errorf("sleep %q: want a duration in [%v, %v]", d, agent.MinProbeSleep, agent.MaxProbeSleep)
	}
	return collect.SleepProbe{Goroutines: k, Sleep: sleep}, nil
}
