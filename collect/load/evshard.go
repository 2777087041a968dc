package load

import (
	"runtime"
	"sync/atomic"
)

// maxEvLoops bounds the event loops of one run: past the machine's cores
// more loops only add threads that compete for them.
const maxEvLoops = 64

// evLoopCount is how many event loops a run uses: one per P of the
// generator (GOMAXPROCS), and no more than there are connections to share
// out (the closed model's users, the open model's in-flight cap). On the
// 2-vCPU benchmark machine two loops beat one at full speed and in the
// open model's send lag (bench/README.md, "Event loops per generator").
func evLoopCount(cfg *Config) int {
	conns := cfg.MaxInflight
	if cfg.Users > 0 {
		conns = cfg.Users
	}
	return max(1, min(runtime.GOMAXPROCS(0), conns, maxEvLoops))
}

// loopSchedule is one event loop's shard of an open-model phase's
// schedule: of the arrivals the pacer yields, numbered from 0, the loop
// sends arrival k when k mod n is its id. The n loops' schedules are
// disjoint, and their union is exactly the single schedule, Poisson
// arrivals included (every loop draws the whole sequence from the same
// seed and keeps its share).
type loopSchedule struct {
	p     *pacer
	id, n int64
	k     int64 // the number of the pacer's next arrival
}

func newLoopSchedule(p *pacer, id, n int) *loopSchedule {
	return &loopSchedule{p: p, id: int64(id), n: int64(n)}
}

// next returns the loop's next intended send time and advances.
func (s *loopSchedule) next() int64 {
	for {
		t := s.p.next()
		k := s.k
		s.k++
		if k%s.n == s.id {
			return t
		}
	}
}

// loopShare is how many of total users (numbered from 0) run on loop id
// of n: user u runs on loop u mod n.
func loopShare(total, id, n int) int {
	share := total / n
	if id < total%n {
		share++
	}
	return share
}

// acquireSlot takes one of limit in-flight slots counted by inflight,
// reporting false, and taking nothing, when all are taken. The loops share
// one cap: a load-then-add would let n loops overshoot it by n-1.
func acquireSlot(inflight *atomic.Int64, limit int64) bool {
	for {
		n := inflight.Load()
		if n >= limit {
			return false
		}
		if inflight.CompareAndSwap(n, n+1) {
			return true
		}
	}
}
