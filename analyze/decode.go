package analyze

import (
	"strconv"
	"strings"

	"golang.org/x/exp/trace"
)

// recKind is what a record holds.
type recKind uint8

const (
	recOther      recKind = iota // an event no accumulator reads beyond its time and thread
	recSync                      // a generation boundary
	recGo                        // a goroutine state transition
	recProc                      // a P state transition
	recSleepLog                  // SleepLogCategory on goroutine id: arg ns requested
	recLockLog                   // LockLogCategory on goroutine id: sub is lockOp
	recGOMAXPROCS                // the /sched/gomaxprocs:threads metric: arg
	recRangeBegin                // a GC or stop-the-world range: sub is rangeKind, id and scope its resource
	recRangeActive
	recRangeEnd
	recHandlerBegin // HandlerRegionType region on goroutine id: arg task
	recHandlerEnd
	recWaitBegin // a WaitRegionPrefix region on goroutine id: arg task, arg2 pool index
	recWaitEnd
	recRegionBegin // any other region of a task on goroutine id: arg task
	recRegionEnd
	recReqLog // RequestLogCategory on task id: arg start, arg2 intended, arg3 seq; sub reqLog flags
)

// reqLog flags of a recReqLog record (record.sub).
const (
	reqHasID = 1 << iota // the request carried the generator's header
	reqTagOK             // ... with Options.RequestTag's tag
)

// Wait categories of a goroutine transition into Waiting, as cmd/trace's
// profiles see them (record.flags).
const (
	waitNet     = 1 << iota // reason "network": -pprof=net
	waitSync                // reason containing "chan", "sync" or "select": -pprof=sync
	waitForever             // reason "forever": the goroutine's end for cmd/trace
)

// lockOp is a LockLogCategory message.
const (
	lockOpLock = iota + 1
	lockOpUnlock
)

// record is one trace event reduced to what the accumulators read, small
// and pointer-free: each event is decoded once (its state transition taken
// apart, its reason classified, its stack interned) and no accumulator
// calls a trace.Event method. decoder.decode fills it.
type record struct {
	t      trace.Time
	thread trace.ThreadID
	id     int64   // goroutine (recGo, logs, regions), P (recProc), task (recReqLog) or range scope id
	arg    int64   // recSleepLog: ns requested; recGOMAXPROCS: the value; recGo from NotExist: the creator; regions: the task
	arg2   int64   // recWaitBegin/End: pool index; recReqLog: intended send, unix ns
	arg3   int64   // recReqLog: the request's sequence number
	stack  stackID // recGo: the transition's stack (StateTransition.Stack), 0 none
	kind   recKind
	from   uint8 // recGo: trace.GoState; recProc: trace.ProcState
	to     uint8
	sub    uint8 // recGo: cause (into Waiting, or Running->Runnable); logs: lockOp; ranges: rangeKind
	flags  uint8 // recGo: wait categories; ranges: the scope's trace.ResourceKind
}

// decoder turns trace events into records. It owns the stack interner.
// Not safe for concurrent use.
type decoder struct {
	stacks *stackTable
	tag    string           // Options.RequestTag
	pools  map[string]int32 // wait region pool names, by name
	// poolNames holds the pool names by index; the accumulators read it
	// only after the last event (the decoder and they run on one goroutine).
	poolNames []string
}

func newDecoder(tag string) *decoder {
	return &decoder{stacks: newStackTable(), tag: tag, pools: make(map[string]int32)}
}

// pool returns the index of the pool named name.
func (d *decoder) pool(name string) int32 {
	if i, ok := d.pools[name]; ok {
		return i
	}
	if len(d.poolNames) >= maxPools {
		return d.pool("(other pools)")
	}
	i := int32(len(d.poolNames))
	name = strings.Clone(name)
	d.poolNames = append(d.poolNames, name)
	d.pools[name] = i
	return i
}

// maxPools bounds the distinct pool names (a program naming a wait after
// each request would otherwise grow the table without end).
const maxPools = 64

// decode fills r, which must be zero, from ev. New stacks it interns wait
// in the stack table for stackTable.takeNew.
func (d *decoder) decode(ev *trace.Event, r *record) {
	r.t, r.thread = ev.Time(), ev.Thread()
	switch ev.Kind() {
	case trace.EventSync:
		r.kind = recSync
		d.stacks.newGeneration()
	case trace.EventStateTransition:
		st := ev.StateTransition()
		switch st.Resource.Kind {
		case trace.ResourceGoroutine:
			from, to := st.Goroutine()
			r.kind = recGo
			r.id = int64(st.Resource.Goroutine())
			r.from, r.to = uint8(from), uint8(to)
			if st.Stack != trace.NoStack {
				r.stack = d.stacks.intern(st.Stack)
			}
			if from == trace.GoNotExist {
				r.arg = int64(ev.Goroutine())
			}
			switch {
			case to == trace.GoWaiting:
				r.sub = uint8(blockCause(st.Reason))
				r.flags = waitFlags(st.Reason)
			case from == trace.GoRunning && to == trace.GoRunnable:
				r.sub = uint8(causePreempted)
				if st.Reason == "runtime.Gosched" {
					r.sub = uint8(causeGosched)
				}
			}
		case trace.ResourceProc:
			from, to := st.Proc()
			r.kind = recProc
			r.id = int64(st.Resource.Proc())
			r.from, r.to = uint8(from), uint8(to)
		}
	case trace.EventLog:
		l := ev.Log()
		switch l.Category {
		case SleepLogCategory:
			n, err := strconv.ParseInt(strings.TrimSpace(l.Message), 10, 64)
			if err != nil || n <= 0 {
				return
			}
			r.kind, r.id, r.arg = recSleepLog, int64(ev.Goroutine()), n
		case LockLogCategory:
			switch strings.TrimSpace(l.Message) {
			case "lock":
				r.sub = lockOpLock
			case "unlock":
				r.sub = lockOpUnlock
			default:
				return
			}
			r.kind, r.id = recLockLog, int64(ev.Goroutine())
		case RequestLogCategory:
			d.requestLog(l, r)
		}
	case trace.EventRegionBegin, trace.EventRegionEnd:
		rg := ev.Region()
		if rg.Task == trace.NoTask || rg.Task == trace.BackgroundTask {
			return
		}
		begin := ev.Kind() == trace.EventRegionBegin
		r.id, r.arg = int64(ev.Goroutine()), int64(rg.Task)
		switch {
		case rg.Type == HandlerRegionType:
			r.kind = pick(begin, recHandlerBegin, recHandlerEnd)
		case strings.HasPrefix(rg.Type, WaitRegionPrefix):
			r.kind = pick(begin, recWaitBegin, recWaitEnd)
			r.arg2 = int64(d.pool(rg.Type[len(WaitRegionPrefix):]))
		default:
			r.kind = pick(begin, recRegionBegin, recRegionEnd)
		}
	case trace.EventMetric:
		m := ev.Metric()
		if m.Name == "/sched/gomaxprocs:threads" && m.Value.Kind() == trace.ValueUint64 {
			r.kind, r.arg = recGOMAXPROCS, int64(m.Value.Uint64())
		}
	case trace.EventRangeBegin, trace.EventRangeActive, trace.EventRangeEnd:
		rg := ev.Range()
		k, ok := rangeKindOf(rg.Name)
		if !ok {
			return
		}
		switch ev.Kind() {
		case trace.EventRangeBegin:
			r.kind = recRangeBegin
		case trace.EventRangeActive:
			r.kind = recRangeActive
		default:
			r.kind = recRangeEnd
		}
		r.sub = k
		r.flags = uint8(rg.Scope.Kind)
		switch rg.Scope.Kind {
		case trace.ResourceGoroutine:
			r.id = int64(rg.Scope.Goroutine())
		case trace.ResourceProc:
			r.id = int64(rg.Scope.Proc())
		case trace.ResourceThread:
			r.id = int64(rg.Scope.Thread())
		}
	}
}

func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// requestLog decodes the middleware's request log: "<handler start unix
// ns>", then " <tag>-<seq> <intended send unix ns>" when the request
// carried the generator's header.
func (d *decoder) requestLog(l trace.Log, r *record) {
	if l.Task == trace.NoTask || l.Task == trace.BackgroundTask {
		return
	}
	f := strings.Fields(l.Message)
	if len(f) != 1 && len(f) != 3 {
		return
	}
	start, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || start <= 0 {
		return
	}
	r.kind, r.id, r.arg = recReqLog, int64(l.Task), start
	if len(f) != 3 {
		return
	}
	i := strings.LastIndexByte(f[1], '-')
	intended, err1 := strconv.ParseInt(f[2], 10, 64)
	seq, err2 := strconv.ParseUint(f[1][i+1:], 10, 63)
	if i <= 0 || err1 != nil || err2 != nil || intended <= 0 {
		return
	}
	r.sub = reqHasID
	r.arg2, r.arg3 = intended, int64(seq)
	if d.tag != "" && f[1][:i] == d.tag {
		r.sub |= reqTagOK
	}
}

// waitFlags returns the wait categories of a transition into Waiting for
// reason (cmd/trace/pprof.go: computePprofBlock and -IO; its summarizer
// ends a goroutine at a "forever" wait).
func waitFlags(reason string) uint8 {
	var f uint8
	switch {
	case reason == "network":
		f = waitNet
	case strings.Contains(reason, "chan") || strings.Contains(reason, "sync") || strings.Contains(reason, "select"):
		f = waitSync
	case reason == "forever":
		f = waitForever
	}
	return f
}

// rangeKind is a range procAcc follows.
const (
	rangeGCMark uint8 = iota
	rangeSTW
	rangeAssist
)

func rangeKindOf(name string) (uint8, bool) {
	switch {
	case name == "GC concurrent mark phase":
		return rangeGCMark, true
	case strings.HasPrefix(name, "stop-the-world"):
		return rangeSTW, true
	case name == "GC mark assist":
		return rangeAssist, true
	}
	return 0, false
}
