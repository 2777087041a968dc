package report

import (
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/schedscope/schedscope/internal/capacity"
	"github.com/schedscope/schedscope/internal/rundir"
)

// throttleCell is the "throttled | quota use" cells of a results row:
// medians over the iterations; dashes without a quota.
func throttleCell(c capacity.Cell) string {
	if !c.Quota {
		return "- | -"
	}
	return fmt.Sprintf("%.0f %% (%.2f s) | %.0f %%", 100*c.Throttled, c.ThrottledS, 100*c.QuotaUse)
}

// renderQuota writes the CPU limits section: the ceiling, p99 and
// throttling of every limit x GOMAXPROCS, the findings, the GOMAXPROCS per
// limit and, with a target p99, the smallest limit per load.
func renderQuota(md *mdWriter, r *SweepReport, throttledPNG string) {
	a := r.Analysis
	p := r.Sweep.Plan
	q := a.Quota
	md.f("\n## CPU limits\n\n")
	where := "the target's own cgroup"
	if p.LimitOnParent {
		where = "the target's parent cgroup (the target in a child cgroup without a limit, as in a pod-level limit over an unlimited container)"
	}
	md.f("Each limit was a CPU quota (cgroup v%d) on %s. Each cell: the ceiling (2xx/s), the p99 at the knee (the highest load served; `-` when none) and the most throttled share of the quota's 100 ms periods at any load of that line.\n\n", p.CgroupVersion, where)

	// The grid: one row per family (model, limit, flag values), one
	// column per GOMAXPROCS.
	cols := slices.Clone(p.GOMAXPROCS)
	slices.Sort(cols)
	md.f("| limit |")
	for _, g := range cols {
		md.f(" %s |", rundir.GOMAXPROCSLabel(g, CPUs(p)))
	}
	md.f("\n|---|%s\n", strings.Repeat("---:|", len(cols)))
	for _, f := range a.Families {
		if f.CPULimit <= 0 {
			continue
		}
		md.f("| %s |", f.Label)
		for _, g := range cols {
			i := slices.IndexFunc(f.Levels, func(l capacity.Level) bool { return l.Line.GOMAXPROCS == g })
			if i < 0 {
				md.f(" - |")
				continue
			}
			l := f.Levels[i]
			auto := ""
			if g == 0 && l.GOMAXPROCS > 0 {
				auto = fmt.Sprintf("(%d) ", l.GOMAXPROCS)
			}
			md.f(" %s%s / %s / %s |", auto, ceilingOf(l), kneeP99(l), mostThrottledOf(l))
		}
		md.f("\n")
	}
	md.f("\n")
	if throttledPNG != "" {
		md.f("![throttled share of periods vs %s, one line per %s](%s)\n\n", loadName(p), lineName(p), throttledPNG)
	}
	if len(q.Findings) > 0 {
		md.f("### Verdicts\n\n")
		for _, f := range q.Findings {
			md.f("- **%s**: %s.\n", f.Kind, f.Detail)
		}
		md.f("\n")
	}
	if len(q.Advice) > 0 {
		md.f("### GOMAXPROCS for each limit\n\n")
		for _, ad := range q.Advice {
			name := rundir.CPULimitLabel(ad.Limit)
			if ad.Family != "" {
				name = ad.Family + ", " + name
			}
			if ad.GOMAXPROCS > 0 {
				md.f("- **%s: GOMAXPROCS %d.** %s.\n", name, ad.GOMAXPROCS, capitalize(ad.Reason))
			} else {
				md.f("- **%s: no recommendation.** %s.\n", name, capitalize(ad.Reason))
			}
		}
		md.f("\n")
	}
	if q.TargetP99 > 0 {
		md.f("### The smallest limit for p99 <= %s\n\n", msf(q.TargetP99)+" ms")
		if len(q.Sizing) == 0 {
			md.f("Not sized: the target p99 needs an open-model sweep (offered rates).\n\n")
			return
		}
		md.f("Per offered rate, the smallest CPU limit tried with a line that answered 99 %% of the rate with 2xx and kept its p99 within the target.\n\n")
		md.f("| offered req/s | smallest limit | line | p99 ms | 2xx/s |\n|---:|---|---|---:|---:|\n")
		for _, s := range q.Sizing {
			limit := "none tried (the lowest p99 shown)"
			if s.Limit > 0 {
				limit = rundir.CPULimitLabel(s.Limit)
			}
			md.f("| %s | %s | %s | %s | %s |\n", num(s.Load), limit, s.Label, msOrDash(s.P99), num(s.OKPerSec))
		}
		md.f("\n")
	}
}

func ceilingOf(l capacity.Level) string {
	if !l.Saturated {
		return ">= " + num(l.Ceiling)
	}
	return num(l.Ceiling)
}

func kneeP99(l capacity.Level) string {
	for _, c := range l.Cells {
		if c.X() == l.Knee && l.Knee > 0 {
			return msf(c.P99) + " ms"
		}
	}
	return "-"
}

func mostThrottledOf(l capacity.Level) string {
	most, seen := 0.0, false
	for _, c := range l.Cells {
		if c.Quota {
			most, seen = max(most, c.Throttled), true
		}
	}
	if !seen {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*most)
}

// throttledPlot draws the throttled share of the quota's periods against
// the load, one line per level.
func throttledPlot(levels []labeledLevel) *plot.Plot {
	p := levelPlot(levels, "throttled periods", "throttled (% of 100 ms periods)")
	var lines []series
	for _, ll := range levels {
		s := series{name: ll.name}
		for _, c := range ll.level.Cells {
			if c.Quota {
				s.xy = append(s.xy, plotter.XY{X: c.X(), Y: 100 * c.Throttled})
			}
		}
		lines = append(lines, s)
	}
	addLines(p, lines)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), -vg.Points(6)
	p.X.Min, p.Y.Min, p.Y.Max = 0, 0, 100
	return p
}
