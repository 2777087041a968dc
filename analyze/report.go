package analyze

// This file holds the Report schema: the stable, JSON-tagged result of
// Trace. Field names and JSON keys are part of schedscope's public contract
// (docs/readme-analyze.md documents them); add fields, never rename them.

// SchemaVersion is the version of the Report JSON schema. It changes only
// when a field is removed or its meaning changes.
const SchemaVersion = 1

// Report is everything Trace learned from one execution trace. All
// durations are nanoseconds of trace time; all times (T…) are nanoseconds
// since the first event of the trace.
type Report struct {
	Schema      int    `json:"schema"`           // SchemaVersion
	Source      string `json:"source"`           // file name, "-" for stdin, or "" when read from an io.Reader
	Bytes       int64  `json:"bytes"`            // bytes read from the input
	Events      int64  `json:"events"`           // events read
	Generations int    `json:"generations"`      // trace generations (about one per second of tracing)
	DurationNs  int64  `json:"duration_ns"`      // last event time minus first event time
	PinThreshNs int64  `json:"pin_threshold_ns"` // Options.PinThreshold used for pinned.events

	Sched      SchedReport     `json:"sched"`
	Syscall    SyscallReport   `json:"syscall"`
	Sync       CompatOnly      `json:"sync"`
	Net        CompatOnly      `json:"net"`
	Sleep      SleepReport     `json:"sleep"`
	Pinned     PinnedReport    `json:"pinned"`
	Goroutines GoroutineReport `json:"goroutines"`
	Threads    ThreadReport    `json:"threads"`
	Procs      ProcReport      `json:"procs"`
	Blocking   BlockingReport  `json:"blocking"`
	GC         GCReport        `json:"gc"`
	Timeline   Timeline        `json:"timeline"`
	Requests   *RequestsReport `json:"requests,omitempty"` // the request anatomy
	Loss       *Loss           `json:"loss,omitempty"`     // set when the trace was truncated or corrupt
}

// Totals is a count of intervals and their summed duration.
type Totals struct {
	Count   int64 `json:"count"`
	TotalNs int64 `json:"total_ns"`
}

// Percentiles are latency quantiles in nanoseconds. They come from a
// log-linear histogram with at most 1/32 relative error; Max is exact.
type Percentiles struct {
	P50  int64 `json:"p50"`
	P90  int64 `json:"p90"`
	P95  int64 `json:"p95"`
	P99  int64 `json:"p99"`
	P999 int64 `json:"p999"`
	Max  int64 `json:"max"`
}

// Distribution summarises a set of durations.
type Distribution struct {
	Count         int64       `json:"count"`
	TotalNs       int64       `json:"total_ns"`
	PercentilesNs Percentiles `json:"percentiles_ns"`
}

// Bucket is one histogram bar: Count samples with a value below LeNs (and at
// or above the previous bucket's LeNs).
type Bucket struct {
	LeNs  int64 `json:"le_ns"`
	Count int64 `json:"count"`
}

// SchedReport is scheduling latency: the time goroutines spent Runnable
// before they ran.
type SchedReport struct {
	// Compat equals `go tool trace -pprof=sched` on the same file: every
	// Runnable interval clipped to the goroutine's life after its first
	// start, so creation-to-first-run waiting is excluded.
	Compat Totals `json:"compat"`

	// Count, TotalNs and PercentilesNs cover every Runnable->Running
	// transition whose Runnable start is in the trace, except the first
	// run after creation (that is Creation).
	Count         int64       `json:"count"`
	TotalNs       int64       `json:"total_ns"`
	PercentilesNs Percentiles `json:"percentiles_ns"`
	// Histogram has power-of-two buckets from 1 µs (empty ones omitted).
	Histogram []Bucket `json:"histogram"`

	// Creation is the creation-to-first-run latency.
	Creation Distribution `json:"creation"`

	// ByCause splits the latency by what made the goroutine runnable:
	// sleep, chan, select, sync, network, syscall (the P was lost),
	// preempted, gosched, other.
	ByCause []CauseLatency `json:"by_cause"`

	// ByGroup attributes latency (including creation) to the goroutine that
	// waited, grouped by its start function, worst total first.
	ByGroup []GroupLatency `json:"by_group"`
}

// CauseLatency is the scheduling latency after one kind of wake-up.
type CauseLatency struct {
	Cause string `json:"cause"`
	Distribution
}

// GroupLatency is the scheduling latency of the goroutines that share a
// start function.
type GroupLatency struct {
	StartFunc  string `json:"start_func"`
	Goroutines int64  `json:"goroutines"` // goroutines seen with this start function
	Distribution
	CreationNs int64 `json:"creation_total_ns"` // creation-to-first-run time, not in Distribution
	RunningNs  int64 `json:"running_ns"`        // time spent Running
	BlockedNs  int64 `json:"blocked_ns"`        // time spent Waiting
	SyscallNs  int64 `json:"syscall_ns"`        // time spent in syscalls (and cgo calls)
}

// CompatOnly carries the cmd/trace-compatible totals of one pprof profile.
type CompatOnly struct {
	// Compat equals `go tool trace -pprof=sync` (chan, select and sync
	// waits) or `-pprof=net` (network waits) on the same file.
	Compat Totals `json:"compat"`
}

// SyscallReport covers time in system calls and cgo calls.
type SyscallReport struct {
	// Compat equals `go tool trace -pprof=syscall` on the same file; it
	// includes the tracer's own writer goroutine.
	Compat Totals `json:"compat"`
	// Count and TotalNs cover every completed syscall, cgo call included.
	Count   int64 `json:"count"`
	TotalNs int64 `json:"total_ns"`
	// PLost counts syscalls after which the goroutine lost its P
	// (GoSyscallEndBlocked): sysmon handed the P to another thread.
	PLost int64  `json:"p_lost"`
	Cgo   Totals `json:"cgo"` // the subset that were cgo calls
}

// SleepReport is time.Sleep wake-up overhead, per call site.
type SleepReport struct {
	Count int64       `json:"count"`
	Sites []SleepSite `json:"sites"` // most calls first
}

// SleepSite is one time.Sleep call site.
type SleepSite struct {
	Func  string `json:"func"`
	File  string `json:"file"`
	Line  int64  `json:"line"`
	Count int64  `json:"count"`
	// Blocked is the time from blocking in sleep to the timer waking the
	// goroutine (Waiting -> Runnable). It starts when the goroutine parks, a
	// few µs after time.Sleep computed its deadline, so one sleep's can be
	// that much under the request; its percentiles, like every
	// Distribution's, are within 1/32 and clamped to the exact min and max.
	Blocked Distribution `json:"blocked"`
	// PostWake is the time from the wake-up to running again
	// (Runnable -> Running).
	PostWake Distribution `json:"post_wake"`
	// RequestedNs is the requested duration when every call here asked for
	// the same one (0 when unknown or mixed); Overshoot covers the calls
	// whose request was known, from the trace annotation or --sleep.
	RequestedNs int64         `json:"requested_ns"`
	Overshoot   *Distribution `json:"overshoot,omitempty"`
}

// PinnedReport covers goroutines holding OS threads.
type PinnedReport struct {
	// LockedGoroutines are goroutines inferred to be locked to their thread
	// (runtime.LockOSThread emits no event; see docs for the heuristic).
	LockedGoroutines []LockedGoroutine `json:"locked_goroutines"`
	// Events are spans of at least pin_threshold_ns where a goroutine held
	// an OS thread without running Go code, longest first.
	Events []PinnedEvent `json:"events"`
	// Tracer holds the same spans for the tracer's own writer goroutine,
	// which are never the user's.
	Tracer []PinnedEvent `json:"tracer"`
	// Unattributed holds syscall spans that are not the user's code:
	// os/signal.loop, which waits for signals in a syscall for the life of
	// any program that called signal.Notify, and goroutines already in a
	// syscall when the trace began whose stack the trace never showed.
	Unattributed []PinnedEvent `json:"unattributed"`
	// Dropped counts spans beyond the reported list's cap (1000).
	Dropped int64 `json:"dropped"`
}

// LockedGoroutine is a goroutine inferred to be locked to one OS thread.
type LockedGoroutine struct {
	GoID      int64  `json:"goid"`
	StartFunc string `json:"start_func"`
	Thread    int64  `json:"thread"`
	// Wakeups counts starts after a wake-up on the locked thread.
	Wakeups int64 `json:"wakeups"`
	// Hand-off latency into the locked thread: Runnable -> Running of those
	// wake-ups.
	HandoffP50Ns int64 `json:"handoff_p50_ns"`
	HandoffMaxNs int64 `json:"handoff_max_ns"`
	Ended        bool  `json:"ended"` // the goroutine exited within the trace
	// Annotated is set when the program said so (LockLogCategory) rather
	// than schedscope inferring it.
	Annotated bool `json:"annotated"`
	// Evidence is the strongest reason it counts as locked: "annotation",
	// "wake-ups" (at least MinLockedWakeups resumed on its thread) or
	// "hand-off" (a wake-up where the waking thread handed its P to this
	// goroutine's idle thread).
	Evidence string `json:"evidence"`
}

// PinnedEvent is one span where a goroutine held an OS thread without
// running Go code.
type PinnedEvent struct {
	Kind       string  `json:"kind"` // cgo, syscall or locked
	GoID       int64   `json:"goid"` // the goroutine that held the thread
	Func       string  `json:"func"` // the call site: first user frame
	File       string  `json:"file"`
	Line       int64   `json:"line"`
	Target     string  `json:"target"` // the cgo function, syscall entry or block reason
	StartNs    int64   `json:"start_ns"`
	DurationNs int64   `json:"duration_ns"`
	Thread     int64   `json:"thread"`    // the OS thread held
	PLost      bool    `json:"p_lost"`    // the P was taken away (syscall/cgo) or released (locked)
	Truncated  bool    `json:"truncated"` // began before the trace saw it, or still open at its end: longer than DurationNs
	Stack      []Frame `json:"stack"`     // leaf first
}

// Frame is one stack frame.
type Frame struct {
	Func string `json:"func"`
	File string `json:"file"`
	Line int64  `json:"line"`
}

// GoroutineReport is the goroutine lifecycle.
type GoroutineReport struct {
	Created int64 `json:"created"`  // created within the trace
	Ended   int64 `json:"ended"`    // exited within the trace
	Peak    int64 `json:"peak"`     // most alive at once
	AtStart int64 `json:"at_start"` // alive when the trace began
	AtEnd   int64 `json:"at_end"`   // alive when it ended
}

// ThreadReport is OS threads (Ms).
type ThreadReport struct {
	Seen int64 `json:"seen"` // distinct threads with events
	// Peak is the most threads busy at once: running Go code (holding a P)
	// or in a syscall/cgo call.
	Peak int64 `json:"peak"`
	// PeakSyscall is the most goroutines in syscalls at once.
	PeakSyscall int64 `json:"peak_syscall"`
}

// ProcReport is Ps and GOMAXPROCS.
type ProcReport struct {
	GOMAXPROCS int64              `json:"gomaxprocs"` // last value seen
	Changes    []GOMAXPROCSChange `json:"changes"`    // every value seen, in order
	// Utilisation is each P's fraction of the trace spent running.
	Utilisation []ProcUse `json:"utilisation"`
}

// GOMAXPROCSChange is a GOMAXPROCS value observed at a time.
type GOMAXPROCSChange struct {
	TNs   int64 `json:"t_ns"`
	Value int64 `json:"value"`
}

// ProcUse is one P's busy fraction.
type ProcUse struct {
	Proc      int64   `json:"proc"`
	RunningNs int64   `json:"running_ns"`
	Fraction  float64 `json:"fraction"`
}

// BlockingReport breaks goroutine blocking down by reason.
type BlockingReport struct {
	// Reasons, largest total first: chan, select, sync, network, sleep,
	// syscall, gc, preempted, other.
	Reasons []BlockReason `json:"reasons"`
}

// BlockReason is the blocking under one reason.
type BlockReason struct {
	Reason  string `json:"reason"`
	Count   int64  `json:"count"`
	TotalNs int64  `json:"total_ns"`
	Sites   []Site `json:"sites"` // top call sites, largest total first (at most 10)
}

// Site is one call site with its totals.
type Site struct {
	Func    string `json:"func"`
	File    string `json:"file"`
	Line    int64  `json:"line"`
	Count   int64  `json:"count"`
	TotalNs int64  `json:"total_ns"`
}

// GCReport is garbage collection and stop-the-world time.
type GCReport struct {
	Count    int64 `json:"count"`     // GC cycles (concurrent mark phases)
	MarkNs   int64 `json:"mark_ns"`   // time in the concurrent mark phase
	STWCount int64 `json:"stw_count"` // stop-the-world pauses
	STWNs    int64 `json:"stw_ns"`    // time stopped
	STWMaxNs int64 `json:"stw_max_ns"`
	AssistNs int64 `json:"assist_ns"` // goroutine time in GC mark assists
}

// Timeline is a compact time series of the scheduler's state, for plots.
// Each point covers [TNs, TNs+StepNs); values are the maximum seen in it.
type Timeline struct {
	StepNs int64       `json:"step_ns"`
	Points []TimePoint `json:"points"`
}

// TimePoint is one Timeline step.
type TimePoint struct {
	TNs        int64 `json:"t_ns"`
	Goroutines int32 `json:"goroutines"` // alive
	Runnable   int32 `json:"runnable"`
	Running    int32 `json:"running"`
	Syscall    int32 `json:"syscall"`
	Threads    int32 `json:"threads"` // busy threads: running + syscall
}

// Loss says how much of a damaged trace could not be used.
type Loss struct {
	Error string `json:"error"` // the parser's error
	// ValidBytes is how far the reader had read when it delivered the last
	// complete generation. It reads ahead (a buffer and the next batch), so
	// the lost share is at least LostPct plus the generation being read.
	ValidBytes  int64   `json:"valid_bytes"`
	Generations int     `json:"generations"` // complete generations analysed
	TotalBytes  int64   `json:"total_bytes"` // input size, when known (0 for streams)
	LostPct     float64 `json:"lost_pct"`    // share of the input after the last good point
}

// RequestsReport is the request anatomy: where requests' time went, by
// scheduler state, per latency band. It is per request when the target ran
// its handlers under schedscope's agent (collect/agent's Middleware: a task
// of type RequestTaskType per request), and per goroutine class always.
type RequestsReport struct {
	// PerRequest says the trace holds request tasks, so Bands and Slowest
	// are per request; otherwise only Classes is, and Note says why.
	PerRequest bool   `json:"per_request"`
	Note       string `json:"note,omitempty"`
	// Requests counts the requests whose handler began in the trace; Open
	// those of them still in their handler at its end, counted with their
	// time so far (the slowest requests of a growing queue). A request whose
	// handler began before the trace is not seen.
	Requests int64 `json:"requests"`
	Open     int64 `json:"open"`
	// Joined counts the requests carrying the generator's request id (their
	// time before the handler is known); ClientJoined those also matched
	// with the generator's own latency (their time after it is known too).
	Joined       int64 `json:"joined"`
	ClientJoined int64 `json:"client_joined"`
	// IDsLeftOut counts the requests whose id was not joined, by why: they
	// count with their handler's time, as requests without an id do.
	IDsLeftOut IDsLeftOut `json:"ids_left_out"`
	// Bands split the requests by latency: up to p50, p50-p90, p90-p99, and
	// p99 and above.
	Bands []Band `json:"bands"`
	// Slowest are the slowest requests, slowest first, with their timelines.
	Slowest []Request `json:"slowest"`
	// Classes split the time of the busiest goroutine classes (goroutines
	// sharing a start function), busiest first.
	Classes []ClassSplit `json:"classes"`
}

// IDsLeftOut counts, by why, the requests whose generator's request id
// (collect/load's RequestHeader) the anatomy did not join: any client can
// send a well-formed one, and a stale or forged intended send time would
// otherwise be taken for time spent before the handler.
type IDsLeftOut struct {
	// ForeignTag: an id without this run's tag (Options.RequestTag):
	// another client's, or an earlier run's.
	ForeignTag int64 `json:"foreign_tag"`
	// OutsideWindow: this run's tag, but an intended send time outside the
	// run's window (Options.IntendedFrom, IntendedTo).
	OutsideWindow int64 `json:"outside_window"`
	// NotTheRecord: this run's tag and a number the generator recorded,
	// but another intended send time than its record's.
	NotTheRecord int64 `json:"not_the_record"`
}

// Total is the number of ids left out.
func (l IDsLeftOut) Total() int64 { return l.ForeignTag + l.OutsideWindow + l.NotTheRecord }

// Band is the requests of one latency band and where their time went.
type Band struct {
	Name     string  `json:"name"`     // "<=p50", "p50-p90", "p90-p99", ">=p99"
	Quantile float64 `json:"quantile"` // the band's lower quantile: 0, 0.5, 0.9, 0.99
	FromNs   int64   `json:"from_ns"`  // its latency range
	ToNs     int64   `json:"to_ns"`
	Requests int64   `json:"requests"`
	TotalNs  int64   `json:"total_ns"` // the requests' summed latency
	// Split is the requests' time by state, largest first; the shares add
	// up to 100 %.
	Split []Share `json:"split"`
	// Children is the time of the goroutines working for these requests
	// (fan-out, a worker), as shares of TotalNs, beside Split's fan-out wait.
	Children []Share   `json:"children,omitempty"`
	Slowest  []Request `json:"slowest,omitempty"` // the band's slowest requests
}

// Share is the time spent in one state.
type Share struct {
	State State   `json:"state"`
	Pool  string  `json:"pool,omitempty"` // the pool waited for, when State is StatePool
	Ns    int64   `json:"ns"`
	Pct   float64 `json:"pct"`
}

// Request is one request's anatomy.
type Request struct {
	Seq       int64  `json:"seq,omitempty"` // the generator's sequence number, when joined
	Task      uint64 `json:"task"`          // the runtime/trace task id
	Goroutine int64  `json:"goroutine"`     // the handler's goroutine
	StartNs   int64  `json:"start_ns"`      // handler start, since the trace's first event
	HandlerNs int64  `json:"handler_ns"`    // the handler's wall time
	// TotalNs is the request's latency: from the intended send to the
	// response's end at the client when joined with the generator, from
	// the intended send to the handler's end when only the id was, else
	// the handler's time.
	TotalNs         int64     `json:"total_ns"`
	ClientJoined    bool      `json:"client_joined,omitempty"`
	Open            bool      `json:"open,omitempty"` // still in its handler at the trace's end: its time so far
	ChildGoroutines int64     `json:"child_goroutines,omitempty"`
	Split           []Share   `json:"split"`
	Children        []Share   `json:"children,omitempty"`
	Timeline        []Segment `json:"timeline,omitempty"` // the handler's states in order (the slowest only)
	TimelineCut     bool      `json:"timeline_cut,omitempty"`
}

// Segment is a stretch of a request's handler in one state.
type Segment struct {
	AtNs  int64  `json:"at_ns"` // since the handler's start
	DurNs int64  `json:"dur_ns"`
	State State  `json:"state"`
	Pool  string `json:"pool,omitempty"`
}

// ClassSplit is where the goroutines of one class spent their time.
type ClassSplit struct {
	Class      string `json:"class"` // the start function
	Goroutines int64  `json:"goroutines"`
	// Serving says the class serves requests (net/http's connection
	// goroutines, on which handlers run).
	Serving bool    `json:"serving,omitempty"`
	TotalNs int64   `json:"total_ns"` // goroutine time, idle excluded
	Split   []Share `json:"split"`
	// IdleNs is time its connections waited for their next request, not in
	// Split.
	IdleNs int64 `json:"idle_ns,omitempty"`
	// CreatedGoroutines counts the goroutines its members (and theirs)
	// created; Created splits their time.
	CreatedGoroutines int64   `json:"created_goroutines,omitempty"`
	Created           []Share `json:"created,omitempty"`
}
