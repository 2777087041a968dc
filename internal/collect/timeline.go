package collect

import (
	"sort"
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

func loadPoint(p load.Progress) LoadPoint {
	return LoadPoint{
		Phase: p.Name, Kind: p.Kind, Step: p.Step, OfferedRate: p.OfferedRate, Users: p.Users,
		Sent: p.Sent, NotSent: p.NotSent, Completed: p.Completed, OK: p.OK, Errors: p.Errors.Total(),
		InFlight: p.InFlight, OKPerS: p.OKPerS,
		P50MS: durMS(p.IntervalP50), P99MS: durMS(p.IntervalP99),
	}
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

// pollState carries the previous poll, to turn cumulative counters into
// interval figures.
type pollState struct {
	at        time.Time
	snap      *agent.Snapshot
	proc      *ProcUsage
	completed int64 // 2xx responses so far, all phases, at the poll
}

// derivePoint computes a TargetPoint from this poll and the previous one.
func derivePoint(prev, cur pollState) TargetPoint {
	var tp TargetPoint
	dt := cur.at.Sub(prev.at).Seconds()
	dreq := cur.completed - prev.completed
	var cpu float64 // seconds over the interval
	haveCPU := false
	if s := cur.snap; s != nil {
		tp.HasAgent = true
		v := s.Values
		tp.Goroutines = v["/sched/goroutines:goroutines"]
		tp.Runnable = v["/sched/goroutines/runnable:goroutines"]
		tp.Running = v["/sched/goroutines/running:goroutines"]
		tp.Waiting = v["/sched/goroutines/waiting:goroutines"]
		tp.NotInGo = v["/sched/goroutines/not-in-go:goroutines"]
		tp.Threads = v["/sched/threads/total:threads"]
		tp.GOMAXPROCS = s.GOMAXPROCS
		tp.HeapBytes = v["/memory/classes/heap/objects:bytes"]
		var prevNames map[string]agent.PoolStats
		if p := prev.snap; p != nil {
			tp.SchedLatencyP99MS = 1000 * s.Histograms["/sched/latencies:seconds"].Sub(p.Histograms["/sched/latencies:seconds"]).Quantile(0.99)
			gc := s.Histograms["/sched/pauses/total/gc:seconds"].Sub(p.Histograms["/sched/pauses/total/gc:seconds"])
			tp.GCPauseMS, tp.GCPauseMaxMS = 1000*histSum(gc), 1000*gc.Quantile(1)
			if !haveCPU && dt > 0 {
				cpu = goCPU(v) - goCPU(p.Values)
				haveCPU = true
			}
			prevNames = p.Pools
		}
		for name, ps := range s.Pools {
			pp := PoolPoint{Name: name, Kind: ps.Kind, Size: ps.Size, InUse: ps.InUse, Waiting: ps.Waiting,
				Saturated: ps.Size > 0 && ps.InUse >= ps.Size}
			if q, ok := prevNames[name]; ok && dt > 0 {
				pp.WaitingMean = (ps.WaitDuration - q.WaitDuration).Seconds() / dt
				pp.HoldMeanMS, pp.CapacityPerS = poolCapacity(q, ps, dt)
			}
			tp.Pools = append(tp.Pools, pp)
		}
		sort.Slice(tp.Pools, func(i, j int) bool { return tp.Pools[i].Name < tp.Pools[j].Name })
	}
	if cur.proc != nil {
		tp.HasProc = true
		tp.RSSBytes = cur.proc.RSS
		if tp.Threads == 0 {
			tp.Threads = float64(cur.proc.Threads)
		}
		if prev.proc != nil && dt > 0 {
			cpu = (cur.proc.CPU - prev.proc.CPU).Seconds()
			haveCPU, tp.CPUFromProc = true, true
		}
	}
	if haveCPU && dt > 0 {
		tp.CPUCores = cpu / dt
		if dreq > 0 {
			tp.CPUUSPerReq = 1e6 * cpu / float64(dreq)
		}
	}
	return tp
}

// goCPU is the runtime's estimate of the CPU time the Go program used, in
// seconds: user code, GC and scavenger (no kernel time, no idle).
func goCPU(v map[string]float64) float64 {
	return v["/cpu/classes/user:cpu-seconds"] + v["/cpu/classes/gc/total:cpu-seconds"] + v["/cpu/classes/scavenge/total:cpu-seconds"]
}

// histSum approximates the sum of a seconds histogram: count x bucket midpoint.
func histSum(h agent.Histogram) float64 {
	var s float64
	for i, c := range h.Counts {
		lo, hi := h.Lower[i], h.Upper[i]
		if lo < 0 {
			lo = 0
		}
		if hi > 1e9 {
			hi = lo
		}
		s += float64(c) * (lo + hi) / 2
	}
	return s
}

func durMS(d time.Duration) float64 { return float64(d) / 1e6 }

// Live is one moment of a run for a live dashboard (the TUI): the load
// generator's latest progress with the latest poll of the target. Run sends
// one with each load progress snapshot (about 4 a second) and one after each
// poll. It is a value; the receiver may keep it.
type Live struct {
	// Load is the load generator's latest snapshot (load.Progress:
	// phase, offered rate, sent/not-sent/2xx/errors, in flight, interval and
	// phase p50/p99, 2xx/s).
	Load load.Progress
	// At is the time on the load's clock.
	At time.Duration
	// Target is the latest poll's figures: goroutines by state, threads,
	// GOMAXPROCS, sched-latency p99 (sampled histogram), GC pauses, pools
	// (in use / size / waiting), target CPU per request and RSS. Its Has*
	// flags are false before the first poll or without an agent / local PID.
	Target TargetPoint
	// PolledAt is the load-clock time of the poll behind Target; -1 before any.
	PolledAt time.Duration
	// Source is what answers inside the target (agent, pprof, none).
	Source Source
	// Capture says what is being captured now ("trace window 12.0-17.0 s",
	// "fgprof", ...), empty when nothing is.
	Capture string
	// Notes are live verdicts, each one sentence: a saturated pool, a target
	// that stopped answering, the snapshot condition holding.
	Notes []string
}

// poolCapacity is Little's law over one poll interval of dt seconds, from the
// pool's counters at its start (p0) and end (p1): the mean hold time in
// milliseconds and the capacity Size / hold in acquisitions per second. Both
// are 0 when the pool is unbounded or acquired nothing.
func poolCapacity(p0, p1 agent.PoolStats, dt float64) (holdMS, perS float64) {
	n := p1.Acquired - p0.Acquired
	if p1.Size <= 0 || n <= 0 || dt <= 0 {
		return 0, 0
	}
	hold, ok := countedHold(p0, p1) // seconds
	if inUse := float64(p0.InUse+p1.InUse) / 2; !ok && inUse > 0 {
		hold = inUse / (float64(n) / dt)
	}
	if hold <= 0 {
		return 0, 0
	}
	return hold * 1000, float64(p1.Size) / hold
}

// countedHold is the mean hold time in seconds from the pool's own counters
// between two readings; ok is false when the pool counts no hold times or
// acquired nothing in between.
func countedHold(p0, p1 agent.PoolStats) (seconds float64, ok bool) {
	n := p1.Acquired - p0.Acquired
	if !p1.Known.Acquired || n <= 0 || p1.HoldDuration <= p0.HoldDuration {
		return 0, false
	}
	return (p1.HoldDuration - p0.HoldDuration).Seconds() / float64(n), true
}
