package analyze

import "time"

// timelineMaxPoints bounds the timeline: past it, neighbouring points merge
// and the step doubles.
const timelineMaxPoints = 2048

// timeline accumulates TimePoints: each holds the maximum of each value
// within its step. Not safe for concurrent use.
type timeline struct {
	step   int64
	points []TimePoint
	cur    TimePoint // the step being filled
	last   TimePoint // the latest state observed
	curIdx int64
	have   bool
}

func (tl *timeline) init(step time.Duration) {
	tl.step = int64(step)
	if tl.step <= 0 {
		tl.step = int64(10 * time.Millisecond)
	}
}

// observe records the state at time t (ns since the trace start). It runs
// on every goroutine transition: fields are set one by one (building a
// TimePoint and copying it stalled on store forwarding, 2 % of an analysis).
func (tl *timeline) observe(t, alive, runnable, running, sys int64) {
	tl.have = true
	for t >= (tl.curIdx+1)*tl.step {
		tl.flush()
		tl.curIdx++
		tl.cur = tl.last
		tl.cur.TNs = tl.curIdx * tl.step
	}
	l := &tl.last
	l.Goroutines, l.Runnable, l.Running, l.Syscall, l.Threads = int32(alive), int32(runnable), int32(running), int32(sys), int32(running+sys)
	p := &tl.cur
	p.Goroutines = max(p.Goroutines, l.Goroutines)
	p.Runnable = max(p.Runnable, l.Runnable)
	p.Running = max(p.Running, l.Running)
	p.Syscall = max(p.Syscall, l.Syscall)
	p.Threads = max(p.Threads, l.Threads)
}

// flush appends the current point.
func (tl *timeline) flush() {
	tl.points = append(tl.points, tl.cur)
	if len(tl.points) >= timelineMaxPoints {
		tl.coarsen()
	}
}

func (tl *timeline) coarsen() {
	n := 0
	for i := 0; i < len(tl.points); i += 2 {
		p := tl.points[i]
		if i+1 < len(tl.points) {
			q := tl.points[i+1]
			p.Goroutines = max(p.Goroutines, q.Goroutines)
			p.Runnable = max(p.Runnable, q.Runnable)
			p.Running = max(p.Running, q.Running)
			p.Syscall = max(p.Syscall, q.Syscall)
			p.Threads = max(p.Threads, q.Threads)
		}
		p.TNs = int64(n) * tl.step * 2
		tl.points[n] = p
		n++
	}
	tl.points = tl.points[:n]
	tl.step *= 2
	tl.curIdx = int64(n) - 1
}

func (tl *timeline) result() Timeline {
	out := Timeline{StepNs: tl.step, Points: []TimePoint{}}
	if tl.have {
		out.Points = append(out.Points, tl.points...)
		c := tl.cur
		c.TNs = int64(len(out.Points)) * tl.step
		out.Points = append(out.Points, c)
	}
	return out
}
