package pintest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	rtrace "runtime/trace"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/exp/trace"

	"github.com/schedscope/schedscope/analyze"
)

// logCategory is the runtime/trace.Log category of the helper's marks: the
// control's goroutines and the bounds of f's run.
const logCategory = "schedscope.pintest"

// The marks' messages.
const (
	markLocked  = "control locked"  // on the locked control's goroutine, after LockOSThread
	markSyscall = "control syscall" // on the syscall control's goroutine
	markBegin   = "f begin"         // on f's goroutine, right before f
	markEnd     = "f end"           // on f's goroutine, after f returned, panicked or called Goexit
)

// controlWakeups is how many times the locked control resumes on its
// thread; the analysis is told the same (analyze.Options.MinLockedWakeups),
// so the control is caught by inference alone, as an unannotated
// LockOSThread in f's code would have to be.
const controlWakeups = 3

// measure is Check after its arguments are checked.
func measure(f func(), cfg config) (*Result, error) {
	var buf bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		return nil, fmt.Errorf("pintest: cannot start an execution trace, so nothing can be measured (another trace is running: go test -trace, /debug/pprof/trace, or a parallel test?): %w", err)
	}
	hold := 2 * cfg.threshold
	kinds := cfg.control(hold)
	out := runF(f)
	rtrace.Stop()

	rep, err := analyze.Trace(context.Background(), bytes.NewReader(buf.Bytes()),
		analyze.Options{PinThreshold: cfg.threshold, MinLockedWakeups: controlWakeups})
	if err != nil {
		return nil, fmt.Errorf("pintest: analyzing the trace (%d bytes): %w", buf.Len(), err)
	}
	m, err := scanMarks(buf.Bytes(), cfg.expect)
	if err != nil {
		return nil, fmt.Errorf("pintest: reading the trace's marks (%d bytes): %w", buf.Len(), err)
	}
	if !m.begun || !m.ended {
		return nil, fmt.Errorf("pintest: the trace (%d bytes) lacks f's begin or end mark: cannot tell when f ran", buf.Len())
	}
	r := &Result{
		Threshold: cfg.threshold,
		Control:   Control{Kinds: kinds, Hold: hold},
		Ran: Ran{
			Returned: out.returned, Panic: out.panic, Goexit: !out.returned && out.panic == "",
			Goroutine: int64(m.fGo), Start: m.begin, End: m.end, Wall: out.wall,
			Events: m.events, Goroutines: m.goroutines, Expected: m.expected,
		},
		Report: rep,
	}
	for _, e := range rep.Pinned.Events {
		p := pinOf(e)
		if _, ok := m.control[e.GoID]; ok {
			r.Control.Caught = append(r.Control.Caught, p)
			continue
		}
		if p.Start <= m.end && p.Start+p.Duration >= m.begin {
			r.Pins = append(r.Pins, p)
		}
	}
	for _, k := range kinds {
		caught := slices.ContainsFunc(r.Control.Caught, func(p Pin) bool {
			return p.Kind == k && m.control[p.Goroutine] == k && p.Duration >= cfg.threshold
		})
		if !caught {
			r.Control.Missed = append(r.Control.Missed, k)
		}
	}
	return r, nil
}

func pinOf(e analyze.PinnedEvent) Pin {
	return Pin{
		Kind: e.Kind, Duration: time.Duration(e.DurationNs), Start: time.Duration(e.StartNs),
		Goroutine: e.GoID, Target: e.Target, Site: analyze.Frame{Func: e.Func, File: e.File, Line: e.Line},
		Stack: e.Stack, Truncated: e.Truncated,
	}
}

// runControl pins OS threads for hold in every way this platform allows, at
// once, each on a goroutine that marks itself in the trace, and returns the
// kinds once they have all ended.
func runControl(hold time.Duration) []string {
	kinds := []string{"locked"}
	var wg sync.WaitGroup
	wg.Go(func() { lockedControl(hold) })
	if syscallSleepAvailable {
		kinds = append(kinds, "syscall")
		wg.Go(func() {
			rtrace.Log(context.Background(), logCategory, markSyscall)
			syscallSleep(hold)
		})
	}
	wg.Wait()
	return kinds
}

// lockedControl locks its goroutine to its thread and blocks for hold, then
// for a millisecond until it has resumed controlWakeups times on that thread.
func lockedControl(hold time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rtrace.Log(context.Background(), logCategory, markLocked)
	time.Sleep(hold)
	for range controlWakeups - 1 {
		time.Sleep(time.Millisecond)
	}
}

// fOutcome is how f's call ended.
type fOutcome struct {
	returned bool
	panic    string // the value and stack, when it panicked
	wall     time.Duration
}

// runF calls f on a goroutine of its own between two marks and waits for it
// to return, panic or call runtime.Goexit.
func runF(f func()) fOutcome {
	done := make(chan fOutcome, 1)
	go func() {
		var o fOutcome
		start := time.Now()
		defer func() {
			if !o.returned {
				if v := recover(); v != nil {
					o.panic = fmt.Sprintf("%v\n%s", v, debug.Stack())
				}
			}
			o.wall = time.Since(start)
			rtrace.Log(context.Background(), logCategory, markEnd)
			done <- o
		}()
		rtrace.Log(context.Background(), logCategory, markBegin)
		f()
		o.returned = true
	}()
	return <-done
}

// marks is what scanMarks read from a trace.
type marks struct {
	control      map[int64]string // the control's goroutines: kind by id
	fGo          trace.GoID
	begun, ended bool
	begin, end   time.Duration // f's run, since the first event
	events       int64         // in f's run, the control's excepted
	goroutines   int
	expected     []Sighting
}

// scanMarks reads the helper's marks from a trace, and in f's run counts the
// events and looks for the expected functions in every stack. Its times are
// since the trace's first event, as analyze.Report's are.
func scanMarks(data []byte, expect []string) (marks, error) {
	m := marks{control: map[int64]string{}}
	for _, e := range expect {
		m.expected = append(m.expected, Sighting{Want: e})
	}
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		return m, err
	}
	var (
		t0     trace.Time
		first  = true
		inRun  bool
		seenGo = map[trace.GoID]bool{}
		unseen = len(expect)
	)
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return m, err
		}
		if first {
			t0, first = ev.Time(), false
		}
		at := time.Duration(ev.Time() - t0)
		if ev.Kind() == trace.EventLog {
			if l := ev.Log(); l.Category == logCategory {
				switch l.Message {
				case markLocked:
					m.control[int64(ev.Goroutine())] = "locked"
				case markSyscall:
					m.control[int64(ev.Goroutine())] = "syscall"
				case markBegin:
					m.fGo, m.begun, m.begin, inRun = ev.Goroutine(), true, at, true
					seenGo[m.fGo] = true
				case markEnd:
					if ev.Goroutine() == m.fGo {
						m.ended, m.end, inRun = true, at, false
					}
				}
				continue
			}
		}
		if !inRun {
			continue
		}
		if g := ev.Goroutine(); g != trace.NoGoroutine {
			if _, ctl := m.control[int64(g)]; ctl {
				continue
			}
			seenGo[g] = true
		}
		m.events++
		if unseen == 0 {
			continue
		}
		unseen -= m.look(ev.Stack(), ev.Goroutine(), at)
		if ev.Kind() == trace.EventStateTransition {
			st := ev.StateTransition()
			if st.Resource.Kind == trace.ResourceGoroutine {
				unseen -= m.look(st.Stack, st.Resource.Goroutine(), at)
			}
		}
	}
	m.goroutines = len(seenGo)
	return m, nil
}

// look marks the expected functions that stack s (of goroutine g, at at)
// holds, and returns how many it newly found.
func (m *marks) look(s trace.Stack, g trace.GoID, at time.Duration) int {
	if s == trace.NoStack {
		return 0
	}
	found := 0
	for f := range s.Frames() {
		for i := range m.expected {
			x := &m.expected[i]
			if !x.Seen && strings.Contains(f.Func, x.Want) {
				x.Seen, x.Goroutine, x.At = true, int64(g), at
				x.Frame = analyze.Frame{Func: f.Func, File: f.File, Line: int64(f.Line)}
				found++
			}
		}
	}
	return found
}
