package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

// The request annotations schedscope's agent writes (collect/agent's
// Middleware and Wait, which keep the same strings): each request runs in a
// task of type RequestTaskType, inside it a region of type
// HandlerRegionType spans the handler, a log of category RequestLogCategory
// on the task carries the handler's start and the generator's request id,
// and a region of type WaitRegionPrefix+name spans each wait for pool name.
const (
	RequestTaskType    = "schedscope.request"
	HandlerRegionType  = "schedscope.handler"
	RequestLogCategory = "schedscope.request"
	WaitRegionPrefix   = "schedscope.wait:"
)

// State is where a request's (or a goroutine's) time went: a scheduler
// state, or a reason it was blocked, or the time outside the handler.
type State string

// The states of the request anatomy.
const (
	StateRunning  State = "running"     // on a P, running Go code
	StateRunnable State = "runnable"    // ready, waiting for a P
	StateGCAssist State = "gc assist"   // running, but made to help the GC mark
	StateSleep    State = "sleep"       // time.Sleep and timers
	StateNetwork  State = "network"     // the netpoller
	StateHTTP     State = "http client" // an HTTP client waiting for its response, which its Transport's goroutines read
	StateChan     State = "chan"        // channel send, receive or select
	StateSync     State = "sync"        // sync.Mutex, RWMutex, WaitGroup, Cond
	StateSyscall  State = "syscall"     // in a system call
	StateCgo      State = "cgo"         // in a cgo call
	StateGCWait   State = "gc wait"     // blocked on the GC (waiting for it to end, or for mark work)
	StateBlocked  State = "blocked"     // blocked for another reason
	StatePool     State = "pool"        // waiting for a pool (Share.Pool names it)
	StateFanout   State = "fan-out"     // waiting for goroutines doing the request's work
	StateLag      State = "send lag"    // intended send to the generator's actual send (joined with its record)
	StateSocket   State = "socket"      // sent, not yet read by the server: the network, the listen backlog, the netpoller
	StateBefore   State = "before"      // intended send to the handler's goroutine waking, when the send time is unknown
	StateAfter    State = "after"       // handler end to the response's end at the client
	StateIdle     State = "idle"        // a server connection waiting for its next request (per class only)
)

// cat is a State as an index.
type cat uint8

const (
	catRunning cat = iota
	catRunnable
	catGCAssist
	catSleep
	catNetwork
	catHTTP
	catChan
	catSync
	catSyscall
	catCgo
	catGCWait
	catBlocked
	catPool
	catFanout
	catLag
	catSocket
	catBefore
	catAfter
	catIdle
	numCats
)

var catStates = [numCats]State{StateRunning, StateRunnable, StateGCAssist, StateSleep, StateNetwork, StateHTTP, StateChan,
	StateSync, StateSyscall, StateCgo, StateGCWait, StateBlocked, StatePool, StateFanout, StateLag, StateSocket, StateBefore, StateAfter, StateIdle}

// catOfCause is the category of a wait for cause c.
func catOfCause(c cause) cat {
	switch c {
	case causeSleep:
		return catSleep
	case causeNetwork:
		return catNetwork
	case causeChan, causeSelect:
		return catChan
	case causeSync:
		return catSync
	case causeGC, causePreempted: // a goroutine waits "preempted" while the GC scans its stack
		return catGCWait
	}
	return catBlocked
}

// stackKind is what a blocked goroutine's stack says it waits for, beyond
// the runtime's reason.
type stackKind uint8

const (
	skUnknown   stackKind = iota // not computed yet
	skNone                       // nothing recognised
	skDBPool                     // database/sql waiting for a connection
	skTransport                  // net/http.Transport waiting for a connection
	skClient                     // an HTTP client waiting for its response
	skIdle                       // an HTTP server connection between requests
)

// Pools recognised from stacks, without annotations.
const (
	poolDatabaseSQL = "database/sql"
	poolTransport   = "net/http.Transport"
)

func classifyStack(info *stackInfo) stackKind {
	for i, f := range info.frames {
		switch f.Func {
		case "database/sql.(*DB).conn":
			return skDBPool
		case "net/http.(*Transport).getConn":
			return skTransport
		case "net/http.(*persistConn).roundTrip":
			return skClient
		case "net/http.(*connReader).backgroundRead", "net/http.(*conn).readRequest":
			return skIdle
		case "bufio.(*Reader).Peek":
			// The server waits for a kept-alive connection's next request
			// with a Peek in (*conn).serve.
			if i+1 < len(info.frames) && info.frames[i+1].Func == "net/http.(*conn).serve" {
				return skIdle
			}
		}
	}
	return skNone
}

// aG is one goroutine's anatomy state, by goIndex slot.
type aG struct {
	id      trace.GoID
	seen    bool
	since   trace.Time
	state   trace.GoState
	waitCat cat   // the category of the current wait
	waitPl  int32 // its pool index +1 when waitCat is catPool
	region  int32 // an open wait region's pool index +1
	assist  bool
	handler int32 // open-task slot +1 whose handler this goroutine runs
	child   int32 // open-task slot +1 this goroutine works for
	childG  uint32
	childRg bool  // a child because of a region it opened (ends with it)
	class   int32 // goAcc group
	parent  int32 // the creator's class +1 (propagated to grandchildren)
	// A server connection's goroutine runs the handler of each request it
	// reads: from the end of its wait for the request (or its creation) to
	// the handler's start it was runnable, then running (reading it).
	preOn   bool
	preRunq int64
	preRun  int64
}

// seg is one stretch of a request's handler in one state.
type seg struct {
	at, dur int64 // since the handler's start
	cat     cat
	pool    int32 // +1
}

// maxSegs bounds a request's timeline.
const maxSegs = 512

// openTask is a request whose handler region is open.
type openTask struct {
	id      trace.TaskID
	gen     uint32
	slot    int32 // the handler goroutine's goIndex slot
	goid    trace.GoID
	begin   trace.Time
	live    int32 // children working now
	kids    int32 // children seen
	cats    [numCats]int64
	kcats   [numCats]int64
	pools   []int64 // by pool index: time in catPool
	preRunq int64   // its goroutine's runnable and running time right before the handler
	preRun  int64
	segs    []seg
	logged  bool
	flags   uint8
	startW  int64
	intend  int64
	seq     int64
	inUse   bool
	segFull bool
}

// reqRec is a finished request, compact.
type reqRec struct {
	task    trace.TaskID
	goid    trace.GoID
	begin   trace.Time
	handler int64
	total   int64
	seq     int64
	flags   uint8
	client  bool
	open    bool // still in its handler at the trace's end
	kids    int32
	cats    [numCats]float32
	kcats   [numCats]float32
	pools   []float32
}

// pendingLog is a request log seen before its handler region.
type pendingLog struct {
	flags                uint8
	start, intended, seq int64
}

// classAcc is the split of one goroutine class.
type classAcc struct {
	cats    [numCats]int64
	created [numCats]int64
	pools   map[int32]int64
	kids    int64 // goroutines created by its members (and theirs)
}

// anatomyAcc splits requests' time by scheduler state. It reads the goroutine
// transitions goAcc has applied (and goAcc's classes), the request regions
// and logs. Not safe for concurrent use.
type anatomyAcc struct {
	opts   *Options
	dec    *decoder
	stacks *stackInfos
	idx    *goIndex
	gor    *goAcc

	gs      []aG
	tasks   []openTask
	free    []int32
	byTask  map[trace.TaskID]int32
	pending map[trace.TaskID]pendingLog
	recs    []reqRec
	slow    []slowReq // the slowest requests' timelines, a min-heap by total
	segPool [][]seg

	kind    []stackKind // by stackID
	classes []classAcc  // by goAcc group
	t0      trace.Time
	t0Set   bool
	open    int64 // handler regions still open at the end
	leftOut IDsLeftOut
}

// slowReq is a kept timeline.
type slowReq struct {
	rec  int // index in recs
	segs []seg
	full bool
}

// maxSlow is how many request timelines are kept.
const maxSlow = 20

func newAnatomyAcc(opts *Options, dec *decoder, stacks *stackInfos, idx *goIndex, gor *goAcc) *anatomyAcc {
	return &anatomyAcc{opts: opts, dec: dec, stacks: stacks, idx: idx, gor: gor,
		byTask: make(map[trace.TaskID]int32), pending: make(map[trace.TaskID]pendingLog)}
}

func (a *anatomyAcc) clock(t trace.Time) {
	if !a.t0Set {
		a.t0, a.t0Set = t, true
	}
}

func (a *anatomyAcc) stackKindOf(s stackID) stackKind {
	if s == 0 {
		return skNone
	}
	a.kind = grow(a.kind, int32(s))
	k := a.kind[s]
	if k == skUnknown {
		k = classifyStack(a.stacks.info(s))
		a.kind[s] = k
	}
	return k
}

// current is g's category now, and its pool index +1.
func (a *anatomyAcc) current(g *aG) (cat, int32) {
	switch g.state {
	case trace.GoRunning:
		if g.assist {
			return catGCAssist, 0
		}
		return catRunning, 0
	case trace.GoRunnable:
		return catRunnable, 0
	case trace.GoSyscall:
		return g.waitCat, 0
	case trace.GoWaiting:
		if g.handler > 0 && a.tasks[g.handler-1].live > 0 && g.waitCat != catIdle {
			return catFanout, 0
		}
		if g.region > 0 {
			return catPool, g.region
		}
		return g.waitCat, g.waitPl
	}
	return numCats, 0
}

// charge adds g's time since its last change to its category, for its
// class, its request and the request it works for.
func (a *anatomyAcc) charge(g *aG, t trace.Time) {
	if !g.seen {
		g.since, g.seen = t, true
		return
	}
	d := int64(t - g.since)
	g.since = t
	if d <= 0 {
		return
	}
	c, pl := a.current(g)
	if c == numCats {
		return
	}
	a.classes = grow(a.classes, g.class)
	cl := &a.classes[g.class]
	cl.cats[c] += d
	if pl > 0 {
		if cl.pools == nil {
			cl.pools = make(map[int32]int64)
		}
		cl.pools[pl-1] += d
	}
	if g.parent > 0 {
		a.classes[g.parent-1].created[c] += d
	}
	if g.preOn && g.handler == 0 {
		switch c {
		case catRunnable:
			g.preRunq += d
		case catRunning:
			g.preRun += d
		default:
			g.preRunq, g.preRun = 0, 0 // it waited for something else: no request read yet
		}
	}
	if g.handler > 0 {
		tk := &a.tasks[g.handler-1]
		tk.cats[c] += d
		if pl > 0 {
			tk.pools = grow(tk.pools, pl-1)
			tk.pools[pl-1] += d
		}
		a.addSeg(tk, int64(t-tk.begin)-d, d, c, pl)
	}
	if g.child > 0 {
		if tk := &a.tasks[g.child-1]; tk.inUse && tk.gen == g.childG {
			tk.kcats[c] += d
		} else {
			g.child = 0
		}
	}
}

func (a *anatomyAcc) addSeg(tk *openTask, at, d int64, c cat, pl int32) {
	if n := len(tk.segs); n > 0 {
		if l := &tk.segs[n-1]; l.cat == c && l.pool == pl && l.at+l.dur == at {
			l.dur += d
			return
		}
	}
	if len(tk.segs) >= maxSegs {
		tk.segFull = true
		return
	}
	tk.segs = append(tk.segs, seg{at: at, dur: d, cat: c, pool: pl})
}

// slot returns the anatomy state of goroutine id, if the trace has seen it.
func (a *anatomyAcc) slot(id trace.GoID) *aG {
	i, ok := a.idx.find(id)
	if !ok {
		return nil
	}
	a.gs = grow(a.gs, i)
	g := &a.gs[i]
	if g.id != id {
		*g = aG{id: id, state: trace.GoUndetermined}
	}
	return g
}

// transition follows a goroutine transition goAcc has applied (slot i).
func (a *anatomyAcc) transition(r *record, i int32, fresh bool) {
	a.gs = grow(a.gs, i)
	g := &a.gs[i]
	id := trace.GoID(r.id)
	if fresh || g.id != id {
		*g = aG{id: id, state: trace.GoUndetermined}
	}
	from, to := trace.GoState(r.from), trace.GoState(r.to)
	if from == to && from != trace.GoUndetermined {
		return
	}
	a.charge(g, r.t)
	g.class = a.gor.gs[i].group
	if from == trace.GoNotExist && to != trace.GoNotExist && r.arg > 0 {
		a.created(g, trace.GoID(r.arg), r.t)
	}
	if from == trace.GoNotExist || (from == trace.GoWaiting && g.waitCat == catIdle) {
		g.preOn, g.preRunq, g.preRun = true, 0, 0
	}
	g.state = to
	switch to {
	case trace.GoSyscall:
		g.waitCat = catSyscall
		if r.stack != 0 && a.stacks.info(r.stack).cgo != "" {
			g.waitCat = catCgo
		}
	case trace.GoWaiting:
		g.waitCat, g.waitPl = catOfCause(cause(r.sub)), 0
		switch a.stackKindOf(r.stack) {
		case skDBPool:
			g.waitCat, g.waitPl = catPool, a.poolIndex(poolDatabaseSQL)+1
		case skTransport:
			g.waitCat, g.waitPl = catPool, a.poolIndex(poolTransport)+1
		case skClient:
			g.waitCat = catHTTP
		case skIdle:
			if g.waitCat == catNetwork {
				g.waitCat = catIdle
			}
		}
	case trace.GoNotExist:
		a.leave(g, r.t)
	}
}

// poolIndex returns the index of a pool recognised from stacks, in the
// decoder's table (shared with the wait regions' names).
func (a *anatomyAcc) poolIndex(name string) int32 { return a.dec.pool(name) }

// created makes g, just created by goroutine by, a child of the request by
// works for, and of by's class.
func (a *anatomyAcc) created(g *aG, by trace.GoID, t trace.Time) {
	p := a.slot(by)
	if p == nil {
		return
	}
	g.parent = p.parent
	if g.parent == 0 {
		g.parent = p.class + 1
	}
	a.classes = grow(a.classes, g.parent-1)
	a.classes[g.parent-1].kids++
	tk := p.handler
	gen := uint32(0)
	if tk > 0 {
		gen = a.tasks[tk-1].gen
	} else if p.child > 0 {
		tk, gen = p.child, p.childG
	}
	if tk > 0 {
		a.join(g, tk, gen, false, t)
	}
}

// join makes g a child of open task slot tk+1.
func (a *anatomyAcc) join(g *aG, tk int32, gen uint32, byRegion bool, t trace.Time) {
	o := &a.tasks[tk-1]
	if !o.inUse || o.gen != gen || g.child > 0 || g.handler == tk {
		return
	}
	a.chargeHandler(o, t)
	g.child, g.childG, g.childRg = tk, gen, byRegion
	o.live++
	o.kids++
}

// leave ends g's work for its request (it ended, or closed its region).
func (a *anatomyAcc) leave(g *aG, t trace.Time) {
	if g.child > 0 {
		if o := &a.tasks[g.child-1]; o.inUse && o.gen == g.childG {
			a.chargeHandler(o, t)
			o.live--
		}
		g.child, g.childRg = 0, false
	}
}

// chargeHandler charges a request's handler goroutine up to t, before its
// children change (its wait becomes, or stops being, a fan-out wait).
func (a *anatomyAcc) chargeHandler(o *openTask, t trace.Time) {
	if int(o.slot) < len(a.gs) && a.gs[o.slot].id == o.goid {
		a.charge(&a.gs[o.slot], t)
	}
}

// event handles the request regions and logs, and GC assists.
func (a *anatomyAcc) event(r *record) {
	switch r.kind {
	case recReqLog:
		l := pendingLog{flags: r.sub, start: r.arg, intended: r.arg2, seq: r.arg3}
		if tk, ok := a.byTask[trace.TaskID(r.id)]; ok {
			a.tasks[tk].setLog(l)
			return
		}
		if len(a.pending) < maxPending {
			a.pending[trace.TaskID(r.id)] = l
		}
		return
	case recRangeBegin, recRangeActive, recRangeEnd:
		if r.sub != rangeAssist || trace.ResourceKind(r.flags) != trace.ResourceGoroutine {
			return
		}
		if g := a.slot(trace.GoID(r.id)); g != nil {
			a.charge(g, r.t)
			g.assist = r.kind != recRangeEnd
		}
		return
	}
	g := a.slot(trace.GoID(r.id))
	if g == nil {
		return
	}
	task := trace.TaskID(r.arg)
	switch r.kind {
	case recHandlerBegin:
		if _, ok := a.byTask[task]; ok || g.handler > 0 {
			return
		}
		a.charge(g, r.t)
		a.begin(g, task, r.t)
	case recHandlerEnd:
		tk, ok := a.byTask[task]
		if !ok || g.handler != tk+1 {
			return
		}
		a.charge(g, r.t)
		a.end(g, tk, r.t, false)
	case recWaitBegin:
		a.charge(g, r.t)
		g.region = int32(r.arg2) + 1
		fallthrough
	case recRegionBegin:
		if tk, ok := a.byTask[task]; ok && g.handler != tk+1 && g.child == 0 {
			a.charge(g, r.t)
			a.join(g, tk+1, a.tasks[tk].gen, true, r.t)
		}
	case recWaitEnd:
		a.charge(g, r.t)
		g.region = 0
		if g.childRg {
			a.leave(g, r.t)
		}
	case recRegionEnd:
		if g.childRg {
			a.charge(g, r.t)
			a.leave(g, r.t)
		}
	}
}

// maxPending bounds the request logs waiting for their handler region.
const maxPending = 1 << 12

func (o *openTask) setLog(l pendingLog) {
	o.logged = true
	o.flags, o.startW, o.intend, o.seq = l.flags, l.start, l.intended, l.seq
}

// begin opens a request: g runs its handler from t.
func (a *anatomyAcc) begin(g *aG, task trace.TaskID, t trace.Time) {
	var tk int32
	if n := len(a.free); n > 0 {
		tk, a.free = a.free[n-1], a.free[:n-1]
	} else {
		a.tasks = append(a.tasks, openTask{})
		tk = int32(len(a.tasks) - 1)
	}
	i, _ := a.idx.find(g.id)
	o := &a.tasks[tk]
	gen := o.gen + 1
	segs := o.segs[:0]
	if segs == nil && len(a.segPool) > 0 {
		segs, a.segPool = a.segPool[len(a.segPool)-1][:0], a.segPool[:len(a.segPool)-1]
	}
	pools := o.pools[:0]
	*o = openTask{id: task, gen: gen, slot: i, goid: g.id, begin: t, inUse: true, segs: segs, pools: pools}
	if l, ok := a.pending[task]; ok {
		o.setLog(l)
		delete(a.pending, task)
	}
	if g.preOn {
		o.preRunq, o.preRun = g.preRunq, g.preRun
	}
	g.preOn, g.preRunq, g.preRun = false, 0, 0
	a.byTask[task] = tk
	g.handler = tk + 1
}

// end closes request slot tk, whose handler g returned at t (or was still
// running when the trace ended, open).
func (a *anatomyAcc) end(g *aG, tk int32, t trace.Time, open bool) {
	o := &a.tasks[tk]
	g.handler = 0
	delete(a.byTask, o.id)
	rec := reqRec{task: o.id, goid: o.goid, begin: o.begin, handler: int64(t - o.begin), kids: o.kids, seq: -1, open: open}
	for c := range numCats {
		rec.cats[c] = float32(o.cats[c])
		rec.kcats[c] = float32(o.kcats[c])
	}
	if len(o.pools) > 0 {
		rec.pools = make([]float32, len(o.pools))
		for p, ns := range o.pools {
			rec.pools[p] = float32(ns)
		}
	}
	// Before the handler, its goroutine was runnable, then read the
	// request: that is the server's time too.
	pre := o.preRunq + o.preRun
	rec.cats[catRunnable] += float32(o.preRunq)
	rec.cats[catRunning] += float32(o.preRun)
	rec.total = rec.handler + pre
	if o.logged {
		rec.flags = o.flags
		cl, joined := a.joinID(o)
		if !joined {
			rec.flags &^= reqHasID | reqTagOK
		} else {
			rec.seq = o.seq
			// The generator's intended send to the handler's start, both
			// on the wall clock; what the goroutine did in it is counted
			// already. With the generator's record, the rest splits into
			// its send lag and the time the sent request waited in the
			// socket (the network, the listen backlog, the netpoller).
			before := max(o.startW-o.intend, 0)
			if before > pre {
				rest := before - pre
				if cl != nil && cl.SentUnixNs > 0 {
					lag := min(max(cl.SentUnixNs-o.intend, 0), rest)
					rec.cats[catLag] = float32(lag)
					rec.cats[catSocket] = float32(rest - lag)
				} else {
					rec.cats[catBefore] = float32(rest)
				}
				rec.total = rec.handler + before
			}
			// A request still in its handler at the trace's end spent the
			// rest of its client latency in states the trace did not see:
			// it keeps its observed time.
			if cl != nil && cl.LatencyNs > 0 && !open {
				rec.client = true
				rec.cats[catAfter] = float32(max(cl.LatencyNs-rec.total, 0))
				rec.total = max(cl.LatencyNs, rec.total)
			}
		}
	}
	a.recs = append(a.recs, rec)
	a.keepSlow(len(a.recs)-1, o)
	o.inUse = false
	a.free = append(a.free, tk)
}

// joinID judges the id request o carried. ok reports whether its
// intended send time is taken; cl is then the generator's record of it,
// nil when there is none. An id left out is counted in a.leftOut by why.
func (a *anatomyAcc) joinID(o *openTask) (cl *ClientRequest, ok bool) {
	if o.flags&reqHasID == 0 {
		return nil, false
	}
	switch from, to := a.opts.IntendedFrom, a.opts.IntendedTo; {
	case a.opts.RequestTag != "" && o.flags&reqTagOK == 0:
		a.leftOut.ForeignTag++
		return nil, false
	case from != 0 && o.intend < from, to != 0 && o.intend > to:
		a.leftOut.OutsideWindow++
		return nil, false
	}
	if a.opts.RequestTag == "" {
		return nil, true
	}
	c, found := a.opts.Client[o.seq]
	if !found {
		return nil, true
	}
	if c.IntendedUnixNs != 0 && c.IntendedUnixNs != o.intend {
		a.leftOut.NotTheRecord++
		return nil, false
	}
	return &c, true
}

// keepSlow keeps request rec's timeline when it is among the slowest.
func (a *anatomyAcc) keepSlow(rec int, o *openTask) {
	total := a.recs[rec].total
	less := func(i, j int) bool { return a.recs[a.slow[i].rec].total < a.recs[a.slow[j].rec].total }
	if len(a.slow) == maxSlow {
		if total <= a.recs[a.slow[0].rec].total {
			return
		}
		a.segPool = append(a.segPool, a.slow[0].segs)
		a.slow[0] = slowReq{rec: rec, segs: o.segs, full: o.segFull}
		siftDown(len(a.slow), 0, less, func(i, j int) { a.slow[i], a.slow[j] = a.slow[j], a.slow[i] })
	} else {
		a.slow = append(a.slow, slowReq{rec: rec, segs: o.segs, full: o.segFull})
		for j := len(a.slow) - 1; j > 0; {
			p := (j - 1) / 2
			if !less(j, p) {
				break
			}
			a.slow[j], a.slow[p] = a.slow[p], a.slow[j]
			j = p
		}
	}
	o.segs = nil // now the heap's
}

func siftDown(n, i int, less func(i, j int) bool, swap func(i, j int)) {
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && less(r, l) {
			m = r
		}
		if !less(m, i) {
			return
		}
		swap(i, m)
		i = m
	}
}

// finish charges every goroutine up to the end of the trace, and counts
// the requests still in their handlers then with their time so far: they
// are the slowest, and leaving them out would hide a growing queue.
func (a *anatomyAcc) finish(end trace.Time) {
	for i := range a.gs {
		g := &a.gs[i]
		if int(i) < len(a.idx.ids) && a.idx.ids[i] == g.id && g.seen {
			a.charge(g, end)
		}
	}
	a.open = int64(len(a.byTask))
	open := make([]int32, 0, len(a.byTask))
	for _, tk := range a.byTask {
		open = append(open, tk)
	}
	slices.SortFunc(open, func(x, y int32) int { return cmp.Compare(a.tasks[x].id, a.tasks[y].id) })
	for _, tk := range open {
		o := &a.tasks[tk]
		if int(o.slot) < len(a.gs) && a.gs[o.slot].id == o.goid {
			a.end(&a.gs[o.slot], tk, end, true)
		}
	}
}

// result fills r.Requests.
func (a *anatomyAcc) result(r *Report, end trace.Time, poolNames []string) {
	a.finish(end)
	rep := &RequestsReport{Requests: int64(len(a.recs)), Open: a.open, IDsLeftOut: a.leftOut, Bands: []Band{}, Slowest: []Request{}}
	if a.open > 0 {
		rep.Note = fmt.Sprintf("%d requests were still in their handlers when the trace ended: they count with their time so far", a.open)
	}
	for _, rc := range a.recs {
		if rc.flags&reqHasID != 0 {
			rep.Joined++
		}
		if rc.client {
			rep.ClientJoined++
		}
	}
	rep.PerRequest = len(a.recs) > 0
	if !rep.PerRequest {
		rep.Note = "no request tasks (" + RequestTaskType + ") in the trace: the split is per goroutine class, not per request; mount agent.Middleware in the target for a per-request split"
	}
	a.bands(rep, poolNames)
	a.slowest(rep, poolNames)
	rep.Classes = a.classSplits(poolNames)
	r.Requests = rep
}

// bands aggregates the requests by latency band.
func (a *anatomyAcc) bands(rep *RequestsReport, poolNames []string) {
	n := len(a.recs)
	if n == 0 {
		return
	}
	totals := make([]int64, n)
	for i := range a.recs {
		totals[i] = a.recs[i].total
	}
	slices.Sort(totals)
	q := func(p float64) int64 { return totals[max(int(math.Ceil(p*float64(n)))-1, 0)] }
	p50, p90, p99 := q(0.50), q(0.90), q(0.99)
	defs := []Band{
		{Name: "<=p50", Quantile: 0, FromNs: totals[0], ToNs: p50},
		{Name: "p50-p90", Quantile: 0.5, FromNs: p50, ToNs: p90},
		{Name: "p90-p99", Quantile: 0.9, FromNs: p90, ToNs: p99},
		{Name: ">=p99", Quantile: 0.99, FromNs: p99, ToNs: totals[n-1]},
	}
	type acc struct {
		cats, kcats [numCats]float64
		pools       []float64
		n           int64
		slow        []int // record indexes, slowest first, at most bandSlowest
	}
	accs := make([]acc, len(defs))
	for i := range a.recs {
		rc := &a.recs[i]
		b := bandOf(rc.total, p50, p90, p99)
		ac := &accs[b]
		ac.n++
		for c := range numCats {
			ac.cats[c] += float64(rc.cats[c])
			ac.kcats[c] += float64(rc.kcats[c])
		}
		for p, ns := range rc.pools {
			ac.pools = grow(ac.pools, int32(p))
			ac.pools[p] += float64(ns)
		}
		ac.slow = insertSlow(ac.slow, i, a.recs)
	}
	for b, d := range defs {
		ac := &accs[b]
		if ac.n == 0 {
			continue
		}
		d.Requests = ac.n
		d.Split, d.TotalNs = shares(ac.cats[:], ac.pools, poolNames)
		d.Children, _ = shares(ac.kcats[:], nil, poolNames)
		for _, i := range ac.slow {
			d.Slowest = append(d.Slowest, a.request(i, nil, false, poolNames))
		}
		rep.Bands = append(rep.Bands, d)
	}
}

func bandOf(total, p50, p90, p99 int64) int {
	switch {
	case total >= p99:
		return 3
	case total <= p50:
		return 0
	case total <= p90:
		return 1
	}
	return 2
}

// bandSlowest is how many of its slowest requests a band lists.
const bandSlowest = 5

func insertSlow(s []int, i int, recs []reqRec) []int {
	pos, _ := slices.BinarySearchFunc(s, recs[i].total, func(j int, t int64) int { return cmp.Compare(t, recs[j].total) })
	if pos >= bandSlowest {
		return s
	}
	s = slices.Insert(s, pos, i)
	if len(s) > bandSlowest {
		s = s[:bandSlowest]
	}
	return s
}

// slowest lists the slowest requests with their timelines.
func (a *anatomyAcc) slowest(rep *RequestsReport, poolNames []string) {
	slices.SortFunc(a.slow, func(x, y slowReq) int {
		return cmp.Or(cmp.Compare(a.recs[y.rec].total, a.recs[x.rec].total), cmp.Compare(a.recs[x.rec].begin, a.recs[y.rec].begin))
	})
	for _, s := range a.slow {
		rep.Slowest = append(rep.Slowest, a.request(s.rec, s.segs, s.full, poolNames))
	}
}

// request describes record i; with segs, its timeline.
func (a *anatomyAcc) request(i int, segs []seg, full bool, poolNames []string) Request {
	rc := &a.recs[i]
	var cats, kcats [numCats]float64
	for c := range numCats {
		cats[c], kcats[c] = float64(rc.cats[c]), float64(rc.kcats[c])
	}
	var pools []float64
	for _, ns := range rc.pools {
		pools = append(pools, float64(ns))
	}
	rq := Request{Task: uint64(rc.task), Goroutine: int64(rc.goid), StartNs: int64(rc.begin - a.t0),
		HandlerNs: rc.handler, TotalNs: rc.total, ClientJoined: rc.client, ChildGoroutines: int64(rc.kids), Open: rc.open}
	if rc.seq >= 0 {
		rq.Seq = rc.seq
	}
	rq.Split, _ = shares(cats[:], pools, poolNames)
	rq.Children, _ = shares(kcats[:], nil, poolNames)
	if segs != nil {
		rq.Timeline = make([]Segment, 0, len(segs))
		for _, s := range segs {
			sg := Segment{AtNs: s.at, DurNs: s.dur, State: catStates[s.cat]}
			if s.pool > 0 {
				sg.Pool = poolName(poolNames, s.pool-1)
			}
			rq.Timeline = append(rq.Timeline, sg)
		}
		rq.TimelineCut = full
	}
	return rq
}

func poolName(names []string, i int32) string {
	if int(i) < len(names) {
		return names[i]
	}
	return "?"
}

// shares turns category totals into Shares of their sum, largest first:
// catPool is split by pool.
func shares(cats []float64, pools []float64, poolNames []string) ([]Share, int64) {
	var total float64
	for c, ns := range cats {
		if cat(c) != catIdle {
			total += ns
		}
	}
	s, _ := sharesOf(cats, pools, poolNames, int64(total))
	return s, int64(total)
}

// sharesOf turns category totals into Shares of total.
func sharesOf(cats []float64, pools []float64, poolNames []string, total int64) ([]Share, int64) {
	out := []Share{}
	add := func(st State, pool string, ns float64) {
		if ns < 1 {
			return
		}
		sh := Share{State: st, Pool: pool, Ns: int64(ns)}
		if total > 0 {
			sh.Pct = 100 * ns / float64(total)
		}
		out = append(out, sh)
	}
	for c, ns := range cats {
		switch cat(c) {
		case catIdle:
			continue
		case catPool:
			named := 0.0
			for p, pns := range pools {
				add(StatePool, poolName(poolNames, int32(p)), pns)
				named += pns
			}
			if rest := ns - named; rest >= 1 && len(pools) > 0 {
				add(StatePool, "?", rest)
			} else if len(pools) == 0 {
				add(StatePool, "", ns)
			}
		default:
			add(catStates[c], "", ns)
		}
	}
	slices.SortStableFunc(out, func(x, y Share) int { return cmp.Compare(y.Ns, x.Ns) })
	return out, total
}

// maxClasses is how many goroutine classes the per-class split lists.
const maxClasses = 8

// classSplits returns the busiest goroutine classes' splits.
func (a *anatomyAcc) classSplits(poolNames []string) []ClassSplit {
	type ranked struct {
		i      int
		active int64
	}
	var rs []ranked
	for i := range a.classes {
		c := &a.classes[i]
		if i >= len(a.gor.groups) || a.gor.groups[i].tracer {
			continue
		}
		active := c.cats[catRunning] + c.cats[catRunnable] + c.cats[catGCAssist] + c.cats[catSyscall] + c.cats[catCgo]
		if active > 0 {
			rs = append(rs, ranked{i, active})
		}
	}
	slices.SortFunc(rs, func(x, y ranked) int {
		return cmp.Or(cmp.Compare(y.active, x.active), cmp.Compare(a.gor.groups[x.i].name, a.gor.groups[y.i].name))
	})
	// The busiest classes, and always the serving goroutines and the HTTP
	// clients' response readers (what a wait for a response depends on).
	keep := rs[:min(len(rs), maxClasses)]
	for _, r := range rs[len(keep):] {
		if name := a.gor.groups[r.i].name; isServingClass(name) || name == ReadLoopClass {
			keep = append(keep, r)
		}
	}
	out := []ClassSplit{}
	for _, r := range keep {
		c := &a.classes[r.i]
		var cats, created [numCats]float64
		for k := range numCats {
			cats[k], created[k] = float64(c.cats[k]), float64(c.created[k])
		}
		var pools []float64
		for p, ns := range c.pools {
			pools = grow(pools, p)
			pools[p] = float64(ns)
		}
		cs := ClassSplit{Class: a.gor.groups[r.i].name, Goroutines: a.gor.groups[r.i].goroutines,
			IdleNs: c.cats[catIdle], CreatedGoroutines: c.kids, Serving: isServingClass(a.gor.groups[r.i].name)}
		cs.Split, cs.TotalNs = shares(cats[:], pools, poolNames)
		if c.kids > 0 {
			cs.Created, _ = shares(created[:], nil, poolNames)
		}
		out = append(out, cs)
	}
	return out
}

// ReadLoopClass is the class of net/http's client goroutines that read
// each connection's responses: an HTTP client waiting for its response
// (StateHTTP) waits for one of them.
const ReadLoopClass = "net/http.(*persistConn).readLoop"

// isServingClass reports whether goroutines starting in fn serve requests:
// net/http's connection goroutines (the handlers run on them).
func isServingClass(fn string) bool {
	return fn == "net/http.(*conn).serve" || strings.HasPrefix(fn, "golang.org/x/net/http2.(*serverConn).")
}
