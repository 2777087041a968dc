package capacity

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

// QuotaKind names what a CPU-limit finding says.
type QuotaKind string

// The CPU-limit findings, in the order Quotas ranks them.
const (
	// QuotaTooTight: the load offered needs more CPU (rate x CPU per
	// request) than the quota gives.
	QuotaTooTight QuotaKind = "limit-too-tight"
	// QuotaThrottled: a line ran out of quota in a material share of its
	// 100 ms periods, and the p99 it cost against a line that did not.
	QuotaThrottled QuotaKind = "throttled"
	// QuotaBlindSpot: the limit is on a parent cgroup, which the runtime
	// does not read (golang/go#81180): GOMAXPROCS auto came from the CPUs.
	QuotaBlindSpot QuotaKind = "parent-limit-blind-spot"
	// QuotaAboveLimit: GOMAXPROCS, as set or as the runtime chose it,
	// above the limit: its Ps can spend the period's quota early.
	QuotaAboveLimit QuotaKind = "gomaxprocs-above-limit"
	// QuotaBlockingLoss: mostly-blocking work whose throughput fell at a
	// lower GOMAXPROCS under the same limit.
	QuotaBlockingLoss QuotaKind = "blocking-lost-throughput"
)

var quotaRank = map[QuotaKind]int{QuotaTooTight: 0, QuotaThrottled: 1, QuotaBlindSpot: 2, QuotaAboveLimit: 3, QuotaBlockingLoss: 4}

// Thresholds of the CPU-limit findings.
const (
	throttledShare = 0.10 // of the periods, for QuotaThrottled
	blockingShare  = 0.10 // CPU fraction under which work is mostly blocking
)

// QuotaFinding is one verdict about a CPU limit, with its figures.
type QuotaFinding struct {
	Kind  QuotaKind
	Line  rundir.Line
	Label string
	// GOMAXPROCS is the line's, as the runtime chose it for auto.
	GOMAXPROCS int
	Limit      float64 // CPUs
	// Load is the offered rate (or users) the figures are at; 0 when the
	// finding is about the line as a whole.
	Load float64
	// Throttled is the share of the quota's periods throttled (at Load,
	// or the line's most).
	Throttled float64
	// P99 is the line's p99 at Load; BaseP99 the p99 it is compared with,
	// Base says whose ("" when there is none).
	P99, BaseP99 time.Duration
	Base         string
	// Needed is the CPUs the load needs (rate x CPU per request).
	Needed float64
	// Ceiling and BaseCeiling are 2xx/s ceilings compared.
	Ceiling, BaseCeiling float64
	// Detail says it in a sentence, with the figures.
	Detail string
}

// LimitAdvice is the recommended GOMAXPROCS under one CPU limit.
type LimitAdvice struct {
	Limit float64
	// Family names the model and fixture flags when the sweep varies them.
	Family string
	// GOMAXPROCS is the recommendation, 0 when none; Auto what the
	// runtime chose on the auto line (0 when there was none).
	GOMAXPROCS, Auto int
	Reason           string
}

// Sizing is the smallest CPU limit that carried one load within the
// target p99.
type Sizing struct {
	Family string
	Load   float64
	// Limit is 0 when no limit tried carried it; Label, GOMAXPROCS (as
	// the runtime chose it for auto), P99 and OKPerSec are the line's that
	// did (the lowest p99 tried otherwise). A GOMAXPROCS set is preferred
	// to auto at equal p99.
	Limit      float64
	Label      string
	GOMAXPROCS int
	P99        time.Duration
	OKPerSec   float64
}

// Quotas is what a sweep with CPU limits says about them.
type Quotas struct {
	// Findings are ranked: a limit too tight for the load first, then
	// throttling by the p99 it cost, the parent-limit blind spot,
	// GOMAXPROCS above the limit, mostly-blocking work that lost
	// throughput.
	Findings []QuotaFinding
	// Advice is the GOMAXPROCS for each limit (per family), ascending.
	Advice []LimitAdvice
	// TargetP99 and Sizing: with Options.TargetP99, the smallest limit
	// carrying each offered load within it (open model).
	TargetP99 time.Duration
	Sizing    []Sizing
}

// limitGroup is the lines of one family under one CPU limit.
type limitGroup struct {
	family string // the model and flag values ("" when not swept)
	label  string // the family's, with the limit: "pool, limit 1 CPU"
	limit  float64
	levels []Level // ascending GOMAXPROCS, auto first
}

// quotas judges the CPU limits of an analysis whose levels are final.
func quotas(a Analysis, opt Options) Quotas {
	q := Quotas{TargetP99: opt.TargetP99}
	var groups []limitGroup
	for _, f := range a.Families {
		if f.CPULimit <= 0 {
			continue
		}
		groups = append(groups, limitGroup{family: familyLabel(familyKey{Model: f.Model, Set: f.Set}), label: f.Label, limit: f.CPULimit, levels: f.Levels})
	}
	if len(groups) == 0 {
		return q
	}
	slices.SortStableFunc(groups, func(a, b limitGroup) int {
		return cmp.Or(cmp.Compare(a.family, b.family), cmp.Compare(a.limit, b.limit))
	})
	for _, g := range groups {
		q.Findings = append(q.Findings, tooTight(g)...)
		for _, l := range g.levels {
			if f, ok := throttled(l, g); ok {
				q.Findings = append(q.Findings, f)
			}
			if f, ok := blindSpot(l, opt); ok {
				q.Findings = append(q.Findings, f)
			} else if f, ok := aboveLimit(l, opt); ok {
				q.Findings = append(q.Findings, f)
			}
		}
		q.Findings = append(q.Findings, blockingLoss(g)...)
		q.Advice = append(q.Advice, advise(g, opt))
	}
	slices.SortStableFunc(q.Findings, func(a, b QuotaFinding) int {
		return cmp.Or(cmp.Compare(quotaRank[a.Kind], quotaRank[b.Kind]),
			cmp.Compare(b.P99-b.BaseP99, a.P99-a.BaseP99), cmp.Compare(b.Throttled, a.Throttled))
	})
	if opt.TargetP99 > 0 {
		q.Sizing = size(groups, opt.TargetP99)
	}
	return q
}

// cpuAt is a group's CPU per request at offered rate x: the median over
// its lines of the CPU per 2xx measured there (it falls with the load on
// servers with a fixed idle cost, so the rate judged is the rate it was
// measured at); 0 when not measured.
func (g limitGroup) cpuAt(x float64) time.Duration {
	var v []float64
	for _, l := range g.levels {
		for _, c := range l.Cells {
			if c.X() == x && c.CPUPerRequest > 0 {
				v = append(v, float64(c.CPUPerRequest))
			}
		}
	}
	slices.Sort(v)
	return time.Duration(medianSorted(v))
}

// tooTight finds the highest offered rate whose CPU (rate x CPU per
// request) exceeds the quota.
func tooTight(g limitGroup) []QuotaFinding {
	if len(g.levels) == 0 || g.levels[0].Closed {
		return nil
	}
	top, best := 0.0, Level{}
	for _, l := range g.levels {
		for _, c := range l.Cells {
			top = math.Max(top, c.OfferedRate)
		}
		if l.Ceiling > best.Ceiling {
			best = l
		}
	}
	cpu := g.cpuAt(top)
	need := top * cpu.Seconds()
	if cpu <= 0 || need <= g.limit {
		return nil
	}
	fits := g.limit / cpu.Seconds()
	f := QuotaFinding{Kind: QuotaTooTight, Line: rundir.Line{CPULimit: g.limit}, Label: g.label, Limit: g.limit, Load: top, Needed: need, Ceiling: best.Ceiling}
	f.Detail = fmt.Sprintf("%s is too tight for %s: at %s of CPU per request the load needs %.2f CPUs (rate x CPU per request), the quota gives %g, so at most about %.0f req/s fit; the best line, %s, reached %.0f 2xx/s",
		g.label, fmtLoad(top, false), fmtCPU(cpu), need, g.limit, fits, best.Label, best.Ceiling)
	return []QuotaFinding{f}
}

// throttled finds a line's most telling throttled load: the highest load
// the quota carried (99 % of the offered rate answered 2xx, and 2xx/s
// within 5 % of it while the phase ran; beyond it the
// latency is a queue's, and QuotaTooTight says why) throttled in at least
// 10 % of its periods. The p99 it cost is against the least throttled
// sibling at the same load, else the line's own lowest load.
func throttled(l Level, g limitGroup) (QuotaFinding, bool) {
	pick := -1
	for i, c := range l.Cells {
		carried := l.Closed || (c.Answered >= 0.99*c.OfferedRate && load.Tracks(c.OKPerSec, c.OfferedRate))
		if c.Quota && c.Throttled >= throttledShare && c.FullyOffered() && carried {
			pick = i // the highest: cells ascend
		}
	}
	if pick < 0 {
		return QuotaFinding{}, false
	}
	c := l.Cells[pick]
	f := QuotaFinding{Kind: QuotaThrottled, Line: l.Line, Label: l.Label, GOMAXPROCS: l.GOMAXPROCS, Limit: g.limit, Load: c.X(), Throttled: c.Throttled, P99: c.P99}
	var base *Cell
	for _, s := range g.levels {
		if s.Line == l.Line {
			continue
		}
		for i := range s.Cells {
			o := &s.Cells[i]
			if o.X() == c.X() && o.Quota && o.Throttled <= c.Throttled/2 && o.FullyOffered() && (base == nil || o.P99 < base.P99) {
				base, f.Base = o, s.Label
			}
		}
	}
	if base == nil && pick > 0 && l.Cells[0].Quota && l.Cells[0].Throttled <= c.Throttled/2 {
		base, f.Base = &l.Cells[0], fmt.Sprintf("its own p99 at %s", fmtX(l.Cells[0]))
	}
	d := fmt.Sprintf("%s was throttled in %.0f %% of its 100 ms periods at %s (its threads waited %.2f s in all, the quota %.0f %% used)",
		l.Label, 100*c.Throttled, fmtX(c), c.ThrottledS, 100*c.QuotaUse)
	if base != nil {
		f.BaseP99 = base.P99
		cost := c.P99 - base.P99
		if cost > 0 {
			d += fmt.Sprintf(": its p99 was %s against %s for %s (throttled in %.0f %%), so throttling cost %s of p99",
				fmtMS(c.P99), fmtMS(base.P99), f.Base, 100*base.Throttled, fmtMS(cost))
			if cost >= 50*time.Millisecond {
				d += fmt.Sprintf(", %.1f periods of 100 ms", cost.Seconds()/0.1)
			}
		} else {
			d += fmt.Sprintf(", yet its p99 (%s) was no worse than %s's %s (throttled in %.0f %%): no p99 cost measured at this load",
				fmtMS(c.P99), f.Base, fmtMS(base.P99), 100*base.Throttled)
		}
	} else {
		d += fmt.Sprintf(": its p99 was %s; no line under this limit ran the load throttled half as often to tell the cost (a throttled request waits up to the rest of the 100 ms period)", fmtMS(c.P99))
	}
	f.Detail = d
	return f, true
}

// aboveLimit says when a line's GOMAXPROCS exceeds its limit.
func aboveLimit(l Level, opt Options) (QuotaFinding, bool) {
	limit := l.Line.CPULimit
	if l.GOMAXPROCS <= 1 || float64(l.GOMAXPROCS) <= limit { // 1 is the least there is
		return QuotaFinding{}, false
	}
	most := mostThrottled(l)
	f := QuotaFinding{Kind: QuotaAboveLimit, Line: l.Line, Label: l.Label, GOMAXPROCS: l.GOMAXPROCS, Limit: limit, Throttled: most}
	d := fmt.Sprintf("%s: GOMAXPROCS %d is above the %g-CPU limit, so its %d Ps can spend the period's %.0f ms of quota in %.0f ms and then every goroutine waits for the next period",
		l.Label, l.GOMAXPROCS, limit, l.GOMAXPROCS, 100*limit, 100*limit/float64(l.GOMAXPROCS))
	if l.Line.GOMAXPROCS == 0 && opt.CPUs > 0 && l.GOMAXPROCS == rundir.DefaultGOMAXPROCS(opt.CPUs, limit) {
		d += fmt.Sprintf(" (the runtime's own choice: max(2, ceil(%g)), at most the %d CPUs)", limit, opt.CPUs)
	} else if fit := int(math.Ceil(limit)); l.GOMAXPROCS == fit {
		d += fmt.Sprintf(" (ceil(%g) = %d rounds the limit up, as the runtime's default does)", limit, fit)
	}
	d += fmt.Sprintf("; throttled in up to %.0f %% of periods in this sweep", 100*most)
	f.Detail = d
	return f, true
}

// blindSpot says that an auto line under a parent-only limit took its
// GOMAXPROCS from the CPUs.
func blindSpot(l Level, opt Options) (QuotaFinding, bool) {
	if !opt.LimitOnParent || l.Line.GOMAXPROCS != 0 || l.GOMAXPROCS <= 0 {
		return QuotaFinding{}, false
	}
	limit := l.Line.CPULimit
	want := rundir.DefaultGOMAXPROCS(max(opt.CPUs, l.GOMAXPROCS), limit)
	most := mostThrottled(l)
	f := QuotaFinding{Kind: QuotaBlindSpot, Line: l.Line, Label: l.Label, GOMAXPROCS: l.GOMAXPROCS, Limit: limit, Throttled: most}
	d := fmt.Sprintf("%s: the %g-CPU limit was on the parent cgroup, not the target's own, and the Go runtime reads only its own cgroup's limit (golang/go#81180): it chose GOMAXPROCS %d from the CPUs; had it seen the limit it would have chosen %d (max(2, ceil(%g)), at most the CPUs)",
		l.Label, limit, l.GOMAXPROCS, want, limit)
	if want == l.GOMAXPROCS {
		d += ", the same number here, since the runtime never goes below 2"
	}
	if float64(l.GOMAXPROCS) > limit {
		d += fmt.Sprintf("; either way it is above the limit, and it was throttled in up to %.0f %% of periods", 100*most)
	}
	f.Detail = d
	return f, true
}

func mostThrottled(l Level) float64 {
	most := 0.0
	for _, c := range l.Cells {
		most = math.Max(most, c.Throttled)
	}
	return most
}

// blockingLoss finds mostly-blocking work that served less at a lower
// GOMAXPROCS than at a higher one under the same limit.
func blockingLoss(g limitGroup) []QuotaFinding {
	var set []Level
	for _, l := range g.levels {
		if l.Line.GOMAXPROCS > 0 && l.Saturated && l.Ceiling > 0 && l.CPUFraction > 0 {
			set = append(set, l)
		}
	}
	if len(set) < 2 {
		return nil
	}
	top := set[len(set)-1]
	for _, l := range set {
		if l.Ceiling > top.Ceiling {
			top = l
		}
	}
	var out []QuotaFinding
	for _, l := range set {
		if l.GOMAXPROCS >= top.GOMAXPROCS || l.CPUFraction >= blockingShare || l.Ceiling >= (1-littleTolerance)*top.Ceiling {
			continue
		}
		f := QuotaFinding{Kind: QuotaBlockingLoss, Line: l.Line, Label: l.Label, GOMAXPROCS: l.GOMAXPROCS, Limit: g.limit, Ceiling: l.Ceiling, BaseCeiling: top.Ceiling, Base: top.Label}
		f.Detail = fmt.Sprintf("%s: the work is mostly blocking (requests spend %.0f %% of their service time on CPU), yet its ceiling was %.0f 2xx/s against %.0f for %s under the same limit: the lower GOMAXPROCS cost %.0f %% of throughput with %.2f cores of the %g-CPU quota used, so it was not the quota but the Ps (goroutines blocked while holding a thread, or too few Ps to overlap the waits)",
			l.Label, 100*l.CPUFraction, l.Ceiling, top.Ceiling, top.Label, 100*(1-l.Ceiling/top.Ceiling), l.BusyPs, g.limit)
		out = append(out, f)
	}
	return out
}

// advise picks the GOMAXPROCS for one limit: among the values set (auto
// only when none was), those within 5 % of the best ceiling; of those the
// one that served the highest load within the p99 rule (its knee), then
// the lower p99 at that knee (by more than 10 %), then the smallest. When
// every candidate started over capacity (Level.StartsOver) it picks none
// and says to offer lower rates.
func advise(g limitGroup, opt Options) LimitAdvice {
	adv := LimitAdvice{Limit: g.limit, Family: g.family}
	var cands []Level
	for _, l := range g.levels {
		if l.Line.GOMAXPROCS == 0 {
			adv.Auto = l.GOMAXPROCS
		} else if !l.OverCPUs {
			cands = append(cands, l)
		}
	}
	if len(cands) == 0 {
		cands = g.levels
	}
	if allStartOver(cands) {
		adv.Reason = offerLowerReason
		return adv
	}
	best := 0.0
	for _, l := range cands {
		best = math.Max(best, l.Ceiling)
	}
	if best <= 0 {
		adv.Reason = "no line under this limit had a usable step"
		return adv
	}
	near := slices.DeleteFunc(slices.Clone(cands), func(l Level) bool { return l.Ceiling < (1-opt.PlateauTolerance)*best })
	pick := near[0]
	for _, l := range near[1:] {
		if l.Knee > pick.Knee || (l.Knee == pick.Knee && l.Knee > 0 && p99At(l, l.Knee) < time.Duration(0.9*float64(p99At(pick, pick.Knee)))) {
			pick = l
		}
	}
	adv.GOMAXPROCS = pick.GOMAXPROCS
	switch {
	case len(near) == 1:
		adv.Reason = fmt.Sprintf("the highest ceiling under %s (%.0f 2xx/s)", rundir.CPULimitLabel(g.limit), pick.Ceiling)
	case pick.Knee <= 0:
		adv.Reason = fmt.Sprintf("the smallest value within %.0f %% of the best ceiling (%.0f of %.0f 2xx/s); no line served its lowest load", 100*opt.PlateauTolerance, pick.Ceiling, best)
	default:
		adv.Reason = fmt.Sprintf("ceilings within %.0f %% of each other (%.0f 2xx/s at GOMAXPROCS %d); it served up to %s within the p99 rule (p99 %s, throttled in %.0f %% of periods)",
			100*opt.PlateauTolerance, pick.Ceiling, pick.GOMAXPROCS, fmtLoad(pick.Knee, pick.Closed), fmtMS(p99At(pick, pick.Knee)), 100*max(0, throttledAt(pick, pick.Knee)))
		for _, l := range near {
			if l.GOMAXPROCS == pick.GOMAXPROCS {
				continue
			}
			if l.Knee < pick.Knee {
				adv.Reason += fmt.Sprintf("; GOMAXPROCS %d only up to %s", l.GOMAXPROCS, fmtLoad(l.Knee, l.Closed))
				if th := throttledAt(l, pick.Knee); th >= 0 {
					adv.Reason += fmt.Sprintf(" (at %s: p99 %s, throttled in %.0f %%)", fmtLoad(pick.Knee, l.Closed), fmtMS(p99At(l, pick.Knee)), 100*th)
				}
			} else {
				adv.Reason += fmt.Sprintf("; GOMAXPROCS %d as far, p99 %s there", l.GOMAXPROCS, fmtMS(p99At(l, l.Knee)))
			}
		}
	}
	if adv.Auto > 0 && adv.Auto != adv.GOMAXPROCS {
		adv.Reason += fmt.Sprintf("; the runtime's default here is %d", adv.Auto)
	} else if adv.Auto > 0 {
		adv.Reason += "; the runtime's default agrees"
	}
	return adv
}

func p99At(l Level, x float64) time.Duration {
	for _, c := range l.Cells {
		if c.X() == x {
			return c.P99
		}
	}
	return 0
}

func throttledAt(l Level, x float64) float64 {
	for _, c := range l.Cells {
		if c.X() == x && c.Quota {
			return c.Throttled
		}
	}
	return -1
}

// size finds, per family and offered rate, the smallest limit with a line
// that answered 99 % of the rate within the target p99.
func size(groups []limitGroup, target time.Duration) []Sizing {
	type key struct {
		family string
		load   float64
	}
	found := map[key]*Sizing{}
	var keys []key
	for _, g := range groups { // ascending limit within a family
		// The values set first, auto (0) last.
		levels := append(slices.Clone(g.levels[1:]), g.levels[0])
		if g.levels[0].Line.GOMAXPROCS != 0 {
			levels = g.levels
		}
		for _, l := range levels {
			if l.Closed {
				continue
			}
			for _, c := range l.Cells {
				k := key{g.family, c.OfferedRate}
				s, ok := found[k]
				if !ok {
					s = &Sizing{Family: g.family, Load: c.OfferedRate}
					found[k], keys = s, append(keys, k)
				}
				ok = c.Answered >= 0.99*c.OfferedRate && c.P99 > 0 && c.P99 <= target && c.FullyOffered()
				switch {
				case s.Limit > 0 && (g.limit > s.Limit || c.P99 >= s.P99):
				case ok:
					s.Limit, s.Label, s.GOMAXPROCS, s.P99, s.OKPerSec = g.limit, l.Label, l.GOMAXPROCS, c.P99, c.OKPerSec
				case s.Limit == 0 && (s.P99 == 0 || c.P99 < s.P99):
					s.Label, s.GOMAXPROCS, s.P99, s.OKPerSec = l.Label, l.GOMAXPROCS, c.P99, c.OKPerSec
				}
			}
		}
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.family, b.family), cmp.Compare(a.load, b.load)) })
	out := make([]Sizing, 0, len(keys))
	for _, k := range keys {
		out = append(out, *found[k])
	}
	return out
}

// fmtX is a cell's load with its unit: "450 req/s", "50 users".
func fmtX(c Cell) string { return fmtLoad(c.X(), c.Users > 0) }

// fmtLoad is load x with its unit, users for the closed model.
func fmtLoad(x float64, closed bool) string {
	if closed {
		return fmt.Sprintf("%g users", x)
	}
	return fmt.Sprintf("%g req/s", x)
}

func fmtMS(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms >= 100 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.3g ms", ms)
}

func fmtCPU(d time.Duration) string {
	return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
}
