package collect

import (
	"time"

	"github.com/schedscope/schedscope/internal/cond"
)

// LiveSource is the Source of the cond.Live context: the figures of one
// live update, for `--snapshot-when` conditions. A figure is unreadable
// (ok=false) until it exists: latency before anything completed, 2xx/s in
// a phase's first second, the target's figures before a poll answered
// (the runtime's through the agent; threads and CPU also from /proc).
// Durations are nanoseconds. l must not change while the Source is used.
func LiveSource(l *Live) cond.Source {
	return cond.SourceFunc(func(metric string) (float64, bool) {
		lp, tp := &l.Load, &l.Target
		switch metric {
		case "p50":
			return float64(lp.IntervalP50), lp.Completed > 0
		case "p95":
			return float64(lp.IntervalP95), lp.Completed > 0
		case "p99":
			return float64(lp.IntervalP99), lp.Completed > 0
		case "ok_per_s":
			return lp.OKPerS, lp.Elapsed > time.Second
		case "in_flight":
			return float64(lp.InFlight), true
		case "not_sent":
			return float64(lp.NotSent), true
		case "errors":
			return float64(lp.Errors.Total()), true
		case "goroutines":
			return tp.Goroutines, tp.HasAgent
		case "runnable":
			return tp.Runnable, tp.HasAgent
		case "threads":
			return tp.Threads, tp.HasAgent || tp.HasProc
		case "cpu":
			return tp.CPUCores, tp.HasAgent || tp.HasProc
		case "sched.p99":
			return tp.SchedLatencyP99MS * float64(time.Millisecond), tp.HasAgent
		case "gc.stw.max":
			return tp.GCPauseMaxMS * float64(time.Millisecond), tp.HasAgent
		}
		return 0, false
	})
}

// firstHeld returns the first of cs that holds on src.
func firstHeld(cs []cond.Condition, src cond.Source) (cond.Condition, bool) {
	for _, c := range cs {
		if c.Holds(src) {
			return c, true
		}
	}
	return cond.Condition{}, false
}
