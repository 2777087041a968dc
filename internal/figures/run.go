package figures

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/derive"
	"github.com/schedscope/schedscope/internal/rundir"
)

// ReadRun reads a run directory's figures. A run cut short gives the phases
// it holds, with a warning; without analysis.json (a derivation that was
// cut) the analysis is derived in memory from the files, which reads the
// trace again.
func ReadRun(ctx context.Context, dir string) (*Set, error) {
	run, err := rundir.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	s := &Set{Path: dir, Kind: KindRun, Latency: map[string]*hdrhistogram.Histogram{}}
	an := run.Analysis
	if an == nil {
		an = derive.Trace(ctx, run)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
	}
	hl, err := rundir.ReadHLog(filepath.Join(dir, rundir.HLogFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%v; latency percentiles from %s", err, rundir.ResultsFile)) // err names the file
	}
	s.HLogMismatches = rundir.CheckHLog(hl, run.Result)
	for _, m := range s.HLogMismatches {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s; the latency percentiles are %s's", dir, m, rundir.HLogFile))
	}
	s.Identity = runIdentity(run)
	s.Label = runLabel(run.Manifest, dir)
	m := run.Manifest
	if m.Status != rundir.StatusComplete {
		s.Identity.Partial = true
		why := m.Reason
		if why == "" {
			why = "its process ended before it said how it ended"
		}
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: the run is %s (%s): compared up to what it holds", dir, m.Status, why))
	}
	if run.MetricsProblems.Lost() {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %d lines of %s skipped (%s)", dir, len(run.MetricsProblems), rundir.MetricsFile, run.MetricsProblems[0]))
	}
	var phases []load.PhaseResult
	if run.Result != nil {
		phases = run.Result.Phases
	} else {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: no %s: the phases' counts come from %s's last poll, latencies from %s", dir, rundir.ResultsFile, rundir.MetricsFile, rundir.HLogFile))
		phases = phasesFromPolls(run.Lines)
	}
	for i, ph := range phases {
		var pf *rundir.PhaseFigures
		if i < len(an.Phases) && an.Phases[i].Name == ph.Name {
			pf = &an.Phases[i]
		}
		g := phaseGroup(i, ph, pf, an, hl.Phase(i))
		s.Groups = append(s.Groups, g)
		if h := hl.Phase(i).Latency; h != nil {
			s.Latency[g.Key] = h
		}
		if ph.OfferedRate > 0 {
			s.Throughput = append(s.Throughput, Point{ph.OfferedRate, ph.OKPerS})
		}
		if run.Result != nil && run.Result.Interrupted && i == len(phases)-1 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s was cut after %.1f s by the interruption; later phases, if planned, have no figures", dir, g.Title, ph.EndS-ph.StartS))
		}
	}
	if an.Trace != nil {
		s.Groups = append(s.Groups, traceGroup(an))
	}
	if an.Diagnosis != nil && len(an.Diagnosis.Causes) > 0 {
		s.Groups = append(s.Groups, diagnosisGroup(an.Diagnosis))
	}
	return s, nil
}

// PhaseKey is the group key of the i-th steady phase (0-based).
func PhaseKey(i int) string { return fmt.Sprintf("phase %d", i+1) }

// phaseTitle describes a steady phase: "phase 1: steady, 1500 req/s".
func phaseTitle(i int, ph load.PhaseResult) string {
	load := fmt.Sprintf("%g req/s", ph.OfferedRate)
	if ph.Users > 0 {
		load = fmt.Sprintf("%d users", ph.Users)
	}
	return fmt.Sprintf("%s: %s, %s", PhaseKey(i), ph.Name, load)
}

// phaseGroup is one steady phase's figures: the load's from results.json
// and the HDR log, the target's from the derived phase figures (nil when
// there were none), the exact scheduling latency when the trace lies in it.
func phaseGroup(i int, ph load.PhaseResult, pf *rundir.PhaseFigures, an *rundir.Analysis, hp rundir.HLogPhase) Group {
	g := Group{Key: PhaseKey(i), Title: phaseTitle(i, ph), Gate: true}
	add := func(f Figure) { g.Figures = append(g.Figures, f) }
	dur := func(metric, label string, ns float64, better Better) {
		add(Figure{Key: metric, Metric: metric, Label: label, Unit: cond.Duration, Value: ns, Better: better})
	}
	add(Figure{Key: "ok_per_s", Metric: "ok_per_s", Label: "2xx/s", Unit: cond.PerSecond, Value: ph.OKPerS, Better: Higher})
	lat := []struct {
		metric, label string
		q             float64
		fromResult    float64 // ms
	}{
		{"p50", "latency p50", 50, ph.Latency.P50},
		{"p90", "latency p90", 90, ph.Latency.P90},
		{"p95", "latency p95", 95, ph.Latency.P95},
		{"p99", "latency p99", 99, ph.Latency.P99},
		{"p999", "latency p99.9", 99.9, ph.Latency.P999},
		{"max", "latency max", 100, ph.Latency.Max},
	}
	for _, l := range lat {
		switch {
		case hp.Latency != nil && hp.Latency.TotalCount() > 0:
			dur(l.metric, l.label, float64(valueAt(hp.Latency, l.q)), Lower)
		case l.fromResult > 0 || ph.Latency.Count > 0:
			dur(l.metric, l.label, l.fromResult*1e6, Lower)
		}
	}
	switch {
	case hp.SendLag != nil && hp.SendLag.TotalCount() > 0:
		dur("send_lag.p99", "send lag p99", float64(hp.SendLag.ValueAtQuantile(99)), Lower)
	case ph.Completed > 0:
		dur("send_lag.p99", "send lag p99", ph.SendLag.P99*1e6, Lower)
	}
	notSent := Figure{Key: "not_sent", Metric: "not_sent", Label: "not sent", Unit: cond.Count, Value: float64(ph.NotSent), Better: Lower}
	if ph.Planned > 0 {
		notSent.Share, notSent.HasShare = 100*float64(ph.NotSent)/float64(ph.Planned), true
	}
	add(notSent)
	errs := Figure{Key: "errors", Metric: "errors", Label: "errors", Unit: cond.Count, Value: float64(ph.Errors.Total()), Better: Lower}
	if ph.Completed > 0 {
		errs.Share, errs.HasShare = 100*float64(ph.Errors.Total())/float64(ph.Completed), true
	}
	add(errs)
	if pf == nil {
		return g
	}
	if pf.CPUUSPerReq > 0 {
		f := Figure{Key: "cpu_per_req", Metric: "cpu_per_req", Label: "target CPU per 2xx", Unit: cond.Duration, Value: pf.CPUUSPerReq * 1e3, Better: Lower}
		if !pf.CPUFromProc {
			f.Note = "runtime estimate, no kernel time"
		}
		add(f)
	}
	if pf.Polls > 0 {
		add(Figure{Key: "goroutines.peak", Metric: "goroutines.peak", Label: "goroutines peak", Unit: cond.Count, Value: pf.PeakGoroutines})
		add(Figure{Key: "threads.peak", Metric: "threads.peak", Label: "threads peak", Unit: cond.Count, Value: pf.PeakThreads})
	}
	if pf.OthersKnown {
		// The machine's busy CPU less the target's and the generator's.
		add(Figure{Key: "others_cpu", Label: "others' CPU (cores)", Unit: cond.Cores, Value: pf.OthersCPUCores, Better: Lower})
	}
	switch {
	case an.Trace != nil && inPhase((an.TraceStartS+an.TraceEndS)/2, pf) && an.Trace.Sched.PercentilesNs.P99 > 0:
		add(Figure{Key: "sched.p99", Metric: "sched.p99", Label: "sched latency p99", Unit: cond.Duration,
			Value: float64(an.Trace.Sched.PercentilesNs.P99), Better: Lower, Note: "exact, trace window"})
	case pf.SchedLatencyP99MS > 0:
		add(Figure{Key: "sched.p99", Metric: "sched.p99", Label: "sched latency p99", Unit: cond.Duration,
			Value: pf.SchedLatencyP99MS * 1e6, Better: Lower, Note: "sampled, worst poll"})
	}
	for _, p := range pf.Pools {
		if p.Size <= 0 {
			continue
		}
		add(Figure{Key: "pool.saturated:" + p.Name, Metric: "pool.saturated", Label: "pool " + p.Name + " saturated",
			Unit: cond.Percent, Value: 100 * p.SaturatedShare, Better: Lower})
	}
	return g
}

// inPhase reports whether t (seconds on the load's clock) falls in the
// phase: a trace whose middle does belongs to it.
func inPhase(t float64, pf *rundir.PhaseFigures) bool { return t >= pf.StartS && t <= pf.EndS }

// valueAt is h's value at percentile q (0-100), 100 being the maximum.
func valueAt(h *hdrhistogram.Histogram, q float64) int64 {
	if q >= 100 {
		return h.Max()
	}
	return h.ValueAtQuantile(q)
}

// traceGroup is the run trace's figures that no phase carries.
func traceGroup(an *rundir.Analysis) Group {
	r := an.Trace
	src := cond.ReportSource(r)
	g := Group{Key: "trace", Gate: true,
		Title: fmt.Sprintf("trace (%s, %.1f-%.1f s)", orWord(an.TraceCapture, "window"), an.TraceStartS, an.TraceEndS)}
	for _, f := range []struct {
		metric, label string
		unit          cond.Unit
	}{
		{"pinned", "pinned spans", cond.Count},
		{"pinned.cgo", "pinned in cgo", cond.Count},
		{"pinned.syscall", "pinned in syscalls", cond.Count},
		{"pinned.locked", "pinned, locked and blocked", cond.Count},
		{"sleep.overshoot.p99", "sleep overshoot p99", cond.Duration},
		{"gc.stw.max", "GC stop-the-world max", cond.Duration},
	} {
		if v, ok := src.Value(f.metric); ok {
			g.Figures = append(g.Figures, Figure{Key: f.metric, Metric: f.metric, Label: f.label, Unit: f.unit, Value: v, Better: Lower})
		}
	}
	return g
}

// diagnosisGroup is the diagnosis' causes, each as its share of the time
// the diagnosis apportioned, in percent.
func diagnosisGroup(d *rundir.Diagnosis) Group {
	g := Group{Key: "diagnosis", Title: "diagnosis: each cause's share of " + basisWords(d.Basis)}
	for _, c := range d.Causes {
		key, label := "cause:"+string(c.Kind), "cause: "+string(c.Kind)
		if c.Pool != "" {
			key, label = key+":"+c.Pool, label+" "+c.Pool
		}
		g.Figures = append(g.Figures, Figure{Key: key, Label: label, Unit: cond.Percent, Value: 100 * c.Share, Note: c.Title})
	}
	return g
}

// basisWords says what a diagnosis' shares are of.
func basisWords(b rundir.DiagnosisBasis) string {
	switch b {
	case rundir.BasisRequests:
		return "the slowest requests' time (the p99 band)"
	case rundir.BasisClass:
		return "the serving goroutines' time"
	}
	return "the impact the load's figures and the polls show (no trace)"
}

func orWord(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// runIdentity is what a run must share with another to be compared.
func runIdentity(run *rundir.Run) Identity {
	var id Identity
	raw := run.Manifest.Config.TargetURL
	if run.Result != nil {
		id.Method, id.Model = run.Result.Method, run.Result.Model
		if raw == "" {
			raw = run.Result.Target
		}
		for _, ph := range run.Result.Phases {
			id.Phases = append(id.Phases, PhaseLoad{OfferedRate: ph.OfferedRate, Users: ph.Users, DurationS: ph.DurationS})
		}
	}
	u := urlRequest(raw)
	id.Request, id.Host = u.request, u.host
	id.Target = run.Manifest.Config.Command
	id.MachineCPUs = run.Manifest.Machine.CPUs
	return id
}

// requestURL is a target URL split into what must match and what may differ.
type requestURL struct{ request, host string }

// urlRequest splits raw into its request (path and query) and host; a URL
// that does not parse is all request.
func urlRequest(raw string) requestURL {
	u, err := url.Parse(raw)
	if err != nil {
		return requestURL{request: raw}
	}
	r := requestURL{host: u.Host, request: u.EscapedPath()}
	if r.request == "" {
		r.request = "/"
	}
	if u.RawQuery != "" {
		r.request += "?" + u.RawQuery
	}
	return r
}

// runLabel names a run: the fixture model its command started, else its
// directory's name.
func runLabel(m rundir.Manifest, dir string) string {
	if model := flagValue(m.Config.Command, "model"); model != "" {
		return model
	}
	return filepath.Base(filepath.Clean(dir))
}

// flagValue finds --name V or --name=V (or one dash) in a shell command.
func flagValue(command, name string) string {
	fields := strings.Fields(command)
	for i, f := range fields {
		for _, p := range []string{"--" + name, "-" + name} {
			if v, ok := strings.CutPrefix(f, p+"="); ok {
				return strings.Trim(v, `'"`)
			}
			if f == p && i+1 < len(fields) {
				return strings.Trim(fields[i+1], `'"`)
			}
		}
	}
	return ""
}

// phasesFromPolls rebuilds the steady phases of a run without results.json
// (its process was killed) from the polls: each phase's counts from its
// last poll, its 2xx/s from the slope of the run's 2xx total over its polls.
// Latencies come from the HDR log.
func phasesFromPolls(lines []rundir.MetricsLine) []load.PhaseResult {
	var out []load.PhaseResult
	var firstOK []int64 // the run's 2xx total at each phase's first poll
	for _, l := range lines {
		if l.Load.Kind != load.Steady || l.Load.Step < 0 {
			continue
		}
		for len(out) <= l.Load.Step {
			out = append(out, load.PhaseResult{Kind: load.Steady})
			firstOK = append(firstOK, -1)
		}
		i := l.Load.Step
		ph := &out[i]
		if firstOK[i] < 0 {
			firstOK[i] = l.Load.OKTotal
			ph.Name, ph.OfferedRate, ph.Users, ph.StartS = l.Load.Phase, l.Load.OfferedRate, l.Load.Users, l.T
		}
		ph.Sent, ph.NotSent, ph.Completed, ph.OK = l.Load.Sent, l.Load.NotSent, l.Load.Completed, l.Load.OK
		ph.Planned = ph.Sent + ph.NotSent
		ph.Errors = load.ErrorCounts{Other: l.Load.Errors}
		ph.EndS = l.T
		ph.DurationS = ph.EndS - ph.StartS
		if ph.DurationS > 0 {
			ph.OKPerS = float64(l.Load.OKTotal-firstOK[i]) / ph.DurationS
		}
	}
	return out
}
