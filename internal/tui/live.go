package tui

import (
	"fmt"
	"time"

	"github.com/schedscope/schedscope/internal/collect"
)

// LiveFrame maps one live snapshot of a run (the load's progress plus the
// latest poll of the target) onto a dashboard Frame: phase, load figures,
// errors by class, the target's runtime figures when it has an agent, and its
// CPU per request. Pools, verdicts and narration are left to the caller, which
// knows which pools matter and what to say about them.
func LiveFrame(title string, l collect.Live) Frame {
	p := l.Load
	f := Frame{
		Title: title,
		Phase: Phase{Name: p.Name, Index: p.Phase + 1, Count: p.Phases, Elapsed: p.Elapsed, Duration: p.Total, RunElapsed: l.At},
		Load: Load{OfferedPerSec: p.OfferedRate, AchievedPerSec: p.OKPerS, Users: p.Users, Sent: p.Sent, OK: p.OK,
			NotSent: p.NotSent, InFlight: int(p.InFlight), P50: p.IntervalP50, P99: p.IntervalP99},
		CPUPerRequest: time.Duration(l.Target.CPUUSPerReq * float64(time.Microsecond)),
	}
	for _, e := range []struct {
		class string
		n     int64
	}{{"status", p.Errors.Status}, {"timeout", p.Errors.Timeout}, {"connect", p.Errors.Connection}, {"other", p.Errors.Other}} {
		if e.n > 0 {
			f.Load.Errors = append(f.Load.Errors, ErrorCount{Class: e.class, Count: e.n})
		}
	}
	if tp := l.Target; tp.HasAgent {
		f.Runtime = &Runtime{GOMAXPROCS: tp.GOMAXPROCS, Goroutines: int(tp.Goroutines), Running: int(tp.Running),
			Runnable: int(tp.Runnable), Waiting: int(tp.Waiting), Syscall: int(tp.NotInGo), Threads: int(tp.Threads),
			SchedLatencyP99: time.Duration(tp.SchedLatencyP99MS * float64(time.Millisecond)),
			GCPauseP99:      time.Duration(tp.GCPauseMaxMS * float64(time.Millisecond))}
	}
	return f
}

// PoolSaturated is the verdict banner for a pool whose every slot is in use;
// capacity, when not empty, is the Little's-law prediction to show with it.
func PoolSaturated(name string, inUse, size, waiting int, capacity string) Verdict {
	d := fmt.Sprintf("%d/%d in use, %d waiting", inUse, size, waiting)
	if capacity != "" {
		d += "; predicted capacity " + capacity
	}
	return Verdict{Kind: VerdictPoolSaturated, Title: "pool " + name + " is saturated", Detail: d}
}
