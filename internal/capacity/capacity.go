// Package capacity turns the measurements of a sweep into the figures a
// person tunes with: per line (a GOMAXPROCS value, and the fixture's model
// and flag values when those were swept) the knee of its load ladder, the
// ceiling, what held it and what Little's law predicts; then, across the
// GOMAXPROCS values of lines that differ in nothing else, whether
// throughput scales with the number of Ps (CPU-bound) or not
// (blocking-bound), how many Ps the load needs, and a recommended
// GOMAXPROCS with its reason.
//
// A line's load is open-model rates (the x value is the offered rate) or
// closed-model users (the x value is the number of users); see
// analyzeLevel for the served rule of each.
//
// Everything here is a pure function of its input: no clock, no I/O.
package capacity

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

// Sample is one measured phase: one load (an offered rate or a number of
// closed-model users) on one line, in one iteration (one target process).
type Sample struct {
	// GOMAXPROCS is the line's; 0 is auto (the runtime chose
	// RuntimeGOMAXPROCS, 0 when unknown).
	GOMAXPROCS        int
	RuntimeGOMAXPROCS int
	// CPULimit is the target's CPU quota in CPUs, 0 when none.
	CPULimit float64
	// Model and Set are the fixture's model and swept flag values; empty
	// when not swept.
	Model     string
	Set       rundir.Settings
	Iteration int
	// OfferedRate is the requests per second the generator tried to send
	// (open model); Users the closed model's users (OfferedRate is then 0).
	OfferedRate float64
	Users       int
	// OK is the phase's 2xx responses (used for the closed model's error
	// share); 0 when unknown.
	OK int64

	// OKPerSec is the target's throughput at this offered rate: the load
	// generator's 2xx/s, the rate at which the target answered the phase's
	// requests with 2xx (first to last completion), its ceiling when saturated.
	OKPerSec float64
	// Answered is the phase's requests answered 2xx (whenever the answer
	// came) per second of the phase: it reaches the offered rate when every
	// request was served, even when the last answers arrive after the
	// phase. 0 when unknown (OKPerSec is used instead).
	Answered float64
	P50, P99 time.Duration // latency from the intended send time
	// P95 and Mean are the latency's p95 and mean; 0 when unknown.
	P95, Mean time.Duration
	// ServiceP50 is the median service time, from the actual send: the
	// target's time without the generator's send lag. 0 when unknown.
	ServiceP50 time.Duration
	Errors     int64 // non-2xx, transport errors and timeouts
	NotSent    int64 // scheduled but never sent: every slot was busy
	Planned    int64 // requests the generator planned (sent + not sent); 0 when unknown

	// CPUPerRequest is the target's CPU time (user+system) during the
	// phase divided by its 2xx responses; 0 when unknown.
	CPUPerRequest time.Duration
	RSSBytes      int64 // target resident set at the end of the phase; 0 when unknown
	// CPUCores is the target's CPU time during the phase divided by the
	// phase's length: how many cores it kept busy. 0 when unknown.
	CPUCores float64
	// MachineBusy is the share of all the machine's CPUs busy during the
	// phase, whoever used them; 0 when unknown.
	MachineBusy float64
	// Goroutines and Threads are the target's at the end of the phase (from
	// its agent, and /proc for threads); 0 when unknown.
	Goroutines, Threads float64
	// Quota says the phase ran under a CPU quota whose enforcement was
	// read (cgroup cpu.stat); Throttled is then the share of its 100 ms
	// periods in which the target ran out of quota and waited for the
	// next one, ThrottledS the time its threads waited (summed) and
	// QuotaUse its CPU use over the quota.
	Quota                           bool
	Throttled, ThrottledS, QuotaUse float64

	// GeneratorBound says the load generator may have limited the phase.
	// Such a phase still counts as served when it passes the served rule
	// (the generator's lag is inside the latency, which is measured from
	// the intended send time, so it can only make the phase look worse);
	// when it fails the rule it is shown but neither served nor a break in
	// the ladder, since the failure may be the generator's. It counts for
	// the ceiling when the generator sent (almost) every planned request.
	GeneratorBound bool
}

// Line is the sample's line.
func (s Sample) Line() rundir.Line {
	return rundir.Line{GOMAXPROCS: s.GOMAXPROCS, Model: s.Model, CPULimit: s.CPULimit, Set: s.Set}
}

// x is the sample's load: users (closed model) or the offered rate.
func (s Sample) x() float64 {
	if s.Users > 0 {
		return float64(s.Users)
	}
	return s.OfferedRate
}

// Options tunes the rules. The zero value means the documented defaults.
type Options struct {
	// ServedFraction: a rate is served when its 2xx answers per second
	// (Sample.Answered) reach ServedFraction x offered. Default 0.99.
	ServedFraction float64
	// P99Factor: a rate is served only when its p99 is within P99Factor x the
	// low-load p99 (the p99 at the lowest offered rate, generator-bound or
	// not). Default 2.
	P99Factor float64
	// PlateauTolerance: the recommended GOMAXPROCS is the smallest whose
	// ceiling is within this fraction of the best ceiling. Default 0.05.
	PlateauTolerance float64
	// ConcurrencyLimit is the target's known limit on requests in service
	// (a pool's workers, a bulkhead's permits); 0 when unknown. It enables
	// the Little's-law prediction ConcurrencyLimit / low-load latency.
	// LineConcurrencyLimit, when set, gives it per line instead (a swept
	// model or --set workers changes it).
	ConcurrencyLimit     int
	LineConcurrencyLimit func(rundir.Line) int
	// ClosedGrowth: on a closed-model line, a user count is served when
	// its 2xx/s reach ClosedGrowth x users / (think + low-load latency), the
	// throughput the users would give if latency stayed at its low-load
	// value (Little's law). Default 0.9.
	ClosedGrowth float64
	// Think is the closed model's think time (see Sample.Users).
	Think time.Duration
	// CPUs is the number of CPUs the targets could use (the pinned set or
	// the machine's); 0 when unknown. A GOMAXPROCS above it is labelled,
	// its limit is the CPU count, and it is recommended only with a warning.
	CPUs int
	// TargetP99 (optional) sizes the CPU limit: the smallest limit that
	// carried each offered rate with a p99 within it (Quotas.Sizing).
	TargetP99 time.Duration
	// LimitOnParent says the CPU limits were set on the targets' parent
	// cgroup, which the runtime does not read (QuotaBlindSpot).
	LimitOnParent bool
}

func (o Options) withDefaults() Options {
	if o.ServedFraction <= 0 {
		o.ServedFraction = 0.99
	}
	if o.P99Factor <= 0 {
		o.P99Factor = 2
	}
	if o.PlateauTolerance <= 0 {
		o.PlateauTolerance = 0.05
	}
	if o.ClosedGrowth <= 0 {
		o.ClosedGrowth = 0.9
	}
	return o
}

func (o Options) limitOf(l rundir.Line) int {
	if o.LineConcurrencyLimit != nil {
		return o.LineConcurrencyLimit(l)
	}
	return o.ConcurrencyLimit
}

// over reports whether gomaxprocs exceeds the known CPU count.
func (o Options) over(gomaxprocs int) bool { return o.CPUs > 0 && gomaxprocs > o.CPUs }

// Cell is the median over iterations of one (line, load).
type Cell struct {
	GOMAXPROCS    int
	Model         string
	CPULimit      float64
	Set           rundir.Settings
	OfferedRate   float64
	Users         int // closed model; OfferedRate is then 0
	Iterations    int // samples the medians were taken over (see Cells)
	OK            int64
	OKPerSec      float64
	Answered      float64 // see Sample.Answered; OKPerSec when unknown
	P50, P95, P99 time.Duration
	Mean          time.Duration
	ServiceP50    time.Duration
	Errors        int64
	NotSent       int64
	Planned       int64
	CPUPerRequest time.Duration
	CPUCores      float64
	MachineBusy   float64
	Goroutines    float64
	Threads       float64
	RSSBytes      int64
	// Quota, Throttled, ThrottledS and QuotaUse are as in Sample (medians).
	Quota                           bool
	Throttled, ThrottledS, QuotaUse float64
	// GeneratorBound is true when every iteration of this cell was
	// generator-bound.
	GeneratorBound bool
	// Served: open model, Answered >= ServedFraction x offered, 2xx/s
	// tracking the offered rate (load.Tracks, the rule of load's
	// below-capacity verdict) and p99 <= P99Factor x the low-load p99;
	// closed model, see analyzeLevel. A
	// generator-bound cell can be served (see Sample.GeneratorBound).
	Served bool
	// Knee marks the cell whose load is its line's knee.
	Knee bool
}

// X is the cell's load: users (closed model) or the offered rate.
func (c Cell) X() float64 {
	if c.Users > 0 {
		return float64(c.Users)
	}
	return c.OfferedRate
}

// Ambiguous reports whether the cell failed the served rule while the
// generator may have been the limit: it is neither served nor a break in
// the ladder.
func (c Cell) Ambiguous() bool { return c.GeneratorBound && !c.Served }

// FullyOffered reports whether the generator sent at least 99 % of the
// requests it planned (always true when Planned is unknown).
func (c Cell) FullyOffered() bool {
	return c.Planned <= 0 || float64(c.NotSent) <= 0.01*float64(c.Planned)
}

// Level is everything measured on one line: one GOMAXPROCS value, and one
// model and set of fixture flag values when those were swept. (It kept the
// name from when GOMAXPROCS was the only axis.)
type Level struct {
	GOMAXPROCS int
	// Line is the level's line; Label names it ("pool, GOMAXPROCS 2,
	// workers=20", with "(> N CPUs)" after a GOMAXPROCS above the CPUs).
	Line  rundir.Line
	Label string
	// Closed: the load axis is closed-model users; Knee is then a user
	// count, and the cells' X is users.
	Closed bool
	// OverCPUs: GOMAXPROCS exceeds Options.CPUs.
	OverCPUs bool
	Cells    []Cell // ascending load

	// Knee is the highest load (offered rate, or users) served with every
	// lower usable load also served; 0 when even the lowest was not served.
	Knee float64
	// StartsOver: open model, the ladder's lowest usable rate was already
	// not served (its 2xx/s did not track the offered rate, or too few
	// requests were answered): the line has no knee and no low-load
	// service time (LowLoadService, CPUFraction, InService and
	// LittlePrediction are 0), and a recommendation is not drawn from it.
	// The remedy is to offer lower rates (OfferLower).
	StartsOver bool
	// Ceiling is the highest OKPerSec of any fully offered cell (see
	// Cell.FullyOffered).
	Ceiling float64
	// Saturated: some fully offered rate failed the served rule, so the
	// ceiling is the target's limit and not just the top of the ladder.
	Saturated bool

	LowLoadP50, LowLoadP99 time.Duration // at the lowest offered rate
	// LowLoadService is the service time (from the actual send) at the
	// lowest offered rate, LowLoadP50 when unknown: the target's own
	// latency, which Little's law and the CPU fraction use. 0 when the
	// lowest rate was over capacity (StartsOver): its latency was a queue's.
	LowLoadService time.Duration
	// CPUPerRequest is the marginal CPU cost of a 2xx response: the slope
	// of the target's CPU use (cores) against its 2xx/s over the cells
	// where at least 95 % of requests were answered 2xx (so rejections and
	// timeouts do not inflate it, and the target's idle CPU, which the
	// intercept absorbs, does not weigh on low rates). With fewer than two
	// such cells, or a slope that is not positive, it is the median CPU per
	// 2xx response over the cells that passed the served rule (all cells
	// when none did); 0 when not measured.
	CPUPerRequest time.Duration
	// CPUFraction is CPUPerRequest over the shortest LowLoadService of the
	// sweep (the service time least inflated by waiting for a CPU): the
	// share of a request's life spent running on a P.
	CPUFraction float64
	// BusyPs is the target's CPU use, in cores, in the cell that set the
	// ceiling (Ceiling x CPUPerRequest when that was not measured). Close
	// to GOMAXPROCS means the Ps were the limit.
	BusyPs float64
	// InService is Ceiling x LowLoadService (Little's law): how many requests
	// were in service at the ceiling when latency is the low-load one.
	InService float64
	// LittlePrediction is Options.ConcurrencyLimit / LowLoadService in requests
	// per second; 0 when the limit is unknown.
	LittlePrediction float64
	// CPUPrediction is GOMAXPROCS (or the line's CPU limit, when lower) /
	// CPUPerRequest: the ceiling if the Ps (or the quota) were the only
	// limit; 0 when CPU was not measured.
	CPUPrediction float64
	// MachineBusy is the share of the machine's CPUs busy (whoever used
	// them) in the cell that set the ceiling; 0 when unknown.
	MachineBusy float64
	// Limit says what held the ceiling when the level saturated: one of
	// rundir's KindLimit* kinds (KindLimitPs, KindLimitConcurrency,
	// KindLimitCPUStarved, KindLimitSerialized, KindLimitElsewhere); empty
	// when the ladder never saturated the level. LimitReason says it with
	// the figures.
	Limit       rundir.Kind
	LimitReason string
}

// OfferLower says, for a line that starts over capacity (StartsOver), what
// its lowest rate showed and that the ladder must start lower: "offer lower
// rates: ...". It returns "" for any other line.
func (l Level) OfferLower() string {
	if !l.StartsOver {
		return ""
	}
	for _, c := range l.Cells {
		if !c.Ambiguous() {
			return fmt.Sprintf("offer lower rates: %s was over capacity already at its lowest rate, %.0f req/s (%.0f 2xx/s, p50 %s), so it has no knee and no low-load service time",
				l.Label, c.OfferedRate, c.OKPerSec, fmtMS(c.P50))
		}
	}
	return ""
}

// allStartOver reports whether every level starts over capacity (and there
// is at least one).
func allStartOver(levels []Level) bool {
	for _, l := range levels {
		if !l.StartsOver {
			return false
		}
	}
	return len(levels) > 0
}

// offerLowerReason is the recommendation's reason when every line started
// over capacity.
const offerLowerReason = "every line was over capacity already at its lowest rate: offer lower rates; no knee, low-load service time or GOMAXPROCS can be drawn from this ladder"

// Thresholds of the limit classification.
const (
	busyPsShare     = 0.8  // of GOMAXPROCS (or the CPUs, when fewer), for rundir.KindLimitPs
	quotaShare      = 0.9  // of a cgroup CPU limit, for rundir.KindLimitQuota
	machineBusy     = 0.9  // share of the machine's CPUs, for rundir.KindLimitCPUStarved
	cpuBoundShare   = 0.3  // CPU fraction above which requests are CPU-heavy
	littleTolerance = 0.15 // ceiling vs Little's-law prediction
)

// classifyLimit fills l.Limit and l.LimitReason; it needs BusyPs,
// CPUFraction and LittlePrediction already set. cpus is Options.CPUs.
func classifyLimit(l *Level, cpus int) {
	if !l.Saturated || l.Ceiling <= 0 {
		return
	}
	ps := float64(l.GOMAXPROCS)
	usable := ps
	if l.OverCPUs {
		usable = float64(cpus)
	}
	machineSaturated := l.MachineBusy >= machineBusy
	switch {
	case l.BusyPs <= 0:
		l.Limit = rundir.KindLimitElsewhere
		l.LimitReason = "the target's CPU was not measured, so the Ps cannot be judged"
	case l.Line.CPULimit > 0 && l.BusyPs >= quotaShare*l.Line.CPULimit:
		l.Limit = rundir.KindLimitQuota
		l.LimitReason = quotaReason(l)
	case l.OverCPUs && (l.BusyPs >= busyPsShare*usable || l.CPUFraction >= cpuBoundShare || machineSaturated):
		// More Ps than CPUs: the Ps wait for the CPUs, whoever else runs.
		l.Limit = rundir.KindLimitCPUStarved
		l.LimitReason = fmt.Sprintf("GOMAXPROCS %d exceeds the %d CPUs the target could use: its Ps take turns on those CPUs, so the CPU count itself is the limit (%.2f cores busy at the ceiling, the machine's CPUs %s busy)",
			l.GOMAXPROCS, cpus, l.BusyPs, share(l.MachineBusy))
	case l.BusyPs >= busyPsShare*ps:
		l.Limit = rundir.KindLimitPs
		l.LimitReason = fmt.Sprintf("the target kept %.2f of its %d Ps busy at the ceiling: the Ps are the limit", l.BusyPs, l.GOMAXPROCS)
	case l.LittlePrediction > 0 && math.Abs(l.Ceiling/l.LittlePrediction-1) <= littleTolerance:
		l.Limit = rundir.KindLimitConcurrency
		l.LimitReason = fmt.Sprintf("only %.2f of %d Ps were busy and the ceiling is %.0f %% of the concurrency limit / low-load service time (Little's law): the concurrency limit (pool) is the limit",
			l.BusyPs, l.GOMAXPROCS, 100*l.Ceiling/l.LittlePrediction)
	case l.CPUFraction >= cpuBoundShare && l.MachineBusy > 0 && !machineSaturated:
		l.Limit = rundir.KindLimitSerialized
		l.LimitReason = fmt.Sprintf("requests spend %.0f %% of their service time on CPU, yet the target kept only %.2f of its %d Ps busy while the machine's CPUs were %.0f %% busy: something in the target serializes the work (a lock, a single goroutine)",
			100*l.CPUFraction, l.BusyPs, l.GOMAXPROCS, 100*l.MachineBusy)
	case l.CPUFraction >= cpuBoundShare || machineSaturated:
		l.Limit = rundir.KindLimitCPUStarved
		l.LimitReason = fmt.Sprintf("the target kept only %.2f of its %d Ps busy (requests spend %.0f %% of their service time on CPU) while the machine's CPUs were %s busy: other processes held the CPUs it could use, so this ceiling understates it",
			l.BusyPs, l.GOMAXPROCS, 100*l.CPUFraction, share(l.MachineBusy))
	default:
		l.Limit = rundir.KindLimitElsewhere
		l.LimitReason = fmt.Sprintf("only %.2f of %d Ps were busy and no known limit matches: look for a lock, a downstream or a pool (about %.1f requests were in service at the ceiling, by Little's law)",
			l.BusyPs, l.GOMAXPROCS, l.InService)
	}
}

// quotaReason says that a level's CPU quota held its ceiling, and when its
// GOMAXPROCS is above what the quota can run at once: Ps beyond
// ceil(limit) run in turns within each period and are throttled together
// at its end (the runtime's own default under the limit is
// max(2, ceil(limit)), at most the CPUs).
func quotaReason(l *Level) string {
	limit := l.Line.CPULimit
	r := fmt.Sprintf("the target used %.2f cores of its %s quota at the ceiling: the CPU limit is the limit, not the Ps", l.BusyPs, rundir.CPULimitLabel(limit))
	if fit := int(math.Ceil(limit)); l.GOMAXPROCS > fit {
		r += fmt.Sprintf("; GOMAXPROCS %d is above ceil(%g) = %d, so its Ps share the quota and are throttled together in each 100 ms period", l.GOMAXPROCS, limit, fit)
	}
	return r
}

// ScalingKind says how throughput responds to more Ps.
type ScalingKind string

// The scaling kinds.
const (
	ScalingUnknown  ScalingKind = "unknown"        // one GOMAXPROCS value, or the ladder never reached a ceiling
	CPUBound        ScalingKind = "cpu-bound"      // the ceiling grows at least half as fast as GOMAXPROCS
	Partial         ScalingKind = "partial"        // grows, but well under proportionally
	BlockingBound   ScalingKind = "blocking-bound" // flat: Ps are not the limit
	flatEfficiency              = 0.15
	scaleEfficiency             = 0.5
)

// Scaling compares the ceilings of the smallest and largest GOMAXPROCS.
type Scaling struct {
	Kind     ScalingKind
	From, To int     // GOMAXPROCS values compared
	Ratio    float64 // ceiling(To) / ceiling(From)
	Ideal    float64 // To / From
	// AtLeast is true when the larger level never saturated, so Ratio is
	// a lower bound.
	AtLeast bool
	Reason  string
}

// Carriers estimates how many Ps a rate needs: concurrency x CPU fraction,
// which by Little's law is Rate x CPUPerRequest.
type Carriers struct {
	Rate          float64       // the highest offered rate (closed model: the highest 2xx/s)
	Latency       time.Duration // low-load service time used for the concurrency
	Concurrency   float64       // Rate x Latency
	CPUPerRequest time.Duration
	CPUFraction   float64 // CPUPerRequest / Latency
	Needed        float64 // Concurrency x CPUFraction; 0 when CPU was not measured
}

// Recommendation is the suggested GOMAXPROCS and why.
type Recommendation struct {
	GOMAXPROCS int
	Reason     string
}

// Family is the lines that differ only in GOMAXPROCS: one model, one CPU
// limit and one set of fixture flag values. Scaling, carriers and the recommendation are
// judged within a family, where GOMAXPROCS is the only thing that varies.
type Family struct {
	Model    string
	CPULimit float64
	Set      rundir.Settings
	// Label names the family ("pool, workers=20"); "" for the only family
	// of a GOMAXPROCS-only sweep.
	Label          string
	Levels         []Level // ascending GOMAXPROCS
	Scaling        Scaling
	Carriers       Carriers
	Recommendation Recommendation
	// StartsOver: every line judged started over capacity (Level.StartsOver),
	// so the family has no recommendation and its reason says to offer lower
	// rates.
	StartsOver bool
}

// Analysis is the result of Analyze.
type Analysis struct {
	// Levels are the lines: grouped by family (model, then fixture flag
	// values, in the order the samples first show them), ascending
	// GOMAXPROCS within each. A GOMAXPROCS-only sweep has one family.
	Levels   []Level
	Families []Family
	// Scaling, Carriers and Recommendation are the only family's; with
	// several families they are not judged across them (the Kind is
	// ScalingUnknown, the GOMAXPROCS 0, and the Reasons say so): see each
	// Family.
	Scaling        Scaling
	Carriers       Carriers
	Recommendation Recommendation
	// Notes are caveats a reader must see (generator-bound steps, a ladder
	// that never reached the ceiling).
	Notes []string
	// Quota is the CPU limits' findings, the GOMAXPROCS per limit and the
	// sizing for Options.TargetP99; empty without CPU-limit lines.
	Quota Quotas
}

// Analyze groups samples by line and load, takes medians over iterations
// and derives each line's knee, ceiling and limit, then per family the
// scaling, carriers needed and the recommendation. It returns an error
// when samples is empty.
func Analyze(samples []Sample, opt Options) (Analysis, error) {
	if len(samples) == 0 {
		return Analysis{}, fmt.Errorf("capacity: no samples")
	}
	opt = opt.withDefaults()
	var a Analysis
	for _, f := range families(samples) {
		fam := Family{Model: f.Model, CPULimit: f.CPULimit, Set: f.Set}
		fam.Label = familyLabel(f)
		for _, gmp := range distinctGOMAXPROCS(samples, f) {
			line := rundir.Line{GOMAXPROCS: gmp, Model: f.Model, CPULimit: f.CPULimit, Set: f.Set}
			fam.Levels = append(fam.Levels, analyzeLevel(line, samples, opt))
		}
		a.Families = append(a.Families, fam)
	}
	// A request's service time at low load does not depend on GOMAXPROCS;
	// on a busy machine it is inflated at some levels by waiting for a CPU.
	// The shortest one measured in a family is the best estimate of the
	// real one, so the CPU fraction of every level of it uses it.
	for fi := range a.Families {
		fam := &a.Families[fi]
		service := time.Duration(0)
		for _, l := range fam.Levels {
			if l.LowLoadService > 0 && (service == 0 || l.LowLoadService < service) {
				service = l.LowLoadService
			}
		}
		for i := range fam.Levels {
			l := &fam.Levels[i]
			if service > 0 {
				l.CPUFraction = float64(l.CPUPerRequest) / float64(service)
			}
			classifyLimit(l, opt.CPUs)
		}
		// An auto line (the runtime chose GOMAXPROCS) is shown, but the
		// scaling and the recommendation compare the values set, when
		// there are any: auto would repeat one of them under another name.
		judged := slices.DeleteFunc(slices.Clone(fam.Levels), func(l Level) bool { return l.Line.GOMAXPROCS == 0 })
		if len(judged) == 0 {
			judged = fam.Levels
		}
		fam.Scaling = classify(judged, opt.CPUs)
		fam.Carriers = carriersNeeded(judged)
		fam.Recommendation = recommend(judged, fam.Scaling, fam.Carriers, opt)
		if fam.StartsOver = allStartOver(judged); fam.StartsOver {
			fam.Recommendation = Recommendation{Reason: offerLowerReason}
		}
		a.Levels = append(a.Levels, fam.Levels...)
	}
	if len(a.Families) == 1 {
		f := a.Families[0]
		a.Scaling, a.Carriers, a.Recommendation = f.Scaling, f.Carriers, f.Recommendation
	} else {
		why := "the sweep varies the model or fixture flags as well as GOMAXPROCS, and lines that differ in more than GOMAXPROCS say nothing about the Ps"
		a.Scaling = Scaling{Kind: ScalingUnknown, Reason: why + ": scaling is judged per model and flag values"}
		a.Recommendation = Recommendation{Reason: why + ": no single GOMAXPROCS is recommended; see each model and flag values' own"}
	}
	a.Notes = notes(a.Levels)
	a.Quota = quotas(a, opt)
	// Under a CPU limit the GOMAXPROCS to use is the quota's advice (it
	// weighs the throttling as well as the ceilings): one recommendation.
	for fi := range a.Families {
		f := &a.Families[fi]
		for _, ad := range a.Quota.Advice {
			if f.CPULimit > 0 && ad.Limit == f.CPULimit && ad.Family == familyLabel(familyKey{Model: f.Model, Set: f.Set}) && !f.StartsOver {
				f.Recommendation = Recommendation{GOMAXPROCS: ad.GOMAXPROCS, Reason: ad.Reason}
			}
		}
	}
	if len(a.Families) == 1 {
		a.Recommendation = a.Families[0].Recommendation
	}
	return a, nil
}

// familyKey is a family's identity.
type familyKey struct {
	Model    string
	CPULimit float64
	Set      rundir.Settings
}

// families returns the distinct (model, set) pairs in the order samples
// first show them (a sweep's plan order).
func families(samples []Sample) []familyKey {
	seen := map[familyKey]bool{}
	var out []familyKey
	for _, s := range samples {
		k := familyKey{s.Model, s.CPULimit, s.Set}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func familyLabel(f familyKey) string {
	var parts []string
	if f.Model != "" {
		parts = append(parts, f.Model)
	}
	if f.CPULimit > 0 {
		parts = append(parts, rundir.CPULimitLabel(f.CPULimit))
	}
	for _, kv := range f.Set.Pairs() {
		parts = append(parts, kv[0]+"="+kv[1])
	}
	return strings.Join(parts, ", ")
}

func distinctGOMAXPROCS(samples []Sample, f familyKey) []int {
	seen := map[int]bool{}
	var out []int
	for _, s := range samples {
		if s.Model == f.Model && s.CPULimit == f.CPULimit && s.Set == f.Set && !seen[s.GOMAXPROCS] {
			seen[s.GOMAXPROCS] = true
			out = append(out, s.GOMAXPROCS)
		}
	}
	sort.Ints(out)
	return out
}

// Cells returns the per-(line, load) medians, sorted by model, set,
// GOMAXPROCS, then load, without the served/knee judgement. The medians
// are taken over the iterations that were not generator-bound, when there
// is one; a cell is generator-bound only when every iteration was.
func Cells(samples []Sample) []Cell {
	type key struct {
		line rundir.Line
		x    float64
	}
	groups := map[key][]Sample{}
	var keys []key
	for _, s := range samples {
		k := key{s.Line(), s.x()}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i].line, keys[j].line
		switch {
		case a.Model != b.Model:
			return a.Model < b.Model
		case a.CPULimit != b.CPULimit:
			return a.CPULimit < b.CPULimit
		case a.Set != b.Set:
			return a.Set.String() < b.Set.String()
		case a.GOMAXPROCS != b.GOMAXPROCS:
			return a.GOMAXPROCS < b.GOMAXPROCS
		}
		return keys[i].x < keys[j].x
	})
	cells := make([]Cell, 0, len(keys))
	for _, k := range keys {
		// Medians over the iterations where the generator kept up; over
		// all of them, and the cell marked generator-bound, when it never did.
		var kept []Sample
		for _, s := range groups[k] {
			if !s.GeneratorBound {
				kept = append(kept, s)
			}
		}
		g := groups[k]
		if len(kept) > 0 {
			g = kept
		}
		first := g[0]
		c := Cell{GOMAXPROCS: k.line.GOMAXPROCS, Model: k.line.Model, CPULimit: k.line.CPULimit, Set: k.line.Set, OfferedRate: first.OfferedRate, Users: first.Users,
			Iterations: len(g), GeneratorBound: len(kept) == 0}
		c.OK = int64(math.Round(median(g, func(s Sample) float64 { return float64(s.OK) })))
		c.OKPerSec = median(g, func(s Sample) float64 { return s.OKPerSec })
		c.Answered = median(g, func(s Sample) float64 {
			if s.Answered > 0 {
				return s.Answered
			}
			return s.OKPerSec
		})
		c.P50 = time.Duration(median(g, func(s Sample) float64 { return float64(s.P50) }))
		c.P95 = time.Duration(median(g, func(s Sample) float64 { return float64(s.P95) }))
		c.P99 = time.Duration(median(g, func(s Sample) float64 { return float64(s.P99) }))
		c.Mean = time.Duration(median(g, func(s Sample) float64 { return float64(s.Mean) }))
		c.ServiceP50 = time.Duration(median(g, func(s Sample) float64 { return float64(s.ServiceP50) }))
		c.Errors = int64(math.Round(median(g, func(s Sample) float64 { return float64(s.Errors) })))
		c.NotSent = int64(math.Round(median(g, func(s Sample) float64 { return float64(s.NotSent) })))
		c.CPUPerRequest = time.Duration(median(g, func(s Sample) float64 { return float64(s.CPUPerRequest) }))
		c.RSSBytes = int64(median(g, func(s Sample) float64 { return float64(s.RSSBytes) }))
		c.Planned = int64(math.Round(median(g, func(s Sample) float64 { return float64(s.Planned) })))
		c.CPUCores = median(g, func(s Sample) float64 { return s.CPUCores })
		c.MachineBusy = median(g, func(s Sample) float64 { return s.MachineBusy })
		c.Goroutines = median(g, func(s Sample) float64 { return s.Goroutines })
		c.Threads = median(g, func(s Sample) float64 { return s.Threads })
		if c.Quota = g[0].Quota; c.Quota {
			c.Throttled = median(g, func(s Sample) float64 { return s.Throttled })
			c.ThrottledS = median(g, func(s Sample) float64 { return s.ThrottledS })
			c.QuotaUse = median(g, func(s Sample) float64 { return s.QuotaUse })
		}
		cells = append(cells, c)
	}
	return cells
}

// analyzeLevel judges one line.
//
// Open model (rates): a rate is served when its 2xx answers per second reach
// ServedFraction (99 %) of the offered rate, its 2xx/s tracks the offered
// rate (load.Tracks: the answers kept pace while the phase ran, not only
// arrived after it) and its p99 stays within P99Factor (2x) of the p99 at
// the lowest rate. A ladder whose lowest usable rate is not served starts
// over capacity (Level.StartsOver).
//
// Closed model (users): U users with think time Z and latency R give
// U / (Z + R) requests per second (Little's law), so throughput grows with
// the users as long as the latency stays put. A user count is served when
// its 2xx/s reach ClosedGrowth (90 %) of U / (Z + R0), R0 the mean latency
// at the lowest user count (its p50 when the mean was not recorded), and at
// most 1 % of its answers were errors. Equivalently: Z + R grew by at most
// 1/0.9 - 1 = 11 % over the low-load cycle. The knee is the largest user
// count served with every smaller one served too, the last one whose
// throughput still grows in step with the users; the ceiling is the
// highest 2xx/s.
//
// Either way a generator-bound cell that passes the rule is served, and one
// that fails it is skipped: neither served nor a break in the ladder.
func analyzeLevel(line rundir.Line, samples []Sample, opt Options) Level {
	var mine []Sample
	for _, s := range samples {
		if s.Line() == line {
			mine = append(mine, s)
		}
	}
	l := Level{GOMAXPROCS: line.GOMAXPROCS, Line: line, Label: line.Label(opt.CPUs), OverCPUs: opt.over(line.GOMAXPROCS), Cells: Cells(mine)}
	if line.GOMAXPROCS == 0 { // auto: judge the Ps the runtime chose
		for _, s := range mine {
			l.GOMAXPROCS = max(l.GOMAXPROCS, s.RuntimeGOMAXPROCS)
		}
		l.Label = line.LabelRuntime(opt.CPUs, l.GOMAXPROCS)
		l.OverCPUs = opt.over(l.GOMAXPROCS)
	}

	// The low-load latency is the lowest load's, even when that cell was
	// generator-bound: a late generator only adds its lag to the latency
	// (which is measured from the intended send time), making the p99
	// rule more lenient, never stricter; a higher, overloaded rate would
	// make the rule meaningless.
	if len(l.Cells) == 0 {
		return l
	}
	l.Closed = l.Cells[0].Users > 0
	l.LowLoadP50, l.LowLoadP99 = l.Cells[0].P50, l.Cells[0].P99
	l.LowLoadService = l.Cells[0].ServiceP50
	if l.LowLoadService <= 0 {
		l.LowLoadService = l.LowLoadP50
	}
	cycle := opt.Think + l.Cells[0].Mean // the closed model's low-load think + latency
	if l.Cells[0].Mean <= 0 {
		cycle = opt.Think + l.LowLoadP50
	}

	kneeAt, ceilingAt := -1, -1
	broken := false
	var cpuServed, cpuAll []float64
	for i := range l.Cells {
		c := &l.Cells[i]
		var rule bool
		if l.Closed {
			ideal := math.Inf(1)
			if cycle > 0 {
				ideal = float64(c.Users) / cycle.Seconds()
			}
			errShare := 0.0
			if n := c.OK + c.Errors; n > 0 {
				errShare = float64(c.Errors) / float64(n)
			}
			rule = c.OKPerSec >= opt.ClosedGrowth*ideal && errShare <= 1-opt.ServedFraction
		} else {
			rule = c.Answered >= opt.ServedFraction*c.OfferedRate &&
				load.Tracks(c.OKPerSec, c.OfferedRate) &&
				float64(c.P99) <= opt.P99Factor*float64(l.LowLoadP99)
		}
		c.Served = rule
		if c.FullyOffered() {
			if !rule {
				l.Saturated = true
			}
			if ceilingAt < 0 || c.OKPerSec > l.Ceiling {
				l.Ceiling, ceilingAt = c.OKPerSec, i
			}
		}
		if !c.Ambiguous() {
			if c.Served && !broken {
				kneeAt = i
			}
			if !c.Served && !broken && kneeAt < 0 && !l.Closed {
				l.StartsOver = true
			}
			broken = broken || !c.Served
		}
		if c.CPUPerRequest > 0 {
			cpuAll = append(cpuAll, float64(c.CPUPerRequest))
			if rule {
				cpuServed = append(cpuServed, float64(c.CPUPerRequest))
			}
		}
	}
	cpu := cpuServed
	if len(cpu) == 0 {
		cpu = cpuAll
	}
	marginal := marginalCPU(l.Cells)
	if kneeAt >= 0 {
		l.Cells[kneeAt].Knee = true
		l.Knee = l.Cells[kneeAt].X()
	}
	if len(cpu) > 0 {
		sort.Float64s(cpu)
		l.CPUPerRequest = time.Duration(medianSorted(cpu))
	}
	if marginal > 0 {
		l.CPUPerRequest = marginal
	}
	if l.StartsOver {
		l.LowLoadService = 0 // a queue's latency, not the target's service time
	}
	if l.LowLoadService > 0 {
		l.CPUFraction = float64(l.CPUPerRequest) / float64(l.LowLoadService)
		l.InService = l.Ceiling * l.LowLoadService.Seconds()
		if limit := opt.limitOf(line); limit > 0 {
			l.LittlePrediction = float64(limit) / l.LowLoadService.Seconds()
		}
	}
	if l.CPUPerRequest > 0 {
		l.BusyPs = l.Ceiling * l.CPUPerRequest.Seconds()
		cores := float64(l.GOMAXPROCS) // the runtime's choice on an auto line
		if line.CPULimit > 0 {
			cores = min(cores, line.CPULimit)
		}
		l.CPUPrediction = cores / l.CPUPerRequest.Seconds()
	}
	if ceilingAt >= 0 && l.Cells[ceilingAt].CPUCores > 0 {
		l.BusyPs = l.Cells[ceilingAt].CPUCores
	}
	if ceilingAt >= 0 {
		l.MachineBusy = l.Cells[ceilingAt].MachineBusy
	}
	return l
}

// marginalCPU fits cores = idle + rate x cost by least squares over the
// cells answered at 95 % or more (closed model: with at most 5 % errors),
// and returns cost; 0 when it cannot.
func marginalCPU(cells []Cell) time.Duration {
	var xs, ys []float64
	for _, c := range cells {
		answered := c.Answered >= 0.95*c.OfferedRate
		if c.Users > 0 {
			answered = float64(c.Errors) <= 0.05*float64(c.OK+c.Errors)
		}
		if c.CPUCores > 0 && c.OKPerSec > 0 && answered {
			xs, ys = append(xs, c.OKPerSec), append(ys, c.CPUCores)
		}
	}
	if len(xs) < 2 {
		return 0
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(xs))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx <= 0 || sxy <= 0 {
		return 0
	}
	return time.Duration(sxy / sxx * float64(time.Second))
}

// classify judges scaling across one family's levels. Levels whose
// GOMAXPROCS exceeds the CPUs are left out when at least two others remain:
// more Ps than CPUs cannot scale.
func classify(levels []Level, cpus int) Scaling {
	within := levels
	var left []string
	if cpus > 0 {
		var in []Level
		for _, l := range levels {
			if l.OverCPUs {
				left = append(left, fmt.Sprint(l.GOMAXPROCS))
			} else {
				in = append(in, l)
			}
		}
		if len(in) >= 2 {
			within = in
		} else {
			left = nil
		}
	}
	s := classifyLevels(within)
	if len(left) > 0 {
		s.Reason += fmt.Sprintf(" (GOMAXPROCS %s exceeds the %d CPUs and is left out of the scaling)", strings.Join(left, ", "), cpus)
	}
	return s
}

func classifyLevels(levels []Level) Scaling {
	if len(levels) < 2 {
		return Scaling{Kind: ScalingUnknown, Reason: "only one GOMAXPROCS value was measured"}
	}
	a, b := levels[0], levels[len(levels)-1]
	s := Scaling{From: a.GOMAXPROCS, To: b.GOMAXPROCS, Ideal: float64(b.GOMAXPROCS) / float64(a.GOMAXPROCS)}
	if a.Ceiling <= 0 {
		s.Kind = ScalingUnknown
		s.Reason = fmt.Sprintf("GOMAXPROCS %d served nothing usable", a.GOMAXPROCS)
		return s
	}
	s.Ratio = b.Ceiling / a.Ceiling
	for _, l := range []Level{a, b} {
		if l.Limit == rundir.KindLimitQuota {
			s.Kind = ScalingUnknown
			s.Reason = fmt.Sprintf("%s: its CPU quota held the ceiling (%.2f cores used), so the ceilings (%.2fx from %d to %d) measure the quota, not the Ps",
				l.Label, l.BusyPs, s.Ratio, a.GOMAXPROCS, b.GOMAXPROCS)
			return s
		}
		if l.Limit != rundir.KindLimitCPUStarved {
			continue
		}
		s.Kind = ScalingUnknown
		if l.OverCPUs {
			s.Reason = fmt.Sprintf("%s: its Ps outnumber the CPUs, so the ceilings (%.2fx from %d to %d) say nothing about scaling: compare values within the CPUs",
				l.Label, s.Ratio, a.GOMAXPROCS, b.GOMAXPROCS)
			return s
		}
		s.Reason = fmt.Sprintf("GOMAXPROCS %d was starved of CPU by other processes (%.2f of %d Ps busy, the machine's CPUs %s busy), so the ceilings (%.2fx from %d to %d) say nothing about scaling: repeat on a quiet machine",
			l.GOMAXPROCS, l.BusyPs, l.GOMAXPROCS, share(l.MachineBusy), s.Ratio, a.GOMAXPROCS, b.GOMAXPROCS)
		return s
	}
	load := "rates"
	if a.Closed {
		load = "--users"
	}
	if !a.Saturated {
		s.Kind = ScalingUnknown
		s.Reason = fmt.Sprintf("GOMAXPROCS %d served every load offered, so the ladder never reached a ceiling: offer higher %s", a.GOMAXPROCS, load)
		return s
	}
	s.AtLeast = !b.Saturated
	eff := (s.Ratio - 1) / (s.Ideal - 1)
	bound := ""
	if s.AtLeast {
		bound = "at least "
	}
	switch {
	case eff >= scaleEfficiency:
		s.Kind = CPUBound
		s.Reason = fmt.Sprintf("the ceiling grew %s%.2fx from GOMAXPROCS %d to %d (%.0fx more Ps): throughput scales with the Ps, the work is CPU-bound",
			bound, s.Ratio, a.GOMAXPROCS, b.GOMAXPROCS, s.Ideal)
	case eff <= flatEfficiency && !s.AtLeast:
		s.Kind = BlockingBound
		s.Reason = fmt.Sprintf("the ceiling stayed flat (%.2fx) from GOMAXPROCS %d to %d: more Ps do not help, the limit is elsewhere (blocking work, a pool, a downstream)",
			s.Ratio, a.GOMAXPROCS, b.GOMAXPROCS)
	default:
		s.Kind = Partial
		s.Reason = fmt.Sprintf("the ceiling grew %s%.2fx from GOMAXPROCS %d to %d (%.0fx more Ps): more Ps help, but well under proportionally",
			bound, s.Ratio, a.GOMAXPROCS, b.GOMAXPROCS, s.Ideal)
	}
	return s
}

func carriersNeeded(levels []Level) Carriers {
	var c Carriers
	var cpu, lat []float64
	for _, l := range levels {
		for _, cell := range l.Cells {
			switch {
			case l.Closed:
				c.Rate = math.Max(c.Rate, cell.OKPerSec)
			case !cell.Ambiguous():
				c.Rate = math.Max(c.Rate, cell.OfferedRate)
			}
		}
		if l.CPUPerRequest > 0 {
			cpu = append(cpu, float64(l.CPUPerRequest))
		}
		if l.LowLoadService > 0 {
			lat = append(lat, float64(l.LowLoadService))
		}
	}
	if len(lat) == 0 {
		return c
	}
	sort.Float64s(lat)
	c.Latency = time.Duration(medianSorted(lat))
	c.Concurrency = c.Rate * c.Latency.Seconds()
	if len(cpu) > 0 {
		sort.Float64s(cpu)
		c.CPUPerRequest = time.Duration(medianSorted(cpu))
		c.CPUFraction = float64(c.CPUPerRequest) / float64(c.Latency)
		c.Needed = c.Concurrency * c.CPUFraction
	}
	return c
}

// recommend picks a GOMAXPROCS within one family. It prefers values within
// the CPUs (Options.CPUs): a larger value is recommended only when every
// value tried exceeds them, and a larger value that did better is named,
// with the warning that it oversubscribes the CPUs.
func recommend(levels []Level, s Scaling, c Carriers, opt Options) Recommendation {
	candidates := levels
	var over []Level
	if opt.CPUs > 0 {
		var in []Level
		for _, l := range levels {
			if l.OverCPUs {
				over = append(over, l)
			} else {
				in = append(in, l)
			}
		}
		if len(in) > 0 {
			candidates = in
		} else {
			over = nil
		}
	}
	r := recommendAmong(candidates, s, c, opt)
	if r.GOMAXPROCS == 0 {
		return r
	}
	if opt.over(r.GOMAXPROCS) {
		r.Reason += fmt.Sprintf("; every value tried exceeds the %d CPUs, so this one oversubscribes them: its ceiling is the CPUs', not the Ps'", opt.CPUs)
		return r
	}
	best := 0.0
	for _, l := range candidates {
		best = math.Max(best, l.Ceiling)
	}
	for _, l := range over {
		if l.Ceiling > (1+opt.PlateauTolerance)*best {
			r.Reason += fmt.Sprintf("; %s reached a higher ceiling (%.0f vs %.0f 2xx/s), but it oversubscribes the %d CPUs (more Ps than CPUs take turns on them): it is not recommended; give the target more CPUs to use more Ps",
				l.Label, l.Ceiling, best, opt.CPUs)
			break
		}
	}
	return r
}

func recommendAmong(levels []Level, s Scaling, c Carriers, opt Options) Recommendation {
	best := 0.0
	for _, l := range levels {
		best = math.Max(best, l.Ceiling)
	}
	if best <= 0 {
		return Recommendation{Reason: "no step was usable (all generator-bound or failed): no recommendation"}
	}
	var pick Level
	for _, l := range levels {
		if l.Ceiling >= (1-opt.PlateauTolerance)*best {
			pick = l
			break
		}
	}
	r := Recommendation{GOMAXPROCS: pick.GOMAXPROCS}
	top := levels[len(levels)-1]
	switch s.Kind {
	case CPUBound, Partial:
		if pick.GOMAXPROCS == top.GOMAXPROCS {
			r.Reason = fmt.Sprintf("the largest value tried: throughput still grows with the Ps (%s)", s.Kind)
			if c.Needed > float64(top.GOMAXPROCS) {
				r.Reason += fmt.Sprintf("; %.0f req/s needs about %.1f Ps, more than tried: give it more cores", c.Rate, c.Needed)
			}
		} else {
			r.Reason = fmt.Sprintf("the smallest value within %.0f %% of the best ceiling (%.0f of %.0f req/s)", 100*opt.PlateauTolerance, pick.Ceiling, best)
		}
	case BlockingBound:
		r.Reason = fmt.Sprintf("throughput is flat across GOMAXPROCS (%.0f of %.0f req/s at %d): Ps are not the limit, so the smallest value does as well; raise the real limit instead",
			pick.Ceiling, best, pick.GOMAXPROCS)
		if pick.InService > 0 {
			r.Reason += fmt.Sprintf(" (about %.0f requests in service at the ceiling)", pick.InService)
		}
	default:
		r.Reason = fmt.Sprintf("the smallest value within %.0f %% of the best ceiling (%.0f of %.0f req/s); %s", 100*opt.PlateauTolerance, pick.Ceiling, best, s.Reason)
		if starved(levels) && c.Needed >= 0.5 {
			// The requests are CPU-bound but the machine hid the scaling:
			// size GOMAXPROCS from the CPU the top rate needs instead.
			need := int(math.Ceil(c.Needed))
			r.GOMAXPROCS = top.GOMAXPROCS
			for _, l := range levels {
				if l.GOMAXPROCS >= need {
					r.GOMAXPROCS = l.GOMAXPROCS
					break
				}
			}
			r.Reason = fmt.Sprintf("%.0f req/s needs about %.1f Ps of CPU (rate x CPU per request), so the smallest value tried with that many; the ceilings could not confirm it because the machine was busy", c.Rate, c.Needed)
			if opt.CPUs > 0 && need > opt.CPUs {
				r.Reason += fmt.Sprintf("; that is more than the %d CPUs: give the target more CPUs", opt.CPUs)
			}
			return r
		}
	}
	if c.Needed > 0 && s.Kind != CPUBound && s.Kind != Partial {
		need := int(math.Ceil(c.Needed))
		if need > r.GOMAXPROCS {
			r.Reason += fmt.Sprintf("; note: %.0f req/s needs about %.1f Ps of CPU", c.Rate, c.Needed)
		}
	}
	return r
}

func share(f float64) string {
	if f <= 0 {
		return "(not measured)"
	}
	return fmt.Sprintf("%.0f %%", 100*f)
}

// starved reports whether a level within the CPUs was starved by other
// processes (a level over the CPUs is starved by its own Ps).
func starved(levels []Level) bool {
	for _, l := range levels {
		if l.Limit == rundir.KindLimitCPUStarved && !l.OverCPUs {
			return true
		}
	}
	return false
}

func notes(levels []Level) []string {
	var out []string
	for _, l := range levels {
		n := 0
		for _, c := range l.Cells {
			if c.Ambiguous() {
				n++
			}
		}
		load := "rate(s)"
		if l.Closed {
			load = "user count(s)"
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s: %d %s failed the served rule while the generator was a material limit, and are not used for the knee", l.Label, n, load))
		}
		if !l.Saturated && l.Ceiling > 0 {
			out = append(out, fmt.Sprintf("%s served every load offered: its ceiling (%.0f req/s) is a lower bound", l.Label, l.Ceiling))
		}
		if l.Limit == rundir.KindLimitCPUStarved && !l.OverCPUs {
			out = append(out, fmt.Sprintf("%s was starved of CPU by other processes (%.2f of %d Ps busy, the machine's CPUs %s busy): its ceiling understates it, so repeat the sweep on a quiet machine before trusting the scaling", l.Label, l.BusyPs, l.GOMAXPROCS, share(l.MachineBusy)))
		}
		if l.OverCPUs {
			out = append(out, fmt.Sprintf("%s: more Ps than CPUs; its figures show the CPUs' limit, and it is recommended only when no value within the CPUs was tried", l.Label))
		}
		if o := l.OfferLower(); o != "" {
			out = append(out, o)
		} else if l.Knee == 0 && l.Ceiling > 0 {
			out = append(out, fmt.Sprintf("%s did not serve its lowest usable load: no knee", l.Label))
		}
	}
	return out
}

func median(g []Sample, f func(Sample) float64) float64 {
	v := make([]float64, len(g))
	for i, s := range g {
		v[i] = f(s)
	}
	sort.Float64s(v)
	return medianSorted(v)
}

func medianSorted(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}
