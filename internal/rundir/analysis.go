package rundir

import (
	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/collect/load"
)

// Analysis is analysis.json: the trace analyzers' report on trace.out, the
// blocking-profile summaries, and the figures derived from the timeline.
type Analysis struct {
	Schema int `json:"schema"` // AnalysisSchema
	// Trace is the analyzers' report on trace.out; nil when no trace was
	// captured or it could not be read (TraceError says why).
	Trace      *analyze.Report `json:"trace,omitempty"`
	TraceError string          `json:"trace_error,omitempty"`
	// TraceCapture says what trace.out holds: "window", "flight-recorder"
	// or "" (none); TraceStartS/TraceEndS bound it on the load's clock
	// (a flight-recorder snapshot ends at TraceEndS; its start is approximate).
	TraceCapture string  `json:"trace_capture,omitempty"`
	TraceReason  string  `json:"trace_reason,omitempty"`
	TraceStartS  float64 `json:"trace_start_s,omitempty"`
	TraceEndS    float64 `json:"trace_end_s,omitempty"`
	// Profiles summarizes block and mutex contention and fgprof's wall-clock
	// stacks over the steady phase, and the goroutine profile at its end.
	Profiles []ProfileSummary `json:"profiles"`
	// Phases has the derived figures of each steady phase.
	Phases []PhaseFigures `json:"phases"`
	// Diagnosis ranks the causes of the run's latency and ceiling by
	// impact; nil when the run has nothing to diagnose (no steady phase).
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`
	// Findings are the other conclusions, most important first, each once.
	Findings []Finding `json:"findings"`
	// MetricsProblems are the first MaxRecordedProblems lines of
	// metrics.jsonl that were skipped (ReadMetrics), MetricsSkipped how many
	// were skipped in all; the phases' figures come from the other lines.
	MetricsProblems MetricsProblems `json:"metrics_problems,omitempty"`
	MetricsSkipped  int             `json:"metrics_skipped,omitempty"`
}

// MaxRecordedProblems is how many skipped metrics.jsonl lines analysis.json
// lists one by one.
const MaxRecordedProblems = 20

// AnalysisSchema is the version of analysis.json's layout: 2 typed the
// finding kinds (KindSchedLatency and KindPinned were both "trace").
const AnalysisSchema = 2

// PhaseFigures are one steady phase's figures from metrics.jsonl and
// results.json.
type PhaseFigures struct {
	Name        string  `json:"name"`
	StartS      float64 `json:"start_s"`
	EndS        float64 `json:"end_s"`
	OfferedRate float64 `json:"offered_rate"`
	OKPerS      float64 `json:"ok_per_s"`
	// AchievedPerS is the rate at which 2xx responses arrived during the
	// phase (whatever phase sent them), from the polls: unlike OKPerS
	// (results.json, which credits a phase with its late stragglers) it
	// shows the ceiling while a queue grows.
	AchievedPerS float64 `json:"achieved_per_s"`
	// Polls is how many polls fell in the phase.
	Polls int `json:"polls"`
	// CPUUSPerReq is the target's CPU time over the phase per 2xx response
	// received in it, microseconds; CPUCores its mean CPU use. CPUFromProc says
	// whether it came from /proc (else the runtime's estimate, no kernel time).
	CPUUSPerReq float64 `json:"cpu_us_per_req"`
	CPUCores    float64 `json:"cpu_cores"`
	CPUFromProc bool    `json:"cpu_from_proc"`
	// CPUWithoutCaptures: the CPU figures come from polls while the run
	// captured nothing (no fgprof, no trace window); false when the phase
	// had no such stretch of two polls, so they include the captures' cost.
	CPUWithoutCaptures bool `json:"cpu_without_captures"`
	GOMAXPROCS         int  `json:"gomaxprocs,omitempty"`
	// MachineBusyCores is the machine's busy CPU over the phase's polls, in
	// cores, whoever used it (/proc/stat); OthersCPUCores what was left
	// once the target's and the load generator's own CPU are taken out:
	// other processes competing for the CPUs. OthersKnown is false when
	// any of the three was not measured (a remote target, not Linux).
	MachineBusyCores float64 `json:"machine_busy_cores,omitempty"`
	OthersCPUCores   float64 `json:"others_cpu_cores,omitempty"`
	OthersKnown      bool    `json:"others_known,omitempty"`
	// Cgroup is the target's cgroup CPU limit and throttling over the
	// phase; nil when no poll read the target's cgroup.
	Cgroup *CgroupFigures `json:"cgroup,omitempty"`
	// Peaks over the phase's polls, with when they were seen (load clock).
	PeakThreads       float64 `json:"peak_threads"`
	PeakThreadsAtS    float64 `json:"peak_threads_at_s"`
	PeakGoroutines    float64 `json:"peak_goroutines"`
	PeakGoroutinesAtS float64 `json:"peak_goroutines_at_s"`
	PeakRSSBytes      int64   `json:"peak_rss_bytes,omitempty"`
	// SchedLatencyP99MS is the largest per-poll sampled sched-latency p99.
	SchedLatencyP99MS float64       `json:"sched_latency_p99_ms_max"`
	Pools             []PoolFigures `json:"pools,omitempty"`
	// Tracking: 2xx/s followed the offered rate (>= 95 % of it).
	Tracking bool `json:"tracking"`
	// Ceiling names what limited the phase when it did not track.
	Ceiling *Ceiling `json:"ceiling,omitempty"`
}

// CgroupFigures are the target's cgroup CPU limit and its throttling over
// one phase, from the first and last polls that read the cgroup.
type CgroupFigures struct {
	// Path is the target's own (leaf) cgroup; LimitCores its CPU limit
	// (quota / period, in cores; 0 none): the one the Go runtime reads.
	Path       string  `json:"path"`
	LimitCores float64 `json:"limit_cores,omitempty"`
	// TightestCores is the smallest limit on the leaf or an ancestor and
	// TightestPath the cgroup that sets it; ParentLimit says it is a parent's,
	// tighter than the leaf's (or the leaf has none): the runtime's blind
	// spot (golang/go#81180).
	TightestCores float64 `json:"tightest_cores,omitempty"`
	TightestPath  string  `json:"tightest_path,omitempty"`
	ParentLimit   bool    `json:"parent_limit,omitempty"`
	// Periods and ThrottledPeriods are the enforcement periods that elapsed
	// over the phase and those that ran out of quota, ThrottledShare their
	// ratio, ThrottledSeconds the time the cgroup's threads waited for the
	// next period (summed over CPUs) and ThrottledPerS that per second of
	// the phase. They are the counters of the cgroup that sets the
	// tightest limit (the kernel throttles that one), else the leaf's.
	Periods          int64   `json:"periods"`
	ThrottledPeriods int64   `json:"throttled_periods"`
	ThrottledShare   float64 `json:"throttled_share"`
	ThrottledSeconds float64 `json:"throttled_s"`
	ThrottledPerS    float64 `json:"throttled_per_s"`
	// UseOfLimit is the target's CPU use over the phase (PhaseFigures.
	// CPUCores) as a share of the tightest limit; 0 without a limit.
	UseOfLimit float64 `json:"use_of_limit,omitempty"`
}

// PoolFigures are one pool's figures over a phase.
type PoolFigures struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Size int    `json:"size"` // 0: unbounded
	// MeanInUse and MaxInUse over the phase's polls.
	MeanInUse float64 `json:"mean_in_use"`
	MaxInUse  int     `json:"max_in_use"`
	// SaturatedShare is the fraction of polls with InUse == Size.
	SaturatedShare float64 `json:"saturated_share"`
	// MeanWaiting is the mean number of callers waiting (polled, or from the
	// wait-time rate when the pool cannot count waiters).
	MeanWaiting float64 `json:"mean_waiting"`
	// MeanHoldMS is the mean time a member is held per acquisition; HoldFrom
	// says how it was measured: "pool" (the pool's own counters) or
	// "littles-law" (mean in use / 2xx per second, assuming one acquisition
	// per request).
	MeanHoldMS float64  `json:"mean_hold_ms"`
	HoldFrom   HoldFrom `json:"hold_from,omitempty"`
	// CapacityPerS is the Little's-law capacity: Size / mean hold; 0 when
	// unbounded or unknown.
	CapacityPerS float64 `json:"capacity_per_s"`
}

// Ceiling is what limited a phase whose 2xx/s did not follow the offered rate.
type Ceiling struct {
	// What is KindPool, KindCPU, KindGenerator or KindUnknown; Pool names
	// the pool.
	What   Kind   `json:"what"`
	Pool   string `json:"pool,omitempty"`
	Reason string `json:"reason"`
}

// Diagnosis is the run's answer to "why is my p99 high, and what limits
// throughput": causes ranked by their share of the slowest requests' time
// (and, for a ceiling, of the offered rate lost).
type Diagnosis struct {
	// Basis says what the shares are of; BasisDetail says it for people
	// ("the p99 band: 31 requests of 612 ms or more").
	Basis       DiagnosisBasis `json:"basis"`
	BasisDetail string         `json:"basis_detail"`
	// Causes, largest impact first; each kind (and pool) once.
	Causes []Cause `json:"causes"`
}

// DiagnosisBasis is what a Diagnosis' shares are shares of.
type DiagnosisBasis string

// Bases of a diagnosis.
const (
	// BasisRequests: the p99 band of the per-request anatomy (the target
	// runs schedscope's agent middleware).
	BasisRequests DiagnosisBasis = "requests"
	// BasisClass: the goroutines serving requests (net/http's connection
	// goroutines), per class: the target has no middleware.
	BasisClass DiagnosisBasis = "class"
	// BasisPolls: no trace; the polls and the load's figures only.
	BasisPolls DiagnosisBasis = "polls"
)

// Cause is one ranked cause of a Diagnosis.
type Cause struct {
	Kind Kind   `json:"kind"`
	Pool string `json:"pool,omitempty"` // KindPool: which
	// Share is the cause's share of the basis' time, 0 to 1.
	Share float64 `json:"share"`
	// LostShare is, for the cause of a ceiling, the share of the offered
	// rate that was not served (1 - 2xx/s / offered).
	LostShare float64 `json:"lost_share,omitempty"`
	// Title says the cause in one line, Evidence the figures behind it,
	// Change what to change.
	Title    string   `json:"title"`
	Evidence []string `json:"evidence"`
	Change   string   `json:"change"`
}

// Finding is one conclusion of a run.
type Finding struct {
	Kind    Kind               `json:"kind"`
	Title   string             `json:"title"`
	Detail  string             `json:"detail"`
	Numbers map[string]float64 `json:"numbers,omitempty"`
}

// ProfileSummary is the top of one profile, as analysis.json and
// summary.txt list it.
type ProfileSummary struct {
	Name string `json:"name"` // block, mutex, fgprof, goroutine
	File string `json:"file"` // in the run directory
	// Window says what the profile covers ("delta over the steady phase",
	// "instant at the end of the steady phase", ...).
	Window string `json:"window"`
	// SampleType is the value ranked ("delay/nanoseconds", "time/nanoseconds",
	// "goroutine/count").
	SampleType string  `json:"sample_type"`
	Total      float64 `json:"total"`
	// Top lists the biggest sites (block, mutex, goroutine: the first frame
	// outside the runtime and sync packages) or stacks (fgprof), biggest first.
	Top []ProfileSite `json:"top"`
	// Note explains an empty or partial profile.
	Note string `json:"note,omitempty"`
}

// ProfileSite is one site or stack of a profile.
type ProfileSite struct {
	// Site is "function file:line" of the frame the entry is grouped by.
	Site string `json:"site"`
	// Stack is the leaf-first stack of the biggest sample at this site,
	// cut to 8 frames, as "function file:line".
	Stack []string `json:"stack"`
	Value float64  `json:"value"`
	// Share is Value / Total.
	Share float64 `json:"share"`
	// Count is the first sample value (contentions, samples, goroutines) when
	// the ranked value is another one.
	Count float64 `json:"count,omitempty"`
}

// HoldFrom says how a pool's mean hold time was measured.
type HoldFrom string

const (
	// HoldFromPool: the pool's own counters (hold time / acquisitions).
	HoldFromPool HoldFrom = "pool"
	// HoldFromLittlesLaw: mean in use / 2xx per second, assuming one
	// acquisition per request.
	HoldFromLittlesLaw HoldFrom = "littles-law"
)

// Kind classifies a conclusion: a finding in analysis.json, a ceiling, a
// live note during a run, a verdict of the load generator or of a sweep's
// capacity analysis. Every conclusion schedscope draws carries one of these
// constants, so programs (the summary, the TUI, the CI gates) select on the
// kind, never on the prose.
type Kind string

// Kinds of conclusion. The load generator's own verdict kinds (package
// load, a public API of its own) are listed here under the same spelling.
const (
	// KindCeiling: a phase's 2xx/s stayed below its offered rate; the
	// Ceiling (or the finding's numbers) says what limited it.
	KindCeiling Kind = "ceiling"
	// KindPool: the limit was a pool (Ceiling.What).
	KindPool Kind = "pool"
	// KindPoolSaturated: a bounded pool was full and callers queued.
	KindPoolSaturated Kind = "pool-saturated"
	// KindCPU: the target used about GOMAXPROCS cores.
	KindCPU Kind = "cpu"
	// KindGenerator: the load generator, not the target, was the limit.
	KindGenerator = Kind(load.GeneratorBound)
	// KindUnknown: a ceiling whose cause the run could not name.
	KindUnknown Kind = "unknown"
	// KindSchedLatency: the trace's scheduling latency.
	KindSchedLatency Kind = "sched-latency"
	// KindPinned: goroutines held OS threads without running Go code.
	KindPinned Kind = "pinned"
	// KindContention: the top site of the block or mutex profile.
	KindContention Kind = "contention"
	// KindQueueing: latency grew while throughput did not (live).
	KindQueueing Kind = "queueing"
	// KindPassed: a limit was not reached ("passes the pool's ceiling").
	KindPassed Kind = "passed"
	// KindTargetGone: the target stopped answering (live).
	KindTargetGone Kind = "target-gone"
	// KindSnapshotCondition: the run's --snapshot-when condition held (live).
	KindSnapshotCondition Kind = "snapshot-condition"
	// KindSnapshot: the run is taking its trace snapshot, when the
	// condition held or at the end of the load (live).
	KindSnapshot Kind = "snapshot"
	// KindInfo: a neutral statement.
	KindInfo Kind = "info"

	// Causes of a Diagnosis beyond the kinds above (KindCPU, KindPool,
	// KindGenerator, KindPinned, KindContention serve there too).

	// KindGOMAXPROCS: the Ps were busy while the machine had CPUs
	// GOMAXPROCS left unused.
	KindGOMAXPROCS Kind = "gomaxprocs"
	// KindThrottled: the target's cgroup ran out of CPU quota (CFS
	// throttling) in a share of the enforcement periods while its latency
	// grew.
	KindThrottled Kind = "throttled"
	// KindParentCPULimit: a CPU limit on a parent cgroup, tighter than the
	// target's own cgroup's, which the Go runtime does not see when it
	// chooses GOMAXPROCS (golang/go#81180).
	KindParentCPULimit Kind = "parent-cpu-limit"
	// KindGC: GC assists, waits for the GC and its pauses.
	KindGC Kind = "gc"
	// KindDownstream: waiting for the network: a downstream service.
	KindDownstream Kind = "downstream"
	// KindWork: the handlers' own CPU work, the Ps not being saturated.
	KindWork Kind = "work"
	// KindSleep: the handlers sleep (time.Sleep, timers).
	KindSleep Kind = "sleep"
	// KindChannel: waiting on channels not marked as a pool wait.
	KindChannel Kind = "channel"
	// KindSyscall: blocking system calls (no thread held long enough to
	// count as pinned).
	KindSyscall Kind = "syscall"
	// KindOutside: time outside the handler (accept, reading the request,
	// writing the response, the network) that neither a saturated CPU nor
	// the generator explains.
	KindOutside Kind = "outside-handler"

	// The load generator's verdicts (load.VerdictKind).
	KindLittlesLaw    = Kind(load.LittlesLaw)
	KindClosedCeiling = Kind(load.ClosedCeiling)
	KindBelowCapacity = Kind(load.BelowCapacity)
	KindOverCapacity  = Kind(load.OverCapacity)
	KindUnreachable   = Kind(load.Unreachable)
	KindErrors        = Kind(load.Errors)

	// What held the ceiling of one GOMAXPROCS level in a sweep's capacity
	// analysis (capacity.Level.Limit; empty when the ladder never saturated
	// the level). The values are the ones the sweep reports print.

	// KindLimitPs: the target kept at least 80 % of its Ps busy at the
	// ceiling: the Ps are the limit.
	KindLimitPs Kind = "ps"
	// KindLimitConcurrency: the Ps were not busy and the ceiling sits within
	// 15 % of the known concurrency limit divided by the low-load service
	// time (Little's law): the concurrency limit (a pool) is the limit.
	KindLimitConcurrency Kind = "concurrency"
	// KindLimitCPUStarved: the target kept under 80 % of its Ps busy while
	// the machine's CPUs were at least 90 % busy (or, for CPU-heavy
	// requests, not measured): other processes held the CPUs it could use.
	KindLimitCPUStarved Kind = "cpu-starved"
	// KindLimitSerialized: requests are CPU-heavy (30 % or more of their
	// service time), the target kept under 80 % of its Ps busy, and the
	// machine had idle CPUs: something in the target serializes the work (a
	// lock, a single goroutine).
	KindLimitSerialized Kind = "serialized"
	// KindLimitElsewhere: the Ps were not busy and no known limit matches:
	// a lock, a downstream, a pool the sweep was not told about.
	KindLimitElsewhere Kind = "elsewhere"
	// KindLimitQuota: the target ran in a cgroup with a CPU quota and used
	// at least 90 % of it at the ceiling: the CPU limit, not the Ps, is
	// the limit (sweep --cpu-limits).
	KindLimitQuota Kind = "cpu-quota"
)

// Note is one live conclusion of a run in progress (a saturated pool, a
// target that stopped answering, the snapshot condition holding, the
// snapshot being taken): its kind, which programs select on, and one
// sentence for people.
type Note struct {
	Kind Kind
	Text string
}
