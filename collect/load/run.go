package load

import (
	"cmp"
	"context"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/schedscope/schedscope/internal/redact"
)

// histMax is the largest value the histograms hold (ns); larger values are
// recorded as histMax.
const histMax = int64(time.Hour)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMax, 3) }

// sampleEvery is how often the collector samples the number in flight.
const sampleEvery = 20 * time.Millisecond

// maxPipelinedRequest is the largest request (bytes) the open model's
// driver writes itself; see newRunner.
const maxPipelinedRequest = 16 << 10

// closedBackoff is how long a closed-model user waits after a connection or
// other error before its next request, so an unreachable target is not
// hammered in a tight loop.
const closedBackoff = 10 * time.Millisecond

// Run drives the load described by cfg until its plan ends or ctx is
// cancelled, and returns what it measured.
//
// A bad Config is an error and nothing is sent. Per-request failures
// (refused connections, timeouts, non-2xx) are counted in the result, never
// returned as errors. When ctx is cancelled, Run closes every connection at
// once and returns the partial result (Interrupted set) with a nil error.
// Run starts goroutines and connections and stops them all before it
// returns; Progress and Interval are not called after that.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	return runLoops(ctx, cfg, 0)
}

// runLoops is Run with loops event loops when the run uses the event-loop
// engine (0: evLoopCount's choice); tests pick the count.
func runLoops(ctx context.Context, cfg Config, loops int) (*Result, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, &configError{err}
	}
	r, err := newRunnerLoops(ctx, &c, loops)
	if err != nil {
		return nil, err
	}
	return r.run(), nil
}

// ticket is one request: its phase, intended send time and number.
type ticket struct {
	phase    int32
	intended int64  // ns on the run's clock
	seq      uint64 // RequestRecord.Seq
}

// runner is one Run's state.
type runner struct {
	cfg     *Config
	ctx     context.Context
	target  *target
	conns   *connSet
	plan    []phasePlan
	states  []*phaseState // one per plan entry; nil for pauses
	shards  []shard
	start   time.Time // the run's clock: every ns offset is since start
	timeout time.Duration

	// startUnix is start in Unix ns: an offset on the run's clock plus
	// startUnix is a Unix time.
	startUnix int64
	// seq numbers the requests sent (ticket.seq), from 1.
	seq atomic.Uint64
	// recordLeft is how many more RequestRecords the shards keep before
	// each overwrites its oldest (Config.RecordRequests).
	recordLeft atomic.Int64

	inflight atomic.Int64 // requests in flight, all phases
	// okDone counts 2xx responses as they arrive, whatever their phase (for
	// the live 2xx/s).
	okDone atomic.Int64

	// Open model with the net/http client: workers receive tickets. Only
	// the driver goroutine spawns workers (or, with the lean client,
	// pipelined connections: workers counts those too) and sends tickets.
	tickets chan ticket
	workers int
	wg      sync.WaitGroup

	// Closed model: requesters parked between phases, so users keep their
	// connections.
	idleMu  sync.Mutex
	idleReq []requester

	// Open model, lean client: idle pipelined connections (pipe.go).
	// Requests due while no connection was idle and maxDials were being
	// dialled wait in pipePending, oldest first; dialing counts the dials.
	pipeMu      sync.Mutex
	pipeIdle    []*pipeConn
	pipePending ticketQueue
	dialing     int
	// pipeOut is the driver's buffer for the tagged requests it writes
	// itself (dispatchPipe); only the driver goroutine touches it.
	pipeOut []byte
	// abandon is set when the run stops waiting for stragglers: their
	// failures are then no outcome.
	abandon atomic.Bool

	// ev is the event-loop engine (evloops_linux.go): its first loop runs
	// on the driver goroutine; nil when the run uses goroutines per
	// connection.
	ev *evLoops

	// sleeper times the driver's short waits; nil when unavailable.
	sleeper *preciseSleeper

	// startLate is how late the first phase began after Config.StartAt,
	// ns; clock is the host's clock discipline then (shard.go).
	startLate   int64
	clock       ClockSync
	targetClock *TargetClock

	mu       sync.Mutex // guards current and the phaseState fields marked "mu"
	current  int        // plan index being driven, -1 before and after
	curStart int64      // when current started, ns
}

// phaseState is one load phase's counters and accumulators.
type phaseState struct {
	plan phasePlan

	// Written by the driver or the users; read by the collector.
	planned, sent, notSent atomic.Int64
	inflight               atomic.Int64 // this phase's requests in flight
	// windowEnd is when the phase ends on the run clock, set as it begins
	// (0 before): a request's time in flight counts toward the phase's
	// mean in flight up to there.
	windowEnd atomic.Int64

	// mu: set by the driver at phase start and end.
	began, ended     bool
	startNS, endNS   int64
	cpu0, cpu1       time.Duration
	gc0, gc1         gcSample
	final            bool
	result           *PhaseResult
	nextIntervalFrom int64

	// Collector-owned accumulators.
	lat, svc, lag       *hdrhistogram.Histogram // the whole phase
	tickLat             *hdrhistogram.Histogram // the last progress interval
	spares              []*phaseRec             // empty recorders to swap into the shards
	ivLat, ivSvc, ivLag *hdrhistogram.Histogram // the current Interval; nil when not requested
	completed, ok       int64
	firstDone, lastDone int64 // completion times, ns
	busy                int64 // the completed requests' time in flight within the phase, summed, ns
	errs                ErrorCounts
	codes               map[int]int64
	inflightMax         int64
}

// shard is a lock-protected set of per-phase recorders. Each connection records
// into one shard, so locks are rarely contended and no histogram is shared
// by two goroutines at once.
type shard struct {
	mu   sync.Mutex
	recs []*phaseRec // by plan index; nil when the phase is not recording
	// With Config.RecordRequests: the records kept, and how many were
	// dropped. Once the run's recordLeft is spent, each new record
	// overwrites the shard's oldest, reqs[oldest].
	reqs    []RequestRecord
	oldest  int
	dropped int64
	left    *atomic.Int64 // the runner's recordLeft; nil when not recording
	_       [40]byte      // keep shards on separate cache lines
}

// phaseRec holds what one shard recorded for one phase since the
// collector last drained it.
type phaseRec struct {
	lat, svc, lag *hdrhistogram.Histogram
	completed, ok int64
	// firstDone and lastDone bound the completion times (ns) since the
	// collector last drained the recorder; valid when completed > 0.
	firstDone, lastDone int64
	// busy is the sum of the recorded requests' time in flight within the
	// phase (from the actual send to done or the phase's end), ns.
	busy  int64
	errs  ErrorCounts
	codes [600]int64
}

func newRunner(ctx context.Context, cfg *Config) (*runner, error) {
	return newRunnerLoops(ctx, cfg, 0)
}

// newRunnerLoops is newRunner with loops event loops (0: evLoopCount's
// choice).
func newRunnerLoops(ctx context.Context, cfg *Config, loops int) (*runner, error) {
	conns := newConnSet()
	t, err := newTarget(cfg, conns)
	if err != nil {
		return nil, err
	}
	r := &runner{
		cfg:     cfg,
		ctx:     ctx,
		target:  t,
		conns:   conns,
		plan:    makePlan(cfg),
		timeout: cfg.Timeout,
		current: -1,
	}
	// The driver writes requests itself only when a write cannot block it:
	// a request that fits easily in a socket buffer. Larger requests, and
	// the net/http client, go through worker goroutines. Plain HTTP with
	// the lean client runs on the event loop when the system has one.
	writable := cfg.Client == Lean && t.maxRequestLen() <= maxPipelinedRequest
	if writable && t.tls == nil && !cfg.Goroutines {
		if loops <= 0 {
			loops = evLoopCount(cfg)
		}
		if g, err := newEvLoops(r, loops); err == nil {
			r.ev = g
		}
	}
	// Outcomes are recorded into shards, so that reader goroutines seldom
	// share a lock; each event loop has its own.
	nShards := min(2*runtime.GOMAXPROCS(0), 8)
	if r.ev != nil {
		nShards = r.ev.count()
	}
	r.shards = make([]shard, nShards)
	r.states = make([]*phaseState, len(r.plan))
	for i, p := range r.plan {
		if p.kind != Pause {
			r.states[i] = &phaseState{plan: p, codes: map[int]int64{}}
		}
	}
	r.recordLeft.Store(MaxRecordedRequests)
	for i := range r.shards {
		r.shards[i].recs = make([]*phaseRec, len(r.plan))
		if cfg.RecordRequests {
			r.shards[i].left = &r.recordLeft
		}
	}
	if cfg.Users == 0 && !writable {
		r.tickets = make(chan ticket, cfg.MaxInflight)
	}
	return r, nil
}

// nowNS is the time on the run's clock (monotonic), in ns.
func (r *runner) nowNS() int64 { return int64(time.Since(r.start)) }

func (r *runner) run() *Result {
	if s, err := newPreciseSleeper(); err == nil {
		r.sleeper = s
	}
	defer func() {
		if r.sleeper != nil {
			r.sleeper.close()
		}
	}()
	if r.ev != nil {
		defer r.ev.close()
	}
	r.startClock()
	stopClose := context.AfterFunc(r.ctx, r.conns.closeAll)
	defer stopClose()

	col := newCollector(r)
	colDone := make(chan struct{})
	go func() {
		defer close(colDone)
		col.loop()
	}()

	for _, p := range r.plan {
		if r.ctx.Err() != nil {
			break
		}
		r.drive(p)
	}
	r.mu.Lock()
	r.current = -1
	r.mu.Unlock()

	// Let the last requests finish (each is bounded by the timeout), unless
	// interrupted: then the connections are already closed.
	r.waitIdle()
	r.abandon.Store(true)
	if r.ev != nil {
		r.ev.shutdown()
	}
	r.conns.closeAll() // idle pipelined readers and stragglers stop
	if r.tickets != nil {
		close(r.tickets)
	}
	r.wg.Wait()
	r.pipeMu.Lock()
	r.pipePending.drop(r)
	r.pipeMu.Unlock()

	r.idleMu.Lock()
	for _, q := range r.idleReq {
		q.close()
	}
	r.idleReq = nil
	r.idleMu.Unlock()
	r.target.closeIdle()

	col.stop()
	<-colDone
	return r.result()
}

// waitIdle waits until nothing is in flight, the context is cancelled, or
// a timeout's worth of time has passed.
func (r *runner) waitIdle() {
	if r.ev != nil {
		r.ev.serveUntil(r.nowNS()+int64(r.timeout+time.Second), true)
		return
	}
	deadline := time.Now().Add(r.timeout + time.Second)
	for r.inflight.Load() > 0 && r.ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// drive runs one phase of the plan on the calling goroutine.
func (r *runner) drive(p phasePlan) {
	ps := r.states[p.index]
	start := r.phaseStart(p)
	if ps != nil {
		for i := range r.shards {
			sh := &r.shards[i]
			rec := &phaseRec{lat: newHist(), svc: newHist(), lag: newHist()}
			sh.mu.Lock()
			sh.recs[p.index] = rec
			sh.mu.Unlock()
		}
		cpu, gc := processCPU(), readGC()
		start = r.phaseStart(p)
		r.mu.Lock()
		ps.began, ps.startNS, ps.cpu0, ps.gc0 = true, start, cpu, gc
		ps.windowEnd.Store(start + int64(p.dur))
		ps.nextIntervalFrom = start
		r.current, r.curStart = p.index, start
		r.mu.Unlock()
	} else {
		r.mu.Lock()
		r.current, r.curStart = p.index, start
		r.mu.Unlock()
	}
	end := start + int64(p.dur)
	switch {
	case p.kind == Pause && r.ev != nil:
		r.ev.serveUntil(end, false)
	case p.kind == Pause:
		r.sleepUntil(end, true)
	case p.users > 0 && r.ev != nil:
		r.ev.closedPace(ps, end)
	case p.users > 0:
		r.closedPhase(ps, end)
	default:
		r.openPhase(ps, start, end)
	}
	if ps != nil {
		stop := min(r.nowNS(), max(end, start))
		if r.ctx.Err() == nil {
			stop = end
		}
		cpu, gc := processCPU(), readGC()
		r.mu.Lock()
		ps.ended, ps.endNS, ps.cpu1, ps.gc1 = true, stop, cpu, gc
		r.mu.Unlock()
	}
}

// sleepUntil sleeps until t on the run's clock or until the context is
// cancelled, reporting false when cancelled. The driver's last 3 ms are
// slept with the precise sleeper when there is one (for the send lag);
// closed-model users (precise false) use the runtime's timers.
func (r *runner) sleepUntil(t int64, precise bool) bool {
	var timer *time.Timer
	for {
		if r.ctx.Err() != nil {
			return false
		}
		d := time.Duration(t - r.nowNS())
		if d <= 0 {
			return true
		}
		if precise && r.sleeper != nil && d <= 3*time.Millisecond {
			if err := r.sleeper.sleep(d); err != nil {
				r.sleeper.close()
				r.sleeper = nil
			}
			continue
		}
		wait := d
		if precise && r.sleeper != nil {
			wait = d - 2*time.Millisecond
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		select {
		case <-r.ctx.Done():
			return false
		case <-timer.C:
		}
	}
}

// openPhase schedules the phase's arrivals from start to end. At each
// intended time it counts the request as not sent when MaxInflight requests
// are already in flight, else sends it: itself on an idle pipelined
// connection (lean client, pipe.go), or through a worker (net/http client).
func (r *runner) openPhase(ps *phaseState, start, end int64) {
	if r.ev != nil {
		r.ev.pace(ps, start, end)
		return
	}
	pc := newPacer(r.cfg, ps.plan, start)
	limit := int64(r.cfg.MaxInflight)
	phase := int32(ps.plan.index)
	for {
		due := pc.next()
		if due >= end {
			r.sleepUntil(end, true)
			return
		}
		if due > r.nowNS() {
			if !r.sleepUntil(due, true) {
				return
			}
		}
		ps.planned.Add(1)
		n := r.inflight.Load()
		if n >= limit {
			ps.notSent.Add(1)
			continue
		}
		r.inflight.Add(1)
		ps.inflight.Add(1)
		ps.sent.Add(1)
		t := ticket{phase: phase, intended: due, seq: r.seq.Add(1)}
		if r.tickets == nil {
			r.dispatchPipe(t)
			continue
		}
		if int64(r.workers) <= n {
			r.spawnWorker()
		}
		r.tickets <- t
	}
}

func (r *runner) spawnWorker() {
	id := r.workers
	r.workers++
	r.wg.Add(1)
	go r.worker(id)
}

// worker sends the tickets it receives over its own connection until the
// ticket channel is closed.
func (r *runner) worker(id int) {
	defer r.wg.Done()
	req := r.target.newRequester()
	defer req.close()
	sh := &r.shards[id%len(r.shards)]
	for t := range r.tickets {
		ps := r.states[t.phase]
		if r.ctx.Err() != nil { // interrupted before sending: unfinished
			ps.inflight.Add(-1)
			r.inflight.Add(-1)
			continue
		}
		now := time.Now()
		sent := int64(now.Sub(r.start))
		status, err := req.do(r.ctx, now.Add(r.timeout), r.requestID(t))
		r.finish(sh, ps, t, sent, status, err)
	}
}

// stopping reports whether the run was interrupted or stopped waiting for
// stragglers.
func (r *runner) stopping() bool { return r.ctx.Err() != nil || r.abandon.Load() }

// requestID is what t's RequestHeader says of it.
func (r *runner) requestID(t ticket) requestID {
	return requestID{seq: t.seq, intended: r.startUnix + t.intended}
}

// finish records the outcome of request t, sent at sent, and releases its
// in-flight slot.
func (r *runner) finish(sh *shard, ps *phaseState, t ticket, sent int64, status int, err error) Outcome {
	return r.finishAt(sh, ps, t, sent, r.nowNS(), status, err)
}

// finishAt is finish for a request that completed at done on the run
// clock.
func (r *runner) finishAt(sh *shard, ps *phaseState, t ticket, sent, done int64, status int, err error) Outcome {
	o := classify(status, err)
	if err == nil || !r.stopping() { // an error caused by interruption is no outcome
		var q *RequestRecord
		if sh.left != nil {
			q = &RequestRecord{Seq: t.seq, IntendedUnixNs: r.startUnix + t.intended, LatencyNs: clampNS(done - t.intended),
				SentUnixNs: r.startUnix + sent, Status: status, Outcome: o}
		}
		busy := done - sent
		if end := ps.windowEnd.Load(); end > 0 {
			busy = min(done, end) - sent
		}
		sh.record(ps.plan.index, o, status, t.intended, sent, done, max(busy, 0), q)
		if o == OutcomeOK {
			r.okDone.Add(1)
		}
	}
	ps.inflight.Add(-1)
	r.inflight.Add(-1)
	return o
}

// record adds one outcome, and busy ns of time in flight within the phase,
// to the phase's recorder and, when q is set, keeps the request's record.
func (s *shard) record(phase int, o Outcome, status int, intended, sent, done, busy int64, q *RequestRecord) {
	s.mu.Lock()
	rec := s.recs[phase]
	if rec == nil { // the phase was closed after a forced stop
		s.mu.Unlock()
		return
	}
	if q != nil {
		s.keep(*q)
	}
	if rec.completed == 0 || done < rec.firstDone {
		rec.firstDone = done
	}
	rec.lastDone = max(rec.lastDone, done)
	rec.busy += busy
	rec.completed++
	switch o {
	case OutcomeOK:
		rec.ok++
	case OutcomeStatus:
		rec.errs.Status++
	case OutcomeTimeout:
		rec.errs.Timeout++
	case OutcomeConnection:
		rec.errs.Connection++
	default:
		rec.errs.Other++
	}
	if o <= OutcomeTimeout {
		_ = rec.lat.RecordValue(clampNS(done - intended))
		_ = rec.svc.RecordValue(clampNS(done - sent))
	}
	if o <= OutcomeStatus {
		rec.codes[min(max(status, 0), len(rec.codes)-1)]++
	}
	_ = rec.lag.RecordValue(clampNS(sent - intended))
	s.mu.Unlock()
}

// keep adds q to the shard's records; the caller holds s.mu. Past the
// run's MaxRecordedRequests it overwrites the shard's oldest record, so the
// latest requests are the ones kept.
func (s *shard) keep(q RequestRecord) {
	if s.left.Add(-1) >= 0 {
		s.reqs = append(s.reqs, q)
		return
	}
	s.dropped++
	if len(s.reqs) == 0 {
		return
	}
	s.reqs[s.oldest] = q
	s.oldest = (s.oldest + 1) % len(s.reqs)
}

func clampNS(v int64) int64 { return min(max(v, 0), histMax) }

// closedPhase runs ps.plan.users users until end: each sends, waits for its
// response, thinks, and repeats. It returns when every user has stopped.
func (r *runner) closedPhase(ps *phaseState, end int64) {
	var wg sync.WaitGroup
	for u := 0; u < ps.plan.users; u++ {
		req := r.takeRequester()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.putRequester(req)
			r.user(ps, req, &r.shards[u%len(r.shards)], end)
		}()
	}
	wg.Wait()
}

func (r *runner) user(ps *phaseState, req requester, sh *shard, end int64) {
	for r.ctx.Err() == nil {
		now := time.Now()
		sent := int64(now.Sub(r.start))
		if sent >= end {
			return
		}
		ps.planned.Add(1)
		ps.sent.Add(1)
		ps.inflight.Add(1)
		r.inflight.Add(1)
		t := ticket{phase: int32(ps.plan.index), intended: sent, seq: r.seq.Add(1)}
		status, err := req.do(r.ctx, now.Add(r.timeout), r.requestID(t))
		o := r.finish(sh, ps, t, sent, status, err)
		pause := r.cfg.Think
		if o >= OutcomeConnection {
			pause = max(pause, closedBackoff)
		}
		if pause > 0 && !r.sleepUntil(min(r.nowNS()+int64(pause), end), false) {
			return
		}
	}
}

func (r *runner) takeRequester() requester {
	r.idleMu.Lock()
	defer r.idleMu.Unlock()
	if n := len(r.idleReq); n > 0 {
		q := r.idleReq[n-1]
		r.idleReq = r.idleReq[:n-1]
		return q
	}
	return r.target.newRequester()
}

func (r *runner) putRequester(q requester) {
	r.idleMu.Lock()
	r.idleReq = append(r.idleReq, q)
	r.idleMu.Unlock()
}

// gcSample is a reading of the runtime's GC metrics.
type gcSample struct {
	cycles uint64
	pauses *metrics.Float64Histogram
}

func readGC() gcSample {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/sched/pauses/total/gc:seconds"}}
	metrics.Read(s)
	var g gcSample
	if s[0].Value.Kind() == metrics.KindUint64 {
		g.cycles = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindFloat64Histogram {
		g.pauses = s[1].Value.Float64Histogram()
	}
	return g
}

// gcBetween is the GC activity between two readings.
func gcBetween(a, b gcSample) GCStats {
	st := GCStats{Cycles: b.cycles - a.cycles}
	if a.pauses == nil || b.pauses == nil || len(a.pauses.Counts) != len(b.pauses.Counts) {
		return st
	}
	for i, c := range b.pauses.Counts {
		d := c - a.pauses.Counts[i]
		if d == 0 {
			continue
		}
		lo, hi := b.pauses.Buckets[i], b.pauses.Buckets[i+1]
		mid := lo
		if hi > lo && hi < 1e9 {
			mid = (lo + hi) / 2
			st.PauseMaxMS = max(st.PauseMaxMS, hi*1000)
		} else {
			st.PauseMaxMS = max(st.PauseMaxMS, lo*1000)
		}
		st.PauseTotalMS += float64(d) * mid * 1000
	}
	return st
}

// receiveStamped says whether the event loop dates responses by the
// kernel's receive time (Result.ResponseTime "kernel"): in the open model,
// whose latencies are the point of the run. Measured on 2 vCPUs
// (bench/README.md): it took 40-80 us off the latency p50 of a hello
// server at 2,500 and 20,000 req/s, which was the generator's own delay in
// reading, for about 1 us of CPU per request; at full speed in the closed
// model, where throughput is the figure, that 1 us cost about 8 % of it.
func receiveStamped(c *Config) bool { return c.Users == 0 }

// engine names how requests are sent (Result.Engine).
func (r *runner) engine() string {
	if r.ev != nil {
		return "event-loop"
	}
	return "goroutines"
}

// result assembles the Result after the collector has finalised every phase.
func (r *runner) result() *Result {
	c := r.cfg
	res := &Result{
		Target:            redact.URL(c.URL),
		Method:            c.Method,
		Model:             c.Model(),
		MaxInflight:       c.MaxInflight,
		TimeoutS:          c.Timeout.Seconds(),
		Client:            c.Client,
		Engine:            r.engine(),
		ResponseTime:      "read",
		GOMAXPROCS:        runtime.GOMAXPROCS(0),
		NumCPU:            runtime.NumCPU(),
		Start:             r.start,
		ElapsedS:          max(time.Since(r.start), 0).Seconds(), // 0 when interrupted while waiting for StartAt
		Interrupted:       r.ctx.Err() != nil,
		CPUIncludesTarget: c.CPUIncludesTarget,
		RequestTag:        c.RequestTag,
		Phases:            []PhaseResult{},
	}
	if r.ev != nil && receiveStamped(c) {
		res.ResponseTime = "kernel"
	}
	if c.Users > 0 {
		res.Users = c.Users
		res.ThinkMS = float64(c.Think) / 1e6
	} else {
		res.Arrivals = c.Arrivals
		if c.Arrivals == Poisson {
			res.Seed = c.Seed
		}
	}
	for _, ps := range r.states {
		if ps == nil || ps.result == nil {
			continue
		}
		if ps.plan.kind == Warmup {
			res.Warmup = ps.result
		} else {
			res.Phases = append(res.Phases, *ps.result)
		}
	}
	if c.RecordRequests {
		res.Requests, res.RequestsDropped = r.requests()
	}
	if c.Shard.sharded() || !c.StartAt.IsZero() {
		res.Shard = r.shardRun()
	}
	return res
}

// requests merges the shards' records, sorted by Seq, once every request
// has finished.
func (r *runner) requests() ([]RequestRecord, int64) {
	n, dropped := 0, int64(0)
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		n += len(sh.reqs)
		dropped += sh.dropped
		sh.mu.Unlock()
	}
	out := make([]RequestRecord, 0, n)
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		out = append(out, sh.reqs...)
		sh.reqs, sh.oldest = nil, 0
		sh.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b RequestRecord) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, dropped
}
