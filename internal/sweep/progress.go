package sweep

import (
	"fmt"
	"io"
	"strings"
)

// PlainProgress returns a Config.Progress function that writes one plain
// line per event to w (live ticks are skipped), for a terminal that is not a
// TTY or a log file. Write errors are ignored: progress is advisory.
func PlainProgress(w io.Writer) func(Event) {
	return func(e Event) {
		if line := FormatEvent(e); line != "" {
			fmt.Fprintln(w, line)
		}
	}
}

// FormatEvent renders e as one line, or "" for events not worth a line
// (ticks).
func FormatEvent(e Event) string {
	label := e.Label
	if label == "" {
		label = fmt.Sprintf("GOMAXPROCS %d", e.GOMAXPROCS)
	}
	head := fmt.Sprintf("[%d/%d] %s iteration %d", e.Done, e.Total, label, e.Iteration)
	offered := fmt.Sprintf("%g req/s", e.Rate)
	if e.Users > 0 {
		offered = fmt.Sprintf("%d users", e.Users)
	}
	switch e.Kind {
	case EventStart:
		if e.Iteration == 0 { // live mode's one target
			return fmt.Sprintf("[%d/%d] live target started, pid %d", e.Done, e.Total, e.PID)
		}
		pin := "not pinned"
		if e.Pinned != "" {
			pin = "taskset -c " + e.Pinned
		}
		if e.Cgroup != "" {
			pin += ", cgroup " + e.Cgroup
		}
		return fmt.Sprintf("%s: started pid %d (%s)", head, e.PID, pin)
	case EventReady:
		if e.PID == 0 { // live: the one target got its new GOMAXPROCS
			return fmt.Sprintf("%s: GOMAXPROCS set through the agent", head)
		}
		return fmt.Sprintf("%s: target answers", head)
	case EventWarmup:
		return fmt.Sprintf("%s: warm-up at %s for %v", head, offered, e.Duration)
	case EventPhase:
		return ""
	case EventStep:
		s := e.Step
		var b strings.Builder
		load := offered + " offered" // open model: a rate; closed model: users, who offer nothing
		if s.Users > 0 {
			load = offered
		}
		fmt.Fprintf(&b, "%s: %s -> %.1f 2xx/s, p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, errors %d, not sent %d",
			head, load, s.OKPerSec, s.P50MS, s.P95MS, s.P99MS, s.Errors, s.NotSent)
		if s.CPUPerRequestUS > 0 {
			fmt.Fprintf(&b, ", target CPU %.0f us/req", s.CPUPerRequestUS)
		}
		if s.RSSBytes > 0 {
			fmt.Fprintf(&b, ", RSS %.1f MB", float64(s.RSSBytes)/1e6)
		}
		if t := s.Throttle; t != nil {
			fmt.Fprintf(&b, ", throttled %d of %d periods (%.0f %%, %.2f s), quota use %.0f %%", t.Throttled, t.Periods, 100*t.Share(), t.ThrottledS, 100*t.QuotaUse)
		}
		if s.GeneratorBound {
			b.WriteString(" [generator-bound: " + s.GeneratorNote + "]")
		}
		return b.String()
	case EventStop:
		if e.Iteration == 0 {
			head = fmt.Sprintf("[%d/%d] live target", e.Done, e.Total)
		}
		if e.Err != nil {
			return fmt.Sprintf("%s: stopped: %v", head, e.Err)
		}
		return fmt.Sprintf("%s: stopped", head)
	case EventCgroup:
		return fmt.Sprintf("[%d/%d] %s", e.Done, e.Total, e.Message)
	case EventResumed:
		return fmt.Sprintf("[%d/%d] resuming: %d steps already done", e.Done, e.Total, e.Done)
	case EventFinished:
		return fmt.Sprintf("[%d/%d] sweep finished", e.Done, e.Total)
	}
	return ""
}
