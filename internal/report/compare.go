package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Comparison is several sweep directories reported side by side, such as
// the same scenario under different concurrency models.
type Comparison struct {
	Sweeps []*SweepReport
	// Files are the paths written, report first.
	Files []string
}

// label names a sweep in a comparison: its model, else its scenario, else
// its directory's name.
func label(r *SweepReport) string {
	p := r.Sweep.Plan
	switch {
	case p.Model != "" && p.Scenario != "":
		return p.Scenario + " " + p.Model
	case p.Model != "":
		return p.Model
	case p.Scenario != "":
		return p.Scenario
	}
	return filepath.Base(r.Sweep.Dir)
}

// WriteComparison analyzes each sweep directory in dirs and writes, into
// outDir, report.md with one table row per sweep and GOMAXPROCS and the two
// plots with one line per sweep and GOMAXPROCS ("pool, GOMAXPROCS 2").
// Each sweep keeps its own report; this one puts them side by side.
func WriteComparison(dirs []string, outDir string) (*Comparison, error) {
	if len(dirs) < 2 {
		return nil, fmt.Errorf("comparison: want at least 2 sweep directories, got %d", len(dirs))
	}
	c := &Comparison{}
	var lines []labeledLevel
	for _, d := range dirs {
		r, err := AnalyzeSweep(d)
		if err != nil {
			return nil, err
		}
		c.Sweeps = append(c.Sweeps, r)
		for _, l := range r.Analysis.Levels {
			lines = append(lines, labeledLevel{label(r) + ", " + l.Label, l})
		}
	}
	if err := checkOutDir(outDir, dirs...); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("report directory: %w", err)
	}
	tp, pp := filepath.Join(outDir, ThroughputPlot), filepath.Join(outDir, P99Plot)
	if err := SavePlot(tp, throughputPlot(lines)); err != nil {
		return nil, err
	}
	if err := SavePlot(pp, p99Plot(lines)); err != nil {
		return nil, err
	}
	md := filepath.Join(outDir, ReportFile)
	if err := writeMarkdown(md, func(w io.Writer) error { return RenderComparison(w, c, ThroughputPlot, P99Plot) }); err != nil {
		return nil, err
	}
	c.Files = []string{md, tp, pp}
	return c, nil
}

// RenderComparison writes c as Markdown to w.
func RenderComparison(w io.Writer, c *Comparison, throughputPNG, p99PNG string) error {
	md := &mdWriter{w: w}
	var names []string
	for _, r := range c.Sweeps {
		names = append(names, label(r))
	}
	md.f("# Sweeps compared: %s\n\n", strings.Join(names, " / "))
	md.f("Each sweep's own report (in its directory) says how it was measured; the figures below are the same medians.\n\n")
	md.f("| sweep | target | line | knee | ceiling 2xx/s | limit | low-load service ms | busy Ps | iterations | machine load at start |\n")
	md.f("|---|---|---:|---:|---:|---|---:|---:|---:|---|\n")
	for _, r := range c.Sweeps {
		p := r.Sweep.Plan
		for _, l := range r.Analysis.Levels {
			knee := num(l.Knee)
			if l.Knee == 0 {
				knee = "none"
			}
			md.f("| %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |\n", label(r), targetLine(p), l.Label, knee, num(l.Ceiling),
				orDash(string(l.Limit)), msf(l.LowLoadService), fixed(l.BusyPs, 2), p.Iterations, orDash(p.Machine.LoadAverage))
		}
	}
	md.f("\n")
	for _, r := range c.Sweeps {
		md.f("- **%s**: scaling %s; recommended GOMAXPROCS %d: %s.\n", label(r), r.Analysis.Scaling.Kind, r.Analysis.Recommendation.GOMAXPROCS, r.Analysis.Recommendation.Reason)
	}
	md.f("\n![2xx/s vs offered rate, one line per sweep and GOMAXPROCS](%s)\n", throughputPNG)
	md.f("![p99 latency vs offered rate, one line per sweep and GOMAXPROCS](%s)\n", p99PNG)
	if md.err != nil {
		return fmt.Errorf("writing report: %w", md.err)
	}
	return nil
}
