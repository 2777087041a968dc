//go:build linux && (amd64 || arm64)

package load

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// evLoops is the event-loop engine: n loops, each with its own epoll,
// connections and shard, each running a shard of the schedule (open model:
// arrival k of a phase runs on loop k mod n; closed model: user u on loop
// u mod n), so the generator is not bounded by one core. They share the
// run's counters (atomics), its in-flight cap (acquireSlot) and its
// request numbers; the collector merges their shards as it merges the
// goroutine engine's.
type evLoops struct {
	loops []*evLoop
	slack int // the loops' threads' timer slack in ns (loopTimerSlack); 0: the default
}

// newEvLoops sets up n loops, recording into r.shards[0:n]; an error means
// the runner uses goroutines instead.
func newEvLoops(r *runner, n int) (*evLoops, error) {
	g := &evLoops{slack: loopTimerSlack(r.cfg, n)}
	for id := range n {
		l, err := newEvLoop(r, id, n)
		if err != nil {
			g.close()
			return nil, err
		}
		l.precise = g.slack > 0
		g.loops = append(g.loops, l)
	}
	return g, nil
}

// count is the number of loops.
func (g *evLoops) count() int { return len(g.loops) }

// each runs f on every loop at once, the first on the calling goroutine
// and the others on goroutines of their own, and returns when all have
// returned.
func (g *evLoops) each(f func(l *evLoop)) {
	var wg sync.WaitGroup
	for _, l := range g.loops[1:] {
		wg.Go(func() { g.onLoopThread(func() { f(l) }) })
	}
	g.onLoopThread(func() { f(g.loops[0]) })
	wg.Wait()
}

// onLoopThread runs f on an OS thread of its own whose timer slack is
// g.slack, then restores the thread's slack; with no slack set it just
// runs f.
func (g *evLoops) onLoopThread(f func()) {
	if g.slack <= 0 {
		f()
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil {
		if unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(g.slack), 0, 0, 0) == nil {
			defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0)
		}
	}
	f()
}

// pace runs an open phase on every loop.
func (g *evLoops) pace(ps *phaseState, start, end int64) {
	g.each(func(l *evLoop) { l.pace(ps, start, end) })
}

// closedPace runs a closed-model phase on every loop.
func (g *evLoops) closedPace(ps *phaseState, end int64) {
	g.each(func(l *evLoop) { l.closedPace(ps, end) })
}

// serveUntil serves responses on every loop until end, or, with
// untilIdle, until each loop has nothing in flight.
func (g *evLoops) serveUntil(end int64, untilIdle bool) {
	g.each(func(l *evLoop) { l.serveUntil(end, untilIdle) })
}

// shutdown closes every loop's connections; no loop is running.
func (g *evLoops) shutdown() {
	for _, l := range g.loops {
		l.shutdown()
	}
}

// close releases every loop's descriptors.
func (g *evLoops) close() {
	for _, l := range g.loops {
		l.close()
	}
}
