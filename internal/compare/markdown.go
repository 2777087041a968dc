package compare

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/schedscope/schedscope/internal/report"
	"github.com/schedscope/schedscope/internal/rundir"
)

// The files WriteReport writes: report.md, one latency plot per phase
// group with histograms on both sides (latency-phase-1.png), and
// throughput.png when a side has a ladder of offered rates. The names are
// report's, so a comparison's directory reads like a sweep's.
const (
	ReportFile     = report.ReportFile
	ThroughputPlot = report.ThroughputPlot
	latencyPrefix  = "latency-"
	plotSuffix     = ".png"
)

// isReportEntry reports whether name is one of the files WriteReport
// writes, so a directory holding only those may be written again.
func isReportEntry(name string) bool {
	return name == ReportFile || name == ThroughputPlot ||
		strings.HasPrefix(name, latencyPrefix) && strings.HasSuffix(name, plotSuffix)
}

// reportPlots names the plots a report embeds, relative to its directory:
// latency by group key, throughput ("" when there is none).
type reportPlots struct {
	latency    map[string]string
	throughput string
}

// WriteReport writes into outDir report.md and its PNG plots, returning the
// paths written (report first). outDir is created if absent; it may be
// empty or hold only an earlier comparison report (rewritten; its plots
// that this report does not draw are removed), but not be, or lie within,
// one of the compared paths, nor be a run, sweep or repeat directory or
// hold other files: it refuses those before writing anything, in one line.
func WriteReport(c *Comparison, outDir string) ([]string, error) {
	if err := CheckReportDir(c, outDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("report directory: %w", err)
	}
	sides := []*Side{&c.A, &c.B}
	plots := reportPlots{latency: map[string]string{}}
	var written []string
	used := map[string]bool{}
	for _, g := range c.Groups {
		if !hasLatency(&c.A, g.Key) || !hasLatency(&c.B, g.Key) {
			continue
		}
		name := latencyPrefix + slug(g.Key)
		for i := 2; used[name]; i++ {
			name = fmt.Sprintf("%s%s-%d", latencyPrefix, slug(g.Key), i)
		}
		used[name] = true
		name += plotSuffix
		path := filepath.Join(outDir, name)
		if err := report.SavePlot(path, latencyPlot(g.Key, sides)); err != nil {
			return nil, err
		}
		plots.latency[g.Key] = name
		written = append(written, path)
	}
	if hasLadder(&c.A) || hasLadder(&c.B) {
		path := filepath.Join(outDir, ThroughputPlot)
		if err := report.SavePlot(path, throughputPlot(sides)); err != nil {
			return nil, err
		}
		plots.throughput = ThroughputPlot
		written = append(written, path)
	}
	md := filepath.Join(outDir, ReportFile)
	if err := rundir.WriteFileAtomic(md, func(w io.Writer) error { return renderReport(w, c, plots) }); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	written = append([]string{md}, written...)
	if err := removeStale(outDir, written); err != nil {
		return nil, err
	}
	return written, nil
}

// CheckReportDir says whether WriteReport may write into outDir: it
// refuses an outDir that is, or lies within, a compared path, then applies
// report's rule for a report directory. A command calls it before it
// prints anything.
func CheckReportDir(c *Comparison, outDir string) error {
	absOut, err := filepath.Abs(outDir)
	if err != nil {
		return fmt.Errorf("report directory %s: %w", outDir, err)
	}
	for _, p := range slices.Concat(c.A.Paths, c.B.Paths) {
		if rundir.SameDir(outDir, p) {
			return fmt.Errorf("report directory %s is one of the compared paths: choose a new or empty --out", outDir)
		}
		absP, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(absP, absOut); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return fmt.Errorf("report directory %s lies inside the compared %s: choose a new or empty --out outside it", outDir, p)
		}
	}
	return report.CheckOutDir(outDir, isReportEntry)
}

// removeStale removes an earlier report's plots that this one did not
// write, so the directory holds only what report.md embeds.
func removeStale(outDir string, written []string) error {
	entries, err := os.ReadDir(outDir)
	if err != nil {
		return fmt.Errorf("report directory: %w", err)
	}
	for _, e := range entries {
		path := filepath.Join(outDir, e.Name())
		if !isReportEntry(e.Name()) || !e.Type().IsRegular() || slices.Contains(written, path) {
			continue
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("report directory: removing an earlier plot: %w", err)
		}
	}
	return nil
}

// hasLatency reports whether side s has a latency histogram with values
// in group key.
func hasLatency(s *Side, key string) bool {
	h := s.latency[key]
	return h != nil && h.TotalCount() > 0
}

// slug makes a group key a file name's part: "phase 1" is "phase-1".
func slug(key string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(key) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "group"
	}
	return b.String()
}

// renderReport writes c as Markdown: the differences first when forced,
// the sides, notes and warnings, a table per group with the same cells as
// WriteText's, the plots, then the footnotes.
func renderReport(w io.Writer, c *Comparison, plots reportPlots) error {
	md := &errWriter{w: w}
	md.f("# Comparison: %s vs %s\n\n", c.A.Label, c.B.Label)
	if len(c.Differences) > 0 {
		md.f("> **Different load (%s).** The sides were not measured under the same load: a change below may come from the load rather than from the target.\n>\n", forcedText)
		for _, d := range c.Differences {
			md.f("> - %s\n", d)
		}
		md.f("\n")
	}
	md.f("| side | label | measured | target | paths |\n|---|---|---|---|---|\n")
	for _, side := range []struct {
		name string
		s    *Side
	}{{"A", &c.A}, {"B", &c.B}} {
		target := "-"
		if side.s.Target != "" {
			target = code(side.s.Target)
		}
		md.f("| %s | %s | %s | %s | %s |\n", side.name, cell(side.s.Label), runsWord(side.s.N(), side.s.Kind), target, pathsText(side.s.Paths))
	}
	md.f("\n")
	for _, n := range c.Notes {
		md.f("**Note:** %s.\n\n", n)
	}
	var warnings []string
	for _, side := range []*Side{&c.A, &c.B} {
		warnings = append(warnings, side.Warnings...)
	}
	if len(warnings) > 0 {
		md.f("**Warnings:**\n\n")
		for _, w := range warnings {
			md.f("- %s\n", w)
		}
		md.f("\n")
	}
	legend := legendText(c)
	md.f("%s%s.\n", strings.ToUpper(legend[:1]), legend[1:])
	for _, g := range c.Groups {
		md.f("\n## %s\n\n", g.Title)
		md.f("| | %s | %s | vs A |\n|---|---:|---:|---|\n", cell(c.A.Label), cell(c.B.Label))
		for _, r := range g.Rows {
			verdict := cell(verdictText(r))
			if r.Significant {
				verdict = "**" + verdict + "**"
			}
			md.f("| %s | %s | %s | %s |\n", cell(rowLabel(r)), cell(statText(r.A, r.AShare, r.Unit)), cell(statText(r.B, r.BShare, r.Unit)), verdict)
		}
		if png := plots.latency[g.Key]; png != "" {
			md.f("\n![Latency percentile distribution in %s: latency (ms) against the percentile on a log scale of 1/(1-q), one line for %s (A) and one for %s (B), each side's runs merged](%s)\n",
				alt(g.Key), alt(c.A.Label), alt(c.B.Label), png)
		}
	}
	if plots.throughput != "" {
		md.f("\n## 2xx/s vs offered rate\n\n")
		md.f("![2xx responses per second against the offered rate, the median of each side's runs at each rate, one line for %s (A) and one for %s (B), with the offered rate dashed for reference](%s)\n",
			alt(c.A.Label), alt(c.B.Label), plots.throughput)
	}
	if len(c.Footnotes) > 0 {
		md.f("\n---\n\n")
		for _, f := range c.Footnotes {
			md.f("- %s\n", f)
		}
	}
	return md.err
}

// pathsText lists a side's paths for a table cell; paths in one directory
// (a repeat directory's runs) name it once: "`runs/a/`: `run-01`, `run-02`".
func pathsText(paths []string) string {
	parent := ""
	if len(paths) > 1 {
		parent = filepath.Dir(paths[0])
		for _, p := range paths[1:] {
			if filepath.Dir(p) != parent {
				parent = ""
				break
			}
		}
	}
	var names []string
	for _, p := range paths {
		if parent != "" {
			p = filepath.Base(p)
		}
		names = append(names, code(p))
	}
	if parent != "" {
		return code(parent+string(filepath.Separator)) + ": " + strings.Join(names, ", ")
	}
	return strings.Join(names, ", ")
}

// cell makes s safe in a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// code writes s as a Markdown code span in a table cell, fenced with more
// backticks than it holds in a row.
func code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + cell(s) + pad + fence
}

// alt makes s safe in an image's alt text.
func alt(s string) string {
	return strings.NewReplacer("[", `\[`, "]", `\]`, "\n", " ").Replace(s)
}
