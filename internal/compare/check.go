package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/schedscope/schedscope/internal/figures"
)

// checkComparable says how the sides' loads differ (diffs: a comparison
// would mislead unless forced) and what differs harmlessly (notes). err is
// set when no comparison is possible at all: a run against a sweep.
func checkComparable(a, b []*figures.Set) (diffs, notes []string, err error) {
	all := slices.Concat(a, b)
	for _, s := range all[1:] {
		if s.Kind != all[0].Kind {
			return nil, nil, fmt.Errorf("cannot compare %s (a %s) with %s (a %s): both sides must be runs, sweeps or traces", all[0].Path, all[0].Kind, s.Path, s.Kind)
		}
	}
	if all[0].Kind == figures.KindTrace {
		return nil, nil, nil // a trace's figures do not depend on a load's identity
	}
	// Within a side, every run must be of one configuration.
	for _, side := range [][]*figures.Set{a, b} {
		for _, s := range side[1:] {
			for _, d := range identityDiffs(side[0], s) {
				diffs = append(diffs, "within one side: "+d)
			}
		}
	}
	diffs = append(diffs, identityDiffs(a[0], b[0])...)
	if n := machineNote(a, b); n != "" {
		notes = append(notes, n)
	}
	if ha, hb := a[0].Identity.Host, b[0].Identity.Host; ha != hb && ha != "" && hb != "" {
		notes = append(notes, fmt.Sprintf("the targets' addresses differ (%s, %s): the request and its load are the same", ha, hb))
	}
	return diffs, notes, nil
}

// busierBy is how many more cores other processes must have used during
// one side's runs (medians, in some phase) for the note that the machine,
// not the change, may explain a difference.
const busierBy = 0.25

// machineNote says when the sides ran on machines of different sizes, or
// when other processes took more CPU during one side's runs than the
// other's: differences may then be the machine's, not the change's.
func machineNote(a, b []*figures.Set) string {
	if ca, cb := a[0].Identity.MachineCPUs, b[0].Identity.MachineCPUs; ca != cb && ca > 0 && cb > 0 {
		return fmt.Sprintf("the sides ran on machines with %d and %d CPUs: differences may be the machines', not the change's", ca, cb)
	}
	for _, g := range a[0].Groups {
		oa, ob := medianFigure(a, g.Key, "others_cpu"), medianFigure(b, g.Key, "others_cpu")
		if oa < 0 || ob < 0 || max(oa, ob)-min(oa, ob) < busierBy {
			continue
		}
		busier := "B"
		if oa > ob {
			busier = "A"
		}
		return fmt.Sprintf("other processes used more CPU during %s's runs (%s: %.2f cores for A, %.2f for B, medians): differences may be the machine's, not the change's; compare runs made on a quiet machine", busier, g.Title, oa, ob)
	}
	return ""
}

// medianFigure is the median of figure key of group over the sets; -1
// when a set lacks it.
func medianFigure(sets []*figures.Set, group, key string) float64 {
	var vs []float64
	for _, s := range sets {
		g := s.Group(group)
		if g == nil {
			return -1
		}
		f := g.Find(key)
		if f == nil {
			return -1
		}
		vs = append(vs, f.Value)
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// identityDiffs lists how y's load differs from x's, each as a sentence
// naming both.
func identityDiffs(x, y *figures.Set) []string {
	var out []string
	ix, iy := x.Identity, y.Identity
	if ix.Method != iy.Method && ix.Method != "" && iy.Method != "" {
		out = append(out, fmt.Sprintf("different methods: %s (%s) and %s (%s)", ix.Method, x.Path, iy.Method, y.Path))
	}
	if ix.Request != iy.Request {
		out = append(out, fmt.Sprintf("different requests: %s (%s) and %s (%s)", ix.Request, x.Path, iy.Request, y.Path))
	}
	if ix.Model != iy.Model && ix.Model != "" && iy.Model != "" {
		out = append(out, fmt.Sprintf("different load models: %s (%s) and %s (%s)", ix.Model, x.Path, iy.Model, y.Path))
	}
	px, py := ix.Phases, iy.Phases
	if ix.Partial || iy.Partial { // a run cut short: as far as both go
		n := min(len(px), len(py))
		px, py = px[:n], py[:n]
	}
	if !slices.Equal(rates(px), rates(py)) {
		out = append(out, fmt.Sprintf("different offered loads: %s (%s) and %s (%s)", loads(ix.Phases), x.Path, loads(iy.Phases), y.Path))
	} else if durationsDiffer(px, py, ix.Partial, iy.Partial) {
		out = append(out, fmt.Sprintf("different phase durations: %s (%s) and %s (%s)", loads(ix.Phases), x.Path, loads(iy.Phases), y.Path))
	}
	return out
}

func rates(ps []figures.PhaseLoad) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%g/%d", p.OfferedRate, p.Users))
	}
	return out
}

// durationsDiffer reports whether two sets' phases (as many of each) last
// differently. The last phase of a set cut short (partial) lasted what it
// ran, not what was planned, so it is not compared.
func durationsDiffer(x, y []figures.PhaseLoad, partialX, partialY bool) bool {
	for i := range x {
		if partialX && i == len(x)-1 || partialY && i == len(y)-1 {
			continue
		}
		if x[i].DurationS != y[i].DurationS {
			return true
		}
	}
	return false
}

// loads says a set's phases: "1500 req/s for 10s, 2000 req/s for 10s".
func loads(ps []figures.PhaseLoad) string {
	if len(ps) == 0 {
		return "no phase"
	}
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.String())
	}
	return strings.Join(parts, ", ")
}
