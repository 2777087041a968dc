package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/figures"
)

// WriteText writes c as aligned text tables, one per group, in
// benchstat's manner: each side's median ± its confidence interval, then
// the change or "~" with the test's p-value and runs.
func WriteText(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	for _, d := range c.Differences {
		ew.f("DIFFERENT LOAD (%s): %s\n", forcedText, d)
	}
	for _, side := range []struct {
		name string
		s    *Side
	}{{"A", &c.A}, {"B", &c.B}} {
		ew.f("%s: %s, %s", side.name, side.s.Label, runsWord(side.s.N(), side.s.Kind))
		if side.s.Target != "" {
			ew.f("; target: %s", side.s.Target)
		}
		ew.f("\n   %s\n", strings.Join(side.s.Paths, " "))
	}
	for _, n := range c.Notes {
		ew.f("note: %s\n", n)
	}
	ew.f("%s\n", legendText(c))
	for _, g := range c.Groups {
		ew.f("\n%s\n", g.Title)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "\t%s\t%s\tvs A\n", c.A.Label, c.B.Label)
		for _, r := range g.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", rowLabel(r), statText(r.A, r.AShare, r.Unit), statText(r.B, r.BShare, r.Unit), verdictText(r))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, side := range []*Side{&c.A, &c.B} {
		for _, w := range side.Warnings {
			ew.f("warning: %s\n", w)
		}
	}
	if len(c.Footnotes) > 0 {
		ew.f("\n")
	}
	for _, f := range c.Footnotes {
		ew.f("%s\n", f)
	}
	return ew.err
}

// forcedText says why differences are shown at all.
const forcedText = "compared with --force"

// legendText says how to read the tables' columns.
func legendText(c *Comparison) string {
	return fmt.Sprintf("medians ± %.0f%% confidence interval; vs A: the change of B's median, or ~ when a Mann-Whitney U test finds none at p <= %g", 100*c.Confidence, c.Alpha)
}

// rowLabel names a row's figure, with how it was measured where that
// varies ("sched latency p99 (exact, trace window)"); a cause's note is its
// title, which the label already says.
func rowLabel(r Row) string {
	if r.Note != "" && !strings.HasPrefix(r.Key, "cause:") {
		return r.Label + " (" + r.Note + ")"
	}
	return r.Label
}

// runsWord says how many sets a side has: "5 runs", "1 sweep".
func runsWord(n int, k figures.Kind) string {
	if n == 1 {
		return "1 " + string(k)
	}
	return fmt.Sprintf("%d %ss", n, k)
}

// statText prints a side's median with its interval, and its share: "612ms
// ± 3%", "12 (0.8%) ± ∞", "1500" for one run.
func statText(s Stat, share *Stat, u cond.Unit) string {
	if !s.Present() {
		return "-"
	}
	t := u.Format(s.Center)
	if share != nil && share.Present() {
		t += " (" + cond.Percent.Format(share.Center) + ")"
	}
	if len(s.Values) > 1 {
		t += " ± " + s.Range
	}
	return t
}

// verdictText is the row's change: "+50.00% (p=0.008 n=5) better", "~
// (p=0.421 n=5)", "+3.10% (n=1, untested)".
func verdictText(r Row) string {
	n := fmt.Sprintf("n=%d", len(r.A.Values))
	if len(r.A.Values) != len(r.B.Values) {
		n = fmt.Sprintf("n=%d+%d", len(r.A.Values), len(r.B.Values))
	}
	var t string
	switch {
	case r.Verdict == "?":
		return "? (one side lacks it)"
	case r.Tested:
		t = fmt.Sprintf("%s (p=%.3f %s)", r.Verdict, r.P, n)
	case r.Verdict == "~":
		t = fmt.Sprintf("~ (%s)", n)
	default:
		t = fmt.Sprintf("%s (%s, untested)", r.Verdict, n)
	}
	if r.Judgement != "" {
		t += " " + r.Judgement
	}
	switch {
	case r.Estimate > maxEstimate:
		t += fmt.Sprintf("; > %d runs a side to tell", maxEstimate)
	case r.Estimate > 0:
		t += fmt.Sprintf("; ≈%d runs a side to tell", r.Estimate)
	}
	return t
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) f(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// Source is group g's figures as a condition Source: Value reads B's
// median (the largest, for a metric several rows carry), Share B's share,
// Change the relative change of B's median against A's and Delta B's
// median minus A's, when there is a change: tested and significant, or
// untested (one run a side), never a "~".
func (g *Group) Source() cond.ChangeSource { return groupSource{g} }

type groupSource struct{ g *Group }

func (s groupSource) pick(metric string, get func(Row) (float64, bool)) (float64, bool) {
	v, ok := math.Inf(-1), false
	for _, r := range s.g.Rows {
		if r.Metric != metric {
			continue
		}
		if x, has := get(r); has {
			v, ok = max(v, x), true
		}
	}
	return v, ok
}

func (s groupSource) Value(metric string) (float64, bool) {
	return s.pick(metric, func(r Row) (float64, bool) { return r.B.Center, r.B.Present() })
}

func (s groupSource) Share(metric string) (float64, bool) {
	return s.pick(metric, func(r Row) (float64, bool) {
		if r.BShare == nil || !r.BShare.Present() {
			return 0, false
		}
		return r.BShare.Center, true
	})
}

func (s groupSource) Change(metric string) (float64, bool) {
	return s.pick(metric, func(r Row) (float64, bool) {
		return r.DeltaPct, r.HasDelta && (r.Significant || !r.Tested)
	})
}

func (s groupSource) Delta(metric string) (float64, bool) {
	return s.pick(metric, func(r Row) (float64, bool) {
		return r.B.Center - r.A.Center, r.A.Present() && r.B.Present() && (r.Significant || !r.Tested)
	})
}

// Check checks conditions on c's gated groups and returns each breach once
// per group. A condition on a change holds only on a significant change
// (or, with one run a side, any change).
func Check(c *Comparison, conditions []cond.Condition) []figures.Breach {
	var out []figures.Breach
	for _, cd := range conditions {
		for i := range c.Groups {
			g := &c.Groups[i]
			if !g.Gate {
				continue
			}
			if v, held, _ := cd.Eval(g.Source()); held {
				out = append(out, figures.Breach{Condition: cd, Text: cd.String(), Group: g.Title, Value: v,
					Line: fmt.Sprintf("%s (%s; %s vs %s)", cd.Explain(v), g.Title, c.B.Label, c.A.Label)})
			}
		}
	}
	return out
}

// Unread returns the conditions no gated group of c could read.
func Unread(c *Comparison, conditions []cond.Condition) []string {
	var out []string
	for _, cd := range conditions {
		read := false
		for i := range c.Groups {
			if c.Groups[i].Gate {
				if _, _, ok := cd.Eval(c.Groups[i].Source()); ok {
					read = true
					break
				}
			}
		}
		if !read && cd.Form != cond.Change && cd.Form != cond.Delta { // a change nobody made is no blind spot
			out = append(out, cd.String())
		}
	}
	return out
}
