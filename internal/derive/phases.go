package derive

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// Thresholds of the derived findings.
const (
	// SaturatedShareLimit: a pool saturated in at least this share of a
	// phase's polls counts as saturated over the phase.
	SaturatedShareLimit = 0.5
	// TrackingRatio: 2xx/s at least this share of the offered rate tracks it.
	TrackingRatio = load.TrackingRatio
)

// derivePhases computes each steady phase's figures from the polls.
//
// psBusy is the trace's mean P busy share (-1 without a trace) and
// machineCPUs the machine's CPUs (0 unknown): both tell a CPU ceiling from a
// generator that is late only because the target shares its CPUs.
func derivePhases(res *load.Result, lines []rundir.MetricsLine, psBusy float64, machineCPUs int) []rundir.PhaseFigures {
	if res == nil {
		return nil
	}
	var out []rundir.PhaseFigures
	for _, ph := range res.Phases {
		f := rundir.PhaseFigures{Name: ph.Name, StartS: ph.StartS, EndS: ph.EndS, OfferedRate: ph.OfferedRate, OKPerS: ph.OKPerS}
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
		f.Tracking = ph.OfferedRate == 0 || load.Tracks(f.AchievedPerS, ph.OfferedRate)
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
					a = &poolAcc{PoolFigures: rundir.PoolFigures{Name: pp.Name, Kind: pp.Kind, Size: pp.Size}}
					pools[pp.Name] = a
				}
				a.add(pp)
			}
		}
		// The CPU over the polls that captured nothing, when there are
		// enough of them to stand for the phase (three intervals).
		if clean := cleanRun(lines, idx); len(clean) >= 4 {
			f.CPUWithoutCaptures = phaseCPU(&f, lines, clean)
		}
		if !f.CPUWithoutCaptures {
			phaseCPU(&f, lines, idx)
		}
		othersCPU(&f, &ph, lines, idx, machineCPUs)
		f.Cgroup = phaseCgroup(&f, lines, idx)
		// Hold times from the pools' own counters, first and last poll of the phase.
		if len(idx) >= 2 {
			first, last := lines[idx[0]].Agent, lines[idx[len(idx)-1]].Agent
			if first != nil && last != nil {
				for name, a := range pools {
					p0, ok0 := first.Pools[name]
					p1, ok1 := last.Pools[name]
					if hold, ok := target.CountedHold(p0, p1); ok0 && ok1 && ok {
						a.MeanHoldMS = hold * 1000
						a.HoldFrom = rundir.HoldFromPool
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
			f.Ceiling = findCeiling(&f, &ph, res.CPUIncludesTarget, psBusy, machineCPUs)
		}
		out = append(out, f)
	}
	return out
}

type poolAcc struct {
	rundir.PoolFigures
	n, saturated   int
	inUse, waiting float64
}

func (a *poolAcc) add(pp rundir.PoolPoint) {
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
		a.HoldFrom = rundir.HoldFromLittlesLaw
	}
	if a.Size > 0 && a.MeanHoldMS > 0 {
		a.CapacityPerS = float64(a.Size) / (a.MeanHoldMS / 1000)
	}
}

// findCeiling names what limited a phase that did not track its offered
// rate: the saturated pool with the shortest hold (a pool whose members
// wait on another saturated pool holds them longer, so the innermost one is
// the limit); else the CPU when the target used nearly GOMAXPROCS cores,
// kept its Ps busy in the trace, or shared a saturated machine with the
// generator; else the generator only when it was short of CPU in its own
// process. Requests not sent because the in-flight cap was full, and a
// send lag that rose while the target was saturated, are the target's
// overload, not the generator's.
func findCeiling(f *rundir.PhaseFigures, ph *load.PhaseResult, cpuIncludesTarget bool, psBusy float64, machineCPUs int) *rundir.Ceiling {
	var best *rundir.PoolFigures
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
		return &rundir.Ceiling{What: rundir.KindPool, Pool: best.Name, Reason: reason}
	}
	if cg := f.Cgroup; cg != nil && cg.ThrottledShare >= ThrottledShareLimit && cg.UseOfLimit >= 0.9 {
		return &rundir.Ceiling{What: rundir.KindThrottled, Reason: fmt.Sprintf("the target used %.2f cores of its %s-core CPU limit (%s) and was throttled in %.0f%% of the periods",
			f.CPUCores, fmtCores(cg.TightestCores), cg.TightestPath, 100*cg.ThrottledShare)}
	}
	if !cpuIncludesTarget {
		switch {
		case f.GOMAXPROCS > 0 && f.CPUCores >= 0.9*float64(f.GOMAXPROCS):
			return &rundir.Ceiling{What: rundir.KindCPU, Reason: fmt.Sprintf("the target used %.2f cores of GOMAXPROCS %d and no pool was full", f.CPUCores, f.GOMAXPROCS)}
		case psBusy >= PsBusyLimit:
			return &rundir.Ceiling{What: rundir.KindCPU, Reason: fmt.Sprintf("the target's Ps were busy %.0f%% of the trace (%.2f cores used) and no pool was full", 100*psBusy, f.CPUCores)}
		case machineCPUs > 0 && f.CPUFromProc && f.CPUCores+ph.GeneratorCPUCores >= 0.9*float64(machineCPUs):
			return &rundir.Ceiling{What: rundir.KindCPU, Reason: fmt.Sprintf("the machine's %d CPUs were saturated: the target used %.2f cores and the generator beside it %.2f", machineCPUs, f.CPUCores, ph.GeneratorCPUCores)}
		case ph.GeneratorCPUCores >= load.CPUCoreLimit:
			return &rundir.Ceiling{What: rundir.KindGenerator, Reason: fmt.Sprintf("the load generator used %.2f cores while the target used %.2f of GOMAXPROCS %d", ph.GeneratorCPUCores, f.CPUCores, f.GOMAXPROCS)}
		}
	}
	return &rundir.Ceiling{What: rundir.KindUnknown, Reason: "no registered pool was full and the target's CPU was not near GOMAXPROCS; see the trace analysis"}
}

// phaseCPU sets the target's CPU figures from the first and last polls of
// a phase that read it: /proc when two did, else the runtime's estimate
// (which the runtime updates at each GC, so it is coarse over short phases).
func phaseCPU(f *rundir.PhaseFigures, lines []rundir.MetricsLine, idx []int) bool {
	span := func(has func(*rundir.MetricsLine) bool) (*rundir.MetricsLine, *rundir.MetricsLine, bool) {
		var first, last *rundir.MetricsLine
		n := 0
		for _, i := range idx {
			if has(&lines[i]) {
				if n == 0 {
					first = &lines[i]
				}
				last = &lines[i]
				n++
			}
		}
		return first, last, n >= 2 && last.Time.After(first.Time)
	}
	var cpu float64
	first, last, ok := span(func(l *rundir.MetricsLine) bool { return l.Proc != nil })
	if ok {
		cpu = last.Proc.CPUSeconds - first.Proc.CPUSeconds
		f.CPUFromProc = true
	} else if first, last, ok = span(func(l *rundir.MetricsLine) bool { return l.Agent != nil && l.Agent.Values != nil }); ok {
		cpu = target.GoCPU(last.Agent.Values) - target.GoCPU(first.Agent.Values)
	} else {
		return false
	}
	f.CPUCores = cpu / last.Time.Sub(first.Time).Seconds()
	if n := last.Load.OKTotal - first.Load.OKTotal; n > 0 {
		f.CPUUSPerReq = 1e6 * cpu / float64(n)
	}
	return true
}

// phaseCgroup returns the target's cgroup limit and throttling over a
// phase, from the first and last of its polls that read the cgroup; nil
// when none did. The limits are the last poll's.
func phaseCgroup(f *rundir.PhaseFigures, lines []rundir.MetricsLine, idx []int) *rundir.CgroupFigures {
	var first, last *rundir.CgroupCounters
	var t0, t1 time.Time
	for _, i := range idx {
		if c := lines[i].Cgroup; c != nil {
			if first == nil {
				first, t0 = c, lines[i].Time
			}
			last, t1 = c, lines[i].Time
		}
	}
	if last == nil {
		return nil
	}
	cf := &rundir.CgroupFigures{Path: last.Path, LimitCores: last.QuotaCores, TightestCores: last.TightestQuotaCores, TightestPath: last.TightestPath}
	cf.ParentLimit = cf.TightestCores > 0 && cf.TightestPath != cf.Path && (cf.LimitCores == 0 || cf.TightestCores < cf.LimitCores)
	stat := func(c *rundir.CgroupCounters) rundir.CgroupStat {
		if cf.ParentLimit && c.TightestStat != nil {
			return *c.TightestStat
		}
		return rundir.CgroupStat{Periods: c.Periods, Throttled: c.Throttled, ThrottledSeconds: c.ThrottledSeconds}
	}
	a, b := stat(first), stat(last)
	cf.Periods, cf.ThrottledPeriods = b.Periods-a.Periods, b.Throttled-a.Throttled
	cf.ThrottledSeconds = b.ThrottledSeconds - a.ThrottledSeconds
	if cf.Periods > 0 {
		cf.ThrottledShare = float64(cf.ThrottledPeriods) / float64(cf.Periods)
	}
	if secs := t1.Sub(t0).Seconds(); secs > 0 {
		cf.ThrottledPerS = cf.ThrottledSeconds / secs
	}
	if cf.TightestCores > 0 {
		cf.UseOfLimit = f.CPUCores / cf.TightestCores
	}
	return cf
}

// othersCPU sets the machine's busy CPU over the phase's polls and what
// other processes used of it: the machine's busy cores less the target's
// (/proc, over the same polls) and the generator's (its own over the
// phase). A few hundredths of a core are the polling and the kernel's own.
func othersCPU(f *rundir.PhaseFigures, ph *load.PhaseResult, lines []rundir.MetricsLine, idx []int, machineCPUs int) {
	var first, last *rundir.MetricsLine
	for _, i := range idx {
		if l := &lines[i]; l.Machine != nil {
			if first == nil {
				first = l
			}
			last = l
		}
	}
	if first == nil || last == first || machineCPUs <= 0 {
		return
	}
	busy := target.MachineCPU{Busy: last.Machine.Busy, Idle: last.Machine.Idle}.BusyShare(target.MachineCPU{Busy: first.Machine.Busy, Idle: first.Machine.Idle})
	f.MachineBusyCores = busy * float64(machineCPUs)
	secs := last.Time.Sub(first.Time).Seconds()
	if first.Proc == nil || last.Proc == nil || secs <= 0 || ph.GeneratorCPUCores <= 0 {
		return
	}
	targetCores := (last.Proc.CPUSeconds - first.Proc.CPUSeconds) / secs
	f.OthersCPUCores = max(0, f.MachineBusyCores-targetCores-ph.GeneratorCPUCores)
	f.OthersKnown = true
}

// cleanRun returns the longest run of consecutive polls in idx taken while
// nothing was captured, including the poll just before it (the run's
// baseline: CPU is a difference between polls).
func cleanRun(lines []rundir.MetricsLine, idx []int) []int {
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

func holdOrInf(p *rundir.PoolFigures) float64 {
	if p.MeanHoldMS > 0 {
		return p.MeanHoldMS
	}
	return math.Inf(1)
}

// findings draws the run's conclusions from the derived figures and the
// profile summaries (cpus: the target's CPUs, 0 unknown). The generator is a finding only when the diagnosis
// names it a cause (a late generator against a saturated target is the
// target's overload), and a phase whose ceiling already names it does not
// get the same sentence twice.
func findings(phases []rundir.PhaseFigures, profiles []rundir.ProfileSummary, res *load.Result, d *rundir.Diagnosis, cpus int) []rundir.Finding {
	var out []rundir.Finding
	generatorCeiling := map[string]bool{}
	for _, f := range phases {
		if cg := f.Cgroup; cg != nil && cg.ParentLimit {
			// Once per run: the title names no phase, and repeats are dropped.
			out = append(out, rundir.Finding{Kind: rundir.KindParentCPULimit,
				Title:  fmt.Sprintf("the target's CPU limit (%s cores) is on the parent cgroup %s, which the Go runtime does not see", fmtCores(cg.TightestCores), cg.TightestPath),
				Detail: parentLimitSentence(cg, f.GOMAXPROCS, cpus),
				Numbers: map[string]float64{"parent_limit_cores": cg.TightestCores, "own_limit_cores": cg.LimitCores, "gomaxprocs": float64(f.GOMAXPROCS),
					"default_gomaxprocs_with_limit": float64(rundir.DefaultGOMAXPROCS(cpus, cg.TightestCores))}})
		}
		if cg := f.Cgroup; cg != nil && cg.ThrottledShare >= ThrottledShareLimit {
			out = append(out, rundir.Finding{Kind: rundir.KindThrottled,
				Title: fmt.Sprintf("%s: throttled by the %s-core CPU limit in %.0f %% of the periods", f.Name, fmtCores(cg.TightestCores), 100*cg.ThrottledShare),
				Detail: fmt.Sprintf("%d of %d periods throttled, %.2f s throttled per second; the target used %.2f cores (%.0f %% of the limit on %s)",
					cg.ThrottledPeriods, cg.Periods, cg.ThrottledPerS, f.CPUCores, 100*cg.UseOfLimit, cg.TightestPath),
				Numbers: map[string]float64{"limit_cores": cg.TightestCores, "throttled_share": cg.ThrottledShare, "throttled_per_s": cg.ThrottledPerS,
					"throttled_s": cg.ThrottledSeconds, "use_of_limit": cg.UseOfLimit}})
		}
		if fd, ok := closedPoolCeiling(f, res); ok {
			out = append(out, fd)
		}
		if c := f.Ceiling; c != nil {
			title := fmt.Sprintf("%s: the ceiling was %s", f.Name, ceilingWhat(c.What))
			if c.Pool != "" {
				title = fmt.Sprintf("%s: the ceiling was pool %s", f.Name, c.Pool)
			}
			generatorCeiling[f.Name] = c.What == rundir.KindGenerator
			n := map[string]float64{"offered_rate": f.OfferedRate, "achieved_per_s": f.AchievedPerS}
			if f.OfferedRate > 0 {
				n["lost_share"] = 1 - f.AchievedPerS/f.OfferedRate
			}
			out = append(out, rundir.Finding{Kind: rundir.KindCeiling, Title: title, Detail: c.Reason, Numbers: n})
		}
		for _, p := range f.Pools {
			if p.Size == 0 || p.SaturatedShare < SaturatedShareLimit {
				continue
			}
			detail := fmt.Sprintf("%d/%d in use in %.0f%% of the polls, %.1f waiting on average", p.MaxInUse, p.Size, 100*p.SaturatedShare, p.MeanWaiting)
			if p.CapacityPerS > 0 {
				detail += fmt.Sprintf("; predicted capacity %.0f req/s (Little's law: %d / %.1f ms, hold from %s)", p.CapacityPerS, p.Size, p.MeanHoldMS, p.HoldFrom)
			}
			out = append(out, rundir.Finding{Kind: rundir.KindPoolSaturated, Title: fmt.Sprintf("%s: pool %s is saturated", f.Name, p.Name), Detail: detail,
				Numbers: map[string]float64{"size": float64(p.Size), "mean_in_use": p.MeanInUse, "saturated_share": p.SaturatedShare,
					"mean_waiting": p.MeanWaiting, "capacity_per_s": p.CapacityPerS, "mean_hold_ms": p.MeanHoldMS}})
		}
	}
	for _, p := range profiles {
		if (p.Name == "block" || p.Name == "mutex") && len(p.Top) > 0 {
			t := p.Top[0]
			out = append(out, rundir.Finding{Kind: rundir.KindContention, Title: fmt.Sprintf("top %s contention: %s", p.Name, t.Site),
				Detail: fmt.Sprintf("%.0f%% of %s over the steady phase", 100*t.Share, p.SampleType)})
		}
	}
	if res != nil && blamesGenerator(d) {
		for _, ph := range res.Phases {
			if generatorCeiling[ph.Name] {
				continue
			}
			for _, v := range ph.VerdictDetails {
				if v.Kind == load.GeneratorBound {
					out = append(out, rundir.Finding{Kind: rundir.KindGenerator, Title: ph.Name + ": the load generator was late", Detail: v.Message, Numbers: v.Numbers})
				}
			}
		}
	}
	return out
}

// closedPoolCeiling names the ceiling of a closed-model phase when the polls
// show one: a bounded pool at its size (in use == size) in at least
// SaturatedShareLimit of them, the innermost (shortest hold) if several. Its
// users then queued for the pool, and 2xx/s is the pool's size / hold
// (Little's law), not users / (latency + think) with the latency the
// target's own. Without such a pool it says nothing: the closed-model verdict
// already says the users set the figure.
func closedPoolCeiling(f rundir.PhaseFigures, res *load.Result) (rundir.Finding, bool) {
	if res == nil || res.Model != "closed" {
		return rundir.Finding{}, false
	}
	i := slices.IndexFunc(res.Phases, func(ph load.PhaseResult) bool { return ph.Name == f.Name })
	if i < 0 || res.Phases[i].Users == 0 {
		return rundir.Finding{}, false
	}
	users := res.Phases[i].Users
	var best *rundir.PoolFigures
	for j := range f.Pools {
		p := &f.Pools[j]
		if p.Size > 0 && p.SaturatedShare >= SaturatedShareLimit && (best == nil || holdOrInf(p) < holdOrInf(best)) {
			best = p
		}
	}
	if best == nil {
		return rundir.Finding{}, false
	}
	detail := fmt.Sprintf("pool %s (%s) was at its size (%d/%d in use) in %.0f%% of the polls while %d users (think %s) drove 2xx/s %.0f: "+
		"the users queued for the pool, so the target's pool, not the users, set the figure",
		best.Name, best.Kind, best.MaxInUse, best.Size, 100*best.SaturatedShare, users,
		time.Duration(res.ThinkMS*float64(time.Millisecond)), f.AchievedPerS)
	n := map[string]float64{"users": float64(users), "achieved_per_s": f.AchievedPerS, "size": float64(best.Size),
		"saturated_share": best.SaturatedShare}
	if best.CapacityPerS > 0 {
		detail += fmt.Sprintf("; Little's law: %d / %.1f ms = %.0f req/s (hold from %s); the measured 2xx/s is %.0f %% of it",
			best.Size, best.MeanHoldMS, best.CapacityPerS, best.HoldFrom, 100*f.AchievedPerS/best.CapacityPerS)
		n["capacity_per_s"], n["mean_hold_ms"] = best.CapacityPerS, best.MeanHoldMS
	}
	return rundir.Finding{Kind: rundir.KindCeiling, Title: fmt.Sprintf("%s: the ceiling was pool %s", f.Name, best.Name), Detail: detail, Numbers: n}, true
}

// ceilingWhat says a ceiling's kind in words.
func ceilingWhat(k rundir.Kind) string {
	switch k {
	case rundir.KindCPU:
		return "the CPU"
	case rundir.KindThrottled:
		return "the cgroup's CPU limit"
	case rundir.KindGenerator:
		return "the load generator"
	case rundir.KindUnknown:
		return "not identified"
	}
	return string(k)
}

func blamesGenerator(d *rundir.Diagnosis) bool {
	if d == nil {
		return false
	}
	for _, c := range d.Causes {
		if c.Kind == rundir.KindGenerator {
			return true
		}
	}
	return false
}

// findingRank ranks finding kinds by impact: what limited throughput,
// then what made requests wait, then the figures behind them.
func findingRank(k rundir.Kind) int {
	switch k {
	case rundir.KindCeiling:
		return 0
	case rundir.KindPoolSaturated, rundir.KindThrottled, rundir.KindParentCPULimit:
		return 1
	case rundir.KindGenerator:
		return 2
	case rundir.KindPinned:
		return 3
	case rundir.KindContention:
		return 4
	case rundir.KindSchedLatency:
		return 5
	}
	return 6
}

// rankFindings orders findings by impact (a ceiling by the share of the
// offered rate it lost) and drops repeats of a title.
func rankFindings(fs []rundir.Finding) []rundir.Finding {
	seen := map[string]bool{}
	out := []rundir.Finding{}
	for _, f := range fs {
		if !seen[f.Title] {
			seen[f.Title] = true
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(x, y rundir.Finding) int {
		return cmp.Or(cmp.Compare(findingRank(x.Kind), findingRank(y.Kind)), cmp.Compare(y.Numbers["lost_share"], x.Numbers["lost_share"]))
	})
	return out
}

// fmtNs renders nanoseconds with a unit.
func fmtNs(ns int64) string { return time.Duration(ns).Round(time.Microsecond).String() }
