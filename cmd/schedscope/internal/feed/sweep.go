package feed

import (
	"fmt"
	"time"

	"github.com/schedscope/schedscope/internal/sweep"
	"github.com/schedscope/schedscope/internal/tui"
)

// SweepMapper turns a GOMAXPROCS sweep's progress events into the sweep
// view's events. It remembers the running phase (its length and live
// figures), so each view event is complete. Use one SweepMapper per sweep,
// from the goroutine that delivers the events.
type SweepMapper struct {
	// Dir is the sweep directory, shown when the sweep finishes.
	Dir  string
	last tui.SweepEvent
}

// Map returns the view event for e.
func (m *SweepMapper) Map(e sweep.Event) tui.SweepEvent {
	v := m.last
	v.Row, v.Err, v.Finished = nil, "", false
	v.Done, v.Total = e.Done, e.Total
	if e.Index > 0 {
		v.Step = e.Index
	}
	if e.GOMAXPROCS > 0 {
		v.GOMAXPROCS, v.Iteration = e.GOMAXPROCS, e.Iteration
	}
	if e.Rate > 0 || e.Users > 0 {
		v.Rate, v.Users = e.Rate, e.Users
	}
	if e.Line.Model != "" || !e.Line.Set.IsZero() || e.Line.CPULimit > 0 || (e.Iteration > 0 && e.Line.GOMAXPROCS == 0) {
		v.Line = e.Label // a CPU limit or an auto GOMAXPROCS is named only in the label
	}
	switch e.Kind {
	case sweep.EventStart:
		v.Status, v.Elapsed, v.Duration, v.LiveOKPerSec, v.LiveP99 = "starting target", 0, 0, 0, 0
		if e.PID > 0 {
			v.Status = fmt.Sprintf("starting target (pid %d)", e.PID)
		}
	case sweep.EventReady:
		v.Status = "target answers"
	case sweep.EventWarmup:
		v.Status, v.Elapsed, v.Duration = "warm-up", 0, e.Duration
	case sweep.EventPhase:
		v.Status, v.Elapsed, v.Duration, v.LiveOKPerSec, v.LiveP99 = "measuring", 0, e.Duration, 0, 0
	case sweep.EventTick:
		if t := e.Tick; t != nil {
			v.Elapsed, v.Duration, v.LiveOKPerSec, v.LiveP99 = t.Elapsed, t.Total, t.OKPerSec, t.P99
		}
	case sweep.EventStep:
		if s := e.Step; s != nil {
			row := tui.SweepRow{GOMAXPROCS: s.GOMAXPROCS, Iteration: s.Iteration, Line: v.Line, Users: s.Users, Rate: s.Rate, OKPerSec: s.OKPerSec,
				P50: msDuration(s.P50MS), P99: msDuration(s.P99MS), Errors: s.Errors, NotSent: s.NotSent}
			if s.GeneratorBound {
				row.Note = "generator-bound: " + s.GeneratorNote
			}
			if s.Throttle != nil {
				row.Quota, row.Throttled = true, s.Throttle.Share()
			}
			v.Row = &row
		}
		v.Status = "step written"
	case sweep.EventStop:
		v.Status = "target stopped"
	case sweep.EventResumed:
		v.Status = fmt.Sprintf("resumed: %d steps already done", e.Done)
	case sweep.EventFinished:
		v.Status, v.Finished, v.Dir = "finished", true, m.Dir
	}
	if e.Err != nil {
		v.Err = e.Err.Error()
	}
	m.last = v
	return v
}

// msDuration is v milliseconds as a Duration.
func msDuration(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
