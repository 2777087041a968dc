package rundir

import (
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/load"
)

// MetricsLine is one line of metrics.jsonl: one poll of the target, about
// once a second, stamped on the load's clock, with the load generator's
// latest figures beside it.
type MetricsLine struct {
	// T is seconds since the load's start (Manifest.LoadStart); Time is the
	// generator's wall clock.
	T    float64   `json:"t_s"`
	Time time.Time `json:"time"`
	// Load is the load generator's latest progress snapshot.
	Load LoadPoint `json:"load"`
	// Target is what the poll derived about the target.
	Target TargetPoint `json:"target"`
	// Agent is the agent's raw /metrics snapshot; nil without an agent or
	// when the poll failed.
	Agent *agent.Snapshot `json:"agent,omitempty"`
	// Proc is the target's raw /proc counters at the poll; nil when the
	// target is not a local process or the read failed.
	Proc *ProcCounters `json:"proc,omitempty"`
	// Cgroup is the target's cgroup CPU limit and throttling counters; nil
	// when the target is not local or its cgroup has no CPU controller.
	Cgroup *CgroupCounters `json:"cgroup,omitempty"`
	// Machine is the machine's CPU time since boot at the poll (/proc/stat),
	// for what the rest of the machine used meanwhile; nil off Linux.
	Machine *MachineCounters `json:"machine,omitempty"`
	// Capture is what the run was capturing at the poll ("fgprof 3.9s",
	// "trace window 6.1-8.1 s"), empty when nothing: captures cost the
	// target CPU, so the phase's CPU figures avoid those polls.
	Capture string `json:"capture,omitempty"`
	// Error says why the poll (or part of it) failed.
	Error string `json:"error,omitempty"`
}

// LoadPoint is the load generator's state at a poll, from load.Progress.
type LoadPoint struct {
	Phase       string         `json:"phase"`
	Kind        load.PhaseKind `json:"kind"`
	Step        int            `json:"step"` // index into results.json's phases; -1 outside steady phases
	OfferedRate float64        `json:"offered_rate"`
	Users       int            `json:"users,omitempty"`
	Sent        int64          `json:"sent"`
	NotSent     int64          `json:"not_sent"`
	Completed   int64          `json:"completed"`
	OK          int64          `json:"ok"`
	Errors      int64          `json:"errors"`
	InFlight    int64          `json:"in_flight"`
	OKPerS      float64        `json:"ok_per_s"` // over the last progress interval
	// OKTotal is the 2xx responses received so far in the whole run (every
	// phase, stragglers included): its slope between polls is the
	// throughput the target delivered then.
	OKTotal int64   `json:"ok_total"`
	P50MS   float64 `json:"p50_ms"` // latency from intended send, last interval
	P99MS   float64 `json:"p99_ms"`
}

// TargetPoint is what one poll says about the target. A figure the run
// cannot read (no agent, not local) is zero, and the Has* flags say so.
type TargetPoint struct {
	// Goroutines by state (runtime/metrics /sched/goroutines/...; Go 1.26).
	// With only net/http/pprof, Goroutines comes from the goroutine profile
	// and the states are zero.
	Goroutines float64 `json:"goroutines"`
	Runnable   float64 `json:"runnable"`
	Running    float64 `json:"running"`
	Waiting    float64 `json:"waiting"`
	NotInGo    float64 `json:"not_in_go"`
	// Threads is the OS threads: /sched/threads/total:threads, else /proc,
	// else threadcreate's count (threads ever created).
	Threads    float64 `json:"threads"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	// SchedLatencyP99MS is the p99 of /sched/latencies:seconds over the
	// interval since the previous poll. The runtime samples 1 transition in
	// 8: a rough live signal, not the trace's figure.
	SchedLatencyP99MS float64 `json:"sched_latency_p99_ms"`
	// GCPauseMS is the stop-the-world time (GC) in the interval;
	// GCPauseMaxMS the largest pause bucket seen in it.
	GCPauseMS    float64 `json:"gc_pause_ms"`
	GCPauseMaxMS float64 `json:"gc_pause_max_ms"`
	// HeapBytes is /memory/classes/heap/objects:bytes.
	HeapBytes float64 `json:"heap_bytes"`
	// Pools are the registered pools, sorted by name.
	Pools []PoolPoint `json:"pools,omitempty"`
	// CPUCores is the target's CPU use over the interval, in cores; from
	// /proc when local, else the runtime's estimate (user + GC + scavenge,
	// no kernel time; CPUFromProc false).
	CPUCores    float64 `json:"cpu_cores"`
	CPUFromProc bool    `json:"cpu_from_proc"`
	// CPUUSPerReq is the target's CPU time over the interval divided by the
	// 2xx responses received in it, in microseconds.
	CPUUSPerReq float64 `json:"cpu_us_per_req"`
	// RSSBytes is the resident set from /proc (local targets only).
	RSSBytes int64 `json:"rss_bytes,omitempty"`
	// HasAgent: the agent answered this poll. HasProc: /proc was read.
	HasAgent bool `json:"has_agent"`
	HasProc  bool `json:"has_proc"`
}

// PoolPoint is one pool at one poll.
type PoolPoint struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Size    int    `json:"size"` // 0: unbounded
	InUse   int    `json:"in_use"`
	Waiting int    `json:"waiting"`
	// WaitingMean is the mean number of callers waiting over the interval,
	// from the rate of the pool's cumulative wait time (Little's law); the
	// only waiting figure a *sql.DB gives.
	WaitingMean float64 `json:"waiting_mean"`
	// Saturated: Size > 0 and InUse == Size.
	Saturated bool `json:"saturated"`
	// CapacityPerS is the Little's-law capacity Size / mean hold time over
	// the interval since the previous poll; 0 when unknown (an unbounded
	// pool, or nothing acquired). The mean hold time is the pool's own
	// (HoldDuration / Acquired) when it counts one, otherwise mean in use /
	// acquisition rate: at saturation that is the rate the pool served.
	CapacityPerS float64 `json:"capacity_per_s,omitempty"`
	// HoldMeanMS is the mean hold time behind CapacityPerS.
	HoldMeanMS float64 `json:"hold_mean_ms,omitempty"`
}

// ProcCounters are the raw /proc counters of a local target at one poll:
// cumulative, so a figure over an interval is the difference of two lines.
type ProcCounters struct {
	// CPUSeconds is the user + system CPU time of the target's process
	// group since it started.
	CPUSeconds float64 `json:"cpu_s"`
	RSSBytes   int64   `json:"rss_bytes"`
	Threads    int     `json:"threads"`
}

// MachineCounters are /proc/stat's first line at one poll, in clock ticks
// since boot: cumulative, so a share over an interval is the difference of
// two lines.
type MachineCounters struct {
	Busy int64 `json:"busy"` // user, nice, system, irq, softirq, steal
	Idle int64 `json:"idle"` // idle, iowait
}

// Names of the runtime/metrics values in an agent.Snapshot (MetricsLine.Agent)
// that schedscope reads; a pprof-only target's poll stores its goroutine
// profile's count as MetricGoroutines and its threadcreate count as
// MetricThreadsCreated.
const (
	MetricGoroutines        = "/sched/goroutines:goroutines"
	MetricRunnable          = "/sched/goroutines/runnable:goroutines"
	MetricRunning           = "/sched/goroutines/running:goroutines"
	MetricWaiting           = "/sched/goroutines/waiting:goroutines"
	MetricNotInGo           = "/sched/goroutines/not-in-go:goroutines"
	MetricGoroutinesCreated = "/sched/goroutines-created:goroutines"
	MetricThreads           = "/sched/threads/total:threads"
	MetricHeapObjects       = "/memory/classes/heap/objects:bytes"
	MetricCPUUser           = "/cpu/classes/user:cpu-seconds"
	MetricCPUGC             = "/cpu/classes/gc/total:cpu-seconds"
	MetricCPUScavenge       = "/cpu/classes/scavenge/total:cpu-seconds"
	MetricGOMAXPROCS        = "/sched/gomaxprocs:threads"
	MetricSchedLatencies    = "/sched/latencies:seconds"
	MetricGCPauses          = "/sched/pauses/total/gc:seconds"
	MetricThreadsCreated    = "threadcreate:total"
)

// CgroupCounters are the CPU controller of a local target's cgroup at one
// poll: its limit and its cumulative throttling counters (cpu.stat), so a
// figure over an interval is the difference of two lines. The counters are
// the target's own (leaf) cgroup's; the ancestors are read for their limits
// only (TightestQuotaCores).
type CgroupCounters struct {
	// Version is the cgroup version, 1 or 2; Path the cgroup's path in its
	// hierarchy, as /proc/PID/cgroup gives it.
	Version int    `json:"version"`
	Path    string `json:"path"`
	// QuotaCores is the CPU limit, quota / period, in cores; 0 when the
	// cgroup has none. PeriodUS is the enforcement period.
	QuotaCores float64 `json:"quota_cores,omitempty"`
	PeriodUS   int64   `json:"period_us,omitempty"`
	// Periods is the enforcement periods that have elapsed with the cgroup
	// runnable, Throttled those in which it ran out of quota, and
	// ThrottledSeconds the time its threads waited for the next period.
	Periods          int64   `json:"nr_periods"`
	Throttled        int64   `json:"nr_throttled"`
	ThrottledSeconds float64 `json:"throttled_s"`
	// TightestQuotaCores is the smallest CPU limit on the leaf cgroup or any
	// of its ancestors in the same hierarchy, in cores, and TightestPath the
	// cgroup that sets it; 0 and "" when none has one. When it is below
	// QuotaCores (or QuotaCores is 0), the limit is set on a parent the Go
	// runtime does not read (it reads the leaf only: golang/go#81180).
	TightestQuotaCores float64 `json:"tightest_quota_cores,omitempty"`
	TightestPath       string  `json:"tightest_path,omitempty"`
	// TightestStat is the throttling counters of the cgroup at TightestPath
	// when it is not the leaf: the kernel throttles the parent that runs out
	// of quota, and the leaf's own counters stay at 0.
	TightestStat *CgroupStat `json:"tightest_stat,omitempty"`
}

// CgroupStat is a cgroup's cumulative throttling counters (cpu.stat).
type CgroupStat struct {
	Periods          int64   `json:"nr_periods"`
	Throttled        int64   `json:"nr_throttled"`
	ThrottledSeconds float64 `json:"throttled_s"`
}
