// Package derive turns a run directory's raw files into its conclusions:
// analysis.json (the trace analyzers' report, the profile summaries, each
// steady phase's figures and the findings) and summary.txt. It reads only
// files, so a run directory copied elsewhere derives the same bytes
// (`schedscope analyze RUNDIR --rederive`), and `schedscope run` calls the
// same Dir when its load ends.
package derive

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/google/pprof/profile"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/regular"
	"github.com/schedscope/schedscope/internal/rundir"
)

// Derived is what Dir derived.
type Derived struct {
	Run      *rundir.Run
	Analysis *rundir.Analysis
	// Summary is summary.txt's text.
	Summary string
}

// Dir derives analysis.json and summary.txt from the files of the run
// directory dir, writes both (replacing earlier ones) and records them in
// its manifest. A run cut short derives what its files hold. The error
// joins every file that could not be written; what could be derived is
// returned with it. When ctx ends before the derivation does (a long trace
// and a Ctrl-C), Dir writes nothing, so earlier files stay as they were,
// and returns a nil Derived with an error wrapping ctx's.
func Dir(ctx context.Context, dir string) (*Derived, error) {
	w, err := rundir.Open(dir)
	if err != nil {
		return nil, err
	}
	run, err := rundir.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	an := Trace(ctx, run)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: derivation stopped, nothing written: %w", dir, err)
	}
	var errs []error
	if err := w.WriteJSON(rundir.AnalysisFile, an); err != nil {
		errs = append(errs, err)
	} else if err := w.RecordFile(rundir.AnalysisFile, "trace analysis, profile summaries, derived figures and findings"); err != nil {
		errs = append(errs, err)
	}
	m := w.Manifest()
	run.Manifest, run.Analysis = m, an
	var sum bytes.Buffer
	writeSummary(&sum, &m, run.Result, an)
	if err := w.WriteFile(rundir.SummaryFile, func(wr io.Writer) error { _, err := wr.Write(sum.Bytes()); return err }); err != nil {
		errs = append(errs, err)
	} else if err := w.RecordFile(rundir.SummaryFile, "human summary"); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		// The manifest, written last, names the files that are missing
		// (rundir.Writer remembers them) and is no longer complete.
		if err := w.UpdateManifest(func(*rundir.Manifest) {}); err != nil {
			errs = append(errs, err)
		}
	}
	run.Manifest = w.Manifest()
	return &Derived{Run: run, Analysis: an, Summary: sum.String()}, errors.Join(errs...)
}

// Analyze derives a run's analysis from its files: the profiles and trace
// named in its manifest, metrics.jsonl and results.json. It writes nothing.
func Trace(ctx context.Context, run *rundir.Run) *rundir.Analysis {
	an := &rundir.Analysis{Schema: rundir.AnalysisSchema}
	an.Profiles = summarizeProfiles(run)
	traceFindings := analyzeTrace(ctx, run, an)
	busy := -1.0
	if an.Trace != nil {
		busy = psBusy(an.Trace)
	}
	an.Phases = derivePhases(run.Result, run.Lines, busy, run.Manifest.Machine.CPUs)
	if ps := run.MetricsProblems; len(ps) > 0 {
		an.MetricsProblems, an.MetricsSkipped = ps[:min(len(ps), rundir.MaxRecordedProblems)], len(ps)
	}
	an.Diagnosis = diagnose(&run.Manifest, run.Result, an)
	an.Findings = rankFindings(append(findings(an.Phases, an.Profiles, run.Result, an.Diagnosis, cmp.Or(run.Manifest.Target.NumCPU, run.Manifest.Machine.CPUs)), traceFindings...))
	return an
}

// summarizeProfiles summarizes the profiles the manifest lists, in
// EndProfiles order, then fgprof.
func summarizeProfiles(run *rundir.Run) []rundir.ProfileSummary {
	entries := map[string]rundir.FileEntry{}
	for _, f := range run.Manifest.Files {
		entries[f.Name] = f
	}
	var out []rundir.ProfileSummary
	read := func(name string) (*profile.Profile, rundir.FileEntry, bool) {
		e, ok := entries[rundir.ProfileFile(name)]
		if !ok {
			return nil, e, false
		}
		b, err := regular.Read(filepath.Join(run.Dir, e.Name))
		if err != nil {
			return nil, e, false
		}
		p, err := profile.ParseData(b)
		return p, e, err == nil
	}
	for _, name := range rundir.EndProfiles() {
		if name == "threadcreate" {
			continue // its stacks are broken (golang/go#6104); only its count matters
		}
		p, e, ok := read(name)
		if !ok {
			continue
		}
		s := summarize(name, e.Name, e.Window, p, false)
		if s.Total == 0 && (name == "block" || name == "mutex") {
			s.Note = "empty: the target did not enable it (runtime.SetBlockProfileRate / SetMutexProfileFraction, or the agent's BlockProfileRate / MutexProfileFraction options)"
		}
		out = append(out, s)
	}
	if p, e, ok := read("fgprof"); ok {
		out = append(out, summarize("fgprof", e.Name, e.Window, p, true))
	}
	return out
}

// analyzeTrace runs the analyzers on the run's trace.out and returns the
// findings they support.
func analyzeTrace(ctx context.Context, run *rundir.Run, an *rundir.Analysis) []rundir.Finding {
	if t := run.Manifest.Trace; t != nil {
		an.TraceCapture, an.TraceReason, an.TraceStartS, an.TraceEndS = string(t.Mode), t.Reason, t.StartS, t.EndS
	}
	rep, err := analyzeRunTrace(ctx, run.Dir, run.Manifest)
	if errors.Is(err, fs.ErrNotExist) {
		an.TraceError = "no trace captured"
		return nil
	}
	an.Trace = rep
	if err != nil {
		an.TraceError = err.Error()
	}
	if rep == nil {
		return nil
	}
	s := rep.Sched
	out := []rundir.Finding{{Kind: rundir.KindSchedLatency,
		Title:   fmt.Sprintf("scheduling latency p99 %s in the trace", fmtNs(s.PercentilesNs.P99)),
		Detail:  fmt.Sprintf("%d Runnable->Running waits totalling %s over %s of trace (max %s)", s.Count, fmtNs(s.TotalNs), fmtNs(rep.DurationNs), fmtNs(s.PercentilesNs.Max)),
		Numbers: map[string]float64{"p99_ns": float64(s.PercentilesNs.P99), "count": float64(s.Count)}}}
	if n := len(rep.Pinned.Events); n > 0 || len(rep.Pinned.LockedGoroutines) > 0 {
		out = append(out, rundir.Finding{Kind: rundir.KindPinned,
			Title:  fmt.Sprintf("%d spans held an OS thread without running Go code for over %s", n+int(rep.Pinned.Dropped), fmtNs(rep.PinThreshNs)),
			Detail: fmt.Sprintf("%d goroutines locked to their thread", len(rep.Pinned.LockedGoroutines))})
	}
	return out
}

// analyzeRunTrace analyzes dir's trace.out, naming it by its name in the
// directory (in the report's Source and in errors), so the analysis does
// not depend on where the directory lies: a copy derives the same bytes.
// The request ids joined are those with the run's tag, intended within
// the run (m's load start to its end), as the generator recorded them.
func analyzeRunTrace(ctx context.Context, dir string, m rundir.Manifest) (*analyze.Report, error) {
	f, err := regular.Open(filepath.Join(dir, rundir.TraceFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var opts analyze.Options
	if fi, err := f.Stat(); err == nil {
		opts.Size = fi.Size()
	}
	// The generator's record of each request joins the trace's: its latency
	// gives each request's time after the handler.
	if log, err := rundir.ReadRequests(dir); err == nil && log.Tag != "" {
		opts.RequestTag = log.Tag
		opts.Client = make(map[int64]analyze.ClientRequest, len(log.Requests))
		for _, rq := range log.Requests {
			cr := analyze.ClientRequest{IntendedUnixNs: rq.IntendedUnixNs, SentUnixNs: rq.SentUnixNs}
			if rq.Outcome == load.OutcomeOK || rq.Outcome == load.OutcomeStatus {
				cr.LatencyNs = rq.LatencyNs
			}
			opts.Client[int64(rq.Seq)] = cr
		}
		if !m.LoadStart.IsZero() {
			opts.IntendedFrom = m.LoadStart.UnixNano()
		}
		if !m.End.IsZero() {
			opts.IntendedTo = m.End.UnixNano()
		}
	}
	rep, err := analyze.Trace(ctx, f, opts)
	if rep != nil {
		rep.Source = rundir.TraceFile
	}
	if err != nil {
		return rep, fmt.Errorf("trace %s: %w", rundir.TraceFile, err)
	}
	return rep, nil
}

const (
	// Timeout bounds AfterRun's derivation (a long trace).
	Timeout = 2 * time.Minute
	// InterruptedBudget is what AfterRun is usually given after an
	// interrupted run: what was measured is on disk already, and a command
	// ends within a second of the signal. A longer derivation is left to
	// `schedscope analyze --rederive DIR`.
	InterruptedBudget = 500 * time.Millisecond
)

// AfterRun derives the run directory dir right after the run that wrote it
// ended, bounded by Timeout; when ctx has already ended (the run was
// interrupted) it is bounded by budget instead, and a cancellation of ctx
// during the derivation stops it. cut reports a derivation stopped by an
// interruption: nothing was written, d is nil and err is nil; the run's
// files are whole and Dir derives them later. Otherwise it returns what Dir
// returns.
func AfterRun(ctx context.Context, dir string, budget time.Duration) (d *Derived, cut bool, err error) {
	parent, bound := ctx, Timeout
	if ctx.Err() != nil {
		parent, bound = context.WithoutCancel(ctx), budget
	}
	fin, cancel := context.WithTimeout(parent, bound)
	defer cancel()
	d, err = Dir(fin, dir)
	if d == nil && fin.Err() != nil && ctx.Err() != nil {
		return nil, true, nil
	}
	return d, false, err
}
