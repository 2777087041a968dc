package cond

import "github.com/schedscope/schedscope/analyze"

// ReportSource is the Source of the Trace context: the figures of one
// trace report. Every Trace metric is readable (a figure the trace did not
// show is 0: no pinned spans, no sleep overshoot, lost.pct of an intact
// trace); any other name is not. r must not change while the Source is used.
func ReportSource(r *analyze.Report) Source {
	return SourceFunc(func(metric string) (float64, bool) {
		ns := func(v int64) (float64, bool) { return float64(v), true }
		switch metric {
		case "pinned":
			return float64(int64(len(r.Pinned.Events)) + r.Pinned.Dropped), true
		case "pinned.cgo":
			return countPinned(r, "cgo"), true
		case "pinned.syscall":
			return countPinned(r, "syscall"), true
		case "pinned.locked":
			return countPinned(r, "locked"), true
		case "locked":
			return float64(len(r.Pinned.LockedGoroutines)), true
		case "sched.p50":
			return ns(r.Sched.PercentilesNs.P50)
		case "sched.p90":
			return ns(r.Sched.PercentilesNs.P90)
		case "sched.p95":
			return ns(r.Sched.PercentilesNs.P95)
		case "sched.p99":
			return ns(r.Sched.PercentilesNs.P99)
		case "sched.p999":
			return ns(r.Sched.PercentilesNs.P999)
		case "sched.max":
			return ns(r.Sched.PercentilesNs.Max)
		case "sched.total":
			return ns(r.Sched.TotalNs)
		case "sched.compat.total":
			return ns(r.Sched.Compat.TotalNs)
		case "creation.p99":
			return ns(r.Sched.Creation.PercentilesNs.P99)
		case "sleep.overshoot.p99":
			return ns(maxOvershoot(r, func(p analyze.Percentiles) int64 { return p.P99 }))
		case "sleep.overshoot.max":
			return ns(maxOvershoot(r, func(p analyze.Percentiles) int64 { return p.Max }))
		case "goroutines.peak":
			return float64(r.Goroutines.Peak), true
		case "threads.peak":
			return float64(r.Threads.Peak), true
		case "gc.stw.max":
			return ns(r.GC.STWMaxNs)
		case "lost.pct":
			if r.Loss == nil {
				return 0, true
			}
			return r.Loss.LostPct, true
		}
		return 0, false
	})
}

// countPinned counts the reported pinned spans of one kind. Spans beyond
// the report's cap (Pinned.Dropped) have no kind, so only "pinned" counts
// them.
func countPinned(r *analyze.Report, kind string) float64 {
	n := 0
	for _, e := range r.Pinned.Events {
		if e.Kind == kind {
			n++
		}
	}
	return float64(n)
}

// maxOvershoot is the worst sleep call site's overshoot figure.
func maxOvershoot(r *analyze.Report, pick func(analyze.Percentiles) int64) int64 {
	var m int64
	for _, s := range r.Sleep.Sites {
		if s.Overshoot != nil {
			m = max(m, pick(s.Overshoot.PercentilesNs))
		}
	}
	return m
}
