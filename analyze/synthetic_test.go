package analyze

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/exp/trace"
)

// synth builds synthetic events with trace.MakeEvent.
type synth struct {
	t   *testing.T
	evs []trace.Event
}

func (s *synth) add(ev trace.Event, err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatalf("MakeEvent: %v", err)
	}
	s.evs = append(s.evs, ev)
}

func (s *synth) sync(at trace.Time) {
	s.add(trace.MakeEvent(trace.EventConfig[trace.Sync]{Time: at, Kind: trace.EventSync, Goroutine: trace.NoGoroutine, Proc: trace.NoProc, Thread: trace.NoThread}))
}

// g records goroutine id going from -> to at time at, on thread th, with
// reason and the stack of the executing context.
func (s *synth) g(at trace.Time, th trace.ThreadID, id trace.GoID, from, to trace.GoState, reason string, stack trace.Stack) {
	st := trace.MakeGoStateTransition(id, from, to)
	st.Reason = reason
	if from == trace.GoNotExist {
		st.Stack = stack
	}
	cur := trace.NoGoroutine
	if from == trace.GoRunning || from == trace.GoSyscall {
		cur = id
	}
	s.add(trace.MakeEvent(trace.EventConfig[trace.StateTransition]{
		Time: at, Kind: trace.EventStateTransition, Goroutine: cur, Proc: 0, Thread: th, Stack: stack, Details: st,
	}))
}

func (s *synth) log(at trace.Time, th trace.ThreadID, id trace.GoID, cat, msg string) {
	s.add(trace.MakeEvent(trace.EventConfig[trace.Log]{
		Time: at, Kind: trace.EventLog, Goroutine: id, Proc: 0, Thread: th, Details: trace.Log{Task: trace.NoTask, Category: cat, Message: msg},
	}))
}

func (s *synth) report(opts Options) *Report {
	a := newAnalyzer(opts)
	for i := range s.evs {
		a.Event(&s.evs[i])
	}
	return a.Result()
}

func stk(frames ...string) trace.Stack {
	var fs []trace.StackFrame
	for i, f := range frames {
		fs = append(fs, trace.StackFrame{PC: uint64(0x1000 + 16*i + len(f)), Func: f, File: "/src/" + f + ".go", Line: uint64(10 + i)})
	}
	return trace.MakeStack(fs)
}

const (
	nx  = trace.GoNotExist
	und = trace.GoUndetermined
	rbl = trace.GoRunnable
	run = trace.GoRunning
	wt  = trace.GoWaiting
	sys = trace.GoSyscall
)

func TestCompatClipsCreationAndCountsWakeups(t *testing.T) {
	s := &synth{t: t}
	start := stk("main.worker")
	s.sync(1)
	s.g(10, 1, 5, nx, rbl, "", start)
	s.g(20, 1, 5, rbl, run, "", trace.NoStack)
	s.g(30, 1, 5, run, wt, "chan receive", stk("runtime.chanrecv1", "main.worker"))
	s.g(50, 2, 5, wt, rbl, "", stk("main.sender"))
	s.g(60, 1, 5, rbl, run, "", trace.NoStack)
	s.g(70, 1, 5, run, nx, "", trace.NoStack)
	s.sync(100)
	r := s.report(Options{})
	if want := (Totals{Count: 1, TotalNs: 10}); r.Sched.Compat != want {
		t.Errorf("sched compat %+v, want %+v (creation wait excluded)", r.Sched.Compat, want)
	}
	if want := (Totals{Count: 1, TotalNs: 20}); r.Sync.Compat != want {
		t.Errorf("sync compat %+v, want %+v", r.Sync.Compat, want)
	}
	if r.Sched.Creation.Count != 1 || r.Sched.Creation.TotalNs != 10 {
		t.Errorf("creation %+v, want 1 of 10ns", r.Sched.Creation)
	}
	if r.Sched.Count != 1 || r.Sched.TotalNs != 10 || len(r.Sched.ByCause) != 1 || r.Sched.ByCause[0].Cause != "chan" {
		t.Errorf("sched count %d total %d by cause %+v, want one chan wake-up of 10ns", r.Sched.Count, r.Sched.TotalNs, r.Sched.ByCause)
	}
	if len(r.Sched.ByGroup) == 0 || r.Sched.ByGroup[0].StartFunc != "main.worker" {
		t.Errorf("by group %+v, want main.worker first", r.Sched.ByGroup)
	}
	if r.Goroutines.Created != 1 || r.Goroutines.Ended != 1 || r.Goroutines.Peak != 1 {
		t.Errorf("goroutines %+v", r.Goroutines)
	}
	if len(r.Blocking.Reasons) == 0 || r.Blocking.Reasons[0].Reason != "chan" || r.Blocking.Reasons[0].Sites[0].Func != "main.worker" {
		t.Errorf("blocking %+v, want chan at main.worker", r.Blocking.Reasons)
	}
}

func TestCompatPendingIntervalsOfGoroutinesThatNeverRan(t *testing.T) {
	s := &synth{t: t}
	s.sync(1)
	// Goroutine 7 is in a syscall from the trace start, loses its P, and
	// never runs: cmd/trace clips to [0, end], so the syscall counts in full.
	s.g(5, 1, 7, und, sys, "", trace.NoStack)
	s.g(15, 1, 7, sys, rbl, "", trace.NoStack)
	// Goroutine 8 does the same but runs later: its syscall ends before its
	// first start, so it does not count.
	s.g(5, 2, 8, und, sys, "", trace.NoStack)
	s.g(25, 2, 8, sys, rbl, "", trace.NoStack)
	s.g(40, 2, 8, rbl, run, "", trace.NoStack)
	// Status events carry no reason: a wait begun before the trace is never
	// in the sync profile.
	s.g(5, 3, 9, und, wt, "chan send", trace.NoStack)
	s.g(25, 2, 9, wt, rbl, "", trace.NoStack)
	s.sync(100)
	r := s.report(Options{})
	if want := (Totals{Count: 1, TotalNs: 10}); r.Syscall.Compat != want {
		t.Errorf("syscall compat %+v, want %+v", r.Syscall.Compat, want)
	}
	if r.Sync.Compat != (Totals{}) {
		t.Errorf("sync compat %+v, want zero", r.Sync.Compat)
	}
	if r.Sched.Compat != (Totals{}) {
		t.Errorf("sched compat %+v, want zero (the only closed Runnable interval precedes the first start)", r.Sched.Compat)
	}
}

// lockedScenario has goroutine 3 woken n times; waker is the thread that
// unblocks it, runOn the thread it then runs on, and intruder, when not
// zero, a goroutine that runs on thread 1 between the wake-ups.
func lockedScenario(t *testing.T, n int, waker trace.ThreadID, intruder trace.GoID) *Report {
	s := &synth{t: t}
	s.sync(1)
	s.g(2, 1, 3, nx, rbl, "", stk("main.locked"))
	s.g(3, 1, 3, rbl, run, "", trace.NoStack)
	at := trace.Time(10)
	block := stk("runtime.chanrecv1", "main.locked")
	for i := 0; i < n; i++ {
		s.g(at, 1, 3, run, wt, "chan receive", block)
		if intruder != 0 && i == n/2 {
			s.g(at+1, 1, intruder, und, rbl, "", trace.NoStack)
			s.g(at+2, 1, intruder, rbl, run, "", trace.NoStack)
			s.g(at+3, 1, intruder, run, wt, "select", trace.NoStack)
		}
		at += trace.Time(30 * time.Millisecond)
		s.g(at, waker, 3, wt, rbl, "", trace.NoStack)
		s.g(at+1000, 1, 3, rbl, run, "", trace.NoStack)
		at += 5000
	}
	s.sync(at + 10)
	return s.report(Options{})
}

func TestLockedInference(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		waker    trace.ThreadID
		intruder trace.GoID
		locked   bool
	}{
		{"woken by others, resumes on its thread", 3, 2, 0, true},
		{"one wake-up is not enough", 1, 2, 0, false},
		{"its own thread woke it: not locked (the timer pitfall)", 3, 1, 0, false},
		{"another goroutine ran on the thread", 2, 2, 9, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := lockedScenario(t, tt.n, tt.waker, tt.intruder)
			got := len(r.Pinned.LockedGoroutines) == 1
			if got != tt.locked {
				t.Fatalf("locked goroutines %+v, want locked=%v", r.Pinned.LockedGoroutines, tt.locked)
			}
			if !got {
				for _, e := range r.Pinned.Events {
					if e.Kind == "locked" {
						t.Errorf("locked span %+v for a goroutine that is not locked", e)
					}
				}
				return
			}
			l := r.Pinned.LockedGoroutines[0]
			if l.GoID != 3 || l.StartFunc != "main.locked" || l.Thread != 1 || l.Wakeups != int64(tt.n) || l.HandoffMaxNs != 1000 {
				t.Errorf("locked goroutine %+v", l)
			}
			if len(r.Pinned.Events) != tt.n {
				t.Fatalf("pinned events %d, want %d locked spans", len(r.Pinned.Events), tt.n)
			}
			e := r.Pinned.Events[0]
			if e.Kind != "locked" || e.Func != "main.locked" || e.Thread != 1 || e.DurationNs < int64(30*time.Millisecond) {
				t.Errorf("locked span %+v", e)
			}
		})
	}
}

func TestSyscallAndCgoSpans(t *testing.T) {
	s := &synth{t: t}
	s.sync(1)
	s.g(2, 1, 4, nx, rbl, "", stk("main.caller"))
	s.g(3, 1, 4, rbl, run, "", trace.NoStack)
	ms := trace.Time(time.Millisecond)
	// A 30 ms cgo call that loses its P, a 25 ms syscall that keeps it, a
	// 1 ms syscall (below the threshold).
	s.g(10, 1, 4, run, sys, "", stk("main._Cfunc_slow", "main.callC", "main.caller"))
	s.g(10+30*ms, 1, 4, sys, rbl, "", trace.NoStack)
	s.g(11+30*ms, 2, 4, rbl, run, "", trace.NoStack)
	at := 20 + 30*ms
	s.g(at, 2, 4, run, sys, "", stk("syscall.read", "os.(*File).Read", "main.readIt", "main.caller"))
	s.g(at+25*ms, 2, 4, sys, run, "", trace.NoStack)
	at += 30 * ms
	s.g(at, 2, 4, run, sys, "", stk("syscall.read", "main.readIt", "main.caller"))
	s.g(at+ms, 2, 4, sys, run, "", trace.NoStack)
	s.sync(at + 2*ms)
	r := s.report(Options{})
	if len(r.Pinned.Events) != 2 {
		t.Fatalf("pinned events %+v, want 2", r.Pinned.Events)
	}
	c, y := r.Pinned.Events[0], r.Pinned.Events[1]
	if c.Kind != "cgo" || c.Func != "main.callC" || c.Target != "main._Cfunc_slow" || !c.PLost || c.Thread != 1 || c.DurationNs != int64(30*ms) {
		t.Errorf("cgo span %+v", c)
	}
	if y.Kind != "syscall" || y.Func != "os.(*File).Read" || y.Target != "syscall.read" || y.PLost || y.Thread != 2 {
		t.Errorf("syscall span %+v", y)
	}
	if r.Syscall.Count != 3 || r.Syscall.PLost != 1 || r.Syscall.Cgo.Count != 1 {
		t.Errorf("syscall %+v", r.Syscall)
	}
	if want := (Totals{Count: 3, TotalNs: int64(56 * ms)}); r.Syscall.Compat != want {
		t.Errorf("syscall compat %+v, want %+v", r.Syscall.Compat, want)
	}
	if len(stackFuncs(c.Stack)) != 3 {
		t.Errorf("cgo span stack %+v, want 3 frames", c.Stack)
	}
}

func stackFuncs(fs []Frame) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Func)
	}
	return out
}

func TestTracerWriterReportedApart(t *testing.T) {
	s := &synth{t: t}
	s.sync(1)
	s.g(2, 1, 4, nx, rbl, "", stk("runtime/trace.(*traceMultiplexer).startLocked.func1"))
	s.g(3, 1, 4, rbl, run, "", trace.NoStack)
	s.g(10, 1, 4, run, sys, "", stk("syscall.write", "os.(*File).Write", "runtime/trace.(*traceMultiplexer).startLocked.func1"))
	s.g(10+trace.Time(50*time.Millisecond), 1, 4, sys, run, "", trace.NoStack)
	s.sync(20 + trace.Time(50*time.Millisecond))
	r := s.report(Options{})
	if len(r.Pinned.Events) != 0 || len(r.Pinned.Tracer) != 1 {
		t.Errorf("events %+v tracer %+v, want the span under tracer only", r.Pinned.Events, r.Pinned.Tracer)
	}
}

func TestSleepOvershootFromAnnotation(t *testing.T) {
	ms := trace.Time(time.Millisecond)
	build := func(annotate bool) *Report {
		s := &synth{t: t}
		s.sync(1)
		s.g(2, 1, 6, nx, rbl, "", stk("main.sleeper"))
		s.g(3, 1, 6, rbl, run, "", trace.NoStack)
		at := trace.Time(10)
		for i := 0; i < 3; i++ {
			if annotate {
				s.log(at, 1, 6, SleepLogCategory, "10000000")
			}
			s.g(at+1, 1, 6, run, wt, "sleep", stk("time.Sleep", "main.sleeper"))
			s.g(at+1+11*ms, 2, 6, wt, rbl, "", trace.NoStack)
			s.g(at+1+12*ms, 2, 6, rbl, run, "", trace.NoStack)
			at += 20 * ms
		}
		s.sync(at)
		return s.report(Options{})
	}
	r := build(true)
	if len(r.Sleep.Sites) != 1 {
		t.Fatalf("sleep sites %+v", r.Sleep.Sites)
	}
	ss := r.Sleep.Sites[0]
	if ss.Func != "main.sleeper" || ss.Count != 3 || ss.RequestedNs != int64(10*ms) || ss.Overshoot == nil {
		t.Fatalf("site %+v", ss)
	}
	if ss.Overshoot.PercentilesNs.Max != int64(2*ms) || ss.PostWake.PercentilesNs.Max != int64(ms) || ss.Blocked.PercentilesNs.Max != int64(11*ms) {
		t.Errorf("overshoot %+v post-wake %+v blocked %+v", ss.Overshoot, ss.PostWake, ss.Blocked)
	}
	if r := build(false); r.Sleep.Sites[0].Overshoot != nil || r.Sleep.Sites[0].RequestedNs != 0 {
		t.Errorf("without annotation: %+v, want no overshoot", r.Sleep.Sites[0])
	}
}

func TestLockAnnotation(t *testing.T) {
	s := &synth{t: t}
	ms := trace.Time(time.Millisecond)
	s.sync(1)
	s.g(2, 1, 3, nx, rbl, "", stk("main.handler"))
	s.g(3, 1, 3, rbl, run, "", trace.NoStack)
	s.log(4, 1, 3, LockLogCategory, "lock")
	// One 30 ms wait, woken by its own thread: inference alone rejects it.
	s.g(10, 1, 3, run, wt, "select", stk("runtime.selectgo", "main.lockedWait", "main.handler"))
	s.g(10+30*ms, 1, 3, wt, rbl, "", trace.NoStack)
	s.g(11+30*ms, 1, 3, rbl, run, "", trace.NoStack)
	s.log(12+30*ms, 1, 3, LockLogCategory, "unlock")
	// Unlocked now: a long wait is not a locked span.
	s.g(20+30*ms, 1, 3, run, wt, "select", stk("runtime.selectgo", "main.handler"))
	s.g(20+60*ms, 2, 3, wt, rbl, "", trace.NoStack)
	s.g(21+60*ms, 1, 3, rbl, run, "", trace.NoStack)
	s.sync(30 + 60*ms)
	r := s.report(Options{})
	if len(r.Pinned.LockedGoroutines) != 1 {
		t.Fatalf("locked goroutines %+v, want the annotated one", r.Pinned.LockedGoroutines)
	}
	if l := r.Pinned.LockedGoroutines[0]; !l.Annotated || l.Wakeups != 1 || l.Thread != 1 || l.StartFunc != "main.handler" {
		t.Errorf("locked goroutine %+v", l)
	}
	if len(r.Pinned.Events) != 1 || r.Pinned.Events[0].Kind != "locked" || r.Pinned.Events[0].Func != "main.lockedWait" {
		t.Errorf("pinned events %+v, want one locked span at main.lockedWait", r.Pinned.Events)
	}
	// Without the annotation nothing is inferred.
	s2 := &synth{t: t}
	for _, ev := range s.evs {
		if ev.Kind() != trace.EventLog {
			s2.evs = append(s2.evs, ev)
		}
	}
	if r := s2.report(Options{}); len(r.Pinned.LockedGoroutines) != 0 || len(r.Pinned.Events) != 0 {
		t.Errorf("without annotation: %+v %+v", r.Pinned.LockedGoroutines, r.Pinned.Events)
	}
}

func TestSyscallSinceBeforeTheTraceIsUnattributed(t *testing.T) {
	s := &synth{t: t}
	s.sync(1)
	s.g(2, 5, 7, und, sys, "", trace.NoStack) // like os/signal.loop
	s.sync(2 + trace.Time(time.Second))
	r := s.report(Options{})
	if len(r.Pinned.Events) != 0 || len(r.Pinned.Unattributed) != 1 || !r.Pinned.Unattributed[0].Truncated {
		t.Errorf("events %+v unattributed %+v: want the span apart, truncated", r.Pinned.Events, r.Pinned.Unattributed)
	}
}

func (s *synth) proc(at trace.Time, th trace.ThreadID, id trace.ProcID, from, to trace.ProcState) {
	s.add(trace.MakeEvent(trace.EventConfig[trace.StateTransition]{
		Time: at, Kind: trace.EventStateTransition, Goroutine: trace.NoGoroutine, Proc: id, Thread: th,
		Details: trace.MakeProcStateTransition(id, from, to),
	}))
}

func (s *synth) rng(at trace.Time, kind trace.EventKind, name string, g trace.GoID) {
	scope := trace.ResourceID{}
	if g != trace.NoGoroutine {
		scope = trace.MakeResourceID(g)
	}
	s.add(trace.MakeEvent(trace.EventConfig[trace.Range]{
		Time: at, Kind: kind, Goroutine: g, Proc: 0, Thread: 1, Details: trace.Range{Name: name, Scope: scope},
	}))
}

func TestProcsGOMAXPROCSAndGC(t *testing.T) {
	s := &synth{t: t}
	s.sync(0)
	s.add(trace.MakeEvent(trace.EventConfig[trace.Metric]{Time: 1, Kind: trace.EventMetric, Goroutine: trace.NoGoroutine, Proc: 0, Thread: 1,
		Details: trace.Metric{Name: "/sched/gomaxprocs:threads", Value: trace.Uint64Value(2)}}))
	s.proc(10, 1, 0, trace.ProcIdle, trace.ProcRunning)
	s.proc(60, 1, 0, trace.ProcRunning, trace.ProcIdle)
	s.proc(20, 2, 1, trace.ProcIdle, trace.ProcRunning) // still running at the end
	s.rng(30, trace.EventRangeBegin, "stop-the-world (GOMAXPROCS)", 1)
	s.rng(34, trace.EventRangeEnd, "stop-the-world (GOMAXPROCS)", 1)
	s.add(trace.MakeEvent(trace.EventConfig[trace.Metric]{Time: 35, Kind: trace.EventMetric, Goroutine: trace.NoGoroutine, Proc: 0, Thread: 1,
		Details: trace.Metric{Name: "/sched/gomaxprocs:threads", Value: trace.Uint64Value(4)}}))
	s.rng(40, trace.EventRangeBegin, "GC concurrent mark phase", trace.NoGoroutine)
	s.rng(70, trace.EventRangeEnd, "GC concurrent mark phase", trace.NoGoroutine)
	s.sync(100)
	r := s.report(Options{})
	if r.Procs.GOMAXPROCS != 4 || len(r.Procs.Changes) != 2 || r.Procs.Changes[1].Value != 4 {
		t.Errorf("GOMAXPROCS %d changes %+v", r.Procs.GOMAXPROCS, r.Procs.Changes)
	}
	if len(r.Procs.Utilisation) != 2 || r.Procs.Utilisation[0].RunningNs != 50 || r.Procs.Utilisation[1].RunningNs != 80 {
		t.Errorf("utilisation %+v, want P0 50ns, P1 80ns", r.Procs.Utilisation)
	}
	if r.GC.STWCount != 1 || r.GC.STWNs != 4 || r.GC.Count != 1 || r.GC.MarkNs != 30 {
		t.Errorf("gc %+v", r.GC)
	}
	if r.Threads.Seen != 2 {
		t.Errorf("threads seen %d, want 2", r.Threads.Seen)
	}
}

// handoffScenario: goroutine 3 blocks on thread 1 (P0), is woken on thread
// 2 (P1); then stopper stops P1 and thread 1 starts P1 and runs goroutine
// 3. With stopper == the waker (2) that is runtime.startlockedm's hand-off.
func handoffScenario(t *testing.T, stopper trace.ThreadID, wakerLockedAndBlocked bool) *Report {
	s := &synth{t: t}
	ms := trace.Time(time.Millisecond)
	s.sync(1)
	s.proc(2, 1, 0, trace.ProcIdle, trace.ProcRunning)
	s.proc(2, 2, 1, trace.ProcIdle, trace.ProcRunning)
	s.g(3, 1, 3, nx, rbl, "", stk("main.handler"))
	s.g(4, 1, 3, rbl, run, "", trace.NoStack)
	s.g(5, 2, 8, nx, rbl, "", stk("main.waker"))
	s.g(6, 2, 8, rbl, run, "", trace.NoStack)
	s.g(10, 1, 3, run, wt, "select", stk("runtime.selectgo", "main.lockedWait", "main.handler"))
	s.proc(11, 1, 0, trace.ProcRunning, trace.ProcIdle)
	s.g(10+30*ms, 2, 3, wt, rbl, "", trace.NoStack)
	if wakerLockedAndBlocked {
		// Goroutine 8 was seen locked to thread 2 (annotated) and blocks:
		// thread 2 gives up its P because of its own lock.
		s.log(5+30*ms, 2, 8, LockLogCategory, "lock")
		s.g(11+30*ms, 2, 8, run, wt, "chan receive", stk("runtime.chanrecv1", "main.waker"))
	}
	s.proc(12+30*ms, stopper, 1, trace.ProcRunning, trace.ProcIdle)
	s.proc(13+30*ms, 1, 1, trace.ProcIdle, trace.ProcRunning)
	s.g(14+30*ms, 1, 3, rbl, run, "", trace.NoStack)
	s.sync(20 + 30*ms)
	return s.report(Options{})
}

func TestLockedByHandoff(t *testing.T) {
	r := handoffScenario(t, 2, false)
	var got []LockedGoroutine
	for _, l := range r.Pinned.LockedGoroutines {
		if l.GoID == 3 {
			got = append(got, l)
		}
	}
	if len(got) != 1 || got[0].Evidence != "hand-off" || got[0].Wakeups != 1 || got[0].Thread != 1 {
		t.Fatalf("locked %+v, want goroutine 3 by hand-off", r.Pinned.LockedGoroutines)
	}
	if len(r.Pinned.Events) != 1 || r.Pinned.Events[0].Func != "main.lockedWait" {
		t.Errorf("events %+v, want the 30 ms locked wait", r.Pinned.Events)
	}
	// Negative controls: the P came from a thread that did not wake it, or
	// the waker stopped its P because its own goroutine is locked there.
	for name, r := range map[string]*Report{
		"stopped by a third thread":      handoffScenario(t, 3, false),
		"waker locked to its own thread": handoffScenario(t, 2, true),
	} {
		for _, l := range r.Pinned.LockedGoroutines {
			if l.GoID == 3 {
				t.Errorf("%s: goroutine 3 reported locked: %+v", name, l)
			}
		}
	}
}

// TestSleepBlockedNotBelowRequested: 50 ms sleeps whose timers fire 50 µs
// late never read as shorter than requested (issue 15: the histogram's bucket
// midpoint printed "blocked p50 49.8ms" for them).
func TestSleepBlockedNotBelowRequested(t *testing.T) {
	us := trace.Time(time.Microsecond)
	s := &synth{t: t}
	s.sync(1)
	s.g(2, 1, 6, nx, rbl, "", stk("main.sleeper"))
	s.g(3, 1, 6, rbl, run, "", trace.NoStack)
	at := trace.Time(10)
	for range 5 {
		s.log(at, 1, 6, SleepLogCategory, "50000000")
		s.g(at+1, 1, 6, run, wt, "sleep", stk("time.Sleep", "main.sleeper"))
		s.g(at+1+50050*us, 2, 6, wt, rbl, "", trace.NoStack)
		s.g(at+1+50060*us, 2, 6, rbl, run, "", trace.NoStack)
		at += 60000 * us
	}
	s.sync(at)
	r := s.report(Options{})
	ss := r.Sleep.Sites[0]
	if p := ss.Blocked.PercentilesNs; p.P50 < ss.RequestedNs || p.P99 < ss.RequestedNs {
		t.Errorf("blocked p50 %d p99 %d ns, below the requested %d ns the sleeps all exceeded", p.P50, p.P99, ss.RequestedNs)
	}
	var b strings.Builder
	if err := WriteText(&b, r, 10); err != nil {
		t.Fatal(err)
	}
	if txt := b.String(); strings.Contains(txt, "49.8ms") || !strings.Contains(txt, "50.0ms") {
		t.Errorf("sleep section reads shorter than requested:\n%s", txt)
	}
}
