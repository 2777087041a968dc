package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/collect"
	"github.com/schedscope/schedscope/internal/derive"
	"github.com/schedscope/schedscope/internal/rundir"
)

// Bounds and defaults of `schedscope run --repeat N`.
const (
	// minRepeat and maxRepeat bound --repeat N; 1, the default, is a
	// single run without a repeat directory.
	minRepeat, maxRepeat = 2, 100
	// defaultRepeatPause is --repeat-pause's default, maxRepeatPause its
	// bound (the load's bound on a pause between phases).
	defaultRepeatPause = 2 * time.Second
	maxRepeatPause     = load.MaxWait
)

// sharedTargetNote is repeat.json's FreshNote, printed at the start, when
// the runs load one target process that outlives them (a URL or --pid).
const sharedTargetNote = "the runs loaded one target process (no --cmd): each run warms it for the next; use --cmd for independent runs"

// checkRepeatFlags checks --repeat and --repeat-pause in the parsed fs:
// usage errors, before anything starts.
func checkRepeatFlags(fs *flag.FlagSet, n int, pause time.Duration) error {
	if n != 1 && (n < minRepeat || n > maxRepeat) {
		return usageErr("--repeat %d: must be in [%d, %d] (1, the default, is a single run)", n, minRepeat, maxRepeat)
	}
	if pause < 0 || pause > maxRepeatPause {
		return usageErr("--repeat-pause %v: must be in [0, %v]", pause, maxRepeatPause)
	}
	pauseSet := false
	fs.Visit(func(fl *flag.Flag) { pauseSet = pauseSet || fl.Name == "repeat-pause" })
	if pauseSet && n == 1 {
		return usageErr("--repeat-pause is the pause between the runs of --repeat N: give --repeat too")
	}
	return nil
}

// repeatPlan is `schedscope run --repeat N`: N runs of one configuration,
// one after another, each a complete run directory (rundir.RepeatRunDir)
// in one repeat directory described by repeat.json (rundir.Repeat).
type repeatPlan struct {
	// cfg is every run's configuration; its Out is the repeat directory.
	// Each run gets its own Out, Live and Runner, so with a Command each
	// run starts (and stops) its own target process.
	cfg   collect.Config
	count int
	pause time.Duration
}

// newRepeatPlan checks, before anything starts, that cfg.Out may become a
// repeat directory (new or empty) and that cfg makes a valid run; its
// errors are usage errors.
func newRepeatPlan(cfg collect.Config, n int, pause time.Duration) (*repeatPlan, error) {
	if err := rundir.CheckNewRepeatDir(cfg.Out); err != nil {
		return nil, usageErr("%v", err)
	}
	probe := cfg
	probe.Out = filepath.Join(cfg.Out, rundir.RepeatRunDir(1))
	if _, err := collect.NewRunner(probe); err != nil { // it validates, and starts nothing
		return nil, usageErr("%v", err)
	}
	return &repeatPlan{cfg: cfg, count: n, pause: pause}, nil
}

// run makes the runs into the repeat directory with plain progress lines
// (the dashboard is for a single run), a line per finished run and a table
// at the end. repeat.json is written before the first run, before each
// run (which joins Runs then, so a repeat killed during a run still lists
// what that run measured) and at the end (Status, Reason, End).
//
// The repeat stops at the first run that does not complete, keeping the
// runs before it: a run interrupted (Ctrl-C, a target that stopped
// answering) keeps what it measured and the command exits 130, as a
// single run does; a run whose target did not start is dropped from Runs
// (its directory's manifest says why) and its error is returned.
func (p *repeatPlan) run(ctx context.Context, s *stdio) error {
	dir := p.cfg.Out
	rep := rundir.Repeat{Version: rundir.RepeatVersion, Count: p.count, Runs: []string{}, Args: p.cfg.Args,
		FreshTarget: p.cfg.Command != "", Start: time.Now(), Status: rundir.StatusRunning}
	if !rep.FreshTarget {
		rep.FreshNote = sharedTargetNote
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("repeat directory %s: %w", dir, err)
	}
	if err := rundir.WriteRepeat(dir, rep); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "schedscope run --repeat %d: writing %s\n", p.count, dir)
	if rep.FreshNote != "" {
		fmt.Fprintf(s.out, "note: %s\n", rep.FreshNote)
	}
	rows, reason, err := p.runAll(ctx, s, &rep)
	rep.End, rep.Status, rep.Reason = time.Now(), rundir.StatusComplete, ""
	if reason != "" {
		rep.Status, rep.Reason = rundir.StatusInterrupted, reason
	}
	werr := rundir.WriteRepeat(dir, rep)
	if len(rows) > 0 {
		fmt.Fprintln(s.out)
		writeRepeatTable(s.out, rows)
	}
	if rep.Status == rundir.StatusComplete && werr == nil {
		fmt.Fprintf(s.out, "compare them: schedscope compare %s -- OTHER\n", dir)
	}
	switch {
	case werr == nil:
		return err
	case err == nil:
		return werr
	}
	return fmt.Errorf("%w; and %s was not updated: %v", err, rundir.RepeatFile, werr)
}

// runAll makes the runs in order until one does not complete. It returns
// the finished runs' rows and, when the repeat stopped early, why (for
// repeat.json) and the command's error.
func (p *repeatPlan) runAll(ctx context.Context, s *stdio, rep *rundir.Repeat) (rows []repeatRow, reason string, err error) {
	dir, n := p.cfg.Out, p.count
	kept := func(i int) string { // the runs a repeat stopped in run i keeps
		switch i {
		case 1:
			return "no run"
		case 2:
			return rundir.RepeatRunDir(1)
		}
		return rundir.RepeatRunDir(1) + " to " + rundir.RepeatRunDir(i-1)
	}
	for i := 1; i <= n; i++ {
		label := fmt.Sprintf("run %d/%d", i, n)
		if i > 1 {
			if p.pause > 0 {
				fmt.Fprintf(s.out, "pause %v before %s\n", p.pause, label)
			}
			if !pauseWithin(ctx, p.pause) {
				return rows, fmt.Sprintf("%s before run %d of %d", describeStop(ctx), i, n),
					withCode(130, fmt.Errorf("interrupted before %s: %s keeps %s", label, dir, kept(i)))
			}
		}
		name := rundir.RepeatRunDir(i)
		rep.Runs = append(rep.Runs, name)
		if err := rundir.WriteRepeat(dir, *rep); err != nil {
			rep.Runs = rep.Runs[:i-1]
			return rows, oneLine(err), err
		}
		cfg := p.cfg
		cfg.Out = filepath.Join(dir, name)
		cfg.Live = plainProgress(s.out, label+" ")
		r, err := collect.NewRunner(cfg)
		if err != nil {
			rep.Runs = rep.Runs[:i-1]
			return rows, fmt.Sprintf("run %d of %d: %s", i, n, oneLine(err)), err
		}
		fmt.Fprintf(s.out, "%s: writing %s\n", label, cfg.Out)
		out, d, cut, err := runAndDerive(ctx, r, derive.InterruptedBudget)
		if out == nil { // it did not start: its directory holds no measurement
			rep.Runs = rep.Runs[:i-1]
			if ctx.Err() != nil {
				return rows, fmt.Sprintf("%s in run %d of %d, before it started", describeStop(ctx), i, n),
					withCode(130, fmt.Errorf("interrupted while %s was starting: %s keeps %s", label, dir, kept(i)))
			}
			return rows, fmt.Sprintf("run %d of %d did not start: %s", i, n, oneLine(err)),
				fmt.Errorf("%s did not start, so the repeat stopped (%s keeps %s): %w", label, dir, kept(i), err)
		}
		row := newRepeatRow(out, d)
		rows = append(rows, row)
		fmt.Fprintf(s.out, "%s: %s\n", label, row)
		if e := runExit(out, cut, err); e != nil {
			why := "interrupted while deriving its analysis"
			switch {
			case err != nil:
				why = oneLine(err)
			case out.Manifest.Status == rundir.StatusInterrupted:
				why = cmp.Or(out.Manifest.Reason, "interrupted")
			}
			return rows, fmt.Sprintf("run %d of %d: %s", i, n, why), fmt.Errorf("%s: %w; no further run started", label, e)
		}
	}
	return rows, "", nil
}

// pauseWithin waits d, or until ctx ends; it reports whether ctx is still
// live.
func pauseWithin(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// describeStop says why ctx ended, in a run manifest's words.
func describeStop(ctx context.Context) string {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, context.Canceled) && cause != context.Canceled:
		return cause.Error() // a signal's: "interrupted (SIGHUP)"
	case errors.Is(cause, context.Canceled):
		return "interrupted (Ctrl-C or SIGTERM)"
	case errors.Is(cause, context.DeadlineExceeded):
		return "deadline exceeded"
	case cause != nil:
		return cause.Error()
	}
	return "interrupted"
}

// oneLine is err's text on one line (errors.Join separates with newlines).
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// repeatRow is one finished run's figures, for its line and the table.
type repeatRow struct {
	dir, status string
	// phase is the last steady phase's name, "" when the run measured none;
	// okPerS and p99MS are its 2xx/s and latency p99 (results.json).
	phase         string
	okPerS, p99MS float64
	// cause is the diagnosis' first cause; "" when there is none (or the
	// derivation was cut).
	cause string
}

func newRepeatRow(out *collect.Outcome, d *derive.Derived) repeatRow {
	row := repeatRow{dir: out.Dir, status: out.Manifest.Status}
	if res := out.Result; res != nil && len(res.Phases) > 0 {
		ph := res.Phases[len(res.Phases)-1]
		row.phase, row.okPerS, row.p99MS = ph.Name, ph.OKPerS, ph.Latency.P99
	}
	if d != nil && d.Analysis != nil && d.Analysis.Diagnosis != nil && len(d.Analysis.Diagnosis.Causes) > 0 {
		row.cause = d.Analysis.Diagnosis.Causes[0].Title
	}
	return row
}

// String is the run's line: "DIR complete: steady 2xx/s 200.0, p99 3.21
// ms; first cause: ...".
func (r repeatRow) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.dir, r.status)
	if r.phase == "" {
		b.WriteString(": no steady phase measured")
	} else {
		fmt.Fprintf(&b, ": %s 2xx/s %.1f, p99 %s", r.phase, r.okPerS, fmtLatency(r.p99MS))
	}
	if r.cause != "" {
		fmt.Fprintf(&b, "; first cause: %s", r.cause)
	}
	return b.String()
}

// writeRepeatTable prints the runs' figures, a row each.
func writeRepeatTable(w io.Writer, rows []repeatRow) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tstatus\t2xx/s\tp99\tfirst cause")
	for _, r := range rows {
		ok, p99 := "-", "-"
		if r.phase != "" {
			ok, p99 = fmt.Sprintf("%.1f", r.okPerS), fmtLatency(r.p99MS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", filepath.Base(r.dir), r.status, ok, p99, cmp.Or(r.cause, "-"))
	}
	tw.Flush()
}

// fmtLatency formats milliseconds with about three significant digits.
func fmtLatency(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2f s", ms/1000)
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f ms", ms)
}
