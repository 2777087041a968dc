package analyze

import (
	"math/bits"

	"golang.org/x/exp/trace"
)

// compatKind is one of cmd/trace's pprof-like profiles.
type compatKind uint8

const (
	compatSched   compatKind = iota // -pprof=sched: Runnable
	compatSyscall                   // -pprof=syscall: Syscall
	compatSync                      // -pprof=sync: Waiting on chan, select or sync
	compatNet                       // -pprof=net: Waiting on the network
	numCompat
)

// compatG is the per-goroutine state of compatAcc. It is pointer-free.
type compatG struct {
	// The goroutine's life as cmd/trace's summarizer sees it: the first
	// time it ran and the time it ended (0 when not yet).
	started bool
	startT  trace.Time
	endT    trace.Time

	open    [numCompat]trace.Time // when the tracked interval opened
	tracked uint8                 // bit k: an interval of kind k is open
	// pending holds intervals that closed before the goroutine ever ran:
	// they count only if it never runs (cmd/trace then clips to [0, end]).
	pending [numCompat]Totals
}

// compatAcc computes the totals of `go tool trace -pprof=sched|syscall|sync|net`
// in one streaming pass.
//
// cmd/trace (src/cmd/trace/pprof.go, makeComputePprofFunc) opens an interval
// when a goroutine transitions into the target state (for a matching reason),
// closes it at the goroutine's next transition to another state, drops
// intervals still open at the end, and clips each closed interval to
// [first start, end or last event] from its summarizer; only positive
// overlaps count. compatAcc follows that rule exactly. Not safe for
// concurrent use.
type compatAcc struct {
	idx *goIndex
	gs  []compatG // by goIndex slot
	tot [numCompat]Totals
}

func newCompatAcc(idx *goIndex) *compatAcc {
	return &compatAcc{idx: idx}
}

// compatKindOf returns the profile that tracks a goroutine entering state
// to with wait categories wait (waitFlags of the reason), if any
// (cmd/trace/pprof.go: computePprofSched, -Syscall, -Block and -IO).
func compatKindOf(to trace.GoState, wait uint8) (compatKind, bool) {
	switch to {
	case trace.GoRunnable:
		return compatSched, true
	case trace.GoSyscall:
		return compatSyscall, true
	case trace.GoWaiting:
		if wait&waitNet != 0 {
			return compatNet, true
		}
		if wait&waitSync != 0 {
			return compatSync, true
		}
	}
	return 0, false
}

func compatState(k compatKind) trace.GoState {
	switch k {
	case compatSched:
		return trace.GoRunnable
	case compatSyscall:
		return trace.GoSyscall
	}
	return trace.GoWaiting
}

// transition feeds one goroutine state transition; i is the goroutine's
// goIndex slot, fresh when just assigned.
func (a *compatAcc) transition(r *record, i int32, fresh bool) {
	t := r.t
	from, to := trace.GoState(r.from), trace.GoState(r.to)
	a.gs = grow(a.gs, i)
	g := &a.gs[i]
	if fresh {
		*g = compatG{}
	}

	// The summarizer's view of the goroutine's life (old == new is skipped there).
	if from != to {
		if from == trace.GoUndetermined || from == trace.GoNotExist {
			g.started, g.startT, g.endT = false, 0, 0
		}
		if to == trace.GoRunning && !g.started {
			g.started, g.startT = true, t
			g.pending = [numCompat]Totals{} // they closed at or before t: no overlap
		}
		if to == trace.GoNotExist || (to == trace.GoWaiting && r.flags&waitForever != 0) {
			g.endT = t
		}
	}

	// Close the open intervals whose state the goroutine left (cmd/trace
	// ignores a transition into the state already tracked).
	for open := g.tracked; open != 0; open &= open - 1 {
		k := compatKind(bits.TrailingZeros8(open))
		if to == compatState(k) {
			continue
		}
		g.tracked &^= 1 << k
		lo, hi := g.open[k], t
		if g.endT != 0 && g.endT < hi {
			hi = g.endT
		}
		if !g.started {
			if d := int64(hi - lo); d > 0 {
				g.pending[k].Count++
				g.pending[k].TotalNs += d
			}
			continue
		}
		lo = max(lo, g.startT)
		if d := int64(hi - lo); d > 0 {
			a.tot[k].Count++
			a.tot[k].TotalNs += d
		}
	}
	// Open one for the new state, unless one of that kind is open.
	if k, ok := compatKindOf(to, r.flags); ok && g.tracked&(1<<k) == 0 {
		g.tracked |= 1 << k
		g.open[k] = t
	}

	if to == trace.GoNotExist {
		a.settle(g) // every interval closed: the analyzer releases the slot
	}
}

// settle adds the pending intervals of a goroutine that never ran.
func (a *compatAcc) settle(g *compatG) {
	if g.started {
		return
	}
	for k := range g.pending {
		a.tot[k].Count += g.pending[k].Count
		a.tot[k].TotalNs += g.pending[k].TotalNs
	}
	g.pending = [numCompat]Totals{}
}

// Result returns the totals of each profile, in compatKind order.
func (a *compatAcc) Result() [numCompat]Totals {
	tot := a.tot
	for i, id := range a.idx.ids {
		if id == trace.NoGoroutine {
			continue
		}
		g := a.gs[i]
		if g.started {
			continue
		}
		for k := range g.pending {
			tot[k].Count += g.pending[k].Count
			tot[k].TotalNs += g.pending[k].TotalNs
		}
	}
	return tot
}
