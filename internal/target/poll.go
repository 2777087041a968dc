package target

import (
	"sort"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/internal/rundir"
)

// Poll is one raw reading of a target: what a metrics.jsonl line stores of
// it (rundir.MetricsLine's Time, Agent, Proc and Load.OKTotal).
type Poll struct {
	At    time.Time
	Agent *agent.Snapshot      // nil without an agent, or when it failed
	Proc  *rundir.ProcCounters // nil when /proc was not read
	// Cgroup is the target's cgroup CPU limit and throttling; nil when not
	// read.
	Cgroup *rundir.CgroupCounters
	// Machine is the machine's CPU counters (/proc/stat); nil when not read.
	Machine *rundir.MachineCounters
	// OKTotal is the 2xx responses received so far, every phase.
	OKTotal int64
}

// PollOf returns the raw poll a metrics line holds.
func PollOf(l *rundir.MetricsLine) Poll {
	return Poll{At: l.Time, Agent: l.Agent, Proc: l.Proc, Cgroup: l.Cgroup, Machine: l.Machine, OKTotal: l.Load.OKTotal}
}

// Point computes a poll's interval figures from it and the previous poll:
// cumulative counters become rates, histograms become interval quantiles.
func Point(prev, cur Poll) rundir.TargetPoint {
	var tp rundir.TargetPoint
	dt := cur.At.Sub(prev.At).Seconds()
	dreq := cur.OKTotal - prev.OKTotal
	var cpu float64 // seconds over the interval
	haveCPU := false
	if s := cur.Agent; s != nil {
		tp.HasAgent = true
		v := s.Values
		tp.Goroutines = v[rundir.MetricGoroutines]
		tp.Runnable = v[rundir.MetricRunnable]
		tp.Running = v[rundir.MetricRunning]
		tp.Waiting = v[rundir.MetricWaiting]
		tp.NotInGo = v[rundir.MetricNotInGo]
		tp.Threads = v[rundir.MetricThreads]
		tp.GOMAXPROCS = s.GOMAXPROCS
		tp.HeapBytes = v[rundir.MetricHeapObjects]
		var prevNames map[string]agent.PoolStats
		if p := prev.Agent; p != nil {
			tp.SchedLatencyP99MS = 1000 * s.Histograms[rundir.MetricSchedLatencies].Sub(p.Histograms[rundir.MetricSchedLatencies]).Quantile(0.99)
			gc := s.Histograms[rundir.MetricGCPauses].Sub(p.Histograms[rundir.MetricGCPauses])
			tp.GCPauseMS, tp.GCPauseMaxMS = 1000*histSum(gc), 1000*gc.Quantile(1)
			if !haveCPU && dt > 0 {
				cpu = GoCPU(v) - GoCPU(p.Values)
				haveCPU = true
			}
			prevNames = p.Pools
		}
		for name, ps := range s.Pools {
			pp := rundir.PoolPoint{Name: name, Kind: ps.Kind, Size: ps.Size, InUse: ps.InUse, Waiting: ps.Waiting,
				Saturated: ps.Size > 0 && ps.InUse >= ps.Size}
			if q, ok := prevNames[name]; ok && dt > 0 {
				pp.WaitingMean = (ps.WaitDuration - q.WaitDuration).Seconds() / dt
				pp.HoldMeanMS, pp.CapacityPerS = PoolCapacity(q, ps, dt)
			}
			tp.Pools = append(tp.Pools, pp)
		}
		sort.Slice(tp.Pools, func(i, j int) bool { return tp.Pools[i].Name < tp.Pools[j].Name })
	}
	if cur.Proc != nil {
		tp.HasProc = true
		tp.RSSBytes = cur.Proc.RSSBytes
		if tp.Threads == 0 {
			tp.Threads = float64(cur.Proc.Threads)
		}
		if prev.Proc != nil && dt > 0 {
			cpu = cur.Proc.CPUSeconds - prev.Proc.CPUSeconds
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

// GoCPU is the runtime's estimate of the CPU time the Go program used, in
// seconds: user code, GC and scavenger (no kernel time, no idle).
func GoCPU(v map[string]float64) float64 {
	return v[rundir.MetricCPUUser] + v[rundir.MetricCPUGC] + v[rundir.MetricCPUScavenge]
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

// PoolCapacity is Little's law over one poll interval of dt seconds, from the
// pool's counters at its start (p0) and end (p1): the mean hold time in
// milliseconds and the capacity Size / hold in acquisitions per second. Both
// are 0 when the pool is unbounded or acquired nothing.
func PoolCapacity(p0, p1 agent.PoolStats, dt float64) (holdMS, perS float64) {
	n := p1.Acquired - p0.Acquired
	if p1.Size <= 0 || n <= 0 || dt <= 0 {
		return 0, 0
	}
	hold, ok := CountedHold(p0, p1) // seconds
	if inUse := float64(p0.InUse+p1.InUse) / 2; !ok && inUse > 0 {
		hold = inUse / (float64(n) / dt)
	}
	if hold <= 0 {
		return 0, 0
	}
	return hold * 1000, float64(p1.Size) / hold
}

// CountedHold is the mean hold time in seconds from the pool's own counters
// between two readings; ok is false when the pool counts no hold times or
// acquired nothing in between.
func CountedHold(p0, p1 agent.PoolStats) (seconds float64, ok bool) {
	n := p1.Acquired - p0.Acquired
	if !p1.Known.Acquired || n <= 0 || p1.HoldDuration <= p0.HoldDuration {
		return 0, false
	}
	return (p1.HoldDuration - p0.HoldDuration).Seconds() / float64(n), true
}
