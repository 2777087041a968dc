package analyze

import (
	"cmp"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

type procState struct {
	running bool
	since   trace.Time
	busy    int64
}

type rangeKey struct {
	kind uint8 // 0 GC mark, 1 STW, 2 assist
	res  trace.ResourceID
}

// procAcc follows Ps, GOMAXPROCS, threads seen, GC and stop-the-world
// ranges. Not safe for concurrent use.
type procAcc struct {
	procs      map[trace.ProcID]*procState
	gomaxprocs int64
	changes    []GOMAXPROCSChange
	threads    map[trace.ThreadID]struct{}
	lastThread trace.ThreadID
	ranges     map[rangeKey]trace.Time
	gc         GCReport
	t0, lastT  trace.Time
	started    bool
}

func newProcAcc() *procAcc {
	return &procAcc{
		procs:      make(map[trace.ProcID]*procState),
		threads:    make(map[trace.ThreadID]struct{}),
		ranges:     make(map[rangeKey]trace.Time),
		lastThread: trace.NoThread,
	}
}

// Event feeds one event.
func (a *procAcc) Event(ev *trace.Event) {
	t := ev.Time()
	if !a.started {
		a.t0, a.started = t, true
	}
	a.lastT = t
	if th := ev.Thread(); th != a.lastThread && th != trace.NoThread {
		a.lastThread = th
		a.threads[th] = struct{}{}
	}
	switch ev.Kind() {
	case trace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceProc {
			return
		}
		id := st.Resource.Proc()
		_, to := st.Proc()
		p := a.procs[id]
		if p == nil {
			p = new(procState)
			a.procs[id] = p
		}
		if p.running && to != trace.ProcRunning {
			p.busy += int64(t - p.since)
			p.running = false
		} else if !p.running && to == trace.ProcRunning {
			p.running, p.since = true, t
		}
	case trace.EventMetric:
		m := ev.Metric()
		if m.Name != "/sched/gomaxprocs:threads" || m.Value.Kind() != trace.ValueUint64 {
			return
		}
		v := int64(m.Value.Uint64())
		if v != a.gomaxprocs {
			a.gomaxprocs = v
			a.changes = append(a.changes, GOMAXPROCSChange{TNs: int64(t - a.t0), Value: v})
		}
	case trace.EventRangeBegin, trace.EventRangeActive, trace.EventRangeEnd:
		r := ev.Range()
		var kind uint8
		switch {
		case r.Name == "GC concurrent mark phase":
			kind = 0
		case strings.HasPrefix(r.Name, "stop-the-world"):
			kind = 1
		case r.Name == "GC mark assist":
			kind = 2
		default:
			return
		}
		key := rangeKey{kind, r.Scope}
		if ev.Kind() != trace.EventRangeEnd {
			a.ranges[key] = t
			if ev.Kind() == trace.EventRangeBegin {
				switch kind {
				case 0:
					a.gc.Count++
				case 1:
					a.gc.STWCount++
				}
			}
			return
		}
		begin, ok := a.ranges[key]
		if !ok {
			return
		}
		delete(a.ranges, key)
		d := int64(t - begin)
		switch kind {
		case 0:
			a.gc.MarkNs += d
		case 1:
			a.gc.STWNs += d
			a.gc.STWMaxNs = max(a.gc.STWMaxNs, d)
		case 2:
			a.gc.AssistNs += d
		}
	}
}

func (a *procAcc) result(r *Report) {
	dur := int64(a.lastT - a.t0)
	r.Procs.GOMAXPROCS = a.gomaxprocs
	r.Procs.Changes = append([]GOMAXPROCSChange{}, a.changes...)
	r.Procs.Utilisation = []ProcUse{}
	for id, p := range a.procs {
		busy := p.busy
		if p.running {
			busy += int64(a.lastT - p.since)
		}
		u := ProcUse{Proc: int64(id), RunningNs: busy}
		if dur > 0 {
			u.Fraction = float64(busy) / float64(dur)
		}
		r.Procs.Utilisation = append(r.Procs.Utilisation, u)
	}
	slices.SortFunc(r.Procs.Utilisation, func(x, y ProcUse) int { return cmp.Compare(x.Proc, y.Proc) })
	r.Threads.Seen = int64(len(a.threads))
	r.GC = a.gc
}
