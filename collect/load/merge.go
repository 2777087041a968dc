package load

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// ShardPart is one shard's measurements, as its results directory holds
// them, for Merge.
type ShardPart struct {
	// Dir names the part in messages (its directory).
	Dir string
	// Shard is who the shard was: Result.Shard when it wrote a result, or
	// what its manifest recorded at the start when it did not.
	Shard *ShardRun
	// Result is the shard's result; nil when the shard died before
	// writing one (Lost).
	Result *Result
	// Intervals are its interval log's histograms (ReadHLog).
	Intervals []HLogEntry
	// Status and Reason are how its directory says it ended ("complete",
	// "interrupted", "running" for a process that died without saying).
	Status, Reason string
}

// MergeInfo is what a merged Result says of its shards.
type MergeInfo struct {
	// Count is how many shards the schedule was dealt to.
	Count int `json:"count"`
	// Shards are the shards, by index.
	Shards []MergedShard `json:"shards"`
	// Partial is true when a shard was lost or interrupted: the merged
	// figures then cover less than the plan. Lost and Interrupted name
	// the shards by index.
	Partial     bool  `json:"partial"`
	Lost        []int `json:"lost,omitempty"`
	Interrupted []int `json:"interrupted,omitempty"`
	// StartAt is the shared start instant; zero when the shards started
	// each at once.
	StartAt time.Time `json:"start_at,omitzero"`
	// StartSkewMS is the spread of the shards' actual starts (the latest
	// less the earliest), each read on its own host's clock.
	StartSkewMS float64 `json:"start_skew_ms"`
	// Hosts counts the distinct hosts. On one host the skew is exact; across
	// hosts ClockErrorMS, the sum of the two largest kernel estimates of a
	// clock's error, bounds what the clocks add to it, and Unsynchronized
	// names the hosts whose clock no daemon keeps (their skew is unknown).
	Hosts          int      `json:"hosts"`
	ClockErrorMS   float64  `json:"clock_error_ms"`
	Unsynchronized []string `json:"unsynchronized,omitempty"`
	// TargetSkewMS is the same spread on the target's clock: each shard's
	// start less its offset to the target (ShardRun.TargetClock), which
	// puts shards on different hosts on one time line, to within
	// TargetSkewUncertaintyMS (the two largest of the offsets'
	// uncertainties, added). TargetSkewNote says why it is missing, when
	// a shard has no offset.
	TargetSkewMS            float64 `json:"target_skew_ms"`
	TargetSkewUncertaintyMS float64 `json:"target_skew_uncertainty_ms"`
	TargetSkewNote          string  `json:"target_skew_note,omitempty"`
}

// MergedShard is one shard of a merged result.
type MergedShard struct {
	ShardRun
	// Dir is the shard's results directory as given to Merge.
	Dir string `json:"dir"`
	// Status is "complete", "interrupted", or "lost" (no result: the
	// process died); Reason says why, when it did not complete.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Phases are its steady phases' own figures and verdicts.
	Phases []ShardPhase `json:"phases,omitempty"`
}

// ShardPhase is one shard's figures of one steady phase.
type ShardPhase struct {
	Name        string        `json:"name"`
	OfferedRate float64       `json:"offered_rate"`
	Planned     int64         `json:"planned"`
	OK          int64         `json:"ok"`
	OKPerS      float64       `json:"ok_per_s"`
	LatencyP50  float64       `json:"latency_p50_ms"`
	LatencyP99  float64       `json:"latency_p99_ms"`
	SendLagP99  float64       `json:"send_lag_p99_ms"`
	Verdicts    []VerdictKind `json:"verdicts"`
}

// Merge status values (MergedShard.Status).
const (
	ShardComplete    = "complete"
	ShardInterrupted = "interrupted"
	ShardLost        = "lost"
)

// ErrMerge matches (errors.Is) every error Merge returns: the parts are
// not the shards of one run. The message says why.
var ErrMerge = errors.New("cannot merge")

type mergeError struct{ err error }

func (e *mergeError) Error() string        { return e.err.Error() }
func (e *mergeError) Unwrap() error        { return e.err }
func (e *mergeError) Is(target error) bool { return target == ErrMerge }

func mergeErr(format string, args ...any) error {
	return &mergeError{fmt.Errorf(format, args...)}
}

// Merge combines the shards of one sharded run into one Result, as if one
// generator had sent the whole schedule: counts are summed, each phase's
// latency, service time and send lag come from the shards' merged HDR
// histograms (exact at the histograms' precision, never averaged), 2xx/s
// and offered rates are summed. Each phase's verdicts are drawn again from
// the merged figures, and every shard verdict that its generator was the
// limit is repeated naming the shard; MergeInfo keeps each shard's own
// figures and verdicts and the start skew. It also returns the merged
// intervals, for an HLog.
//
// Merge refuses (ErrMerge) parts that are not every shard of one run,
// once each: a missing or repeated shard, shards of another plan, count,
// start or build. A shard without a result (its process died) is kept as
// Lost, and one that was interrupted keeps what it measured; either makes
// the merged result Partial and Interrupted.
func Merge(parts []ShardPart) (*Result, []Interval, error) {
	if len(parts) == 0 {
		return nil, nil, mergeErr("no shard to merge")
	}
	byIndex, err := checkParts(parts)
	if err != nil {
		return nil, nil, err
	}
	first := parts[0].Shard
	info := &MergeInfo{Count: first.Count, StartAt: first.StartAt}
	var live []*ShardPart
	for _, p := range byIndex {
		ms := MergedShard{ShardRun: *p.Shard, Dir: p.Dir, Status: ShardComplete}
		switch {
		case p.Result == nil:
			ms.Status, ms.Reason = ShardLost, lostReason(p)
			info.Lost = append(info.Lost, p.Shard.Index)
		case p.Result.Interrupted || (p.Status != "" && p.Status != ShardComplete):
			ms.Status, ms.Reason = ShardInterrupted, orText(p.Reason, "interrupted before the end of the plan")
			info.Interrupted = append(info.Interrupted, p.Shard.Index)
		}
		if p.Result != nil {
			ms.ShardRun = *p.Result.Shard
			live = append(live, p)
			for _, ph := range p.Result.Phases {
				sp := ShardPhase{Name: ph.Name, OfferedRate: ph.OfferedRate, Planned: ph.Planned, OK: ph.OK, OKPerS: ph.OKPerS,
					LatencyP50: ph.Latency.P50, LatencyP99: ph.Latency.P99, SendLagP99: ph.SendLag.P99}
				for _, v := range ph.VerdictDetails {
					sp.Verdicts = append(sp.Verdicts, v.Kind)
				}
				ms.Phases = append(ms.Phases, sp)
			}
		}
		info.Shards = append(info.Shards, ms)
	}
	info.Partial = len(info.Lost) > 0 || len(info.Interrupted) > 0
	if len(live) == 0 {
		return nil, nil, mergeErr("no shard wrote a result: shard %s (%s): %s", byIndex[0].Shard.Shard, byIndex[0].Dir, lostReason(byIndex[0]))
	}
	skewAndClocks(info, live)

	base := live[0].Result
	res := &Result{
		Target: base.Target, Method: base.Method, Model: base.Model, Arrivals: base.Arrivals, Seed: base.Seed,
		TimeoutS: base.TimeoutS, Client: base.Client, Engine: base.Engine,
		GOMAXPROCS: base.GOMAXPROCS, NumCPU: base.NumCPU,
		Interrupted: info.Partial, CPUIncludesTarget: base.CPUIncludesTarget,
		Phases: []PhaseResult{}, Merged: info,
	}
	res.Start = info.StartAt
	if res.Start.IsZero() {
		res.Start = slices.MinFunc(live, func(a, b *ShardPart) int { return a.Result.Start.Compare(b.Result.Start) }).Result.Start
	}
	res.ResponseTime = base.ResponseTime
	var end time.Time
	for _, p := range live {
		if p.Result.ResponseTime != res.ResponseTime {
			res.ResponseTime = "mixed" // shards whose engines dated responses differently
		}
		res.MaxInflight += p.Result.MaxInflight
		end = latest(end, p.Result.Start.Add(time.Duration(p.Result.ElapsedS*1e9)))
	}
	res.ElapsedS = end.Sub(res.Start).Seconds()

	hists, err := phaseHists(live)
	if err != nil {
		return nil, nil, err
	}
	nPhases := 0
	for _, p := range live {
		nPhases = max(nPhases, len(p.Result.Phases))
	}
	for i := range nPhases {
		var shares []shardPhase
		for _, p := range live {
			if i < len(p.Result.Phases) {
				shares = append(shares, shardPhase{p, &p.Result.Phases[i]})
			}
		}
		res.Phases = append(res.Phases, mergePhase(shares, hists.steady(i), res))
	}
	var warm []shardPhase
	for _, p := range live {
		if p.Result.Warmup != nil {
			warm = append(warm, shardPhase{p, p.Result.Warmup})
		}
	}
	if len(warm) > 0 {
		w := mergePhase(warm, hists.warmup, res)
		res.Warmup = &w
	}
	return res, hists.intervals(res.Start), nil
}

// maxListedShards is how many shards an error lists by name; one more item
// counts the rest.
const maxListedShards = 5

// checkParts checks that parts are the shards of one run, each once, and
// returns them by index.
func checkParts(parts []ShardPart) ([]*ShardPart, error) {
	for i := range parts {
		p := &parts[i]
		if p.Shard == nil && p.Result != nil {
			p.Shard = p.Result.Shard
		}
		if p.Shard == nil || p.Shard.Count < 1 {
			return nil, mergeErr("%s: not a shard (no --shard in its results or manifest)", p.Dir)
		}
		// The file's count is bounded as --shard's is: its table of
		// shards is made before any is placed.
		if err := p.Shard.check(); err != nil {
			return nil, mergeErr("%s: %v", p.Dir, err)
		}
	}
	first := parts[0]
	n := first.Shard.Count
	byIndex := make([]*ShardPart, n)
	for i := range parts {
		p := &parts[i]
		s := p.Shard
		switch {
		case s.Count != n:
			return nil, mergeErr("%s is shard %s but %s is shard %s: shards of runs of different counts", first.Dir, first.Shard.Shard, p.Dir, s.Shard)
		case s.Plan != first.Shard.Plan:
			return nil, mergeErr("%s and %s ran different plans: %q vs %q", first.Dir, p.Dir, first.Shard.Plan, s.Plan)
		case s.Build != first.Shard.Build:
			return nil, mergeErr("%s and %s were made by different builds of schedscope: %q vs %q", first.Dir, p.Dir, first.Shard.Build, s.Build)
		case !s.StartAt.Equal(first.Shard.StartAt):
			return nil, mergeErr("%s and %s had different start instants: %s vs %s", first.Dir, p.Dir, timeText(first.Shard.StartAt), timeText(s.StartAt))
		case s.Index < 0 || s.Index >= n:
			return nil, mergeErr("%s: shard %s: index out of range", p.Dir, s.Shard)
		case byIndex[s.Index] != nil:
			return nil, mergeErr("shard %s given twice: %s and %s", s.Shard, byIndex[s.Index].Dir, p.Dir)
		}
		byIndex[s.Index] = p
	}
	var missing []string
	lacking := 0
	for i, p := range byIndex {
		if p == nil {
			lacking++
			if len(missing) < maxListedShards {
				missing = append(missing, Shard{Index: i, Count: n}.String())
			}
		}
	}
	if lacking > len(missing) {
		missing = append(missing, fmt.Sprintf("and %d more", lacking-len(missing)))
	}
	if lacking > 0 {
		return nil, mergeErr("missing shard %s of %d: give every shard's directory (one that died still has its directory)", strings.Join(missing, ", "), n)
	}
	return byIndex, nil
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func lostReason(p *ShardPart) string {
	why := "its process ended before it wrote its results"
	if p.Reason != "" {
		why = p.Reason
	}
	n := 0
	for _, e := range p.Intervals {
		if e.Tag == "" {
			n += int(e.Hist.TotalCount())
		}
	}
	return fmt.Sprintf("%s; its load.hlog holds %d latencies until then, left out", why, n)
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// skewAndClocks fills info's start skew and clock figures from the shards
// that started.
func skewAndClocks(info *MergeInfo, live []*ShardPart) {
	var starts []time.Time
	hosts := map[string]ClockSync{}
	for _, p := range live {
		s := p.Result.Shard
		at := p.Result.Start
		if !s.StartAt.IsZero() {
			at = s.StartAt.Add(time.Duration(s.StartLateMS * 1e6))
		}
		starts = append(starts, at)
		hosts[s.Host] = s.Clock
	}
	lo := slices.MinFunc(starts, time.Time.Compare)
	hi := slices.MaxFunc(starts, time.Time.Compare)
	info.StartSkewMS = float64(hi.Sub(lo)) / 1e6
	var onTarget []time.Time
	var uncs []float64
	for i, p := range live {
		tc := p.Result.Shard.TargetClock
		switch {
		case tc == nil:
			info.TargetSkewNote = fmt.Sprintf("shard %s has no offset to the target's clock (no shared start)", p.Result.Shard.Shard)
		case tc.Error != "":
			info.TargetSkewNote = fmt.Sprintf("shard %s: %s", p.Result.Shard.Shard, tc.Error)
		default:
			onTarget = append(onTarget, starts[i].Add(-time.Duration(tc.OffsetMS*1e6)))
			uncs = append(uncs, tc.UncertaintyMS)
		}
	}
	if info.TargetSkewNote == "" {
		info.TargetSkewMS = float64(slices.MaxFunc(onTarget, time.Time.Compare).Sub(slices.MinFunc(onTarget, time.Time.Compare))) / 1e6
		slices.Sort(uncs)
		info.TargetSkewUncertaintyMS = uncs[len(uncs)-1]
		if len(uncs) > 1 {
			info.TargetSkewUncertaintyMS += uncs[len(uncs)-2]
		}
	}
	info.Hosts = len(hosts)
	if len(hosts) < 2 {
		return
	}
	var errs []float64
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		c := hosts[h]
		if !c.Synchronized {
			info.Unsynchronized = append(info.Unsynchronized, h)
		}
		errs = append(errs, c.EstErrorMS)
	}
	slices.Sort(errs)
	info.ClockErrorMS = errs[len(errs)-1] + errs[len(errs)-2]
}

// shardPhase is one shard's share of a phase.
type shardPhase struct {
	p  *ShardPart
	ph *PhaseResult
}

// mergedHists are the shards' interval histograms, by phase.
type mergedHists struct {
	// steadyPlan maps a steady phase's position to its plan index.
	steadyPlan []int
	// byPlan: plan index -> tag -> the merged histogram of every interval.
	byPlan map[int]map[string]*hdrhistogram.Histogram
	// buckets: the merged intervals, for the merged log.
	buckets map[bucketKey]*bucket
	warmup  map[string]*hdrhistogram.Histogram
}

type bucketKey struct {
	phase int
	slot  int64
}

type bucket struct {
	name       string
	kind       PhaseKind
	start, end time.Duration
	hists      map[string]*hdrhistogram.Histogram
}

// mergeSlot is the width of a merged interval: the shards' intervals that
// start within one slot of the shared clock are merged into one.
const mergeSlot = time.Second

func phaseHists(live []*ShardPart) (*mergedHists, error) {
	m := &mergedHists{byPlan: map[int]map[string]*hdrhistogram.Histogram{}, buckets: map[bucketKey]*bucket{}}
	base := live[0].Result.Start
	for _, p := range live {
		shift := p.Result.Start.Sub(base) // zero for shards with a shared start
		var plans []int
		for _, e := range p.Intervals {
			if e.Kind == Steady && !slices.Contains(plans, e.Phase) {
				plans = append(plans, e.Phase)
			}
			if m.byPlan[e.Phase] == nil {
				m.byPlan[e.Phase] = map[string]*hdrhistogram.Histogram{}
			}
			addHist(m.byPlan[e.Phase], e.Tag, e.Hist)
			start := e.Start + shift
			k := bucketKey{e.Phase, int64((start + mergeSlot/2) / mergeSlot)}
			b := m.buckets[k]
			if b == nil {
				b = &bucket{name: e.Name, kind: e.Kind, start: start, end: e.End + shift, hists: map[string]*hdrhistogram.Histogram{}}
				m.buckets[k] = b
			}
			b.start, b.end = min(b.start, start), max(b.end, e.End+shift)
			addHist(b.hists, e.Tag, e.Hist)
		}
		slices.Sort(plans)
		if len(plans) > len(m.steadyPlan) {
			m.steadyPlan = plans
		}
		for i, ph := range p.Result.Phases {
			if ph.Latency.Count > 0 && (i >= len(plans) || m.byPlan[plans[i]][""] == nil) {
				return nil, mergeErr("%s: its load.hlog has no latency histograms of %s, which results.json says completed %d requests: percentiles cannot be merged exactly", p.Dir, ph.Name, ph.Latency.Count)
			}
		}
	}
	for _, tags := range m.byPlan {
		if w := tags["warmup"]; w != nil {
			m.warmup = map[string]*hdrhistogram.Histogram{"": w}
		}
	}
	return m, nil
}

func addHist(into map[string]*hdrhistogram.Histogram, tag string, h *hdrhistogram.Histogram) {
	if into[tag] == nil {
		into[tag] = newHist()
	}
	into[tag].Merge(h)
}

// steady returns the i-th steady phase's merged histograms by tag.
func (m *mergedHists) steady(i int) map[string]*hdrhistogram.Histogram {
	if i >= len(m.steadyPlan) {
		return nil
	}
	return m.byPlan[m.steadyPlan[i]]
}

// intervals returns the merged intervals in time order, with their
// histograms' times set in Unix ms from start.
func (m *mergedHists) intervals(start time.Time) []Interval {
	keys := slices.SortedFunc(maps.Keys(m.buckets), func(a, b bucketKey) int {
		return cmp.Or(cmp.Compare(m.buckets[a].start, m.buckets[b].start), cmp.Compare(a.phase, b.phase))
	})
	var out []Interval
	for _, k := range keys {
		b := m.buckets[k]
		get := func(tag string) *hdrhistogram.Histogram {
			h := b.hists[tag]
			if h == nil {
				h = newHist()
			}
			h.SetStartTimeMs(start.UnixMilli() + b.start.Milliseconds())
			h.SetEndTimeMs(start.UnixMilli() + b.end.Milliseconds())
			return h
		}
		iv := Interval{Phase: k.phase, Kind: b.kind, Name: b.name, Start: b.start, End: b.end}
		if b.kind == Warmup {
			iv.Latency = get("warmup")
		} else {
			iv.Latency, iv.Service, iv.SendLag = get(""), get("service"), get("send-lag")
		}
		out = append(out, iv)
	}
	return out
}

// mergePhase merges one phase's shares: counts and rates summed,
// percentiles from the merged histograms, verdicts drawn again.
func mergePhase(shares []shardPhase, hists map[string]*hdrhistogram.Histogram, res *Result) PhaseResult {
	f := shares[0].ph
	p := PhaseResult{Name: f.Name, Kind: f.Kind, Users: f.Users, StatusCodes: map[int]int64{}}
	startS, endS := math.Inf(1), math.Inf(-1)
	var cpuUS float64
	for _, s := range shares {
		ph := s.ph
		shift := s.p.Result.Start.Sub(res.Start).Seconds()
		startS, endS = min(startS, ph.StartS+shift), max(endS, ph.EndS+shift)
		p.OfferedRate += ph.OfferedRate
		p.Planned += ph.Planned
		p.Sent += ph.Sent
		p.NotSent += ph.NotSent
		p.Completed += ph.Completed
		p.Unfinished += ph.Unfinished
		p.OK += ph.OK
		p.Errors = p.Errors.Plus(ph.Errors)
		for code, n := range ph.StatusCodes {
			p.StatusCodes[code] += n
		}
		p.OKPerS += ph.OKPerS
		p.CompletedPerS += ph.CompletedPerS
		p.MeanInFlight += ph.MeanInFlight
		p.PeakInFlight += ph.PeakInFlight
		p.GeneratorCPUCores += ph.GeneratorCPUCores
		cpuUS += ph.GeneratorCPUUSPerReq * float64(ph.Sent)
		p.GC.Cycles += ph.GC.Cycles
		p.GC.PauseTotalMS += ph.GC.PauseTotalMS
		p.GC.PauseMaxMS = max(p.GC.PauseMaxMS, ph.GC.PauseMaxMS)
	}
	// The shares of a rate dealt N ways sum back to it up to rounding.
	p.OfferedRate = math.Round(p.OfferedRate*1e6) / 1e6
	p.StartS, p.EndS, p.DurationS = startS, endS, endS-startS
	if p.Sent > 0 {
		p.GeneratorCPUUSPerReq = cpuUS / float64(p.Sent)
	}
	if len(p.StatusCodes) == 0 {
		p.StatusCodes = nil
	}
	lat, svc, lag := hists[""], hists["service"], hists["send-lag"]
	if f.Kind == Warmup {
		lat, svc, lag = hists[""], nil, nil
	}
	for _, h := range []**hdrhistogram.Histogram{&lat, &svc, &lag} {
		if *h == nil {
			*h = newHist()
		}
	}
	p.Latency, p.Service = percentiles(lat), percentiles(svc)
	p.SendLag = LagPercentiles{P50: nsMS(lag.ValueAtQuantile(50)), P99: nsMS(lag.ValueAtQuantile(99)), Max: nsMS(lag.Max())}
	if lag.TotalCount() == 0 {
		p.SendLag.Max = 0
	}
	p.LatencyHist, p.ServiceHist, p.SendLagHist = lat, svc, lag
	// The generators' CPU is several processes': no generator-bound verdict
	// is drawn from the sum, only each shard's own, named below.
	p.VerdictDetails = judge(&p, res.Model, 0, res.MaxInflight, false)
	for _, s := range shares {
		for _, v := range s.ph.VerdictDetails {
			if v.Kind != GeneratorBound {
				continue
			}
			sh := s.p.Result.Shard
			n := maps.Clone(v.Numbers)
			n["shard"] = float64(sh.Index)
			p.VerdictDetails = append(p.VerdictDetails, Verdict{Kind: GeneratorBound, Numbers: n,
				Message: fmt.Sprintf("shard %s (host %s): %s", sh.Shard, sh.Host, v.Message)})
		}
	}
	p.Verdicts = make([]string, len(p.VerdictDetails))
	for i, v := range p.VerdictDetails {
		p.Verdicts[i] = v.String()
	}
	return p
}

// MergeTable writes what a merged result says of its shards: the shared
// start and the start skew, then one row per shard and steady phase with
// its own figures and verdicts, then the shards that were lost or cut.
// It writes nothing for a result that is not merged. Table writes the
// merged figures themselves.
func MergeTable(w io.Writer, res *Result) error {
	m := res.Merged
	if m == nil {
		return nil
	}
	var b strings.Builder
	start := "each shard at once (no --start-at)"
	if !m.StartAt.IsZero() {
		start = "shared start " + m.StartAt.UTC().Format(time.RFC3339Nano)
	}
	clocks := "one host, one clock: the skew is exact"
	if m.Hosts > 1 {
		clocks = fmt.Sprintf("%d hosts: each read its own clock, whose kernel-estimated errors add up to %.3f ms", m.Hosts, m.ClockErrorMS)
		if len(m.Unsynchronized) > 0 {
			clocks += fmt.Sprintf("; no time daemon keeps the clock of %s, so the skew across hosts is unknown", strings.Join(m.Unsynchronized, ", "))
		}
	}
	fmt.Fprintf(&b, "%d shards, %s; start skew %.3f ms (%s)\n", m.Count, start, m.StartSkewMS, clocks)
	if m.TargetSkewNote == "" {
		fmt.Fprintf(&b, "on the target's clock (each shard's offset to it from its Date headers): start skew %.3f ms, to within %.3f ms\n", m.TargetSkewMS, m.TargetSkewUncertaintyMS)
	} else if !m.StartAt.IsZero() {
		fmt.Fprintf(&b, "no start skew on the target's clock: %s\n", m.TargetSkewNote)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "shard\thost\tstatus\tlate\tclock-target\tphase\toffered\tplanned\t2xx\t2xx/s\tp50\tp99\tlag p99\tverdicts")
	for _, s := range m.Shards {
		late := fmt.Sprintf("%.3f ms", s.StartLateMS)
		if s.StartAt.IsZero() || s.Status == ShardLost {
			late = "-"
		}
		offset := "-"
		if tc := s.TargetClock; tc != nil && tc.Error == "" {
			offset = fmt.Sprintf("%+.3f±%.3f ms", tc.OffsetMS, tc.UncertaintyMS)
		}
		if len(s.Phases) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t-\t\t\t\t\t\t\t\t\n", s.Shard, s.Host, s.Status, late, offset)
			continue
		}
		for i, p := range s.Phases {
			var kinds []string
			for _, k := range p.Verdicts {
				kinds = append(kinds, string(k))
			}
			if i > 0 {
				fmt.Fprint(tw, "\t\t\t\t\t")
			} else {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t", s.Shard, s.Host, s.Status, late, offset)
			}
			fmt.Fprintf(tw, "%s\t%.0f/s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\n", p.Name, p.OfferedRate, p.Planned, p.OK, p.OKPerS,
				fmtMS(p.LatencyP50), fmtMS(p.LatencyP99), fmtMS(p.SendLagP99), strings.Join(kinds, ", "))
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing merge table: %w", err)
	}
	// A lost shard's empty cells leave blanks at the end of its row.
	var out strings.Builder
	for line := range strings.Lines(b.String()) {
		out.WriteString(strings.TrimRight(line, " \n") + "\n")
	}
	for _, s := range m.Shards {
		if s.Status != ShardComplete {
			fmt.Fprintf(&out, "PARTIAL: shard %s (%s, host %s) %s: %s\n", s.Shard, s.Dir, s.Host, s.Status, s.Reason)
		}
	}
	_, err := io.WriteString(w, out.String())
	return err
}
