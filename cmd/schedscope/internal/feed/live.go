// Package feed turns what schedscope's producers report into the TUI's
// inputs: one moment of a run (collect.Live) into a dashboard tui.Frame, its
// typed live notes into verdicts, a finished run into the end screen, and a
// GOMAXPROCS sweep's progress events (sweep.Event) into the sweep view's
// tui.SweepEvents. It is the glue that owns both sides, so that package tui
// imports neither collect nor sweep.
package feed

import (
	"fmt"
	"time"

	"github.com/schedscope/schedscope/internal/collect"
	"github.com/schedscope/schedscope/internal/derive"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/tui"
)

// Frame maps one live snapshot of a run (the load's progress plus the
// latest poll of the target) onto a dashboard Frame: phase, load figures,
// errors by class, the target's runtime figures (all of them from its agent,
// goroutines and threads from net/http/pprof alone), and its CPU per request. Pools, verdicts and narration are left to the caller, which
// knows which pools matter and what to say about them (RunFrame for
// `schedscope run`).
func Frame(title string, l collect.Live) tui.Frame {
	p := l.Load
	f := tui.Frame{
		Title: title,
		Phase: tui.Phase{Name: p.Name, Index: p.Phase + 1, Count: p.Phases, Elapsed: p.Elapsed, Duration: p.Total, RunElapsed: l.At},
		Load: tui.Load{OfferedPerSec: p.OfferedRate, AchievedPerSec: p.OKPerS, Users: p.Users, Sent: p.Sent, OK: p.OK,
			NotSent: p.NotSent, InFlight: int(p.InFlight), P50: p.IntervalP50, P95: p.IntervalP95, P99: p.IntervalP99},
		CPUPerRequest: time.Duration(l.Target.CPUUSPerReq * float64(time.Microsecond)),
	}
	for _, e := range []struct {
		class string
		n     int64
	}{{"status", p.Errors.Status}, {"timeout", p.Errors.Timeout}, {"connect", p.Errors.Connection}, {"other", p.Errors.Other}} {
		if e.n > 0 {
			f.Load.Errors = append(f.Load.Errors, tui.ErrorCount{Class: e.class, Count: e.n})
		}
	}
	switch tp := l.Target; {
	case tp.HasAgent:
		f.Runtime = &tui.Runtime{GOMAXPROCS: tp.GOMAXPROCS, Goroutines: int(tp.Goroutines), Running: int(tp.Running),
			Runnable: int(tp.Runnable), Waiting: int(tp.Waiting), Syscall: int(tp.NotInGo), Threads: int(tp.Threads),
			SchedLatencyP99: time.Duration(tp.SchedLatencyP99MS * float64(time.Millisecond)),
			GCPauseP99:      time.Duration(tp.GCPauseMaxMS * float64(time.Millisecond))}
	case tp.Goroutines > 0:
		// Only net/http/pprof: the goroutine profile's count, and threads
		// from /proc when the target is local, else threadcreate's count.
		f.Runtime = &tui.Runtime{PprofOnly: true, Goroutines: int(tp.Goroutines), Threads: int(tp.Threads),
			ThreadsCreated: !tp.HasProc}
	}
	return f
}

// RunFrame is `schedscope run`'s dashboard Frame: Frame, every bounded pool
// of the target, a verdict for each saturated one with its Little's-law
// capacity as the run measured it, and the run's other live notes.
func RunFrame(title string, l collect.Live) tui.Frame {
	f := Frame(title, l)
	for _, pl := range l.Target.Pools {
		if pl.Size == 0 {
			continue
		}
		f.Pools = append(f.Pools, tui.Pool{Name: pl.Name, InUse: pl.InUse, Size: pl.Size, Waiting: pl.Waiting})
		if pl.Saturated {
			capacity := ""
			if pl.CapacityPerS > 0 {
				capacity = fmt.Sprintf("%.0f req/s (Little's law: %d / %.1f ms)", pl.CapacityPerS, pl.Size, pl.HoldMeanMS)
			}
			f.Verdicts = append(f.Verdicts, PoolSaturated(pl.Name, pl.InUse, pl.Size, pl.Waiting, capacity))
		}
	}
	f.Verdicts = append(f.Verdicts, NoteVerdicts(l.Notes)...)
	return f
}

// PoolSaturated is the verdict banner for a pool whose every slot is in use;
// capacity, when not empty, is the Little's-law prediction to show with it.
func PoolSaturated(name string, inUse, size, waiting int, capacity string) tui.Verdict {
	d := fmt.Sprintf("%d/%d in use, %d waiting", inUse, size, waiting)
	if capacity != "" {
		d += "; predicted capacity " + capacity
	}
	return tui.Verdict{Kind: rundir.KindPoolSaturated, Title: "pool " + name + " is saturated", Detail: d}
}

// NoteVerdicts are the verdicts for a run's live notes, each of its note's
// kind, leaving out the saturated pools' (rundir.KindPoolSaturated): a
// caller shows those from the pools' figures, with PoolSaturated.
func NoteVerdicts(notes []rundir.Note) []tui.Verdict {
	var vs []tui.Verdict
	for _, n := range notes {
		if n.Kind != rundir.KindPoolSaturated {
			vs = append(vs, tui.Verdict{Kind: n.Kind, Title: n.Text})
		}
	}
	return vs
}

// RunSummary is the dashboard's end screen for a finished run: a row per
// phase, the findings of the derived analysis d (nil when the derivation
// failed), the reason the run stopped and where its summary is.
func RunSummary(out *collect.Outcome, d *derive.Derived) *tui.Summary {
	s := &tui.Summary{Title: "run " + out.Manifest.Status, RunDirs: []string{out.Dir}, Stopped: out.Manifest.Status == rundir.StatusInterrupted}
	s.Table.Header = []string{"phase", "offered/s", "2xx/s", "p50", "p95", "p99", "not sent", "errors"}
	if res := out.Result; res != nil {
		for _, ph := range res.Phases {
			offered := fmt.Sprintf("%.0f", ph.OfferedRate)
			if ph.Users > 0 {
				offered = fmt.Sprintf("%d users", ph.Users) // closed model: no offered rate
			}
			s.Table.Rows = append(s.Table.Rows, []string{ph.Name, offered, fmt.Sprintf("%.0f", ph.OKPerS),
				fmt.Sprintf("%.1f ms", ph.Latency.P50), fmt.Sprintf("%.1f ms", ph.Latency.P95), fmt.Sprintf("%.1f ms", ph.Latency.P99),
				fmt.Sprint(ph.NotSent), fmt.Sprint(ph.Errors.Total())})
		}
	}
	if d != nil {
		// The diagnosis first, ranked; then the other findings.
		if dg := d.Analysis.Diagnosis; dg != nil {
			for i, c := range dg.Causes {
				title := fmt.Sprintf("%d. %s", i+1, c.Title)
				if c.Share > 0 {
					title += fmt.Sprintf(" (%.0f %% of the time)", 100*c.Share)
				}
				s.Verdicts = append(s.Verdicts, tui.Verdict{Kind: c.Kind, Title: title, Detail: "change: " + c.Change})
			}
		}
		for _, fd := range d.Analysis.Findings {
			s.Verdicts = append(s.Verdicts, tui.Verdict{Kind: fd.Kind, Title: fd.Title, Detail: fd.Detail})
		}
	}
	if out.Manifest.Reason != "" {
		s.Notes = append(s.Notes, out.Manifest.Reason)
	}
	s.Notes = append(s.Notes, "summary: "+out.Dir+"/"+rundir.SummaryFile)
	return s
}

// FailedSummary is the dashboard's end screen for a run that failed before
// it had a run directory to summarise (the target refused connections, its
// command exited at once): err, on screen at once.
func FailedSummary(err error) *tui.Summary {
	return &tui.Summary{Title: "run failed", Err: err.Error()}
}
