package load

import (
	"math/rand/v2"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// collector is the goroutine that drains the shards, samples the number in
// flight, calls Progress and Interval, and finalises phases. It owns the
// phaseState accumulators.
type collector struct {
	r        *runner
	stopCh   chan struct{}
	lastTick int64
	lastOK   int64 // runner.okDone at the last progress report
	every    int64 // tick period, ns
}

func newCollector(r *runner) *collector {
	return &collector{r: r, stopCh: make(chan struct{})}
}

// stop asks loop to finalise every phase and return.
func (c *collector) stop() { close(c.stopCh) }

func (c *collector) loop() {
	r := c.r
	sample := time.NewTimer(sampleGap())
	defer sample.Stop()
	// Without a Progress callback, drain only as often as intervals need.
	every := int64(r.cfg.ProgressEvery)
	if r.cfg.Progress == nil {
		every = int64(r.cfg.IntervalEvery)
	}
	c.every = every
	next := every
	for {
		select {
		case <-c.stopCh:
			c.tick(true)
			return
		case <-sample.C:
			sample.Reset(sampleGap())
			c.sampleInflight()
			if now := r.nowNS(); now >= next {
				c.tick(false)
				next = now + every
			}
		}
	}
}

// sampleGap is the time to the next sample of the peak in flight:
// sampleEvery on average, drawn uniformly from half to one and a half times
// it, so that samples do not lock onto uniform arrivals whose spacing
// divides a fixed period.
func sampleGap() time.Duration {
	return sampleEvery/2 + rand.N(sampleEvery)
}

func (c *collector) sampleInflight() {
	r := c.r
	r.mu.Lock()
	cur := r.current
	r.mu.Unlock()
	if cur < 0 || r.states[cur] == nil {
		return
	}
	ps := r.states[cur]
	ps.inflightMax = max(ps.inflightMax, r.inflight.Load())
}

// tick drains every active phase, reports progress, emits due intervals
// and finalises phases whose requests are all done (every phase, when
// final is set).
func (c *collector) tick(final bool) {
	r := c.r
	now := r.nowNS()
	type view struct {
		ps          *phaseState
		ended       bool
		start, stop int64
	}
	r.mu.Lock()
	cur := r.current
	var active []view
	for _, ps := range r.states {
		if ps != nil && ps.began && !ps.final {
			active = append(active, view{ps, ps.ended, ps.startNS, ps.endNS})
		}
	}
	r.mu.Unlock()

	since := now - c.lastTick
	c.lastTick = now
	reported := false
	for _, v := range active {
		ps := v.ps
		done := final || (v.ended && ps.inflight.Load() == 0) // read before draining: every record is in
		c.drain(ps)
		if ps.plan.index == cur && !done {
			c.progress(ps, now, since, false)
			reported = true
		}
		if r.cfg.Interval != nil && (done || now-ps.nextIntervalFrom >= int64(r.cfg.IntervalEvery)-c.every/2) {
			c.emitInterval(ps, now)
		}
		if ps.tickLat.TotalCount() > 0 {
			ps.tickLat.Reset()
		}
		if done {
			c.finalize(ps)
			c.progress(ps, now, since, true)
		}
	}
	if !reported && !final && cur >= 0 && r.states[cur] == nil && r.cfg.Progress != nil {
		p := r.plan[cur]
		r.mu.Lock()
		start := r.curStart
		r.mu.Unlock()
		r.cfg.Progress(Progress{Phase: cur, Phases: len(r.plan), Step: p.step, Name: p.name, Kind: p.kind,
			Elapsed: time.Duration(min(now-start, int64(p.dur))), Total: p.dur, RunElapsed: time.Duration(now),
			InFlight: r.inflight.Load()})
	}
}

// drain moves what the shards recorded for ps into its accumulators. Each
// shard's recorder is swapped for an empty spare under the shard's lock, so
// workers never wait behind a merge.
func (c *collector) drain(ps *phaseState) {
	r := c.r
	idx := ps.plan.index
	if ps.lat == nil {
		ps.lat, ps.svc, ps.lag, ps.tickLat = newHist(), newHist(), newHist(), newHist()
		if r.cfg.Interval != nil {
			ps.ivLat, ps.ivSvc, ps.ivLag = newHist(), newHist(), newHist()
		}
		ps.spares = make([]*phaseRec, len(r.shards))
	}
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		rec := sh.recs[idx]
		if rec == nil || rec.completed == 0 {
			sh.mu.Unlock()
			continue
		}
		sh.mu.Unlock()
		// Histograms are large (about 270 KB each): a spare is made only for
		// a shard in use, outside the lock.
		spare := ps.spares[i]
		if spare == nil {
			spare = &phaseRec{lat: newHist(), svc: newHist(), lag: newHist()}
		}
		sh.mu.Lock()
		rec = sh.recs[idx] // the same: only this goroutine swaps or clears it
		sh.recs[idx] = spare
		sh.mu.Unlock()

		if ps.completed == 0 || rec.firstDone < ps.firstDone {
			ps.firstDone = rec.firstDone
		}
		ps.lastDone = max(ps.lastDone, rec.lastDone)
		ps.completed += rec.completed
		ps.busy += rec.busy
		ps.ok += rec.ok
		ps.errs = ps.errs.Plus(rec.errs)
		for code, n := range rec.codes {
			if n > 0 {
				ps.codes[code] += n
			}
		}
		if rec.lat.TotalCount() > 0 {
			ps.tickLat.Merge(rec.lat)
			ps.svc.Merge(rec.svc)
			if ps.ivSvc != nil {
				ps.ivSvc.Merge(rec.svc)
			}
		}
		ps.lag.Merge(rec.lag)
		if ps.ivLag != nil {
			ps.ivLag.Merge(rec.lag)
		}
		rec.lat.Reset()
		rec.svc.Reset()
		rec.lag.Reset()
		*rec = phaseRec{lat: rec.lat, svc: rec.svc, lag: rec.lag}
		ps.spares[i] = rec
	}
	if ps.tickLat.TotalCount() > 0 {
		ps.lat.Merge(ps.tickLat)
		if ps.ivLat != nil {
			ps.ivLat.Merge(ps.tickLat)
		}
	}
}

func (c *collector) progress(ps *phaseState, now, since int64, done bool) {
	r := c.r
	if r.cfg.Progress == nil {
		return
	}
	r.mu.Lock()
	start := ps.startNS
	r.mu.Unlock()
	p := Progress{
		Phase: ps.plan.index, Phases: len(r.plan), Step: ps.plan.step, Name: ps.plan.name, Kind: ps.plan.kind,
		OfferedRate: ps.plan.rate, Users: ps.plan.users,
		Elapsed:    time.Duration(min(max(now-start, 0), int64(ps.plan.dur))),
		Total:      ps.plan.dur,
		RunElapsed: time.Duration(now),
		Planned:    ps.planned.Load(), Sent: ps.sent.Load(), NotSent: ps.notSent.Load(),
		Completed: ps.completed, OK: ps.ok, Errors: ps.errs,
		InFlight:    r.inflight.Load(),
		IntervalP50: time.Duration(ps.tickLat.ValueAtQuantile(50)),
		IntervalP95: time.Duration(ps.tickLat.ValueAtQuantile(95)),
		IntervalP99: time.Duration(ps.tickLat.ValueAtQuantile(99)),
		PhaseP50:    time.Duration(ps.lat.ValueAtQuantile(50)),
		PhaseP95:    time.Duration(ps.lat.ValueAtQuantile(95)),
		PhaseP99:    time.Duration(ps.lat.ValueAtQuantile(99)),
		Done:        done,
	}
	if since > 0 && !done {
		okNow := r.okDone.Load()
		p.OKPerS = float64(okNow-c.lastOK) / (float64(since) / 1e9)
		c.lastOK = okNow
	}
	r.cfg.Progress(p)
}

func (c *collector) emitInterval(ps *phaseState, now int64) {
	r := c.r
	from := ps.nextIntervalFrom
	ps.nextIntervalFrom = now
	if ps.ivLat.TotalCount() == 0 && ps.ivLag.TotalCount() == 0 {
		return
	}
	base := r.start.UnixMilli()
	for _, h := range []*hdrhistogram.Histogram{ps.ivLat, ps.ivSvc, ps.ivLag} {
		h.SetStartTimeMs(base + from/1e6)
		h.SetEndTimeMs(base + now/1e6)
	}
	r.cfg.Interval(Interval{
		Phase: ps.plan.index, Kind: ps.plan.kind, Name: ps.plan.name,
		Start: time.Duration(from), End: time.Duration(now),
		Latency: ps.ivLat, Service: ps.ivSvc, SendLag: ps.ivLag,
	})
	ps.ivLat, ps.ivSvc, ps.ivLag = newHist(), newHist(), newHist()
}

// finalize turns ps's accumulators into its PhaseResult and releases the
// shards' recorders.
func (c *collector) finalize(ps *phaseState) {
	r := c.r
	idx := ps.plan.index
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		sh.recs[idx] = nil
		sh.mu.Unlock()
	}
	r.mu.Lock()
	ps.final = true
	start, stop := ps.startNS, ps.endNS
	if !ps.ended { // interrupted before the driver closed it
		stop = r.nowNS()
		ps.cpu1, ps.gc1 = processCPU(), readGC()
	}
	cpu := ps.cpu1 - ps.cpu0
	gc := gcBetween(ps.gc0, ps.gc1)
	r.mu.Unlock()

	dur := float64(stop-start) / 1e9
	p := &PhaseResult{
		Name: ps.plan.name, Kind: ps.plan.kind, OfferedRate: ps.plan.rate, Users: ps.plan.users,
		StartS: float64(start) / 1e9, EndS: float64(stop) / 1e9, DurationS: dur,
		Planned: ps.planned.Load(), Sent: ps.sent.Load(), NotSent: ps.notSent.Load(),
		Completed: ps.completed, OK: ps.ok, Errors: ps.errs,
		Latency: percentiles(ps.lat), Service: percentiles(ps.svc),
		SendLag:      LagPercentiles{P50: nsMS(ps.lag.ValueAtQuantile(50)), P99: nsMS(ps.lag.ValueAtQuantile(99)), Max: nsMS(ps.lag.Max())},
		PeakInFlight: ps.inflightMax,
		GC:           gc,
		LatencyHist:  ps.lat, ServiceHist: ps.svc, SendLagHist: ps.lag,
	}
	if ps.lag.TotalCount() == 0 {
		p.SendLag.Max = 0
	}
	p.Unfinished = p.Sent - p.Completed
	if len(ps.codes) > 0 {
		p.StatusCodes = ps.codes
	}
	p.CompletedPerS, p.OKPerS = completionRate(ps, dur)
	if dur > 0 {
		p.GeneratorCPUCores = cpu.Seconds() / dur
	}
	if p.Sent > 0 {
		p.GeneratorCPUUSPerReq = float64(cpu.Microseconds()) / float64(p.Sent)
	}
	if dur > 0 {
		p.MeanInFlight = float64(ps.busy) / 1e9 / dur
	}
	p.VerdictDetails = judge(p, r.cfg.Model(), r.cfg.Think.Seconds(), r.cfg.MaxInflight, !r.cfg.CPUIncludesTarget)
	p.Verdicts = make([]string, len(p.VerdictDetails))
	for i, v := range p.VerdictDetails {
		p.Verdicts[i] = v.String()
	}
	ps.result = p
	ps.spares, ps.ivLat, ps.ivSvc, ps.ivLag = nil, nil, nil, nil
}

// completionRate is the rate at which the target answered the phase's
// requests: completions per second from the phase's first completion to its
// last, and the 2xx share of it. Below capacity that is the offered rate;
// above it, the requests still queued when the phase ended are answered
// later, at the target's own pace, which is what this shows. With fewer than
// two completions it falls back to counts over the phase's duration.
func completionRate(ps *phaseState, dur float64) (completed, ok float64) {
	span := float64(ps.lastDone-ps.firstDone) / 1e9
	if ps.completed < 2 || span <= 0 {
		if dur <= 0 {
			return 0, 0
		}
		return float64(ps.completed) / dur, float64(ps.ok) / dur
	}
	completed = float64(ps.completed-1) / span
	return completed, completed * float64(ps.ok) / float64(ps.completed)
}

// nsMS is ns nanoseconds in milliseconds.
func nsMS(ns int64) float64 { return float64(ns) / 1e6 }

func percentiles(h *hdrhistogram.Histogram) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	return Percentiles{
		P50: nsMS(h.ValueAtQuantile(50)), P90: nsMS(h.ValueAtQuantile(90)), P95: nsMS(h.ValueAtQuantile(95)), P99: nsMS(h.ValueAtQuantile(99)),
		P999: nsMS(h.ValueAtQuantile(99.9)), Max: nsMS(h.Max()), Mean: h.Mean() / 1e6, Count: h.TotalCount(),
	}
}
