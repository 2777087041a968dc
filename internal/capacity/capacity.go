// Package capacity turns the measurements of a GOMAXPROCS sweep into the
// figures a person tunes with: the knee of each rate ladder, the ceiling, what
// Little's law predicts, whether throughput scales with the number of Ps
// (CPU-bound) or not (blocking-bound), how many Ps the load needs, and a
// recommended GOMAXPROCS with its reason.
//
// Everything here is a pure function of its input: no clock, no I/O.
package capacity

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// Sample is one measured phase: one offered rate, at one GOMAXPROCS, in one
// iteration (one target process).
type Sample struct {
	GOMAXPROCS  int
	Iteration   int
	OfferedRate float64 // requests per second the generator tried to send

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

	// GeneratorBound says the load generator, not the target, limited the
	// phase; such a phase is shown but never used for the knee. It still
	// counts for the ceiling when the generator sent (almost) every planned
	// request: a late generator delays requests but still offers them.
	GeneratorBound bool
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
	ConcurrencyLimit int
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
	return o
}

// Cell is the median over iterations of one (GOMAXPROCS, offered rate).
type Cell struct {
	GOMAXPROCS    int
	OfferedRate   float64
	Iterations    int // samples the medians were taken over (see Cells)
	OKPerSec      float64
	Answered      float64 // see Sample.Answered; OKPerSec when unknown
	P50, P99      time.Duration
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
	// GeneratorBound is true when every iteration of this cell was
	// generator-bound.
	GeneratorBound bool
	// Served: Answered >= ServedFraction x offered and p99 <= P99Factor x
	// the low-load p99. Always false for a generator-bound cell.
	Served bool
	// Knee marks the cell whose rate is its level's knee.
	Knee bool
}

// FullyOffered reports whether the generator sent at least 99 % of the
// requests it planned (always true when Planned is unknown).
func (c Cell) FullyOffered() bool {
	return c.Planned <= 0 || float64(c.NotSent) <= 0.01*float64(c.Planned)
}

// Level is everything measured at one GOMAXPROCS value.
type Level struct {
	GOMAXPROCS int
	Cells      []Cell // ascending offered rate

	// Knee is the highest offered rate served with every lower usable rate
	// also served; 0 when even the lowest rate was not served.
	Knee float64
	// Ceiling is the highest OKPerSec of any fully offered cell (see
	// Cell.FullyOffered).
	Ceiling float64
	// Saturated: some fully offered rate failed the served rule, so the
	// ceiling is the target's limit and not just the top of the ladder.
	Saturated bool

	LowLoadP50, LowLoadP99 time.Duration // at the lowest offered rate
	// LowLoadService is the service time (from the actual send) at the
	// lowest offered rate, LowLoadP50 when unknown: the target's own
	// latency, which Little's law and the CPU fraction use.
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
	// CPUPrediction is GOMAXPROCS / CPUPerRequest: the ceiling if the Ps
	// were the only limit; 0 when CPU was not measured.
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

// Thresholds of the limit classification.
const (
	busyPsShare     = 0.8  // of GOMAXPROCS, for rundir.KindLimitPs
	machineBusy     = 0.9  // share of the machine's CPUs, for rundir.KindLimitCPUStarved
	cpuBoundShare   = 0.3  // CPU fraction above which requests are CPU-heavy
	littleTolerance = 0.15 // ceiling vs Little's-law prediction
)

// classifyLimit fills l.Limit and l.LimitReason; it needs BusyPs,
// CPUFraction and LittlePrediction already set.
func classifyLimit(l *Level) {
	if !l.Saturated || l.Ceiling <= 0 {
		return
	}
	ps := float64(l.GOMAXPROCS)
	machineSaturated := l.MachineBusy >= machineBusy
	switch {
	case l.BusyPs <= 0:
		l.Limit = rundir.KindLimitElsewhere
		l.LimitReason = "the target's CPU was not measured, so the Ps cannot be judged"
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
	Rate          float64       // the highest offered rate
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

// Analysis is the result of Analyze.
type Analysis struct {
	Levels         []Level // ascending GOMAXPROCS
	Scaling        Scaling
	Carriers       Carriers
	Recommendation Recommendation
	// Notes are caveats a reader must see (generator-bound steps, a ladder
	// that never reached the ceiling).
	Notes []string
}

// Analyze groups samples by GOMAXPROCS and offered rate, takes medians over
// iterations and derives the knee, ceiling, scaling, carriers needed and the
// recommendation. It returns an error when samples is empty.
func Analyze(samples []Sample, opt Options) (Analysis, error) {
	if len(samples) == 0 {
		return Analysis{}, fmt.Errorf("capacity: no samples")
	}
	opt = opt.withDefaults()
	var a Analysis
	for _, gmp := range distinctGOMAXPROCS(samples) {
		a.Levels = append(a.Levels, analyzeLevel(gmp, samples, opt))
	}
	// A request's service time at low load does not depend on GOMAXPROCS;
	// on a busy machine it is inflated at some levels by waiting for a CPU.
	// The shortest one measured is the best estimate of the real one, so
	// the CPU fraction of every level uses it.
	service := time.Duration(0)
	for _, l := range a.Levels {
		if l.LowLoadService > 0 && (service == 0 || l.LowLoadService < service) {
			service = l.LowLoadService
		}
	}
	for i := range a.Levels {
		l := &a.Levels[i]
		if service > 0 {
			l.CPUFraction = float64(l.CPUPerRequest) / float64(service)
		}
		classifyLimit(l)
	}
	a.Scaling = classify(a.Levels)
	a.Carriers = carriersNeeded(a.Levels)
	a.Recommendation = recommend(a.Levels, a.Scaling, a.Carriers, opt)
	a.Notes = notes(a.Levels)
	return a, nil
}

func distinctGOMAXPROCS(samples []Sample) []int {
	seen := map[int]bool{}
	var out []int
	for _, s := range samples {
		if !seen[s.GOMAXPROCS] {
			seen[s.GOMAXPROCS] = true
			out = append(out, s.GOMAXPROCS)
		}
	}
	sort.Ints(out)
	return out
}

// Cells returns the per-(GOMAXPROCS, rate) medians, sorted by GOMAXPROCS then
// rate, without the served/knee judgement. The medians are taken over the
// iterations that were not generator-bound, when there is one; a cell is
// generator-bound only when every iteration was.
func Cells(samples []Sample) []Cell {
	type key struct {
		gmp  int
		rate float64
	}
	groups := map[key][]Sample{}
	var keys []key
	for _, s := range samples {
		k := key{s.GOMAXPROCS, s.OfferedRate}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].gmp != keys[j].gmp {
			return keys[i].gmp < keys[j].gmp
		}
		return keys[i].rate < keys[j].rate
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
		c := Cell{GOMAXPROCS: k.gmp, OfferedRate: k.rate, Iterations: len(g), GeneratorBound: len(kept) == 0}
		c.OKPerSec = median(g, func(s Sample) float64 { return s.OKPerSec })
		c.Answered = median(g, func(s Sample) float64 {
			if s.Answered > 0 {
				return s.Answered
			}
			return s.OKPerSec
		})
		c.P50 = time.Duration(median(g, func(s Sample) float64 { return float64(s.P50) }))
		c.P99 = time.Duration(median(g, func(s Sample) float64 { return float64(s.P99) }))
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
		cells = append(cells, c)
	}
	return cells
}

func analyzeLevel(gmp int, samples []Sample, opt Options) Level {
	var mine []Sample
	for _, s := range samples {
		if s.GOMAXPROCS == gmp {
			mine = append(mine, s)
		}
	}
	l := Level{GOMAXPROCS: gmp, Cells: Cells(mine)}

	// The low-load latency is the lowest rate's, even when that cell was
	// generator-bound: a late generator only adds its lag to the latency
	// (which is measured from the intended send time), making the p99
	// rule more lenient, never stricter; a higher, overloaded rate would
	// make the rule meaningless.
	if len(l.Cells) == 0 {
		return l
	}
	l.LowLoadP50, l.LowLoadP99 = l.Cells[0].P50, l.Cells[0].P99
	l.LowLoadService = l.Cells[0].ServiceP50
	if l.LowLoadService <= 0 {
		l.LowLoadService = l.LowLoadP50
	}

	kneeAt, ceilingAt := -1, -1
	broken := false
	var cpuServed, cpuAll []float64
	for i := range l.Cells {
		c := &l.Cells[i]
		rule := c.Answered >= opt.ServedFraction*c.OfferedRate &&
			float64(c.P99) <= opt.P99Factor*float64(l.LowLoadP99)
		c.Served = rule && !c.GeneratorBound
		if c.FullyOffered() {
			if !rule {
				l.Saturated = true
			}
			if ceilingAt < 0 || c.OKPerSec > l.Ceiling {
				l.Ceiling, ceilingAt = c.OKPerSec, i
			}
		}
		if !c.GeneratorBound {
			if c.Served && !broken {
				kneeAt = i
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
		l.Knee = l.Cells[kneeAt].OfferedRate
	}
	if len(cpu) > 0 {
		sort.Float64s(cpu)
		l.CPUPerRequest = time.Duration(medianSorted(cpu))
	}
	if marginal > 0 {
		l.CPUPerRequest = marginal
	}
	if l.LowLoadService > 0 {
		l.CPUFraction = float64(l.CPUPerRequest) / float64(l.LowLoadService)
		l.InService = l.Ceiling * l.LowLoadService.Seconds()
		if opt.ConcurrencyLimit > 0 {
			l.LittlePrediction = float64(opt.ConcurrencyLimit) / l.LowLoadService.Seconds()
		}
	}
	if l.CPUPerRequest > 0 {
		l.BusyPs = l.Ceiling * l.CPUPerRequest.Seconds()
		l.CPUPrediction = float64(gmp) / l.CPUPerRequest.Seconds()
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
// cells answered at 95 % or more, and returns cost; 0 when it cannot.
func marginalCPU(cells []Cell) time.Duration {
	var xs, ys []float64
	for _, c := range cells {
		if c.CPUCores > 0 && c.OKPerSec > 0 && c.Answered >= 0.95*c.OfferedRate {
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

func classify(levels []Level) Scaling {
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
		if l.Limit == rundir.KindLimitCPUStarved {
			s.Kind = ScalingUnknown
			s.Reason = fmt.Sprintf("GOMAXPROCS %d was starved of CPU by other processes (%.2f of %d Ps busy, the machine's CPUs %s busy), so the ceilings (%.2fx from %d to %d) say nothing about scaling: repeat on a quiet machine",
				l.GOMAXPROCS, l.BusyPs, l.GOMAXPROCS, share(l.MachineBusy), s.Ratio, a.GOMAXPROCS, b.GOMAXPROCS)
			return s
		}
	}
	if !a.Saturated {
		s.Kind = ScalingUnknown
		s.Reason = fmt.Sprintf("GOMAXPROCS %d served every offered rate, so the ladder never reached a ceiling: offer higher --rates", a.GOMAXPROCS)
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
			if !cell.GeneratorBound {
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

func recommend(levels []Level, s Scaling, c Carriers, opt Options) Recommendation {
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

func starved(levels []Level) bool {
	for _, l := range levels {
		if l.Limit == rundir.KindLimitCPUStarved {
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
			if c.GeneratorBound {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("GOMAXPROCS %d: %d rate(s) were generator-bound and are not used for the knee", l.GOMAXPROCS, n))
		}
		if !l.Saturated && l.Ceiling > 0 {
			out = append(out, fmt.Sprintf("GOMAXPROCS %d served every rate: its ceiling (%.0f req/s) is a lower bound", l.GOMAXPROCS, l.Ceiling))
		}
		if l.Limit == rundir.KindLimitCPUStarved {
			out = append(out, fmt.Sprintf("GOMAXPROCS %d was starved of CPU by other processes (%.2f of %d Ps busy, the machine's CPUs %s busy): its ceiling understates it, so repeat the sweep on a quiet machine before trusting the scaling", l.GOMAXPROCS, l.BusyPs, l.GOMAXPROCS, share(l.MachineBusy)))
		}
		if l.Knee == 0 && l.Ceiling > 0 {
			out = append(out, fmt.Sprintf("GOMAXPROCS %d did not serve its lowest usable rate: no knee", l.GOMAXPROCS))
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
