package collect

import (
	"fmt"
	"math"
	"sort"

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
	// Findings are the conclusions, most important first.
	Findings []Finding `json:"findings"`
}

// AnalysisSchema is the version of analysis.json's layout.
const AnalysisSchema = 1

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
	MeanHoldMS float64 `json:"mean_hold_ms"`
	HoldFrom   string  `json:"hold_from,omitempty"`
	// CapacityPerS is the Little's-law capacity: Size / mean hold; 0 when
	// unbounded or unknown.
	CapacityPerS float64 `json:"capacity_per_s"`
}

// Ceiling is what limited a phase whose 2xx/s did not follow the offered rate.
type Ceiling struct {
	// What is "pool", "cpu", "generator" or "unknown"; Pool names the pool.
	What   string `json:"what"`
	Pool   string `json:"pool,omitempty"`
	Reason string `json:"reason"`
}

// Finding is one conclusion of a run.
type Finding struct {
	// Kind: "pool-saturated", "ceiling", "generator-bound", "cpu", "trace",
	// "contention", "missing".
	Kind    string             `json:"kind"`
	Title   string             `json:"title"`
	Detail  string             `json:"detail"`
	Numbers map[string]float64 `json:"numbers,omitempty"`
}

// Thresholds of the derived findings.
const (
	// SaturatedShareLimit: a pool saturated in at least this share of a
	// phase's polls counts as saturated over the phase.
	SaturatedShareLimit = 0.5
	// TrackingRatio: 2xx/s at least this share of the offered rate tracks it.
	TrackingRatio = load.TrackingRatio
)

// derivePhases computes each steady phase's figures from the polls.
func derivePhases(res *load.Result, lines []MetricsLine, raw []pollState) []PhaseFigures {
	if res == nil {
		return nil
	}
	var out []PhaseFigures
	for _, ph := range res.Phases {
		f := PhaseFigures{Name: ph.Name, StartS: ph.StartS, EndS: ph.EndS, OfferedRate: ph.OfferedRate, OKPerS: ph.OKPerS}
		var idx []int
		// The polls inside the phase's scheduling window: after it, requests
		// still drain but the load no longer reports, so they would dilute
		// the figures.
		for i, l := range lines {
			if l.T >= ph.StartS && l.T <= ph.EndS+0.05 {
				idx = append(idx, i)
			}
		}
		f.Polls = len(idx)
		f.AchievedPerS = ph.OKPerS
		if len(idx) >= 2 {
			a, b := lines[idx[0]], lines[idx[len(idx)-1]]
			if b.T > a.T {
				f.AchievedPerS = float64(b.Load.OKTotal-a.Load.OKTotal) / (b.T - a.T)
			}
		}
		f.Tracking = ph.OfferedRate == 0 || f.AchievedPerS >= TrackingRatio*ph.OfferedRate
		pools := map[string]*poolAcc{}
		for _, i := range idx {
			tp := lines[i].Target
			if tp.Threads > f.PeakThreads {
				f.PeakThreads, f.PeakThreadsAtS = tp.Threads, lines[i].T
			}
			if tp.Goroutines > f.PeakGoroutines {
				f.PeakGoroutines, f.PeakGoroutinesAtS = tp.Goroutines, lines[i].T
			}
			f.PeakRSSBytes = max(f.PeakRSSBytes, tp.RSSBytes)
			f.SchedLatencyP99MS = max(f.SchedLatencyP99MS, tp.SchedLatencyP99MS)
			if tp.GOMAXPROCS > 0 {
				f.GOMAXPROCS = tp.GOMAXPROCS
			}
			for _, pp := range tp.Pools {
				a := pools[pp.Name]
				if a == nil {
					a = &poolAcc{PoolFigures: PoolFigures{Name: pp.Name, Kind: pp.Kind, Size: pp.Size}}
					pools[pp.Name] = a
				}
				a.add(pp)
			}
		}
		f.CPUWithoutCaptures = phaseCPU(&f, raw, cleanRun(lines, idx))
		if !f.CPUWithoutCaptures {
			phaseCPU(&f, raw, idx)
		}
		// Hold times from the pools' own counters, first and last poll of the phase.
		if len(idx) >= 2 {
			first, last := raw[idx[0]].snap, raw[idx[len(idx)-1]].snap
			if first != nil && last != nil {
				for name, a := range pools {
					p0, ok0 := first.Pools[name]
					p1, ok1 := last.Pools[name]
					if hold, ok := countedHold(p0, p1); ok0 && ok1 && ok {
						a.MeanHoldMS = hold * 1000
						a.HoldFrom = "pool"
					}
				}
			}
		}
		names := make([]string, 0, len(pools))
		for n := range pools {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			a := pools[n]
			a.finish(f.AchievedPerS)
			f.Pools = append(f.Pools, a.PoolFigures)
		}
		if !f.Tracking {
			f.Ceiling = findCeiling(&f, &ph, res.CPUIncludesTarget)
		}
		out = append(out, f)
	}
	return out
}

type poolAcc struct {
	PoolFigures
	n, saturated   int
	inUse, waiting float64
}

func (a *poolAcc) add(pp PoolPoint) {
	a.n++
	a.inUse += float64(pp.InUse)
	a.MaxInUse = max(a.MaxInUse, pp.InUse)
	if pp.Saturated {
		a.saturated++
	}
	if pp.Waiting > 0 || pp.WaitingMean == 0 {
		a.waiting += float64(pp.Waiting)
	} else {
		a.waiting += pp.WaitingMean
	}
	if pp.Size > 0 {
		a.Size = pp.Size
	}
}

func (a *poolAcc) finish(okPerS float64) {
	if a.n == 0 {
		return
	}
	a.MeanInUse = a.inUse / float64(a.n)
	a.MeanWaiting = a.waiting / float64(a.n)
	a.SaturatedShare = float64(a.saturated) / float64(a.n)
	if a.HoldFrom == "" && okPerS > 0 && a.MeanInUse > 0 {
		a.MeanHoldMS = 1000 * a.MeanInUse / okPerS
		a.HoldFrom = "littles-law"
	}
	if a.Size > 0 && a.MeanHoldMS > 0 {
		a.CapacityPerS = float64(a.Size) / (a.MeanHoldMS / 1000)
	}
}

// findCeiling names what limited a phase that did not track its offered
// rate: the saturated pool with the shortest hold (a pool whose members
// wait on another saturated pool holds them longer, so the innermost one is
// the limit), else the CPU when the target used nearly GOMAXPROCS cores,
// else the generator when its verdicts say so.
func findCeiling(f *PhaseFigures, ph *load.PhaseResult, cpuIncludesTarget bool) *Ceiling {
	var best *PoolFigures
	for i := range f.Pools {
		p := &f.Pools[i]
		if p.Size == 0 || p.SaturatedShare < SaturatedShareLimit {
			continue
		}
		if best == nil || holdOrInf(p) < holdOrInf(best) {
			best = p
		}
	}
	if best != nil {
		reason := fmt.Sprintf("pool %s (%s) was full (%d/%d in use) in %.0f%% of the polls while 2xx/s was %.0f of %.0f offered",
			best.Name, best.Kind, best.MaxInUse, best.Size, 100*best.SaturatedShare, f.AchievedPerS, f.OfferedRate)
		if best.CapacityPerS > 0 {
			reason += fmt.Sprintf("; Little's law: %d / %.1f ms = %.0f req/s", best.Size, best.MeanHoldMS, best.CapacityPerS)
		}
		return &Ceiling{What: "pool", Pool: best.Name, Reason: reason}
	}
	if f.GOMAXPROCS > 0 && f.CPUCores >= 0.9*float64(f.GOMAXPROCS) && !cpuIncludesTarget {
		return &Ceiling{What: "cpu", Reason: fmt.Sprintf("the target used %.2f cores of GOMAXPROCS %d and no pool was full", f.CPUCores, f.GOMAXPROCS)}
	}
	for _, v := range ph.VerdictDetails {
		if v.Kind == load.GeneratorBound {
			return &Ceiling{What: "generator", Reason: "the load generator was the limit: " + v.Message}
		}
	}
	return &Ceiling{What: "unknown", Reason: "no registered pool was full and the target's CPU was not near GOMAXPROCS; see the trace analysis"}
}

// phaseCPU sets the target's CPU figures from the first and last polls of
// a phase that read it: /proc when two did, else the runtime's estimate
// (which the runtime updates at each GC, so it is coarse over short phases).
func phaseCPU(f *PhaseFigures, raw []pollState, idx []int) bool {
	span := func(has func(pollState) bool) (pollState, pollState, bool) {
		var first, last pollState
		n := 0
		for _, i := range idx {
			if has(raw[i]) {
				if n == 0 {
					first = raw[i]
				}
				last = raw[i]
				n++
			}
		}
		return first, last, n >= 2 && last.at.After(first.at)
	}
	var cpu float64
	first, last, ok := span(func(p pollState) bool { return p.proc != nil })
	if ok {
		cpu = (last.proc.CPU - first.proc.CPU).Seconds()
		f.CPUFromProc = true
	} else if first, last, ok = span(func(p pollState) bool { return p.snap != nil && p.snap.Values != nil }); ok {
		cpu = goCPU(last.snap.Values) - goCPU(first.snap.Values)
	} else {
		return false
	}
	f.CPUCores = cpu / last.at.Sub(first.at).Seconds()
	if n := last.completed - first.completed; n > 0 {
		f.CPUUSPerReq = 1e6 * cpu / float64(n)
	}
	return true
}

// cleanRun returns the longest run of consecutive polls in idx taken while
// nothing was captured, including the poll just before it (the run's
// baseline: CPU is a difference between polls).
func cleanRun(lines []MetricsLine, idx []int) []int {
	var best, cur []int
	for k, i := range idx {
		if lines[i].Capture != "" {
			cur = nil
			continue
		}
		if cur == nil && k > 0 {
			cur = append(cur, idx[k-1])
		}
		cur = append(cur, i)
		if len(cur) > len(best) {
			best = append(best[:0:0], cur...)
		}
	}
	return best
}

func holdOrInf(p *PoolFigures) float64 {
	if p.MeanHoldMS > 0 {
		return p.MeanHoldMS
	}
	return math.Inf(1)
}

// findings draws the run's conclusions from the derived figures and the
// profile summaries.
func findings(phases []PhaseFigures, profiles []ProfileSummary, res *load.Result) []Finding {
	var out []Finding
	for _, f := range phases {
		if c := f.Ceiling; c != nil {
			title := fmt.Sprintf("%s: the ceiling was %s", f.Name, c.What)
			if c.Pool != "" {
				title = fmt.Sprintf("%s: the ceiling was pool %s", f.Name, c.Pool)
			}
			out = append(out, Finding{Kind: "ceiling", Title: title, Detail: c.Reason,
				Numbers: map[string]float64{"offered_rate": f.OfferedRate, "achieved_per_s": f.AchievedPerS}})
		}
		for _, p := range f.Pools {
			if p.Size == 0 || p.SaturatedShare < SaturatedShareLimit {
				continue
			}
			detail := fmt.Sprintf("%d/%d in use in %.0f%% of the polls, %.1f waiting on average", p.MaxInUse, p.Size, 100*p.SaturatedShare, p.MeanWaiting)
			if p.CapacityPerS > 0 {
				detail += fmt.Sprintf("; predicted capacity %.0f req/s (Little's law: %d / %.1f ms, hold from %s)", p.CapacityPerS, p.Size, p.MeanHoldMS, p.HoldFrom)
			}
			out = append(out, Finding{Kind: "pool-saturated", Title: fmt.Sprintf("%s: pool %s is saturated", f.Name, p.Name), Detail: detail,
				Numbers: map[string]float64{"size": float64(p.Size), "mean_in_use": p.MeanInUse, "saturated_share": p.SaturatedShare,
					"mean_waiting": p.MeanWaiting, "capacity_per_s": p.CapacityPerS, "mean_hold_ms": p.MeanHoldMS}})
		}
	}
	for _, p := range profiles {
		if (p.Name == "block" || p.Name == "mutex") && len(p.Top) > 0 {
			t := p.Top[0]
			out = append(out, Finding{Kind: "contention", Title: fmt.Sprintf("top %s contention: %s", p.Name, t.Site),
				Detail: fmt.Sprintf("%.0f%% of %s over the steady phase", 100*t.Share, p.SampleType)})
		}
	}
	if res != nil {
		for _, ph := range res.Phases {
			for _, v := range ph.VerdictDetails {
				if v.Kind == load.GeneratorBound {
					out = append(out, Finding{Kind: "generator-bound", Title: ph.Name + ": the load generator was the limit", Detail: v.Message, Numbers: v.Numbers})
				}
			}
		}
	}
	return out
}
