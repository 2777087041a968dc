package load

import (
	"math"
	"runtime"
	"sync/atomic"
)

// maxEvLoops bounds the event loops of one run (each holds an epoll, an
// eventfd and a thread while it waits) when GOMAXPROCS is set far above
// the machine's cores (--procs allows 1024).
const maxEvLoops = 64

// loopRate is the open-model rate (req/s) given to each event loop. One
// loop costs 20-30 us of CPU per request at 20,000 req/s on the benchmark
// machine: at 25,000 req/s it is busy about 60 % of a core, and works off
// the burst after a stall of its thread faster than new arrivals come.
const loopRate = 25000

// evLoopCount is how many event loops a run uses, as measured on a
// 2-vCPU machine shared with its target (bench/README.md, "Event loops per
// generator"), each model at most one loop per P (GOMAXPROCS):
//
//   - open model: one per loopRate of the highest rate, at most one per
//     in-flight slot. At 20,000 req/s two loops cost 40-50 % more CPU per
//     request than one (each loop wakes for its own sends, half as often,
//     and finds fewer responses to read with them), and their send lag
//     p99 was lower in only 20 of 36 paired runs.
//   - closed model: one per two Ps, at most one per user. At full speed two
//     loops on 2 Ps cost 17-19.5 us of CPU per request against one loop's
//     11.3-12.4 us, for the same throughput: each loop waits, and is woken,
//     about twice as often, while the target on the same cores, not the
//     loop, bounded the throughput.
func evLoopCount(cfg *Config) int {
	procs := min(runtime.GOMAXPROCS(0), maxEvLoops)
	if cfg.Users > 0 {
		return max(1, min(procs/2, cfg.Users))
	}
	return max(1, min(int(math.Ceil(ownTopRate(cfg)/loopRate)), procs, cfg.MaxInflight))
}

// ownTopRate is the highest rate this generator sends itself: its shard's
// share of the schedule's highest rate.
func ownTopRate(cfg *Config) float64 {
	return maxOf(cfg.Rates) / float64(max(cfg.Shard.Count, 1))
}

// preciseLoopRate is the rate (req/s) of one open-model loop up to which
// the loop asks the kernel for precise timeouts (loopTimerSlack). Measured
// on 2 vCPUs (bench/README.md): at 2,500 req/s on one loop the default
// 50-us slack added about 60 us to every send (latency p50 0.17-0.19 ms
// against 0.11-0.13 ms precise) at the same CPU per request; at 20,000
// req/s, sends 50 us apart, the p50 was the same either way and precise
// timeouts cost 14 % more CPU per request (25.4 against 22.3 us).
const preciseLoopRate = 10000

// loopTimerSlack is the timer slack (ns) of a loop's thread when it paces
// at most preciseLoopRate: how late the kernel may end its epoll_pwait2
// timeouts to coalesce wake-ups. 0: the thread's default (50 us), kept in
// the closed model, whose loops wait for responses rather than for times.
func loopTimerSlack(cfg *Config, loops int) int {
	if cfg.Users > 0 || ownTopRate(cfg)/float64(max(loops, 1)) > preciseLoopRate {
		return 0
	}
	return 1000
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
