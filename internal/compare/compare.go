// Package compare puts two sides of measurements side by side, each side
// one or more runs (or sweeps, or traces) of one configuration, and says
// figure by figure whether B differs from A, in benchstat's manner: the
// median of each side with its confidence interval, the change between
// medians, and a Mann-Whitney U test over the per-run figures ("~" when the
// change is not significant or there are too few runs to tell).
//
// The statistics are golang.org/x/perf/benchmath's, the library benchstat
// is built on, so a verdict here means what it means there.
package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/perf/benchmath"

	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/figures"
	"github.com/schedscope/schedscope/internal/rundir"
)

// Options tunes a comparison. The zero value means the defaults.
type Options struct {
	// Alpha is the significance level of the U test; 0 means 0.05, as
	// benchstat's.
	Alpha float64
	// Confidence is the level of the medians' confidence intervals; 0
	// means 0.95.
	Confidence float64
	// Force compares sides whose load differs (another request, other
	// offered rates), stating the differences at the top, instead of
	// refusing.
	Force bool
	// LabelA and LabelB name the sides; empty: from their sets.
	LabelA, LabelB string
}

func (o Options) withDefaults() Options {
	if o.Alpha <= 0 {
		o.Alpha = benchmath.DefaultThresholds.CompareAlpha
	}
	if o.Confidence <= 0 {
		o.Confidence = 0.95
	}
	return o
}

// Side is one side of a comparison: its sets (one per run) and their
// description.
type Side struct {
	Label string `json:"label"`
	// Paths are the sets' paths, in order.
	Paths []string     `json:"paths"`
	Kind  figures.Kind `json:"kind"`
	// Target is what served the side (its command), when known.
	Target string `json:"target,omitempty"`
	// Warnings are the sets' warnings.
	Warnings []string `json:"warnings,omitempty"`
	// HLogMismatches are the sets' steady phases whose counts in load.hlog
	// and results.json disagree (figures.Set.HLogMismatches; each is a
	// warning too).
	HLogMismatches []rundir.HLogMismatch `json:"hlog_mismatches,omitempty"`
	sets           []*figures.Set        // the measurements
	latency        map[string]*hdrhistogram.Histogram
	through        [][]figures.Point
}

// N is how many sets (runs) the side has.
func (s *Side) N() int { return len(s.sets) }

// Comparison is two sides compared figure by figure.
type Comparison struct {
	A     Side    `json:"a"`
	B     Side    `json:"b"`
	Alpha float64 `json:"alpha"`
	// Confidence is the level of the medians' intervals.
	Confidence float64 `json:"confidence"`
	// Differences are how the sides' load differs, when Force compared
	// them anyway; Notes what differs without spoiling the comparison (the
	// targets' addresses).
	Differences []string `json:"differences,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	Groups      []Group  `json:"groups"`
	// Footnotes explain marks in the table (why an interval is ±∞).
	Footnotes []string `json:"footnotes,omitempty"`
}

// Group is one group's rows: a phase, the trace, the diagnosis, a level.
type Group struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	Gate  bool   `json:"gate"`
	Rows  []Row  `json:"rows"`
}

// Row is one figure compared.
type Row struct {
	Key    string         `json:"key"`
	Metric string         `json:"metric,omitempty"`
	Label  string         `json:"label"`
	Unit   cond.Unit      `json:"unit"`
	Better figures.Better `json:"better"`
	Note   string         `json:"note,omitempty"`
	A      Stat           `json:"a"`
	B      Stat           `json:"b"`
	// AShare and BShare are the figure as a share of its whole (errors of
	// completed requests), when it has one.
	AShare *Stat `json:"a_share,omitempty"`
	BShare *Stat `json:"b_share,omitempty"`
	// DeltaPct is B's median against A's, in percent; HasDelta is false
	// when A's median is 0 (or a side has no figure).
	DeltaPct float64 `json:"delta_pct"`
	HasDelta bool    `json:"has_delta"`
	// Tested: both sides have at least two runs, so the U test ran; P is
	// its p-value, Significant whether P <= Alpha.
	Tested      bool    `json:"tested"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
	// Need is how many runs per side the U test needs before any change
	// can be significant at Alpha (0 when the sides have enough);
	// Estimate, for a change that was not significant, roughly how many
	// runs per side would tell a change this large from the noise (80 %
	// power, a normal approximation; 0 when it cannot be estimated).
	Need     int `json:"need_runs,omitempty"`
	Estimate int `json:"estimate_runs,omitempty"`
	// Verdict is the row's change in benchstat's notation: "~" or
	// "+12.34%"; Judgement says "better" or "worse" for a significant
	// change of a figure with a direction.
	Verdict   string `json:"verdict"`
	Judgement string `json:"judgement,omitempty"`
}

// Stat is one side's figure over its runs.
type Stat struct {
	// Values are the per-run figures, in run order; Center their median
	// and Lo..Hi its confidence interval (infinite with too few runs).
	Values []float64 `json:"values"`
	Center float64   `json:"median"`
	Lo     float64   `json:"-"`
	Hi     float64   `json:"-"`
	// Interval is [Lo, Hi] when finite (JSON has no infinity), else nil.
	Interval []float64 `json:"interval,omitempty"`
	// Range is the interval as benchstat prints it: "3%", "∞".
	Range string `json:"range"`
}

// Present reports whether the side had this figure at all.
func (s Stat) Present() bool { return len(s.Values) > 0 }

// Compare compares side A (a) with side B (b). Each side's sets must be of
// one kind and one load; the sides must have the same load (request,
// offered rates, durations) unless opt.Force, which states the differences.
func Compare(a, b []*figures.Set, opt Options) (*Comparison, error) {
	opt = opt.withDefaults()
	if len(a) == 0 || len(b) == 0 {
		return nil, errors.New("compare: each side needs at least one run, sweep or trace")
	}
	c := &Comparison{Alpha: opt.Alpha, Confidence: opt.Confidence}
	diffs, notes, err := checkComparable(a, b)
	if err != nil {
		return nil, err
	}
	if len(diffs) > 0 && !opt.Force {
		return nil, fmt.Errorf("cannot compare: %s (--force compares anyway, stating the differences)", diffs[0])
	}
	c.Differences, c.Notes = diffs, notes
	c.A, c.B = newSide(a, opt.LabelA), newSide(b, opt.LabelB)
	if c.A.Label == c.B.Label {
		c.A.Label, c.B.Label = c.A.Label+" (A)", c.B.Label+" (B)"
	}
	for _, key := range groupKeys(a, b) {
		g := Group{Key: key}
		for _, fk := range figureKeys(key, a, b) {
			row, ok := compareRow(key, fk, a, b, opt)
			if !ok {
				continue
			}
			g.Rows = append(g.Rows, row)
		}
		if len(g.Rows) == 0 {
			continue
		}
		g.Title, g.Gate = groupTitle(key, a, b)
		c.Groups = append(c.Groups, g)
	}
	c.Footnotes = footnotes(c)
	return c, nil
}

// newSide describes sets as a side.
func newSide(sets []*figures.Set, label string) Side {
	s := Side{Label: label, Kind: sets[0].Kind, Target: sets[0].Identity.Target, sets: sets, latency: map[string]*hdrhistogram.Histogram{}}
	if s.Label == "" {
		s.Label = sets[0].Label
	}
	for _, set := range sets {
		s.Paths = append(s.Paths, set.Path)
		s.Warnings = append(s.Warnings, set.Warnings...)
		s.HLogMismatches = append(s.HLogMismatches, set.HLogMismatches...)
		for k, h := range set.Latency {
			if s.latency[k] == nil {
				s.latency[k] = hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
			}
			s.latency[k].Merge(h)
		}
		s.through = append(s.through, set.Throughput)
	}
	return s
}

// groupKeys lists the groups of every set, A's order first.
func groupKeys(a, b []*figures.Set) []string {
	var keys []string
	for _, s := range slices.Concat(a, b) {
		for _, g := range s.Groups {
			if !slices.Contains(keys, g.Key) {
				keys = append(keys, g.Key)
			}
		}
	}
	return keys
}

// figureKeys lists the figures of group key in every set, A's order first.
func figureKeys(key string, a, b []*figures.Set) []string {
	var keys []string
	for _, s := range slices.Concat(a, b) {
		if g := s.Group(key); g != nil {
			for _, f := range g.Figures {
				if !slices.Contains(keys, f.Key) {
					keys = append(keys, f.Key)
				}
			}
		}
	}
	return keys
}

// groupTitle is the first set's title of the group, and whether it is gated.
func groupTitle(key string, a, b []*figures.Set) (string, bool) {
	for _, s := range slices.Concat(a, b) {
		if g := s.Group(key); g != nil {
			return g.Title, g.Gate
		}
	}
	return key, false
}

// compareRow compares figure fk of group key; ok is false when no set has
// it.
func compareRow(key, fk string, a, b []*figures.Set, opt Options) (Row, bool) {
	var row Row
	values := func(sets []*figures.Set, share bool) []float64 {
		var vs []float64
		for _, s := range sets {
			g := s.Group(key)
			if g == nil {
				continue
			}
			f := g.Find(fk)
			switch {
			case f == nil && !share && strings.HasPrefix(fk, "cause:"):
				vs = append(vs, 0) // a diagnosis without this cause: none of its time
			case f == nil:
			case share && f.HasShare:
				vs = append(vs, f.Share)
			case !share:
				vs = append(vs, f.Value)
				if row.Label == "" {
					row.Key, row.Metric, row.Label, row.Unit, row.Better, row.Note = f.Key, f.Metric, f.Label, f.Unit, f.Better, f.Note
				}
			}
		}
		return vs
	}
	va, vb := values(a, false), values(b, false)
	if row.Label == "" || len(va) == 0 && len(vb) == 0 {
		return row, false
	}
	row.A, row.B = summarize(va, opt), summarize(vb, opt)
	if sa, sb := values(a, true), values(b, true); len(sa) > 0 || len(sb) > 0 {
		x, y := summarize(sa, opt), summarize(sb, opt)
		row.AShare, row.BShare = &x, &y
	}
	judge(&row, opt)
	return row, true
}

// summarize is a side's median and its confidence interval.
func summarize(values []float64, opt Options) Stat {
	st := Stat{Values: values}
	if len(values) == 0 {
		return st
	}
	sorted := slices.Clone(values)
	s := benchmath.NewSample(sorted, &benchmath.Thresholds{CompareAlpha: opt.Alpha})
	sum := benchmath.AssumeNothing.Summary(s, opt.Confidence)
	st.Center, st.Lo, st.Hi, st.Range = sum.Center, sum.Lo, sum.Hi, sum.PctRangeString()
	if !math.IsInf(st.Lo, 0) && !math.IsInf(st.Hi, 0) {
		st.Interval = []float64{st.Lo, st.Hi}
	}
	return st
}

// judge fills the row's change, test and verdict.
func judge(row *Row, opt Options) {
	if !row.A.Present() || !row.B.Present() {
		row.Verdict = "?"
		return
	}
	a, b := row.A.Center, row.B.Center
	if a != 0 {
		row.DeltaPct, row.HasDelta = 100*(b/a-1), true
	} else if b == 0 {
		row.DeltaPct, row.HasDelta = 0, true
	}
	na, nb := len(row.A.Values), len(row.B.Values)
	row.Need = needRuns(opt.Alpha)
	if na >= 2 && nb >= 2 {
		row.Tested = true
		cmp := benchmath.AssumeNothing.Compare(
			benchmath.NewSample(slices.Clone(row.A.Values), &benchmath.Thresholds{CompareAlpha: opt.Alpha}),
			benchmath.NewSample(slices.Clone(row.B.Values), &benchmath.Thresholds{CompareAlpha: opt.Alpha}))
		row.P = cmp.P
		row.Significant = cmp.P <= cmp.Alpha
	}
	if min(na, nb) >= row.Need {
		row.Need = 0
	}
	switch {
	case row.Significant && row.HasDelta:
		row.Verdict = fmt.Sprintf("%+.2f%%", row.DeltaPct)
	case row.Significant:
		row.Verdict = "new" // A's median was 0
	case !row.Tested && row.HasDelta && a != b:
		row.Verdict = fmt.Sprintf("%+.2f%%", row.DeltaPct) // one run a side: a change, untested
	case !row.Tested && a != b:
		row.Verdict = "new" // from 0, untested
	default:
		row.Verdict = "~"
	}
	if row.Significant && a != b && row.Better != figures.Neutral {
		if (b < a) == (row.Better == figures.Lower) {
			row.Judgement = "better"
		} else {
			row.Judgement = "worse"
		}
	}
	if row.Tested && !row.Significant && a != b {
		row.Estimate = estimateRuns(row.A.Values, row.B.Values, b-a, max(na, nb))
	}
}

// needRuns is the fewest runs per side with which the U test can reach
// alpha at all: with 3 a side its smallest p-value is 0.1.
func needRuns(alpha float64) int {
	for n := 2; n < 50; n++ {
		// The smallest two-sided p-value of n against n is 2 / C(2n, n).
		if 2/binomial(2*n, n) <= alpha {
			return n
		}
	}
	return 50
}

// binomial is n choose k, as a float.
func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// maxEstimate caps Estimate: beyond it, the change is lost in the noise.
const maxEstimate = 100

// estimateRuns estimates the runs per side a two-sided U test at 0.05
// needs to detect, with 80 % power, a change of the medians by diff against
// the observed spread: n = 2 (z(0.975) + z(0.8))^2 / d^2 / 0.955, d being
// diff over the pooled standard deviation and 0.955 the U test's efficiency
// against the t test. Only an estimate: it assumes normal figures. 0 when
// the spread is 0; maxEstimate+1 beyond maxEstimate. It never says fewer
// than have already not sufficed.
func estimateRuns(a, b []float64, diff float64, have int) int {
	_, va := meanVar(a)
	_, vb := meanVar(b)
	pooled := ((float64(len(a)-1))*va + float64(len(b)-1)*vb) / float64(len(a)+len(b)-2)
	if pooled <= 0 {
		return 0
	}
	d := math.Abs(diff) / math.Sqrt(pooled)
	if d == 0 {
		return maxEstimate + 1
	}
	const z = 1.959964 + 0.841621
	n := math.Ceil(2 * z * z / (d * d) / 0.955)
	return int(min(max(n, float64(have+1)), maxEstimate+1))
}

// meanVar is the mean and the sample variance of xs.
func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// footnotes explain the table's marks.
func footnotes(c *Comparison) []string {
	var out []string
	inf, need := false, 0
	for _, g := range c.Groups {
		for _, r := range g.Rows {
			inf = inf || len(r.A.Values) > 1 && r.A.Range == "∞" || len(r.B.Values) > 1 && r.B.Range == "∞"
			need = max(need, r.Need)
		}
	}
	if inf {
		out = append(out, fmt.Sprintf("±∞: a %.0f%% confidence interval of a median needs at least 6 runs a side (benchstat's rule); the medians stand", 100*c.Confidence))
	}
	if need > 0 {
		more := fmt.Sprintf("schedscope run --repeat %d makes enough", max(need, 5))
		if c.A.Kind != figures.KindRun {
			more = fmt.Sprintf("give %d or more %ss a side (A1 A2 ... -- B1 B2 ...)", need, c.A.Kind)
		}
		out = append(out, fmt.Sprintf("with fewer than %d %ss a side the U test cannot reach p <= %g whatever the figures: changes are shown untested or as ~; %s", need, c.A.Kind, c.Alpha, more))
	}
	return out
}
