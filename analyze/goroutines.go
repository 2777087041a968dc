package analyze

import (
	"cmp"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

// SleepLogCategory is the runtime/trace.Log category schedscope's fixture
// and sleep probe write, on the sleeping goroutine right before
// time.Sleep(d), with the message strconv.FormatInt(d.Nanoseconds(), 10).
const SleepLogCategory = "schedscope.sleep"

// LockLogCategory is the runtime/trace.Log category a program may write on
// a goroutine right after runtime.LockOSThread (message "lock") and right
// before runtime.UnlockOSThread ("unlock"). LockOSThread leaves no trace
// event; with the annotation a goroutine that locks, blocks once and
// unlocks is reported as locked, which inference cannot tell apart.
const LockLogCategory = "schedscope.lockosthread"

// cause is why a goroutine became Runnable (or why it waits).
type cause uint8

const (
	causeUnknown cause = iota // Runnable since before the trace
	causeCreation
	causeSleep
	causeChan
	causeSelect
	causeSync
	causeNetwork
	causeSyscall // a syscall lost its P
	causePreempted
	causeGosched
	causeGC
	causeSystem
	causeOther
	numCauses
)

var causeNames = [numCauses]string{"unknown", "creation", "sleep", "chan", "select", "sync", "network", "syscall", "preempted", "gosched", "gc", "system", "other"}

// blockCause maps a GoBlock reason (runtime/traceruntime.go,
// traceBlockReasonStrings) to a category.
func blockCause(reason string) cause {
	switch {
	case reason == "sleep":
		return causeSleep
	case strings.HasPrefix(reason, "chan"):
		return causeChan
	case reason == "select":
		return causeSelect
	case reason == "sync" || strings.HasPrefix(reason, "sync."):
		return causeSync
	case reason == "network":
		return causeNetwork
	case reason == "preempted":
		return causePreempted
	case strings.Contains(reason, "GC"):
		return causeGC
	case reason == "system goroutine wait" || reason == "forever":
		return causeSystem
	}
	return causeOther
}

func isWake(c cause) bool {
	switch c {
	case causeSleep, causeChan, causeSelect, causeSync, causeNetwork, causeOther, causeGC, causeSystem:
		return true
	}
	return false
}

// gState is one goroutine's state in goAcc. It is pointer-free, held in a
// slice and found through goAcc.slot.
type gState struct {
	id          trace.GoID
	state       trace.GoState
	since       trace.Time // entered state
	sinceOK     bool       // since is a real transition, not the trace start
	group       int32
	cause       cause // why Runnable, or why Waiting
	blockAt     trace.Time
	blockThread trace.ThreadID // the thread it blocked on
	blockSit    int32          // blocking site index, -1 none
	blockStk    stackID

	// sleep
	sleepSite  int32 // -1 when not in a sleep
	sleepReq   int64 // requested ns for the pending or current sleep, 0 unknown
	sleepBlock trace.Time
	sleepWake  trace.Time
	sleepWoken bool

	// syscall
	sysAt     trace.Time
	sysThread trace.ThreadID
	sysStack  stackID
	sysOpen   bool
	sysEarly  bool // the syscall began before the trace saw it

	// locked-thread inference
	wakeThread trace.ThreadID // the thread that made it Runnable
	lockThread trace.ThreadID
	lockRun    int32 // starts after a wake-up on lockThread, with no other goroutine there since
	annLocked  bool  // between LockLogCategory "lock" and "unlock"
	handedOff  bool  // a wake-up came through a P hand-off from its waker
	handoffN   int64
	handoffMax int64
	handoff1   int64 // first hand-off, before a histogram exists
}

// group is the goroutines sharing a start function.
type group struct {
	name       string
	tracer     bool
	goroutines int64
	lat        hist
	creationNs int64
	runningNs  int64
	blockedNs  int64
	syscallNs  int64
}

type sleepSite struct {
	stack     stackID
	count     int64
	blocked   hist
	postWake  hist
	overshoot hist
	req       int64 // the common request, -1 mixed
}

type blockSiteKey struct {
	cause cause
	pc    uint64
}

type blockSite struct {
	cause cause
	stack stackID
	count int64
	total int64
}

type threadState struct {
	lastG    trace.GoID // the goroutine that last started on the thread
	lastSlot int32      // its goIndex slot (check the id: slots are reused)
	// The last P this thread started, and the thread that had stopped it.
	pStartT     trace.Time
	pPrevStopTh trace.ThreadID
	pPrevStopT  trace.Time
}

// pState is who stopped a P last.
type pState struct {
	stopTh trace.ThreadID
	stopT  trace.Time
}

// goAcc follows every goroutine through its states: scheduling latency,
// creation latency, sleeps, blocking, syscalls, locked threads, lifecycle
// and the timeline. Not safe for concurrent use.
type goAcc struct {
	opts   *Options
	stacks *stackInfos

	idx *goIndex
	gs  []gState // by goIndex slot

	groups  []group
	groupBy map[string]int32
	groupOf map[stackID]int32

	lat      hist
	creation hist
	byCause  [numCauses]hist

	sleepSites []sleepSite
	sleepByPC  map[uint64]int32
	sleepCount int64

	blockSites  []blockSite
	blockSiteBy map[blockSiteKey]int32
	blockTot    [numCauses]Totals

	sysTot   Totals
	sysPLost int64
	cgoTot   Totals

	threadIdx *threadIndex
	threads   []threadState
	ps        []pState // by ProcID
	lastTh    trace.ThreadID
	lastTi    int32

	// Per-stack caches of the site indexes (a stack has one call site).
	blockSiteOf []int32 // by stackID: index in blockSites +1, 0 unknown
	blockCause  []cause // by stackID: the cause blockSiteOf is for
	sleepSiteOf []int32 // by stackID: index in sleepSites +1, 0 unknown

	handoff  map[int32]*hist
	lockedBy map[int32]*lockedAcc
	lockedP  map[int32][]PinnedEvent // pending locked spans of candidates
	locked   []LockedGoroutine
	pinned   []PinnedEvent
	tracer   []PinnedEvent
	unattr   []PinnedEvent
	dropped  int64

	// lifecycle
	created, ended, atStart int64
	alive, peak             int64
	runnable, running, sys  int64
	peakThreads, peakSys    int64

	tl    timeline
	t0    trace.Time
	t0Set bool
	lastT trace.Time
}

func newGoAcc(opts *Options, stacks *stackInfos, idx *goIndex) *goAcc {
	a := &goAcc{
		opts:        opts,
		stacks:      stacks,
		idx:         idx,
		groupBy:     make(map[string]int32),
		groupOf:     make(map[stackID]int32),
		sleepByPC:   make(map[uint64]int32),
		blockSiteBy: make(map[blockSiteKey]int32),
		threadIdx:   newThreadIndex(),
		lastTh:      trace.NoThread,
		handoff:     make(map[int32]*hist),
		lockedBy:    make(map[int32]*lockedAcc),
		lockedP:     make(map[int32][]PinnedEvent),
	}
	a.groups = []group{{name: "(unknown)"}}
	a.groupBy["(unknown)"] = 0
	a.tl.init(opts.TimelineStep)
	return a
}

func (a *goAcc) lookup(id trace.GoID) (int32, bool) { return a.idx.find(id) }

func (a *goAcc) groupFor(s stackID) int32 {
	if gi, ok := a.groupOf[s]; ok {
		return gi
	}
	name := a.stacks.info(s).root
	gi, ok := a.groupBy[name]
	if !ok {
		gi = int32(len(a.groups))
		a.groups = append(a.groups, group{name: name, tracer: isTracerFunc(name)})
		a.groupBy[name] = gi
	}
	a.groupOf[s] = gi
	return gi
}

// clock notes the time of every event.
func (a *goAcc) clock(t trace.Time) {
	if !a.t0Set {
		a.t0, a.t0Set = t, true
	}
	a.lastT = t
}

// log handles schedscope's annotations: a sleep's requested duration
// (recSleepLog) and LockOSThread (recLockLog).
func (a *goAcc) log(r *record) {
	i, ok := a.lookup(trace.GoID(r.id))
	if !ok {
		return
	}
	g := &a.gs[i]
	if r.kind == recSleepLog {
		g.sleepReq = r.arg
		return
	}
	switch r.sub {
	case lockOpLock:
		if !g.annLocked {
			a.resetLock(i, g) // an inferred period ends here
			g.annLocked = true
			g.lockThread = r.thread
		}
	case lockOpUnlock:
		if g.annLocked {
			a.resetLock(i, g) // commits the annotated period
			g.annLocked = false
		}
	}
}

// transition handles a goroutine state transition; i is the goroutine's
// goIndex slot, fresh when just assigned.
func (a *goAcc) transition(r *record, i int32, fresh bool) {
	id := trace.GoID(r.id)
	t := r.t
	from, to := trace.GoState(r.from), trace.GoState(r.to)
	a.gs = grow(a.gs, i)
	if fresh {
		a.gs[i] = gState{id: id, state: trace.GoNotExist, blockSit: -1, sleepSite: -1, lockThread: trace.NoThread, sysThread: trace.NoThread}
	}
	if from == to && from != trace.GoUndetermined {
		return // a status event in a later generation: nothing new
	}
	g := &a.gs[i]
	if g.group == 0 && r.stack != 0 {
		g.group = a.groupFor(r.stack)
		a.groups[g.group].goroutines++
	}
	gr := &a.groups[g.group]

	// Leaving the old state.
	switch from {
	case trace.GoUndetermined, trace.GoNotExist:
		if from == trace.GoUndetermined {
			a.atStart++
		} else {
			a.created++
		}
		if to != trace.GoNotExist {
			a.alive++
			a.peak = max(a.peak, a.alive)
		}
	case trace.GoRunning:
		a.running--
		if g.sinceOK {
			gr.runningNs += int64(t - g.since)
		}
	case trace.GoRunnable:
		a.runnable--
		if to == trace.GoRunning {
			a.started(i, g, r.thread, t)
			g = &a.gs[i]
		}
	case trace.GoWaiting:
		a.unblocked(g, t)
	case trace.GoSyscall:
		a.sys--
		a.syscallEnded(g, t, to)
		if g.sinceOK {
			gr.syscallNs += int64(t - g.since)
		}
	}

	// Entering the new state.
	switch to {
	case trace.GoRunnable:
		a.runnable++
		g.wakeThread = r.thread
		switch from {
		case trace.GoNotExist:
			g.cause = causeCreation
		case trace.GoUndetermined:
			g.cause = causeUnknown
		case trace.GoRunning:
			g.cause = cause(r.sub) // gosched or preempted
		case trace.GoSyscall:
			g.cause = causeSyscall
		case trace.GoWaiting:
			// g.cause still holds the wait's category.
		}
	case trace.GoRunning:
		a.running++
	case trace.GoWaiting:
		g.cause = cause(r.sub)
		g.blockAt = t
		g.blockThread = r.thread
		g.blockSit = -1
		g.blockStk = 0
		if from == trace.GoRunning {
			a.blocked(g, r.stack, t)
		} else if g.sleepReq != 0 {
			g.sleepReq = 0
		}
	case trace.GoSyscall:
		a.sys++
		g.sysOpen = true
		g.sysAt = t
		g.sysThread = r.thread
		g.sysEarly = from != trace.GoRunning
		// The syscall's stack, or a status event's: the goroutine's own.
		g.sysStack = r.stack
	case trace.GoNotExist:
		a.ended++
		a.alive--
	}
	g.state = to
	g.since = t
	g.sinceOK = from != trace.GoUndetermined
	a.peakThreads = max(a.peakThreads, a.running+a.sys)
	a.peakSys = max(a.peakSys, a.sys)
	a.tl.observe(int64(t-a.t0), a.alive, a.runnable, a.running, a.sys)

	if to == trace.GoNotExist {
		a.finishGoroutine(i, t, true) // the analyzer then releases the slot
	}
}

// started handles Runnable -> Running: scheduling latency and the
// locked-thread inference.
func (a *goAcc) started(i int32, g *gState, th trace.ThreadID, t trace.Time) {
	lat := int64(t - g.since)
	gr := &a.groups[g.group]
	if g.sinceOK {
		switch g.cause {
		case causeCreation:
			a.creation.Add(lat)
			gr.creationNs += max(lat, 0)
		case causeUnknown:
		default:
			a.lat.Add(lat)
			a.byCause[g.cause].Add(lat)
			gr.lat.Add(lat)
		}
	}
	if g.sleepWoken {
		s := &a.sleepSites[g.sleepSite]
		s.postWake.Add(int64(t - g.sleepWake))
		if g.sleepReq > 0 {
			s.overshoot.Add(int64(t-g.sleepBlock) - g.sleepReq)
		}
		g.sleepWoken = false
		g.sleepSite = -1
		g.sleepReq = 0
	}

	// Exclusivity: another goroutine on this thread breaks a candidate.
	ts := a.thread(th)
	if ts.lastG != g.id && ts.lastG != trace.NoGoroutine {
		if j := ts.lastSlot; int(j) < len(a.idx.ids) && a.idx.ids[j] == ts.lastG {
			if o := &a.gs[j]; o.lockThread == th && o.lockRun > 0 && !o.annLocked {
				a.resetLock(j, o)
			}
		}
	}
	exclusive := ts.lastG == g.id
	ts.lastG, ts.lastSlot = g.id, i
	// The thread that woke it stopped a P after the wake-up, and this
	// thread, where it had blocked and which ran nothing else since,
	// started that P: the waker handed its P over (startlockedm).
	handedOff := exclusive && g.blockThread == th && g.wakeThread != th && g.wakeThread != trace.NoThread &&
		ts.pStartT >= g.since && ts.pPrevStopT >= g.since && ts.pPrevStopTh == g.wakeThread &&
		!a.wakerGaveUpItsP(g)

	switch {
	case g.annLocked:
		if isWake(g.cause) && g.sinceOK {
			g.lockThread = th
			g.lockRun++
			a.noteHandoff(i, g, lat)
			if g.cause != causeUnknown && int64(t-g.blockAt) >= int64(a.opts.PinThreshold) && g.blockAt != 0 {
				a.lockedP[i] = append(a.lockedP[i], a.lockedSpan(g, t, false))
			}
		}
	case isWake(g.cause) && g.sinceOK && g.wakeThread == th:
		// A locked goroutine's thread sleeps while it waits, so it can
		// never be the thread that wakes it: this goroutine is not locked.
		a.resetLock(i, g)
	case isWake(g.cause) && g.sinceOK:
		if g.lockThread == th && g.lockRun > 0 && exclusive {
			g.lockRun++
		} else {
			a.resetLock(i, g)
			g.lockThread = th
			g.lockRun = 1
		}
		g.handedOff = g.handedOff || handedOff
		a.noteHandoff(i, g, lat)
		if g.cause != causeUnknown && int64(t-g.blockAt) >= int64(a.opts.PinThreshold) && g.blockAt != 0 {
			a.lockedP[i] = append(a.lockedP[i], a.lockedSpan(g, t, false))
		}
	case th != g.lockThread:
		a.resetLock(i, g)
	}
}

// procTransition notes which thread stopped each P and which started it.
// A locked goroutine is run by the thread that picked it handing its P to
// the locked thread (runtime.startlockedm): the P stops on one thread and
// starts on the locked one right before the goroutine runs there.
func (a *goAcc) procTransition(r *record) {
	id := trace.ProcID(r.id)
	if id < 0 || id >= maxProcs {
		return
	}
	for int(id) >= len(a.ps) {
		a.ps = append(a.ps, pState{stopTh: trace.NoThread})
	}
	from, to := trace.ProcState(r.from), trace.ProcState(r.to)
	p := &a.ps[id]
	switch {
	case from == trace.ProcRunning && to != trace.ProcRunning:
		p.stopTh, p.stopT = r.thread, r.t
	case from != trace.ProcRunning && to == trace.ProcRunning && r.thread != trace.NoThread:
		ts := a.thread(r.thread)
		ts.pStartT, ts.pPrevStopTh, ts.pPrevStopT = r.t, p.stopTh, p.stopT
	}
}

// wakerGaveUpItsP reports whether the thread that woke g stopped its P for
// a reason of its own: its goroutine is locked to it and blocked (the
// thread sleeps with it), or entered a syscall after waking g. Then another
// thread taking the P and running g is no hand-off into a locked thread.
func (a *goAcc) wakerGaveUpItsP(g *gState) bool {
	wi, ok := a.threadIdx.lookup(g.wakeThread)
	if !ok {
		return false
	}
	w := a.threads[wi]
	j := w.lastSlot
	if w.lastG == trace.NoGoroutine || w.lastG == g.id || int(j) >= len(a.idx.ids) || a.idx.ids[j] != w.lastG || int(j) >= len(a.gs) {
		return false
	}
	o := &a.gs[j]
	lockedToW := o.lockThread == g.wakeThread && (o.lockRun >= 1 || o.annLocked)
	return (lockedToW && o.state == trace.GoWaiting) || (o.state == trace.GoSyscall && o.sysAt >= g.since)
}

// thread returns th's state.
func (a *goAcc) thread(th trace.ThreadID) *threadState {
	if th == a.lastTh {
		return &a.threads[a.lastTi]
	}
	ti, fresh := a.threadIdx.index(th)
	if fresh {
		a.threads = append(a.threads, threadState{lastG: trace.NoGoroutine})
	}
	a.lastTh, a.lastTi = th, ti
	return &a.threads[ti]
}

func (a *goAcc) noteHandoff(i int32, g *gState, lat int64) {
	g.handoffN++
	g.handoffMax = max(g.handoffMax, lat)
	if g.lockRun == 1 {
		g.handoff1 = lat
		g.handoffN = 1
		g.handoffMax = lat
		return
	}
	h := a.handoff[i]
	if h == nil {
		h = new(hist)
		h.Add(g.handoff1)
		a.handoff[i] = h
	}
	h.Add(lat)
}

func (a *goAcc) resetLock(i int32, g *gState) {
	if a.qualifies(g) {
		a.commitLock(i, g)
	}
	g.lockRun = 0
	g.handedOff = false
	g.lockThread = trace.NoThread
	g.handoffN, g.handoffMax, g.handoff1 = 0, 0, 0
	delete(a.handoff, i)
	delete(a.lockedP, i)
}

// qualifies reports whether g's current candidate period shows it locked to
// its thread: enough wake-ups resumed there, the thread running nothing else.
func (a *goAcc) qualifies(g *gState) bool {
	return g.lockRun >= int32(a.opts.MinLockedWakeups) || (g.lockRun >= 1 && g.handedOff) || (g.annLocked && g.lockThread != trace.NoThread)
}

// lockedAcc accumulates one goroutine's locked periods (a goroutine may
// lock and unlock many times, as an HTTP connection's goroutine serving a
// handler that locks does).
type lockedAcc struct {
	lg LockedGoroutine
	h  hist
}

func evidenceRank(e string) int {
	switch e {
	case "annotation":
		return 3
	case "wake-ups":
		return 2
	case "hand-off":
		return 1
	}
	return 0
}

// commitLock records g's current period as locked and reports its spans.
func (a *goAcc) commitLock(i int32, g *gState) {
	la := a.lockedBy[i]
	if la == nil {
		la = &lockedAcc{lg: LockedGoroutine{GoID: int64(g.id), Thread: int64(g.lockThread)}}
		a.lockedBy[i] = la
	}
	la.lg.Annotated = la.lg.Annotated || g.annLocked
	ev := "hand-off"
	switch {
	case g.annLocked:
		ev = "annotation"
	case g.lockRun >= int32(a.opts.MinLockedWakeups):
		ev = "wake-ups"
	}
	if evidenceRank(ev) > evidenceRank(la.lg.Evidence) {
		la.lg.Evidence = ev
	}
	la.lg.Wakeups += int64(g.lockRun)
	la.lg.HandoffMaxNs = max(la.lg.HandoffMaxNs, g.handoffMax)
	if h := a.handoff[i]; h != nil {
		la.h.Merge(h)
	} else if g.lockRun > 0 {
		la.h.Add(g.handoff1)
	}
	for _, e := range a.lockedP[i] {
		a.addPinned(g, e)
	}
	delete(a.lockedP, i)
}

func (a *goAcc) lockedSpan(g *gState, end trace.Time, truncated bool) PinnedEvent {
	info := a.stacks.info(g.blockStk)
	f := info.siteFrame()
	return PinnedEvent{
		Kind: "locked", GoID: int64(g.id), Func: f.Func, File: f.File, Line: f.Line,
		Target: causeNames[g.cause], StartNs: int64(g.blockAt - a.t0), DurationNs: int64(end - g.blockAt),
		Thread: int64(g.lockThread), PLost: true, Truncated: truncated, Stack: info.frames,
	}
}

// blocked handles Running -> Waiting.
func (a *goAcc) blocked(g *gState, s stackID, t trace.Time) {
	g.blockStk = s
	g.blockSit = a.blockSite(g.cause, s)
	if g.cause != causeSleep {
		g.sleepReq = 0
		return
	}
	a.sleepSiteOf = grow(a.sleepSiteOf, int32(s))
	si := a.sleepSiteOf[s] - 1
	if si < 0 {
		pc := a.stacks.info(s).sitePC()
		var ok bool
		si, ok = a.sleepByPC[pc]
		if !ok {
			si = int32(len(a.sleepSites))
			a.sleepSites = append(a.sleepSites, sleepSite{stack: s, req: 0})
			a.sleepByPC[pc] = si
		}
		a.sleepSiteOf[s] = si + 1
	}
	req := g.sleepReq
	if req == 0 && a.opts.Sleep > 0 {
		req = int64(a.opts.Sleep)
	}
	ss := &a.sleepSites[si]
	ss.count++
	a.sleepCount++
	switch {
	case ss.count == 1:
		ss.req = req
	case ss.req != req:
		ss.req = -1
	}
	g.sleepSite = si
	g.sleepReq = req
	g.sleepBlock = t
	g.sleepWoken = false
}

// blockSite returns the index in blockSites of the call site of stack s
// blocking for cause c.
func (a *goAcc) blockSite(c cause, s stackID) int32 {
	a.blockSiteOf = grow(a.blockSiteOf, int32(s))
	a.blockCause = grow(a.blockCause, int32(s))
	if bi := a.blockSiteOf[s] - 1; bi >= 0 && a.blockCause[s] == c {
		return bi
	}
	key := blockSiteKey{c, a.stacks.info(s).sitePC()}
	bi, ok := a.blockSiteBy[key]
	if !ok {
		bi = int32(len(a.blockSites))
		a.blockSites = append(a.blockSites, blockSite{cause: c, stack: s})
		a.blockSiteBy[key] = bi
	}
	a.blockSiteOf[s], a.blockCause[s] = bi+1, c
	return bi
}

// unblocked handles Waiting -> anything.
func (a *goAcc) unblocked(g *gState, t trace.Time) {
	d := int64(t - g.blockAt)
	if g.sinceOK {
		a.groups[g.group].blockedNs += d
	}
	a.blockTot[g.cause].Count++
	a.blockTot[g.cause].TotalNs += d
	if g.blockSit >= 0 {
		b := &a.blockSites[g.blockSit]
		b.count++
		b.total += d
	}
	if g.sleepSite >= 0 {
		a.sleepSites[g.sleepSite].blocked.Add(int64(t - g.sleepBlock))
		g.sleepWake = t
		g.sleepWoken = true
	}
}

// syscallEnded handles Syscall -> anything.
func (a *goAcc) syscallEnded(g *gState, t trace.Time, to trace.GoState) {
	if !g.sysOpen {
		return
	}
	g.sysOpen = false
	d := int64(t - g.sysAt)
	pLost := to == trace.GoRunnable
	info := a.stacks.info(g.sysStack)
	a.sysTot.Count++
	a.sysTot.TotalNs += d
	if pLost {
		a.sysPLost++
	}
	bi := a.blockSite(causeSyscall, g.sysStack)
	a.blockSites[bi].count++
	a.blockSites[bi].total += d
	if info.cgo != "" {
		a.cgoTot.Count++
		a.cgoTot.TotalNs += d
	}
	if d >= int64(a.opts.PinThreshold) {
		a.addPinned(g, a.syscallSpan(g, info, t, pLost, false))
	}
}

func (a *goAcc) syscallSpan(g *gState, info *stackInfo, end trace.Time, pLost, truncated bool) PinnedEvent {
	f := info.siteFrame()
	kind, target := "syscall", ""
	if g.sysEarly {
		truncated = true
		if len(info.frames) == 0 {
			f = Frame{Func: "(in a syscall since before the trace)"}
		}
	}
	if info.cgo != "" {
		kind, target = "cgo", info.cgo
	} else if len(info.frames) > 0 {
		target = info.frames[0].Func
		for _, fr := range info.frames {
			if strings.HasPrefix(fr.Func, "syscall.") || strings.HasPrefix(fr.Func, "golang.org/x/sys/") {
				target = fr.Func
				break
			}
		}
	}
	return PinnedEvent{
		Kind: kind, GoID: int64(g.id), Func: f.Func, File: f.File, Line: f.Line, Target: target,
		StartNs: int64(g.sysAt - a.t0), DurationNs: int64(end - g.sysAt), Thread: int64(g.sysThread),
		PLost: pLost, Truncated: truncated, Stack: info.frames,
	}
}

const maxPinned = 1000

func (a *goAcc) addPinned(g *gState, e PinnedEvent) {
	if e.Kind == "syscall" && ((g.sysEarly && len(e.Stack) == 0 && g.group == 0) || a.groups[g.group].name == "os/signal.loop") {
		if len(a.unattr) < maxPinned {
			a.unattr = append(a.unattr, e)
		}
		return
	}
	if a.groups[g.group].tracer {
		if len(a.tracer) < maxPinned {
			a.tracer = append(a.tracer, e)
		}
		return
	}
	if len(a.pinned) >= maxPinned {
		a.dropped++
		return
	}
	a.pinned = append(a.pinned, e)
}

// finishGoroutine settles a goroutine that ended (or is alive at the end).
func (a *goAcc) finishGoroutine(i int32, end trace.Time, ended bool) {
	g := &a.gs[i]
	if g.group == 0 {
		a.groups[0].goroutines++
	}
	if !ended {
		if g.sysOpen && int64(end-g.sysAt) >= int64(a.opts.PinThreshold) {
			a.addPinned(g, a.syscallSpan(g, a.stacks.info(g.sysStack), end, false, true))
		}
	}
	if a.qualifies(g) {
		if !ended && g.state == trace.GoWaiting && g.cause != causeUnknown && g.blockThread == g.lockThread &&
			int64(end-g.blockAt) >= int64(a.opts.PinThreshold) {
			a.lockedP[i] = append(a.lockedP[i], a.lockedSpan(g, end, true))
		}
		a.commitLock(i, g)
	}
	if la := a.lockedBy[i]; la != nil {
		la.lg.StartFunc = a.groups[g.group].name
		la.lg.Ended = ended
		la.lg.HandoffP50Ns = la.h.Quantile(0.5)
		a.locked = append(a.locked, la.lg)
		delete(a.lockedBy, i)
	}
	delete(a.handoff, i)
	delete(a.lockedP, i)
}

// finish settles the goroutines still alive at end.
func (a *goAcc) finish() {
	type live struct {
		id   trace.GoID
		slot int32
	}
	var alive []live
	for slot, id := range a.idx.ids {
		if id != trace.NoGoroutine {
			alive = append(alive, live{id, int32(slot)})
		}
	}
	slices.SortFunc(alive, func(x, y live) int { return cmp.Compare(x.id, y.id) })
	for _, l := range alive {
		if int(l.slot) < len(a.gs) {
			a.finishGoroutine(l.slot, a.lastT, false)
		}
	}
}

func (a *goAcc) result(r *Report) {
	a.finish()
	r.Sched.Count = a.lat.n
	r.Sched.TotalNs = a.lat.sum
	r.Sched.PercentilesNs = a.lat.Percentiles()
	r.Sched.Histogram = a.lat.Pow2Buckets()
	r.Sched.Creation = a.creation.Distribution()
	r.Sched.ByCause = []CauseLatency{}
	for c := range a.byCause {
		if a.byCause[c].n > 0 {
			r.Sched.ByCause = append(r.Sched.ByCause, CauseLatency{Cause: causeNames[c], Distribution: a.byCause[c].Distribution()})
		}
	}
	r.Sched.ByGroup = []GroupLatency{}
	for _, gr := range a.groups {
		if gr.goroutines == 0 && gr.lat.n == 0 {
			continue
		}
		r.Sched.ByGroup = append(r.Sched.ByGroup, GroupLatency{
			StartFunc: gr.name, Goroutines: gr.goroutines, Distribution: gr.lat.Distribution(),
			CreationNs: gr.creationNs, RunningNs: gr.runningNs, BlockedNs: gr.blockedNs, SyscallNs: gr.syscallNs,
		})
	}
	slices.SortStableFunc(r.Sched.ByGroup, func(x, y GroupLatency) int {
		return cmp.Or(cmp.Compare(y.TotalNs+y.CreationNs, x.TotalNs+x.CreationNs), cmp.Compare(x.StartFunc, y.StartFunc))
	})

	r.Syscall.Count = a.sysTot.Count
	r.Syscall.TotalNs = a.sysTot.TotalNs
	r.Syscall.PLost = a.sysPLost
	r.Syscall.Cgo = a.cgoTot

	r.Sleep.Count = a.sleepCount
	r.Sleep.Sites = []SleepSite{}
	for i := range a.sleepSites {
		s := &a.sleepSites[i]
		f := a.stacks.info(s.stack).siteFrame()
		ss := SleepSite{Func: f.Func, File: f.File, Line: f.Line, Count: s.count,
			Blocked: s.blocked.Distribution(), PostWake: s.postWake.Distribution(), RequestedNs: max(s.req, 0)}
		if s.overshoot.n > 0 {
			d := s.overshoot.Distribution()
			ss.Overshoot = &d
		}
		r.Sleep.Sites = append(r.Sleep.Sites, ss)
	}
	slices.SortStableFunc(r.Sleep.Sites, func(x, y SleepSite) int { return cmp.Compare(y.Count, x.Count) })

	slices.SortFunc(a.locked, func(x, y LockedGoroutine) int { return cmp.Compare(x.GoID, y.GoID) })
	r.Pinned.LockedGoroutines = append([]LockedGoroutine{}, a.locked...)
	byLen := func(x, y PinnedEvent) int {
		return cmp.Or(cmp.Compare(y.DurationNs, x.DurationNs), cmp.Compare(x.StartNs, y.StartNs))
	}
	slices.SortStableFunc(a.pinned, byLen)
	slices.SortStableFunc(a.tracer, byLen)
	slices.SortStableFunc(a.unattr, byLen)
	r.Pinned.Unattributed = append([]PinnedEvent{}, a.unattr...)
	r.Pinned.Events = append([]PinnedEvent{}, a.pinned...)
	r.Pinned.Tracer = append([]PinnedEvent{}, a.tracer...)
	r.Pinned.Dropped = a.dropped

	r.Goroutines = GoroutineReport{Created: a.created, Ended: a.ended, Peak: a.peak, AtStart: a.atStart, AtEnd: a.alive}
	r.Threads.Peak = a.peakThreads
	r.Threads.PeakSyscall = a.peakSys

	// Blocking breakdown; syscalls come from the syscall spans.
	tot := a.blockTot
	tot[causeSyscall] = a.sysTot
	r.Blocking.Reasons = []BlockReason{}
	for c := range tot {
		if tot[c].Count == 0 || cause(c) == causeUnknown {
			continue
		}
		br := BlockReason{Reason: causeNames[c], Count: tot[c].Count, TotalNs: tot[c].TotalNs, Sites: []Site{}}
		var sites []blockSite
		for _, b := range a.blockSites {
			if b.cause == cause(c) && b.count > 0 {
				sites = append(sites, b)
			}
		}
		slices.SortStableFunc(sites, func(x, y blockSite) int { return cmp.Compare(y.total, x.total) })
		for _, b := range sites[:min(len(sites), 10)] {
			f := a.stacks.info(b.stack).siteFrame()
			br.Sites = append(br.Sites, Site{Func: f.Func, File: f.File, Line: f.Line, Count: b.count, TotalNs: b.total})
		}
		r.Blocking.Reasons = append(r.Blocking.Reasons, br)
	}
	slices.SortStableFunc(r.Blocking.Reasons, func(x, y BlockReason) int { return cmp.Compare(y.TotalNs, x.TotalNs) })

	r.Timeline = a.tl.result()
}
