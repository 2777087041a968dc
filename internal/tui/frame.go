package tui

import (
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// Frame is one snapshot of a live run, the dashboard's only input. A run
// sends one about every 250 ms; each Frame is complete (not a delta), so the
// dashboard can start at any Frame and a dropped Frame costs nothing.
//
// Zero values mean "unknown" and are shown as "-": a Frame with only Load set
// is valid (a run against a target without the in-target agent).
type Frame struct {
	// Title names what is running, e.g. "sleep 50 ms · pool model (200 workers)".
	// A change of Title starts a new stage: the latency chart marks it.
	Title string

	// Note is one sentence shown under the title: a guided tour's narration
	// ("the pool's ceiling is 1,000 req/s; the next step offers 1,500").
	Note string

	// Phase is where the run is in its plan.
	Phase Phase

	// Load holds the load generator's figures.
	Load Load

	// Runtime holds the target's Go runtime figures; nil before the first
	// poll or when the target gives none (the panel says so). A target with
	// only net/http/pprof gives goroutines and threads (Runtime.PprofOnly).
	Runtime *Runtime

	// Pools are the target's bounded resources (worker pools, connection
	// pools), in the order to show them.
	Pools []Pool

	// CPUPerRequest is the target's CPU time per completed request over the
	// latest interval; 0 when unknown.
	CPUPerRequest time.Duration

	// Verdicts are the conclusions that hold now, each with its numbers. A
	// verdict that stops holding is simply left out of the next Frame.
	Verdicts []Verdict

	// End, when non-nil, marks the run's last Frame: the dashboard switches to
	// the end screen and shows this summary.
	End *Summary
}

// Phase is a run's position in its plan (warm-up, pause, one step per rate).
type Phase struct {
	// Name is what the phase does, e.g. "warm-up" or "measure 400 req/s".
	Name string
	// Index is the 1-based number of this phase among Count; 0 when unknown.
	Index, Count int
	// Elapsed and Duration are the time spent in this phase and its planned
	// length; Duration 0 means open-ended (no progress bar).
	Elapsed, Duration time.Duration
	// RunElapsed is the time since the run (or demo) started: the x axis of
	// the charts. It must not decrease from one Frame to the next.
	RunElapsed time.Duration
}

// Load holds the load generator's figures for the latest interval (rates,
// latencies) and since the phase started (counters).
type Load struct {
	// OfferedPerSec is the planned arrival rate (open model), or 0 for a
	// closed model.
	OfferedPerSec float64
	// AchievedPerSec is the rate of 2xx responses.
	AchievedPerSec float64
	// Users is the number of closed-model users; 0 for an open model.
	Users int
	// Sent counts requests sent; OK counts 2xx responses.
	Sent, OK int64
	// NotSent counts requests that were due while every in-flight slot was
	// busy, so were never sent (they are part of the offered load).
	NotSent int64
	// InFlight is the number of requests awaiting an answer now.
	InFlight int
	// Errors counts failed requests by class ("timeout", "5xx", "connect"...),
	// in the order to show them.
	Errors []ErrorCount
	// P50, P95 and P99 are response latencies measured from each request's
	// intended send time (so a stalled server cannot hide its queue).
	P50, P95, P99 time.Duration
}

// ErrorCount is the number of failed requests of one class.
type ErrorCount struct {
	Class string
	Count int64
}

// Runtime holds the target's Go runtime figures (runtime/metrics), read by
// the in-target agent; or, with PprofOnly, the two that net/http/pprof's
// profiles give.
type Runtime struct {
	// PprofOnly is true when the target has net/http/pprof but no agent:
	// only Goroutines (the goroutine profile) and Threads are known, every
	// other figure is zero, and the panel says the rest needs the agent.
	PprofOnly bool
	// ThreadsCreated is true when Threads counts the threads the target
	// ever created (pprof's threadcreate profile) rather than those it has
	// now.
	ThreadsCreated bool

	// GOMAXPROCS is the number of Ps.
	GOMAXPROCS int
	// Goroutines is the total; Running, Runnable, Waiting and Syscall split it
	// by state (/sched/goroutines/*; Syscall is "not-in-go").
	Goroutines, Running, Runnable, Waiting, Syscall int
	// Threads is /sched/threads/total:threads.
	Threads int
	// SchedLatencyP99 is the p99 of /sched/latencies:seconds over the latest
	// interval. The runtime samples 1 transition in 8, so it is a rough live
	// signal, not the trace's figure; the dashboard labels it "sampled".
	SchedLatencyP99 time.Duration
	// GCPauseP99 is the p99 stop-the-world GC pause over the latest interval;
	// GCCycles counts GC cycles since the target started.
	GCPauseP99 time.Duration
	GCCycles   uint64
}

// Pool is one bounded resource in the target.
type Pool struct {
	// Name identifies the pool, e.g. "workers" or "db".
	Name string
	// InUse of Size slots are taken; Waiting callers queue for a slot.
	InUse, Size, Waiting int
}

// Verdict is one conclusion with the numbers behind it.
type Verdict struct {
	// Kind classifies the conclusion (rundir's one taxonomy); the dashboard
	// styles the verdict by it. The zero Kind is shown as neutral.
	Kind rundir.Kind
	// Title is the conclusion in a few words: "pool workers is saturated".
	Title string
	// Detail gives its numbers: "200/200 in use, 830 waiting; predicted
	// capacity 3,704 req/s (Little's law: 200 / 54 ms)".
	Detail string
}

// Summary is what the end screen shows, and what plain output prints last.
type Summary struct {
	// Title heads the end screen, e.g. "run finished" or "demo: pool vs goroutine".
	Title string
	// Err, when not empty, is why the run failed (it may have failed before
	// it measured anything): the end screen shows it first.
	Err string
	// Table is the result table (one row per phase, model or step).
	Table Table
	// Verdicts are the run's conclusions.
	Verdicts []Verdict
	// Notes are plain sentences shown under the table (the lesson, caveats).
	Notes []string
	// RunDirs are the run directories written, shown so a person can find them.
	RunDirs []string
	// Next are the commands to try next on the run directories, shown
	// last so they are what the person reads when the program ends.
	Next []NextStep
	// Stopped is true when the run was stopped before its plan ended
	// (q, Ctrl-C); what ran is still saved.
	Stopped bool
}

// NextStep is a command line a person can run next, and what it shows.
type NextStep struct {
	// Command is the whole command line, with the real directory names:
	// "schedscope analyze --tui demo-20261204-182000-pool".
	Command string
	// Does says in a few words what it shows or writes.
	Does string
}

// Table is a small text table: a header row and data rows of cells.
type Table struct {
	Header []string
	Rows   [][]string
}
