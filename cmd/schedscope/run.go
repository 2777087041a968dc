package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/collect"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/derive"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/tui"
)

const runSynopsis = "run [load flags] [--agent URL | --pprof URL] [--out DIR] [--trace-at 50%] [--trace-window 5s] [--snapshot-when end|COND] [--pid N | --cmd 'COMMAND'] [--no-tui] URL"

// runFlags are the flags `schedscope run` adds to the load's.
type runFlags struct {
	agent, pprof, token string
	out                 string
	traceAt             string
	traceWindow         time.Duration
	snapshotWhen        string
	pid                 int
	cmd                 string
	cmdLog              string
	readyTimeout        time.Duration
	poll                time.Duration
	noTUI               bool
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
	fs.StringVar(&f.token, "token", "", "bearer token for the agent's traces, profiles and GOMAXPROCS (default $SCHEDSCOPE_AGENT_TOKEN)")
	fs.StringVar(&f.out, "out", "", "run directory to create (default run-YYYYMMDD-HHMMSS)")
	fs.StringVar(&f.traceAt, "trace-at", "50%", "where the trace window's middle falls in the last steady phase")
	fs.DurationVar(&f.traceWindow, "trace-window", collect.DefaultTraceWindow, "length of the trace window")
	fs.StringVar(&f.snapshotWhen, "snapshot-when", "", "instead of a trace window, a flight-recorder snapshot: 'end', or when a condition first holds, e.g. 'p99>500ms' or 'p99>500ms, not_sent>0' (metrics below)")
	fs.IntVar(&f.pid, "pid", 0, "the target's process ID, when local: CPU and RSS from /proc")
	fs.StringVar(&f.cmd, "cmd", "", "shell command that starts the target: started, waited for, measured from /proc and stopped by the run")
	fs.StringVar(&f.cmdLog, "cmd-log", "", "file for the started target's stdout and stderr (default: discarded)")
	fs.DurationVar(&f.readyTimeout, "ready-timeout", collect.DefaultReadyTimeout, "how long to wait for a --cmd target to answer")
	fs.DurationVar(&f.poll, "poll", collect.DefaultPollEvery, "polling period of the target's metrics")
	fs.BoolVar(&f.noTUI, "no-tui", false, "plain progress lines and a final summary, even on a terminal")

	lcfg, err := parseLoadArgs(fs, lf, args)
	if err != nil {
		return err
	}
	if lf.jsonOut != "" || lf.hdrLog != "" {
		return usageErr("--json and --hdr-log are schedscope load's: a run writes results.json and load.hlog into its directory")
	}
	cfg := collect.Config{
		Load: lcfg, Out: f.out, AgentURL: f.agent, PprofURL: f.pprof, Token: f.token,
		TraceWindow: f.traceWindow, SnapshotWhen: f.snapshotWhen, PID: f.pid, Command: f.cmd,
		ReadyTimeout: f.readyTimeout, PollEvery: f.poll, Args: args,
	}
	if cfg.Token == "" {
		cfg.Token = os.Getenv("SCHEDSCOPE_AGENT_TOKEN")
	}
	if cfg.TraceAt, err = parseFraction(f.traceAt); err != nil {
		return usageErr("--trace-at %q: %v", f.traceAt, err)
	}
	if cfg.Out == "" {
		cfg.Out = "run-" + time.Now().Format("20060102-150405")
	}
	if f.cmdLog != "" {
		logFile, err := os.Create(f.cmdLog)
		if err != nil {
			return usageErr("--cmd-log: %v", err)
		}
		defer logFile.Close()
		cfg.CommandLog = logFile
	}
	if f.noTUI || !tui.IsTerminal(s.out) {
		return runPlain(ctx, s, cfg)
	}
	return runWithDashboard(ctx, s, cfg)
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
	var last time.Duration = -time.Hour
	cfg.Live = func(l collect.Live) {
		if l.At-last < time.Second && !l.Load.Done {
			return
		}
		last = l.At
		fmt.Fprintln(s.out, liveLine(l))
	}
	r, err := collect.NewRunner(cfg)
	if err != nil {
		return usageErr("%v", err)
	}
	fmt.Fprintf(s.out, "schedscope run: writing %s\n", cfg.Out)
	out, d, err := runAndDerive(ctx, r)
	return finishRun(s, out, d, err)
}

// runAndDerive runs r, then derives analysis.json and summary.txt from the
// run directory it wrote, even after an interruption (bounded on its own).
func runAndDerive(ctx context.Context, r *collect.Runner) (*collect.Outcome, *derive.Derived, error) {
	out, err := r.Run(ctx)
	if out == nil {
		return nil, nil, err
	}
	fin, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	d, derr := derive.Dir(fin, out.Dir)
	if d != nil {
		out.Manifest = d.Run.Manifest
	}
	return out, d, errors.Join(err, derr)
}

// finishRun prints the summary and maps an interrupted run to exit 130.
func finishRun(s *stdio, out *collect.Outcome, d *derive.Derived, err error) error {
	if d != nil {
		fmt.Fprintf(s.out, "\n%s", d.Summary)
	}
	if out != nil {
		fmt.Fprintf(s.out, "\nrun directory: %s (%s)\n", out.Dir, out.Manifest.Status)
	}
	if err != nil {
		return err
	}
	if out.Manifest.Status == rundir.StatusInterrupted {
		return withCode(130, fmt.Errorf("interrupted (%s): %s holds what was measured until then", out.Manifest.Reason, out.Dir))
	}
	return nil
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
	frames := make(chan tui.Frame, 16)
	title := "schedscope run " + cfg.Load.URL
	cfg.Live = func(l collect.Live) {
		select {
		case frames <- liveFrame(title, l):
		default: // the dashboard is behind: drop this frame, the next one carries the news
		}
	}
	r, err := collect.NewRunner(cfg)
	if err != nil {
		return usageErr("%v", err)
	}
	type result struct {
		out *collect.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, d, err := runAndDerive(ctx, r)
		if out != nil {
			frames <- tui.Frame{Title: title, End: endSummary(out, d)}
		}
		close(frames)
		done <- result{out, err}
	}()
	_, dashErr := tui.RunDashboard(ctx, tui.Terminal{Out: s.out}, tui.DashboardConfig{
		Title: title, Frames: frames, Stop: r.Stop,
		TakeTrace: r.TraceNow,
	})
	if dashErr != nil {
		r.Stop()
	}
	// The dashboard may leave before the run ends (its stop grace): wait.
	for range frames {
	}
	res := <-done
	if dashErr != nil {
		return errors.Join(dashErr, res.err)
	}
	if res.out == nil {
		return res.err
	}
	fmt.Fprintf(s.out, "run directory: %s (%s)\n", res.out.Dir, res.out.Manifest.Status)
	if res.err != nil {
		return res.err
	}
	if res.out.Manifest.Status == rundir.StatusInterrupted {
		return withCode(130, fmt.Errorf("interrupted (%s): %s holds what was measured until then", res.out.Manifest.Reason, res.out.Dir))
	}
	return nil
}

// liveFrame maps the run's live value onto the dashboard's frame.
func liveFrame(title string, l collect.Live) tui.Frame {
	f := tui.LiveFrame(title, l)
	tp := l.Target
	for _, pl := range tp.Pools {
		if pl.Size > 0 {
			f.Pools = append(f.Pools, tui.Pool{Name: pl.Name, InUse: pl.InUse, Size: pl.Size, Waiting: pl.Waiting})
			if pl.Saturated {
				capacity := ""
				if pl.CapacityPerS > 0 {
					capacity = fmt.Sprintf("%.0f req/s (Little's law: %d / %.1f ms)", pl.CapacityPerS, pl.Size, pl.HoldMeanMS)
				}
				f.Verdicts = append(f.Verdicts, tui.PoolSaturated(pl.Name, pl.InUse, pl.Size, pl.Waiting, capacity))
			}
		}
	}
	for _, n := range l.Notes {
		if !strings.HasPrefix(n, "pool ") {
			f.Verdicts = append(f.Verdicts, tui.Verdict{Kind: tui.VerdictInfo, Title: n})
		}
	}
	return f
}

// endSummary is the dashboard's end screen for a finished run.
func endSummary(out *collect.Outcome, d *derive.Derived) *tui.Summary {
	s := &tui.Summary{Title: "run " + out.Manifest.Status, RunDirs: []string{out.Dir}, Stopped: out.Manifest.Status == rundir.StatusInterrupted}
	s.Table.Header = []string{"phase", "offered/s", "2xx/s", "p50", "p99", "not sent", "errors"}
	if res := out.Result; res != nil {
		for _, ph := range res.Phases {
			s.Table.Rows = append(s.Table.Rows, []string{ph.Name, fmt.Sprintf("%.0f", ph.OfferedRate), fmt.Sprintf("%.0f", ph.OKPerS),
				fmt.Sprintf("%.1f ms", ph.Latency.P50), fmt.Sprintf("%.1f ms", ph.Latency.P99), fmt.Sprint(ph.NotSent), fmt.Sprint(ph.Errors.Total())})
		}
	}
	if d != nil {
		for _, fd := range d.Analysis.Findings {
			kind := tui.VerdictInfo
			switch fd.Kind {
			case rundir.KindPoolSaturated, rundir.KindCeiling:
				kind = tui.VerdictPoolSaturated
			case rundir.KindGenerator:
				kind = tui.VerdictGenerator
			}
			s.Verdicts = append(s.Verdicts, tui.Verdict{Kind: kind, Title: fd.Title, Detail: fd.Detail})
		}
	}
	if out.Manifest.Reason != "" {
		s.Notes = append(s.Notes, out.Manifest.Reason)
	}
	s.Notes = append(s.Notes, "summary: "+out.Dir+"/"+rundir.SummaryFile)
	return s
}
