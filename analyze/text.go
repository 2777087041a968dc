package analyze

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// fmtNs formats nanoseconds as a short duration (1.2ms, 35µs, 2.5s).
func fmtNs(ns int64) string {
	d := time.Duration(ns)
	switch {
	case ns == 0:
		return "0"
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(ns)/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.1fµs", float64(ns)/1e3)
	}
	return fmt.Sprintf("%dns", ns)
}

func fmtBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func site(fn, file string, line int64) string {
	if file == "" {
		return fn
	}
	return fmt.Sprintf("%s (%s:%d)", fn, filepath.Base(file), line)
}

// WriteText writes r as a human-readable report, top rows per table.
func WriteText(w io.Writer, r *Report, top int) error {
	if top <= 0 {
		top = 10
	}
	ew := &errWriter{w: w}
	p := func(format string, args ...any) { fmt.Fprintf(ew, format, args...) }
	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
	table := func(rows ...string) {
		for _, row := range rows {
			fmt.Fprintln(tw, row)
		}
		tw.Flush()
	}

	src := r.Source
	if src == "" {
		src = "(stream)"
	}
	p("trace %s: %s, %d events, %d generations, %s\n", src, fmtBytes(r.Bytes), r.Events, r.Generations, fmtNs(r.DurationNs))
	if r.Loss != nil {
		p("DAMAGED: kept %d complete generations (the reader had read %s of %s); lost the generation being read and %.1f%% of the bytes after it: %s\n",
			r.Loss.Generations, fmtBytes(r.Loss.ValidBytes), fmtBytes(r.Loss.TotalBytes), r.Loss.LostPct, r.Loss.Error)
	}
	changes := ""
	if len(r.Procs.Changes) > 1 {
		var vs []string
		for _, c := range r.Procs.Changes {
			vs = append(vs, fmt.Sprintf("%d@%s", c.Value, fmtNs(c.TNs)))
		}
		changes = " (changes: " + strings.Join(vs, ", ") + ")"
	}
	p("GOMAXPROCS %d%s; goroutines %d at start, %d created, %d ended, peak %d alive; threads %d seen, peak %d busy (%d in syscalls)\n\n",
		r.Procs.GOMAXPROCS, changes, r.Goroutines.AtStart, r.Goroutines.Created, r.Goroutines.Ended, r.Goroutines.Peak,
		r.Threads.Seen, r.Threads.Peak, r.Threads.PeakSyscall)

	dist := func(name string, d Distribution) string {
		q := d.PercentilesNs
		return fmt.Sprintf("  %s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s", name, d.Count, fmtNs(d.TotalNs), fmtNs(q.P50), fmtNs(q.P90), fmtNs(q.P95), fmtNs(q.P99), fmtNs(q.P999), fmtNs(q.Max))
	}
	p("Scheduling latency (Runnable -> Running, attributed to the goroutine that waited)\n")
	rows := []string{"  \tcount\ttotal\tp50\tp90\tp95\tp99\tp99.9\tmax",
		dist("after wake-ups", Distribution{Count: r.Sched.Count, TotalNs: r.Sched.TotalNs, PercentilesNs: r.Sched.PercentilesNs}),
		dist("creation to first run", r.Sched.Creation)}
	for _, c := range r.Sched.ByCause {
		rows = append(rows, dist("  after "+c.Cause, c.Distribution))
	}
	table(rows...)
	p("\nBy start function (top %d by total wait incl. creation)\n", top)
	rows = []string{"  start function\tgoroutines\twake-ups\ttotal\tp50\tp99\tmax\tcreation total"}
	for i, g := range r.Sched.ByGroup {
		if i == top {
			break
		}
		q := g.PercentilesNs
		rows = append(rows, fmt.Sprintf("  %s\t%d\t%d\t%s\t%s\t%s\t%s\t%s", g.StartFunc, g.Goroutines, g.Count, fmtNs(g.TotalNs), fmtNs(q.P50), fmtNs(q.P99), fmtNs(q.Max), fmtNs(g.CreationNs)))
	}
	table(rows...)

	p("\ncmd/trace-compatible totals (equal `go tool trace -pprof=KIND` on this file; creation excluded, keyed by the waker's stack)\n")
	table("  profile\tcount\ttotal",
		fmt.Sprintf("  sched\t%d\t%s", r.Sched.Compat.Count, fmtNs(r.Sched.Compat.TotalNs)),
		fmt.Sprintf("  syscall\t%d\t%s", r.Syscall.Compat.Count, fmtNs(r.Syscall.Compat.TotalNs)),
		fmt.Sprintf("  sync\t%d\t%s", r.Sync.Compat.Count, fmtNs(r.Sync.Compat.TotalNs)),
		fmt.Sprintf("  net\t%d\t%s", r.Net.Compat.Count, fmtNs(r.Net.Compat.TotalNs)))

	p("\nSleep wake-up overhead (%d time.Sleep calls)\n", r.Sleep.Count)
	if len(r.Sleep.Sites) > 0 {
		rows = []string{"  call site\tcalls\trequested\tblocked p50\tpost-wake p50\tp99\tmax\tovershoot p50\tp99\tmax"}
		for i, s := range r.Sleep.Sites {
			if i == top {
				break
			}
			req, o50, o99, omax := "?", "-", "-", "-"
			if s.RequestedNs > 0 {
				req = fmtNs(s.RequestedNs)
			}
			if s.Overshoot != nil {
				o := s.Overshoot.PercentilesNs
				o50, o99, omax = fmtNs(o.P50), fmtNs(o.P99), fmtNs(o.Max)
			}
			q := s.PostWake.PercentilesNs
			rows = append(rows, fmt.Sprintf("  %s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", site(s.Func, s.File, s.Line), s.Count, req,
				fmtNs(s.Blocked.PercentilesNs.P50), fmtNs(q.P50), fmtNs(q.P99), fmtNs(q.Max), o50, o99, omax))
		}
		table(rows...)
	}

	p("\nPinned OS threads (spans of at least %s without running Go code)\n", fmtNs(r.PinThreshNs))
	p("  %d goroutines locked to a thread (runtime.LockOSThread leaves no event: inferred, see evidence)\n", len(r.Pinned.LockedGoroutines))
	if len(r.Pinned.LockedGoroutines) > 0 {
		rows = []string{"  goid\tstart function\tthread\twake-ups\tevidence\thand-off p50\tmax"}
		for i, l := range r.Pinned.LockedGoroutines {
			if i == top {
				break
			}
			rows = append(rows, fmt.Sprintf("  %d\t%s\t%d\t%d\t%s\t%s\t%s", l.GoID, l.StartFunc, l.Thread, l.Wakeups, l.Evidence, fmtNs(l.HandoffP50Ns), fmtNs(l.HandoffMaxNs)))
		}
		table(rows...)
	}
	p("  %d spans", len(r.Pinned.Events)+int(r.Pinned.Dropped))
	if len(r.Pinned.Tracer) > 0 {
		p(" (plus %d of the tracer's own goroutines, not shown)", len(r.Pinned.Tracer))
	}
	p("\n")
	if n := len(r.Pinned.Unattributed); n > 0 {
		p("  (and %d spans not attributable to user code: os/signal.loop waiting for signals, or a syscall begun before the trace with no stack; longest %s)\n",
			n, fmtNs(r.Pinned.Unattributed[0].DurationNs))
	}
	if len(r.Pinned.Events) > 0 {
		rows = []string{"  kind\tduration\tat\tthread\tP\tgoid\tcall site\ttarget"}
		for i, e := range r.Pinned.Events {
			if i == top {
				break
			}
			pl := "kept"
			if e.PLost {
				pl = "lost"
			}
			d := fmtNs(e.DurationNs)
			if e.Truncated {
				d += "+"
			}
			rows = append(rows, fmt.Sprintf("  %s\t%s\t%s\t%d\t%s\t%d\t%s\t%s", e.Kind, d, fmtNs(e.StartNs), e.Thread, pl, e.GoID, site(e.Func, e.File, e.Line), e.Target))
		}
		table(rows...)
	}

	p("\nBlocking by reason (top call site)\n")
	rows = []string{"  reason\tcount\ttotal\ttop call site"}
	for _, b := range r.Blocking.Reasons {
		s := "-"
		if len(b.Sites) > 0 {
			s = site(b.Sites[0].Func, b.Sites[0].File, b.Sites[0].Line) + " " + fmtNs(b.Sites[0].TotalNs)
		}
		rows = append(rows, fmt.Sprintf("  %s\t%d\t%s\t%s", b.Reason, b.Count, fmtNs(b.TotalNs), s))
	}
	table(rows...)
	p("\nGC: %d cycles, %s marking, %s in assists; stop-the-world %d times, %s total, max %s\n",
		r.GC.Count, fmtNs(r.GC.MarkNs), fmtNs(r.GC.AssistNs), r.GC.STWCount, fmtNs(r.GC.STWNs), fmtNs(r.GC.STWMaxNs))
	var us []string
	for _, u := range r.Procs.Utilisation {
		us = append(us, fmt.Sprintf("P%d %.0f%%", u.Proc, 100*u.Fraction))
	}
	p("P utilisation: %s\n", strings.Join(us, ", "))
	return ew.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, nil
}
