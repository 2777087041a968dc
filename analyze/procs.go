package analyze

import (
	"cmp"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

type procState struct {
	seen    bool
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
	procs      []procState // by ProcID (Ps are numbered from 0)
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
		threads:    make(map[trace.ThreadID]struct{}),
		ranges:     make(map[rangeKey]trace.Time),
		lastThread: trace.NoThread,
	}
}

// maxProcs bounds the P table (GOMAXPROCS is at most 2^30 in theory; real
// traces have Ps numbered 0..GOMAXPROCS-1 and a corrupt one may have any).
const maxProcs = 1 << 16

// clock notes the time and thread of every event.
func (a *procAcc) clock(t trace.Time, th trace.ThreadID) {
	if !a.started {
		a.t0, a.started = t, true
	}
	a.lastT = t
	if th != a.lastThread && th != trace.NoThread {
		a.lastThread = th
		a.threads[th] = struct{}{}
	}
}

// procTransition handles a P state transition.
func (a *procAcc) procTransition(t trace.Time, st *trace.StateTransition) {
	id := st.Resource.Proc()
	if id < 0 || id >= maxProcs {
		return
	}
	_, to := st.Proc()
	for int(id) >= len(a.procs) {
		a.procs = append(a.procs, procState{})
	}
	p := &a.procs[id]
	p.seen = true
	if p.running && to != trace.ProcRunning {
		p.busy += int64(t - p.since)
		p.running = false
	} else if !p.running && to == trace.ProcRunning {
		p.running, p.since = true, t
	}
}

// Event handles metrics and ranges.
func (a *procAcc) Event(ev *trace.Event) {
	t := ev.Time()
	switch ev.Kind() {
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
		if !p.seen {
			continue
		}
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
