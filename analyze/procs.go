package analyze

import (
	"cmp"
	"slices"

	"golang.org/x/exp/trace"
)

type procState struct {
	seen    bool
	running bool
	since   trace.Time
	busy    int64
}

type rangeKey struct {
	kind      uint8 // rangeGCMark, rangeSTW, rangeAssist
	scopeKind uint8 // the scope's trace.ResourceKind
	scope     int64 // the scope's goroutine, P or thread
}

// procAcc follows Ps, GOMAXPROCS, threads seen, GC and stop-the-world
// ranges. Not safe for concurrent use.
type procAcc struct {
	procs      []procState // by ProcID (Ps are numbered from 0)
	gomaxprocs int64
	changes    []GOMAXPROCSChange
	threads    *threadIndex
	lastThread trace.ThreadID
	ranges     map[rangeKey]trace.Time
	gc         GCReport
	t0, lastT  trace.Time
	started    bool
}

func newProcAcc() *procAcc {
	return &procAcc{
		threads:    newThreadIndex(),
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
		a.threads.index(th)
	}
}

// procTransition handles a P state transition.
func (a *procAcc) procTransition(r *record) {
	id, t := trace.ProcID(r.id), r.t
	if id < 0 || id >= maxProcs {
		return
	}
	to := trace.ProcState(r.to)
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

// event handles the GOMAXPROCS metric and the GC and stop-the-world ranges.
func (a *procAcc) event(r *record) {
	t := r.t
	switch r.kind {
	case recGOMAXPROCS:
		if v := r.arg; v != a.gomaxprocs {
			a.gomaxprocs = v
			a.changes = append(a.changes, GOMAXPROCSChange{TNs: int64(t - a.t0), Value: v})
		}
	case recRangeBegin, recRangeActive, recRangeEnd:
		kind := r.sub
		key := rangeKey{kind: kind, scopeKind: r.flags, scope: r.id}
		if r.kind != recRangeEnd {
			a.ranges[key] = t
			if r.kind == recRangeBegin {
				switch kind {
				case rangeGCMark:
					a.gc.Count++
				case rangeSTW:
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
		case rangeGCMark:
			a.gc.MarkNs += d
		case rangeSTW:
			a.gc.STWNs += d
			a.gc.STWMaxNs = max(a.gc.STWMaxNs, d)
		case rangeAssist:
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
	r.Threads.Seen = int64(a.threads.len())
	r.GC = a.gc
}
