package derive

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

// Thresholds of the diagnosis.
const (
	// PsBusyLimit: Ps busy at least this share of the trace are saturated.
	PsBusyLimit = 0.8
	// TargetIdleLimit: Ps busy under this share leave the target idle
	// enough that a late generator is late on its own account.
	TargetIdleLimit = 0.5
	// LagShareLimit: the generator's send lag counts only when its p99 is
	// at least this share of the latency p99 (and over
	// load.SendLagLimitMS): a lag far below the latency is a footnote.
	LagShareLimit = 0.1
	// MinCauseShare: causes under this share of the basis are left out.
	MinCauseShare = 0.02
	// ThrottledShareLimit: a cgroup throttled in at least this share of a
	// phase's enforcement periods is held back by its CPU limit.
	ThrottledShareLimit = 0.1
	// P99GrowthLimit: throttling is a cause when the phase's latency p99 is
	// at least this multiple of the first steady phase's (or the phase is
	// the first, with nothing to compare).
	P99GrowthLimit = 1.5
	// OverLimitUse: a phase's CPU use above this multiple of its quota is a
	// measurement artefact (the kernel does not let a cgroup exceed it over
	// whole periods), and the evidence says so.
	OverLimitUse = 1.1
)

// situation is what the diagnosis knows of the run besides the split.
type situation struct {
	phase      *load.PhaseResult    // the steady phase the trace covers (or the last)
	figs       *rundir.PhaseFigures // its derived figures
	rep        *analyze.Report      // nil without a trace
	psBusy     float64              // mean P busy share in the trace; -1 unknown
	gomaxprocs int                  // the target's
	cpus       int                  // the target's CPUs (runtime.NumCPU)
	machine    int                  // the machine's CPUs
	genOwn     bool                 // the generator ran out of CPU in its own process
	ceiling    *rundir.Ceiling      // the worst ceiling, if any phase had one
	lost       float64              // its share of the offered rate lost
	profiles   []rundir.ProfileSummary
	base       *load.PhaseResult // the first steady phase: the p99 to compare with
}

// throttled: the diagnosed phase's cgroup ran out of quota in at least
// ThrottledShareLimit of its periods and its p99 grew (see P99GrowthLimit).
func (s *situation) throttled() bool {
	if s.figs == nil || s.figs.Cgroup == nil || s.figs.Cgroup.ThrottledShare < ThrottledShareLimit {
		return false
	}
	return s.base == nil || s.base == s.phase || s.phase.Latency.P99 >= P99GrowthLimit*s.base.Latency.P99
}

func (s *situation) cpuSaturated() bool {
	if s.psBusy >= 0 {
		return s.psBusy >= PsBusyLimit || s.machineSaturated()
	}
	return s.figs != nil && s.gomaxprocs > 0 && s.figs.CPUCores >= 0.9*float64(s.gomaxprocs) || s.machineSaturated()
}

// machineSaturated: the target and the generator together used nearly
// every CPU of the machine (they share it: the generator's lag is then a
// consequence, not a cause).
func (s *situation) machineSaturated() bool {
	if s.figs == nil || s.phase == nil || s.machine == 0 || !s.figs.CPUFromProc {
		return false
	}
	return s.figs.CPUCores+s.phase.GeneratorCPUCores >= 0.9*float64(s.machine)
}

func (s *situation) targetIdle() bool {
	if s.psBusy >= 0 {
		return s.psBusy < TargetIdleLimit
	}
	return s.figs != nil && s.gomaxprocs > 0 && s.figs.CPUCores < TargetIdleLimit*float64(s.gomaxprocs)
}

// generatorLate: the generator's send lag matters against the latency and
// the target was idle enough that the lag is the generator's own.
func (s *situation) generatorLate() bool {
	p := s.phase
	if p == nil || p.SendLag.P99 <= load.SendLagLimitMS || p.SendLag.P99 < LagShareLimit*p.Latency.P99 {
		return false
	}
	return s.targetIdle()
}

// diagnose ranks the causes of the run's latency and ceiling.
func diagnose(m *rundir.Manifest, res *load.Result, an *rundir.Analysis) *rundir.Diagnosis {
	if res == nil || len(res.Phases) == 0 {
		return nil
	}
	s := &situation{rep: an.Trace, psBusy: -1, gomaxprocs: m.Target.GOMAXPROCS, cpus: m.Target.NumCPU,
		machine: m.Machine.CPUs, profiles: an.Profiles}
	pi := len(res.Phases) - 1
	for i, ph := range res.Phases {
		if an.TraceEndS > 0 && ph.StartS <= an.TraceEndS && ph.EndS >= an.TraceStartS {
			pi = i
		}
	}
	s.phase = &res.Phases[pi]
	s.base = &res.Phases[0]
	for i := range an.Phases {
		if an.Phases[i].Name == s.phase.Name {
			s.figs = &an.Phases[i]
		}
		if c := an.Phases[i].Ceiling; c != nil && an.Phases[i].OfferedRate > 0 {
			if lost := 1 - an.Phases[i].AchievedPerS/an.Phases[i].OfferedRate; lost > s.lost {
				s.ceiling, s.lost = c, lost
			}
		}
	}
	if s.rep != nil {
		s.psBusy = psBusy(s.rep)
		if g := int(s.rep.Procs.GOMAXPROCS); g > 0 {
			s.gomaxprocs = g
		}
	}
	s.genOwn = !res.CPUIncludesTarget && s.phase.GeneratorCPUCores >= load.CPUCoreLimit

	d := &rundir.Diagnosis{}
	split, kids := s.basis(d)
	var causes []rundir.Cause
	if split != nil {
		causes = s.fromSplit(split, kids, d.Basis)
	} else {
		causes = s.fromPolls()
	}
	causes = s.addCeiling(causes)
	d.Causes = rank(causes)
	return d
}

// basis picks the split the shares are of: the per-request p99 band, else
// the serving goroutines' class; nil with neither (BasisPolls).
func (s *situation) basis(d *rundir.Diagnosis) (split, kids []analyze.Share) {
	d.Basis = rundir.BasisPolls
	d.BasisDetail = "the load's figures and the polls (no trace was captured)"
	if s.rep == nil || s.rep.Requests == nil {
		return nil, nil
	}
	rq := s.rep.Requests
	if rq.PerRequest {
		for _, b := range rq.Bands {
			if b.Name == ">=p99" {
				d.Basis = rundir.BasisRequests
				d.BasisDetail = fmt.Sprintf("the p99 band's time: the %d slowest of %d traced requests, %s or more", b.Requests, rq.Requests, fmtNs(b.FromNs))
				return b.Split, b.Children
			}
		}
	}
	for _, c := range rq.Classes {
		if c.Serving {
			d.Basis = rundir.BasisClass
			d.BasisDetail = fmt.Sprintf("the time of the %d %s goroutines, per goroutine class and not per request (the target has no schedscope middleware), their waits for a next request left out",
				c.Goroutines, c.Class)
			return c.Split, c.Created
		}
	}
	d.BasisDetail = "the load's figures and the polls (the trace shows no request tasks and no net/http serving goroutines)"
	return nil, nil
}

// fromSplit maps the split's states to causes.
func (s *situation) fromSplit(split, kids []analyze.Share, basis rundir.DiagnosisBasis) []rundir.Cause {
	var out []rundir.Cause
	throttled := s.throttled()
	add := func(k rundir.Kind, pool string, share float64) {
		if share <= 0 {
			return
		}
		if k == rundir.KindCPU && throttled {
			// Saturated CPUs under a throttled quota: the quota is why
			// (the socket, outside-handler and lag time included).
			k = rundir.KindThrottled
		}
		for i := range out {
			if out[i].Kind == k && out[i].Pool == pool {
				out[i].Share += share
				return
			}
		}
		out = append(out, rundir.Cause{Kind: k, Pool: pool, Share: share})
	}
	cpu := s.cpuSaturated()
	var mapState func(st analyze.State, pool string, share float64)
	// apportion maps share over split's states in proportion, but for
	// self (the state being apportioned); false when split has no time.
	apportion := func(split []analyze.Share, self analyze.State, share float64) bool {
		var total float64
		for _, sh := range split {
			if sh.State != self {
				total += sh.Pct
			}
		}
		if total <= 0 {
			return false
		}
		for _, sh := range split {
			if sh.State != self {
				mapState(sh.State, sh.Pool, share*sh.Pct/total)
			}
		}
		return true
	}
	mapState = func(st analyze.State, pool string, share float64) {
		switch st {
		case analyze.StateRunnable, analyze.StateRunning:
			switch {
			case s.throttled():
				// A throttled thread is off the CPU while its goroutine
				// stays Running (or waits Runnable for a P whose thread is).
				add(rundir.KindThrottled, "", share)
			case cpu && s.gomaxprocs > 0 && s.cpus > s.gomaxprocs:
				add(rundir.KindGOMAXPROCS, "", share)
			case cpu || st == analyze.StateRunnable:
				add(rundir.KindCPU, "", share)
			default:
				add(rundir.KindWork, "", share)
			}
		case analyze.StateGCAssist, analyze.StateGCWait:
			add(rundir.KindGC, "", share)
		case analyze.StatePool:
			add(rundir.KindPool, pool, share)
		case analyze.StateNetwork:
			add(rundir.KindDownstream, "", share)
		case analyze.StateHTTP:
			// The response comes through the Transport's reader goroutines:
			// how they spent their time says whether the wait was the
			// downstream (their network wait) or the CPU (they were
			// runnable).
			if !apportion(s.readLoops(), analyze.StateHTTP, share) {
				add(rundir.KindDownstream, "", share)
			}
		case analyze.StateSleep:
			add(rundir.KindSleep, "", share)
		case analyze.StateChan:
			add(rundir.KindChannel, "", share)
		case analyze.StateSync:
			add(rundir.KindContention, "", share)
		case analyze.StateSyscall, analyze.StateCgo:
			if s.rep != nil && len(s.rep.Pinned.Events) > 0 {
				add(rundir.KindPinned, "", share)
			} else {
				add(rundir.KindSyscall, "", share)
			}
		case analyze.StateFanout:
			// The children's own split, in proportion.
			if !apportion(kids, analyze.StateFanout, share) {
				add(rundir.KindChannel, "", share)
			}
		case analyze.StateLag:
			// The generator's own lateness: its cause when it was short of
			// CPU in its own process or late against an idle target; else a
			// consequence of the CPUs it shares with a saturated target.
			switch {
			case s.genOwn || s.generatorLate():
				add(rundir.KindGenerator, "", share)
			case s.throttled():
				add(rundir.KindThrottled, "", share)
			case cpu:
				add(rundir.KindCPU, "", share)
			default:
				add(rundir.KindOutside, "", share)
			}
		case analyze.StateSocket:
			// Sent and waiting to be read: with the Ps busy, the scheduler
			// polls the network only when a P runs out of work, so an
			// overloaded server's queue is in its sockets.
			if cpu {
				add(rundir.KindCPU, "", share)
			} else {
				add(rundir.KindOutside, "", share)
			}
		case analyze.StateBefore, analyze.StateAfter:
			s.outside(add, share, cpu)
		default:
			add(rundir.KindUnknown, "", share)
		}
	}
	for _, sh := range split {
		mapState(sh.State, sh.Pool, sh.Pct/100)
	}
	if basis == rundir.BasisClass && s.genOwn {
		// Per class, time outside the handlers is not measured: the
		// generator's own saturation still counts, in proportion to its lag.
		add(rundir.KindGenerator, "", s.lagShare())
	}
	for i := range out {
		s.explain(&out[i])
	}
	return out
}

// readLoops is the split of net/http's response readers, if the trace has
// them.
func (s *situation) readLoops() []analyze.Share {
	if s.rep == nil || s.rep.Requests == nil {
		return nil
	}
	for _, c := range s.rep.Requests.Classes {
		if c.Class == analyze.ReadLoopClass {
			return c.Split
		}
	}
	return nil
}

// outside attributes time outside the handler: to the generator when it was
// its own cause, to the CPU when the machine was saturated (accept and the
// connection goroutines wait for a P like the handlers), else to the
// network and the client.
func (s *situation) outside(add func(rundir.Kind, string, float64), share float64, cpu bool) {
	if s.genOwn || s.generatorLate() {
		g := min(share, s.lagShare())
		if s.genOwn {
			g = share
		}
		add(rundir.KindGenerator, "", g)
		share -= g
	}
	if cpu {
		add(rundir.KindCPU, "", share)
		return
	}
	add(rundir.KindOutside, "", share)
}

// lagShare is the generator's send lag p99 as a share of the latency p99:
// what the generator adds to the slowest requests.
func (s *situation) lagShare() float64 {
	p := s.phase
	if p == nil || p.Latency.P99 <= 0 {
		return 0
	}
	return min(p.SendLag.P99/p.Latency.P99, 1)
}

// fromPolls draws causes without a trace: the ceiling (added by
// addCeiling) and the generator.
//
// Throttling, without a trace, takes the throttled share of the periods as
// its share: the polls cannot split the slow requests' time.
func (s *situation) fromPolls() []rundir.Cause {
	var out []rundir.Cause
	if s.throttled() {
		c := rundir.Cause{Kind: rundir.KindThrottled, Share: s.figs.Cgroup.ThrottledShare}
		s.explain(&c)
		out = append(out, c)
	}
	if s.genOwn || s.generatorLate() {
		c := rundir.Cause{Kind: rundir.KindGenerator, Share: s.lagShare()}
		if s.genOwn {
			c.Share = max(c.Share, 0.5)
		}
		s.explain(&c)
		out = append(out, c)
	}
	return out
}

// addCeiling gives the ceiling's cause its lost share, adding the cause
// when the split did not name it.
func (s *situation) addCeiling(causes []rundir.Cause) []rundir.Cause {
	c := s.ceiling
	if c == nil {
		return causes
	}
	k := c.What
	switch {
	case k == rundir.KindCPU && s.throttled():
		k = rundir.KindThrottled
	case k == rundir.KindCPU && s.gomaxprocs > 0 && s.cpus > s.gomaxprocs:
		k = rundir.KindGOMAXPROCS
	}
	for i := range causes {
		if causes[i].Kind == k && causes[i].Pool == c.Pool {
			causes[i].LostShare = s.lost
			causes[i].Evidence = append(causes[i].Evidence, "the ceiling: "+c.Reason)
			return causes
		}
	}
	nc := rundir.Cause{Kind: k, Pool: c.Pool, LostShare: s.lost}
	s.explain(&nc)
	nc.Evidence = append(nc.Evidence, "the ceiling: "+c.Reason)
	return append(causes, nc)
}

// impact orders causes: the larger of a cause's share of the slow
// requests' time and of the offered rate lost.
func impact(c rundir.Cause) float64 { return max(c.Share, c.LostShare) }

// rank drops the negligible causes and orders the rest by impact.
func rank(causes []rundir.Cause) []rundir.Cause {
	out := []rundir.Cause{}
	for _, c := range causes {
		if impact(c) >= MinCauseShare {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(x, y rundir.Cause) int {
		return cmp.Or(cmp.Compare(impact(y), impact(x)), cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Pool, y.Pool))
	})
	return out
}

// psBusy is the mean share of the trace each P spent running.
func psBusy(r *analyze.Report) float64 {
	if len(r.Procs.Utilisation) == 0 {
		return -1
	}
	var sum float64
	n := len(r.Procs.Utilisation)
	if g := int(r.Procs.GOMAXPROCS); g > 0 && g < n {
		n = g // Ps beyond GOMAXPROCS (after a decrease) are idle
	}
	for _, u := range r.Procs.Utilisation[:n] {
		sum += u.Fraction
	}
	return sum / float64(n)
}

// explain fills a cause's title, evidence and the change to make.
func (s *situation) explain(c *rundir.Cause) {
	pct := func(f float64) string { return fmt.Sprintf("%.0f %%", 100*f) }
	var ev []string
	if s.psBusy >= 0 && (c.Kind == rundir.KindCPU || c.Kind == rundir.KindGOMAXPROCS || c.Kind == rundir.KindWork || c.Kind == rundir.KindGenerator) {
		ev = append(ev, fmt.Sprintf("the target's %d Ps were busy %s of the trace", s.gomaxprocs, pct(s.psBusy)))
	}
	if s.rep != nil && (c.Kind == rundir.KindCPU || c.Kind == rundir.KindGOMAXPROCS) {
		ev = append(ev, fmt.Sprintf("runnable goroutines waited %s for a P at p99 (scheduling latency)", fmtNs(s.rep.Sched.PercentilesNs.P99)))
	}
	if s.figs != nil && s.figs.CPUCores > 0 && (c.Kind == rundir.KindCPU || c.Kind == rundir.KindGOMAXPROCS || c.Kind == rundir.KindGenerator) {
		line := fmt.Sprintf("the target used %.2f cores", s.figs.CPUCores)
		if s.phase != nil && s.phase.GeneratorCPUCores > 0 {
			line += fmt.Sprintf(", the generator %.2f", s.phase.GeneratorCPUCores)
		}
		if s.machine > 0 {
			line += fmt.Sprintf(", of the machine's %d CPUs", s.machine)
		}
		ev = append(ev, line)
	}
	switch c.Kind {
	case rundir.KindCPU:
		c.Title = "CPU: the target's goroutines waited for, or ran on, saturated CPUs"
		c.Change = "cut the CPU per request (see the CPU and fgprof profiles), or give the target more CPUs"
		if s.machineSaturated() {
			c.Change += "; the generator shares this machine: run it on another one to measure the target alone"
		}
	case rundir.KindGOMAXPROCS:
		c.Title = fmt.Sprintf("GOMAXPROCS: %d Ps for %d CPUs, and the Ps were busy", s.gomaxprocs, s.cpus)
		c.Change = fmt.Sprintf("raise GOMAXPROCS toward %d (or leave it to the runtime's default)", s.cpus)
	case rundir.KindThrottled:
		s.explainThrottled(c, &ev)
	case rundir.KindWork:
		c.Title = "the handlers' own CPU work (the Ps were not saturated)"
		c.Change = "this is service time, not queueing: make the handler cheaper (see the CPU profile)"
	case rundir.KindGC:
		c.Title = "GC: mark assists and waits for the garbage collector"
		if s.rep != nil {
			ev = append(ev, fmt.Sprintf("%d GC cycles, assists %s, %d stop-the-world pauses totalling %s (max %s)",
				s.rep.GC.Count, fmtNs(s.rep.GC.AssistNs), s.rep.GC.STWCount, fmtNs(s.rep.GC.STWNs), fmtNs(s.rep.GC.STWMaxNs)))
		}
		c.Change = "allocate less per request (see the heap profile), or raise GOGC / set GOMEMLIMIT"
	case rundir.KindPool:
		c.Title = fmt.Sprintf("pool %s: requests waited for a member", c.Pool)
		if pf := s.pool(c.Pool); pf != nil {
			line := fmt.Sprintf("%s: %d/%d in use, full in %s of the polls, %.1f waiting on average", pf.Name, pf.MaxInUse, pf.Size, pct(pf.SaturatedShare), pf.MeanWaiting)
			if pf.CapacityPerS > 0 {
				line += fmt.Sprintf("; capacity %.0f req/s (Little's law: %d / %.1f ms)", pf.CapacityPerS, pf.Size, pf.MeanHoldMS)
			}
			ev = append(ev, line)
		}
		c.Change = fmt.Sprintf("raise pool %s's size, or shorten how long each request holds a member (capacity = size / hold time)", c.Pool)
	case rundir.KindDownstream:
		c.Title = "downstream: requests waited on the network (a service they call)"
		c.Change = "look at the downstream's latency; call it with a deadline, in parallel, or cache"
	case rundir.KindSleep:
		c.Title = "the handlers sleep (time.Sleep or timers)"
		c.Change = "the wait is in the code: shorten or remove it"
	case rundir.KindChannel:
		c.Title = "requests waited on channels (an unnamed queue or pool?)"
		c.Change = "if a pool or queue is behind it, mark the wait with agent.Wait(ctx, name) to see it by name"
	case rundir.KindContention:
		c.Title = "lock contention: requests waited on sync.Mutex, RWMutex, WaitGroup or Cond"
		for _, p := range s.profiles {
			if p.Name == "mutex" && len(p.Top) > 0 {
				ev = append(ev, fmt.Sprintf("mutex profile top site: %s (%s of the delay)", p.Top[0].Site, pct(p.Top[0].Share)))
			}
		}
		c.Change = "hold the lock for less time, or shard the state it protects"
	case rundir.KindPinned:
		c.Title = "pinned threads: goroutines held OS threads in syscalls or cgo calls"
		if s.rep != nil {
			ev = append(ev, fmt.Sprintf("%d spans over %s without running Go code", len(s.rep.Pinned.Events)+int(s.rep.Pinned.Dropped), fmtNs(s.rep.PinThreshNs)))
		}
		c.Change = "bound the blocking calls (a pool of their own), or make them non-blocking"
	case rundir.KindSyscall:
		c.Title = "blocking system calls"
		c.Change = "see the trace's syscall sites; file I/O blocks a thread per call"
	case rundir.KindGenerator:
		c.Title = "the load generator"
		if p := s.phase; p != nil {
			ev = append(ev, fmt.Sprintf("send lag p99 %.2f ms against latency p99 %.2f ms; generator CPU %.2f cores", p.SendLag.P99, p.Latency.P99, p.GeneratorCPUCores))
		}
		c.Change = "run the generator on another machine, or with more CPU (its lag is part of every latency it reports)"
	case rundir.KindOutside:
		c.Title = "outside the handler: accepting, reading the request, writing the response, the network"
		c.Change = "compare with the handler's time: a large gap on an idle target points at the network or the client"
	case rundir.KindUnknown:
		c.Title = "blocked for a reason the trace does not name"
		c.Change = "see the trace's blocking sites"
	default:
		c.Title = string(c.Kind)
	}
	if c.Share > 0 {
		ev = append([]string{fmt.Sprintf("%s of the time", pct(c.Share))}, ev...)
	}
	c.Evidence = ev
}

// explainThrottled fills a throttling cause: the limit, the throttled share
// and time, the target's use of the limit, the p99's growth, and the change:
// a parent's limit the runtime cannot see, a GOMAXPROCS above the limit, or
// a limit too small for the work.
func (s *situation) explainThrottled(c *rundir.Cause, ev *[]string) {
	cg := s.figs.Cgroup
	limit := cg.TightestCores
	where := "the target's cgroup " + cg.Path
	if cg.ParentLimit {
		where = "the parent cgroup " + cg.TightestPath
	}
	c.Title = fmt.Sprintf("CPU limit: %s ran out of its %s-core quota in %.0f %% of the periods", where, fmtCores(limit), 100*cg.ThrottledShare)
	*ev = append(*ev, fmt.Sprintf("%d of %d periods throttled (%.0f %%), %.2f s throttled per second of the phase (%.2f s in all), quota %s cores",
		cg.ThrottledPeriods, cg.Periods, 100*cg.ThrottledShare, cg.ThrottledPerS, cg.ThrottledSeconds, fmtCores(limit)))
	if s.figs.CPUCores > 0 && limit > 0 {
		line := fmt.Sprintf("the target used %.2f cores, %.0f %% of the quota, with GOMAXPROCS %d", s.figs.CPUCores, 100*cg.UseOfLimit, s.gomaxprocs)
		if cg.UseOfLimit > OverLimitUse {
			// A quota cannot be exceeded over whole periods: the polls'
			// CPU readings and their timestamps disagree (slow polls of a
			// throttled target); the cgroup's counters stand.
			line += " (more than a quota allows: the polls' CPU figures are skewed, trust the throttling counters)"
		}
		*ev = append(*ev, line)
	}
	if s.base != nil && s.base != s.phase {
		*ev = append(*ev, fmt.Sprintf("latency p99 %.1f ms in %s against %.1f ms in %s", s.phase.Latency.P99, s.phase.Name, s.base.Latency.P99, s.base.Name))
	}
	want := 0
	if limit > 0 {
		want = rundir.DefaultGOMAXPROCS(cmp.Or(s.cpus, s.machine), limit)
	}
	switch {
	case cg.ParentLimit:
		*ev = append(*ev, parentLimitSentence(cg, s.gomaxprocs, cmp.Or(s.cpus, s.machine)))
		c.Change = fmt.Sprintf("set the limit on the target's own cgroup (the runtime then chooses GOMAXPROCS itself), or set GOMAXPROCS=%d; or raise the limit on %s", want, cg.TightestPath)
	case limit > 0 && s.gomaxprocs > want && want > 0:
		c.Change = fmt.Sprintf("GOMAXPROCS %d is above the %s-core limit: lower it to %d (or leave it to the runtime's default), or raise the limit to %d cores", s.gomaxprocs, fmtCores(limit), want, s.gomaxprocs)
	default:
		c.Change = fmt.Sprintf("raise the CPU limit above %s cores, or cut the CPU per request (see the CPU and fgprof profiles)", fmtCores(limit))
	}
}

// parentLimitSentence says a parent cgroup's limit the Go runtime does not
// see (golang/go#81180), and the GOMAXPROCS it would have chosen with it
// (min(CPUs, max(2, ceil(limit)))). gomaxprocs or cpus 0: unknown.
func parentLimitSentence(cg *rundir.CgroupFigures, gomaxprocs, cpus int) string {
	line := fmt.Sprintf("a CPU limit of %s cores is set on the parent cgroup %s, not on the target's own cgroup %s", fmtCores(cg.TightestCores), cg.TightestPath, cg.Path)
	if cg.LimitCores > 0 {
		line += fmt.Sprintf(" (its own limit is %s cores)", fmtCores(cg.LimitCores))
	}
	line += ": the Go runtime reads only its own cgroup's limit (golang/go#81180)"
	if gomaxprocs > 0 {
		line += fmt.Sprintf(" and chose GOMAXPROCS %d (unless GOMAXPROCS was set explicitly)", gomaxprocs)
	}
	if cpus > 0 {
		want := rundir.DefaultGOMAXPROCS(cpus, cg.TightestCores)
		line += fmt.Sprintf("; with the limit it would have chosen %d (max(2, ceil(%s)), at most the %d CPUs)", want, fmtCores(cg.TightestCores), cpus)
		if want == gomaxprocs {
			line += ", the same here"
		}
	}
	return line
}

// fmtCores renders a CPU limit in cores: "0.5", "1.5", "2".
func fmtCores(c float64) string { return strconv.FormatFloat(c, 'f', -1, 64) }

func (s *situation) pool(name string) *rundir.PoolFigures {
	if s.figs == nil {
		return nil
	}
	for i := range s.figs.Pools {
		if s.figs.Pools[i].Name == name {
			return &s.figs.Pools[i]
		}
	}
	return nil
}

// writeDiagnosis renders a diagnosis for summary.txt and the terminal.
func writeDiagnosis(w func(format string, args ...any), d *rundir.Diagnosis) {
	if d == nil {
		return
	}
	w("== diagnosis (shares of %s)\n", d.BasisDetail)
	if len(d.Causes) == 0 {
		w("nothing stands out: no cause takes %.0f %% of the time or of the offered rate\n\n", 100*MinCauseShare)
		return
	}
	for i, c := range d.Causes {
		head := fmt.Sprintf("%d. %s", i+1, c.Title)
		var parts []string
		if c.Share > 0 {
			parts = append(parts, fmt.Sprintf("%.0f %% of the time", 100*c.Share))
		}
		if c.LostShare > 0 {
			parts = append(parts, fmt.Sprintf("%.0f %% of the offered rate lost", 100*c.LostShare))
		}
		if len(parts) > 0 {
			head += " (" + strings.Join(parts, "; ") + ")"
		}
		w("%s\n", head)
		for _, e := range c.Evidence {
			if strings.HasSuffix(e, "of the time") {
				continue // in the head
			}
			w("   - %s\n", e)
		}
		w("   change: %s\n", c.Change)
	}
	w("\n")
}

// leftOutText says why the ids of l were left out, the kinds there are.
func leftOutText(l analyze.IDsLeftOut) string {
	var parts []string
	for _, k := range []struct {
		n    int64
		what string
	}{
		{l.ForeignTag, "without this run's tag"},
		{l.OutsideWindow, "intended outside the run"},
		{l.NotTheRecord, "not as the generator recorded them"},
	} {
		if k.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k.n, k.what))
		}
	}
	return strings.Join(parts, ", ")
}

// anatomyTop is how many states a split line names.
const anatomyTop = 5

// writeAnatomy renders the request anatomy: each latency band's split, or
// the serving goroutines' split when the trace has no request tasks.
func writeAnatomy(w func(format string, args ...any), r *analyze.RequestsReport) {
	if r.PerRequest {
		w("== where the requests' time went (%d requests in the trace", r.Requests)
		if r.Open > 0 {
			w(", %d of them still in their handlers at its end: counted with their time so far", r.Open)
		}
		if r.Joined > 0 {
			w("; %d joined with the generator's ids", r.Joined)
		}
		if l := r.IDsLeftOut; l.Total() > 0 {
			w("; %d ids left out of the join, counted with their handler's time: %s", l.Total(), leftOutText(l))
		}
		w(")\n")
		for _, b := range r.Bands {
			w("%-8s %5d req  %9s-%-9s  %s\n", b.Name, b.Requests, fmtNs(b.FromNs), fmtNs(b.ToNs), splitLine(b.Split))
			if len(b.Children) > 0 && hasState(b.Split, analyze.StateFanout) {
				w("%-8s %30s  %s\n", "", "its fan-out goroutines:", splitLine(b.Children))
			}
		}
		w("\n")
		return
	}
	w("== where the goroutines' time went, per class (%s)\n", r.Note)
	for _, c := range r.Classes[:min(len(r.Classes), 3)] {
		w("%s (%d goroutines): %s\n", c.Class, c.Goroutines, splitLine(c.Split))
	}
	w("\n")
}

// splitLine renders a split: "61 % pool db, 22 % runnable, ...".
func splitLine(split []analyze.Share) string {
	var parts []string
	for _, s := range split[:min(len(split), anatomyTop)] {
		if s.Pct < 0.5 {
			break // largest first: the rest round to 0 %
		}
		name := string(s.State)
		if s.Pool != "" {
			name += " " + s.Pool
		}
		parts = append(parts, fmt.Sprintf("%.0f %% %s", s.Pct, name))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func hasState(split []analyze.Share, st analyze.State) bool {
	for _, s := range split {
		if s.State == st {
			return true
		}
	}
	return false
}
