package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/derive"
	"github.com/schedscope/schedscope/internal/figures"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/tui"
)

// runAnalyze is `schedscope analyze`. Exit status: 0 fine, 1 bad input (not
// a trace, empty, unsupported version, unreadable), 2 bad flags, 3 the trace
// was truncated or corrupt (the report covers what came before), 4 a
// --fail-on condition held.
func runAnalyze(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags("analyze", "analyze [flags] TRACE|RUNDIR|-", s.out)
	help := fs.Usage
	fs.Usage = func() {
		help()
		fmt.Fprintf(s.out, "\n--fail-on conditions: METRIC OP VALUE, OP one of > >= < <= == !=, METRIC one of:\n%s", cond.Help(cond.Trace))
		fmt.Fprintf(s.out, "\nand on a run directory (each steady phase's figures; the trace's above too):\n%s", cond.Help(cond.Run))
		fmt.Fprintf(s.out, "\nand on a sweep directory:\n%s", cond.Help(cond.Sweep))
	}
	asJSON := fs.Bool("json", false, "write the report as JSON (schema in docs/readme-analyze.md)")
	pin := fs.Duration("pin-threshold", 20*time.Millisecond, "shortest span reported as a pinned OS thread (cgo call, syscall, blocked locked goroutine)")
	sleep := fs.Duration("sleep", 0, "duration every time.Sleep requested, when the trace has no schedscope.sleep annotations")
	top := fs.Int("top", 10, "rows per table in the text report (1 to 10000)")
	progress := fs.Bool("progress", false, "print progress on stderr")
	browse := fs.Bool("tui", false, "browse the analysis in a terminal UI (needs a trace file or run directory, and a terminal)")
	rederive := fs.Bool("rederive", false, "with a run directory: derive analysis.json and summary.txt again from its files alone (the same bytes schedscope run wrote) and print the summary (--json: analysis.json)")
	var gates gateFlag
	fs.Var(&gates, "fail-on", "exit 4 when a condition holds, e.g. 'pinned>0' or 'sched.p99>5ms, lost.pct>0'; on a run directory also 'p99>250ms, errors>1%' (repeatable; metrics below)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("want one TRACE file, run directory or - (got %d arguments)", fs.NArg())
	}
	if *pin <= 0 || *pin > maxAnalyzeSpan {
		return usageErr("--pin-threshold %v: must be in (0, %v]", *pin, maxAnalyzeSpan)
	}
	if *sleep < 0 || *sleep > maxAnalyzeSpan {
		return usageErr("--sleep %v: must be in [0, %v] (0: not known)", *sleep, maxAnalyzeSpan)
	}
	if *top < 1 || *top > maxTop {
		return usageErr("--top %d: must be in [1, %d]", *top, maxTop)
	}
	path := fs.Arg(0)
	kind := rundir.NotDir
	if path != "-" {
		k, err := rundir.DirKindOf(path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		kind = k
	}
	gctx := cond.Trace
	switch kind {
	case rundir.DirRun:
		gctx |= cond.Run
	case rundir.DirSweep:
		gctx = cond.Sweep
	}
	fail, err := gates.parse(gctx)
	if err != nil {
		return err
	}
	if *rederive {
		return rederiveRun(ctx, s, path, *asJSON)
	}
	runDir := ""
	switch kind {
	case rundir.DirSweep:
		if len(fail) == 0 {
			return usageErr("%s is a sweep directory: schedscope report %s writes its report; analyze checks it with --fail-on", path, path)
		}
		return gateDir(ctx, s, path, fail)
	case rundir.DirRun:
		runDir = path
		p, err := rundir.FindTrace(path)
		if err != nil && onlyRunMetrics(fail) && len(fail) > 0 {
			return gateDir(ctx, s, path, fail) // the run's figures need no trace
		}
		if err != nil {
			return err
		}
		path = p
	case rundir.DirEmpty, rundir.DirOther, rundir.DirRepeat:
		return fmt.Errorf("%s: not a trace file nor a run or sweep directory (it is %s)", path, kind)
	}
	opts := analyze.Options{PinThreshold: *pin, Sleep: *sleep}
	if *browse {
		if path == "-" || !tui.IsTerminal(s.out) {
			return usageErr("--tui needs a trace file or run directory, and a terminal that draws a full screen (TERM set, not dumb)")
		}
		_, err := tui.RunBrowser(ctx, tui.Terminal{In: s.in, Out: s.out}, path, opts)
		var trunc *analyze.TruncatedError
		if errors.As(err, &trunc) {
			return withCode(3, err)
		}
		return err
	}
	if *progress {
		last := time.Now()
		opts.Progress = func(read, total int64) {
			if time.Since(last) < 500*time.Millisecond && read < total {
				return
			}
			last = time.Now()
			if total > 0 {
				fmt.Fprintf(s.errOut, "analyze: %d of %d MB (%.0f%%)\n", read>>20, total>>20, 100*float64(read)/float64(total))
			} else {
				fmt.Fprintf(s.errOut, "analyze: %d MB\n", read>>20)
			}
		}
	}
	var rep *analyze.Report
	if path == "-" {
		rep, err = analyze.Trace(ctx, readWithin(ctx, s.in), opts) // a silent pipe must not outlive a Ctrl-C
		if rep != nil {
			rep.Source = "-"
		}
	} else {
		rep, err = analyze.TraceFile(ctx, path, opts)
	}
	if rep == nil {
		return err // not a trace, empty, unreadable: exit 1
	}
	if werr := writeReport(s, rep, *asJSON, *top); werr != nil {
		return errors.Join(err, werr)
	}
	var trunc *analyze.TruncatedError
	if errors.As(err, &trunc) {
		return withCode(3, err)
	}
	if err != nil {
		return err // cancelled: the partial report is printed above
	}
	return gateTrace(ctx, s, rep, runDir, fail)
}

// onlyRunMetrics reports whether every condition names a metric a run
// directory's figures provide.
func onlyRunMetrics(conds []cond.Condition) bool {
	for _, c := range conds {
		if !cond.Provides(cond.Run, c.Metric) {
			return false
		}
	}
	return true
}

// gateTrace checks conditions after `analyze`: on a run directory (runDir
// set), those on the run's metrics against its figures, the others against
// the trace's report; exit 4 with one line per breach.
func gateTrace(ctx context.Context, s *stdio, rep *analyze.Report, runDir string, conds []cond.Condition) error {
	if len(conds) == 0 {
		return nil
	}
	var onRun, onTrace []cond.Condition
	for _, c := range conds {
		if runDir != "" && cond.Provides(cond.Run, c.Metric) {
			onRun = append(onRun, c)
		} else {
			onTrace = append(onTrace, c)
		}
	}
	var breaches []figures.Breach
	var unread []string
	if len(onRun) > 0 {
		set, err := figures.ReadRun(ctx, runDir)
		if err != nil {
			return err
		}
		// What a reader of the figures must know (an HDR log that could
		// not be read, or that disagrees with results.json) is said, as
		// compare says it.
		for _, w := range set.Warnings {
			fmt.Fprintf(s.errOut, "schedscope analyze: warning: %s\n", w)
		}
		breaches, unread = figures.Check(set, onRun), figures.Unread(set, onRun)
	}
	src := cond.ReportSource(rep)
	for _, c := range onTrace {
		if v, held, ok := c.Eval(src); held {
			breaches = append(breaches, figures.Breach{Condition: c, Text: c.String(), Group: "trace", Value: v,
				Line: fmt.Sprintf("%s (trace %s)", c.Explain(v), rep.Source)})
		} else if !ok {
			unread = append(unread, c.String())
		}
	}
	return gateExit(s, breaches, unread)
}

func writeReport(s *stdio, rep *analyze.Report, asJSON bool, top int) error {
	if asJSON {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("write JSON report: %w", err)
		}
		return nil
	}
	if err := analyze.WriteText(s.out, rep, top); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// rederiveRun is `schedscope analyze --rederive RUNDIR`.
func rederiveRun(ctx context.Context, s *stdio, dir string, asJSON bool) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageErr("--rederive wants a run directory, got %q", dir)
	}
	d, err := derive.Dir(ctx, dir)
	if d == nil && ctx.Err() != nil {
		return withCode(130, fmt.Errorf("interrupted: %s's %s and %s are left as they were", dir, rundir.AnalysisFile, rundir.SummaryFile))
	}
	if d == nil {
		return err
	}
	if d.Run.MetricsProblems.Lost() {
		for _, w := range d.Run.MetricsProblems.Lines(10) {
			fmt.Fprintf(s.errOut, "schedscope analyze: warning: %s: %s\n", dir, w)
		}
	}
	if asJSON {
		b, rerr := rundir.ReadFile(filepath.Join(dir, rundir.AnalysisFile))
		if rerr != nil {
			return errors.Join(err, rerr)
		}
		_, werr := s.out.Write(b)
		return errors.Join(err, werr)
	}
	_, werr := io.WriteString(s.out, d.Summary)
	return errors.Join(err, werr)
}
