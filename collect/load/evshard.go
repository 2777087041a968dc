package load

import (
	"runtime"
	"sync/atomic"
)

// maxEvLoops bounds the event loops of one run: past the machine's cores
// more loops only add threads that compete for them.
const maxEvLoops = 64

// evLoopCount is how many event loops a run uses, as measured on a
// 2-vCPU machine shared with its target (bench/README.md, "Event loops per
// generator"):
//
//   - open model: one per P of the generator (GOMAXPROCS), at most the
//     in-flight cap. When the OS does not run a loop's thread for a few
//     milliseconds, the others keep sending and the catch-up is shared:
//     at 20,000 req/s two loops cut the send lag p99 under contention
//     (median 96 ms against 143 over 10 runs each at load 5-8; 8 and 31 ms
//     against 204 and 239 at load 6-7), for about 40 % more CPU per request.
//   - closed model: one per two Ps, at most one per user. At full speed two
//     loops on 2 Ps cost 17-19.5 us of CPU per request against one loop's
//     11.3-12.4 us, for the same throughput: each loop waits, and is woken,
//     about twice as often, while the target on the same cores, not the
//     loop, bounded the throughput.
func evLoopCount(cfg *Config) int {
	procs := runtime.GOMAXPROCS(0)
	if cfg.Users > 0 {
		return max(1, min(procs/2, cfg.Users, maxEvLoops))
	}
	return max(1, min(procs, cfg.MaxInflight, maxEvLoops))
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
