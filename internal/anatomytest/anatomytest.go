// Package anatomytest reads the request-anatomy annotations that
// collect/agent writes (request tasks, their logs, wait and work regions)
// out of an execution trace, for tests that check a target writes them as
// the trace analyzer expects. It holds a whole (small) trace's annotations
// in memory; it is not the analyzer.
//
// It lives in the main module because it needs golang.org/x/exp/trace,
// which the agent's own module does not depend on.
package anatomytest

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/exp/trace"
)

// Task is one runtime/trace task.
type Task struct {
	ID   trace.TaskID
	Type string
	// Goroutine began the task.
	Goroutine trace.GoID
	// Ended says whether the task's end is in the trace.
	Ended bool
}

// Log is one runtime/trace log.
type Log struct {
	Task      trace.TaskID
	Goroutine trace.GoID
	Time      trace.Time
	Category  string
	Message   string
}

// Region is one runtime/trace region, its begin paired with its end on the
// same goroutine.
type Region struct {
	Task      trace.TaskID
	Type      string
	Goroutine trace.GoID
	Begin     trace.Time
	// End is when the region ended; zero when Ended is false.
	End trace.Time
	// Ended says whether the region's end is in the trace.
	Ended bool
}

// Annotations are a trace's tasks, logs and regions, each in the order they
// began.
type Annotations struct {
	Tasks   []Task
	Logs    []Log
	Regions []Region
}

// Read parses the execution trace r and returns its annotations. A region
// end that does not match the innermost open region of its goroutine (a
// region ended on another goroutine than the one that began it) is an
// error, as is an unreadable trace; so the trace must have started before
// any region in it began.
func Read(r io.Reader) (*Annotations, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	a := &Annotations{}
	tasks := map[trace.TaskID]int{} // index in a.Tasks
	open := map[trace.GoID][]int{}  // open regions per goroutine, indexes in a.Regions
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			return a, nil
		}
		if err != nil {
			return nil, fmt.Errorf("trace: %w", err)
		}
		g := ev.Goroutine()
		switch ev.Kind() {
		case trace.EventTaskBegin:
			t := ev.Task()
			tasks[t.ID] = len(a.Tasks)
			a.Tasks = append(a.Tasks, Task{ID: t.ID, Type: t.Type, Goroutine: g})
		case trace.EventTaskEnd:
			if i, ok := tasks[ev.Task().ID]; ok {
				a.Tasks[i].Ended = true
			}
		case trace.EventLog:
			l := ev.Log()
			a.Logs = append(a.Logs, Log{Task: l.Task, Goroutine: g, Time: ev.Time(), Category: l.Category, Message: l.Message})
		case trace.EventRegionBegin:
			rg := ev.Region()
			open[g] = append(open[g], len(a.Regions))
			a.Regions = append(a.Regions, Region{Task: rg.Task, Type: rg.Type, Goroutine: g, Begin: ev.Time()})
		case trace.EventRegionEnd:
			rg := ev.Region()
			stack := open[g]
			if len(stack) == 0 {
				return nil, fmt.Errorf("trace: region %q (task %d) ended on goroutine %d, which has none open", rg.Type, rg.Task, g)
			}
			i := stack[len(stack)-1]
			if top := a.Regions[i]; top.Type != rg.Type || top.Task != rg.Task {
				return nil, fmt.Errorf("trace: region %q (task %d) ended on goroutine %d inside region %q (task %d)", rg.Type, rg.Task, g, top.Type, top.Task)
			}
			open[g] = stack[:len(stack)-1]
			a.Regions[i].End, a.Regions[i].Ended = ev.Time(), true
		}
	}
}

// TasksOfType returns the tasks of type typ, in the order they began.
func (a *Annotations) TasksOfType(typ string) []Task {
	var out []Task
	for _, t := range a.Tasks {
		if t.Type == typ {
			out = append(out, t)
		}
	}
	return out
}

// LogsOf returns task's logs of category, in order.
func (a *Annotations) LogsOf(task trace.TaskID, category string) []Log {
	var out []Log
	for _, l := range a.Logs {
		if l.Task == task && l.Category == category {
			out = append(out, l)
		}
	}
	return out
}

// RegionsOf returns task's regions of type typ, in the order they began.
func (a *Annotations) RegionsOf(task trace.TaskID, typ string) []Region {
	var out []Region
	for _, r := range a.Regions {
		if r.Task == task && r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}
