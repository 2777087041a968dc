package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

// maxProblemLines is how many skipped metrics.jsonl lines a report lists
// one by one (Warnings too); one more line counts the rest.
const maxProblemLines = 10

// Warnings are the lines a command prints about r's data: one per
// metrics.jsonl line skipped (the first maxProblemLines, then a count), one
// per steady phase whose counts in load.hlog and results.json disagree. A
// last line cut by a killed run is not a warning: the report notes it.
func (r *RunReport) Warnings() []string {
	var out []string
	if r.MetricsProblems.Lost() {
		out = r.MetricsProblems.Lines(maxProblemLines)
	}
	for _, m := range r.HLogMismatches {
		out = append(out, fmt.Sprintf("%s; the report's latency percentiles are %s's", m, rundir.ResultsFile))
	}
	return out
}

// Plot file names of a run report.
const (
	LatencyPlot    = "latency.png"
	GoroutinesPlot = "goroutines.png"
)

// RunReport is a run directory's report, as rendered.
type RunReport struct {
	Dir      string
	Manifest rundir.Manifest
	Result   *load.Result
	Points   []rundir.MetricsLine
	// MetricsProblems are metrics.jsonl's lines that were skipped, where
	// and why; the report says so, and the plots use Points alone.
	MetricsProblems rundir.MetricsProblems
	// HLogMismatches are the steady phases whose counts in load.hlog and
	// results.json disagree: one of the two is not the run's whole record.
	HLogMismatches []rundir.HLogMismatch
	// Analysis is analysis.json (nil before derivation): the diagnosis and
	// the request anatomy come from it.
	Analysis *rundir.Analysis
	// Files are the paths written, report first.
	Files []string
}

// WriteRun reads the run directory dir and writes report.md, latency.png and
// goroutines.png into outDir (dir itself when outDir is ""). A run without
// metrics.jsonl gets the tables without the plots over time.
// An outDir of another kind (a run or sweep directory, other files) is
// refused before anything is written.
func WriteRun(dir, outDir string) (*RunReport, error) {
	run, err := rundir.ReadRun(dir)
	if err != nil {
		if _, serr := os.Stat(filepath.Join(dir, rundir.ManifestFile)); errors.Is(serr, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: neither a sweep directory (%s) nor a run directory (%s)", dir, rundir.SweepFile, rundir.ManifestFile)
		}
		return nil, err
	}
	r := &RunReport{Dir: dir, Manifest: run.Manifest, Result: run.Result, Points: run.Lines, MetricsProblems: run.MetricsProblems, Analysis: run.Analysis}
	if hl, err := rundir.ReadHLog(filepath.Join(dir, rundir.HLogFile)); err == nil {
		// The report reads results.json alone; a log that is absent or
		// does not parse contradicts nothing it shows.
		r.HLogMismatches = rundir.CheckHLog(hl, run.Result)
	}
	if outDir == "" {
		outDir = dir
	}
	if err := checkOutDir(outDir, dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("report directory: %w", err)
	}
	var lat, gor string
	if len(r.Points) > 0 {
		lat, gor = LatencyPlot, GoroutinesPlot
		if err := SavePlot(filepath.Join(outDir, lat), latencyOverTime(r.Points)); err != nil {
			return nil, err
		}
		if err := SavePlot(filepath.Join(outDir, gor), goroutinesOverTime(r.Points)); err != nil {
			return nil, err
		}
	}
	md := filepath.Join(outDir, ReportFile)
	if err := writeMarkdown(md, func(w io.Writer) error { return RenderRun(w, r, lat, gor) }); err != nil {
		return nil, err
	}
	r.Files = []string{md}
	if lat != "" {
		r.Files = append(r.Files, filepath.Join(outDir, lat), filepath.Join(outDir, gor))
	}
	return r, nil
}

// RenderRun writes r as Markdown to w; the plot arguments are the image paths
// to link ("" leaves a plot out).
func RenderRun(w io.Writer, r *RunReport, latencyPNG, goroutinesPNG string) error {
	md := &mdWriter{w: w}
	m := r.Manifest
	md.f("# Run: `%s`\n\n", orDash(m.Config.TargetURL))
	if m.Status != "" && m.Status != "complete" {
		md.f("> **Run %s**%s: the figures below cover what was measured.\n\n", m.Status, iff(m.Reason != "", " ("+m.Reason+")", ""))
	}
	md.f("## How it was measured\n\n| | |\n|---|---|\n")
	if m.Config.Command != "" {
		md.f("| target | `%s` |\n", m.Config.Command)
	}
	md.f("| target runtime | %s, GOMAXPROCS %s, figures from %s |\n", orDash(m.Target.GoVersion), intOrDash(m.Target.GOMAXPROCS), orDash(string(m.Target.Source)))
	if res := r.Result; res != nil {
		md.f("| load | %s model%s, client %s, at most %d in flight, timeout %gs |\n", res.Model, arrivals(res), res.Client, res.MaxInflight, res.TimeoutS)
	}
	md.f("| machine | %d CPUs (%s), %s/%s, kernel %s, generator %s; load average at start %s |\n",
		m.Machine.CPUs, orDash(m.Machine.CPUModel), m.Machine.GOOS, m.Machine.GOARCH, orDash(m.Machine.Kernel), orDash(m.GoVersion), orDash(m.Machine.LoadAverage))
	if !m.Start.IsZero() {
		md.f("| date | %s |\n", m.Start.UTC().Format("2006-01-02 15:04 UTC"))
	}
	md.f("\n")
	if an := r.Analysis; an != nil {
		renderDiagnosis(md, an)
	}
	if res := r.Result; res != nil && len(res.Phases) > 0 {
		md.f("## Phases\n\n2xx/s is the load generator's: the rate the target answered the phase's requests with 2xx (first to last completion); latency in ms, from each request's intended send time.\n\n")
		md.f("| phase | offered req/s | duration | 2xx/s | p50 | p95 | p99 | p99.9 | max | errors | not sent | verdicts |\n")
		md.f("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for _, p := range res.Phases {
			var kinds []string
			for _, v := range p.VerdictDetails {
				kinds = append(kinds, string(v.Kind))
			}
			// A results.json written before p95 existed has none: "-", not 0.
			p95 := "-"
			if p.Latency.P95 > 0 || p.Latency.P99 == 0 {
				p95 = fmt.Sprintf("%.1f", p.Latency.P95)
			}
			md.f("| %s | %s | %s | %s | %.1f | %s | %.1f | %.1f | %.1f | %d | %d | %s |\n", p.Name, num(p.OfferedRate), secs(p.DurationS),
				num(p.OKPerS), p.Latency.P50, p95, p.Latency.P99, p.Latency.P999, p.Latency.Max, p.Errors.Total(), p.NotSent, strings.Join(kinds, ", "))
		}
		md.f("\n")
		for _, p := range res.Phases {
			for _, v := range p.Verdicts {
				md.f("- %s: %s\n", p.Name, v)
			}
		}
		md.f("\n")
	}
	if an := r.Analysis; an != nil {
		renderCgroup(md, an)
	}
	if ps := r.MetricsProblems; len(ps) > 0 {
		if ps.Lost() {
			md.f("> **%s: %d lines skipped**; the figures over time come from its %d good lines:\n", rundir.MetricsFile, len(ps), len(r.Points))
		} else {
			md.f("> The run ended mid-write; the figures over time come from the %d whole lines of %s:\n", len(r.Points), rundir.MetricsFile)
		}
		for _, line := range ps.Lines(maxProblemLines) {
			md.f("> - %s\n", line)
		}
		md.f("\n")
	}
	if latencyPNG != "" || goroutinesPNG != "" {
		md.f("## Over time\n\nSampled by the run's poller (latency over each progress interval; goroutines and OS threads from the target's runtime/metrics).\n\n")
		if latencyPNG != "" {
			md.f("![latency over time](%s)\n", latencyPNG)
		}
		if goroutinesPNG != "" {
			md.f("![goroutines and threads over time](%s)\n", goroutinesPNG)
		}
	}
	if md.err != nil {
		return fmt.Errorf("writing report: %w", md.err)
	}
	return nil
}

func arrivals(res *load.Result) string {
	if res.Model == "closed" {
		return fmt.Sprintf(" (%d users)", res.Users)
	}
	if res.Arrivals != "" {
		return fmt.Sprintf(" (%s arrivals)", res.Arrivals)
	}
	return ""
}

func intOrDash(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func latencyOverTime(points []rundir.MetricsLine) *plot.Plot {
	p := plot.New()
	p.Title.Text = "latency over time"
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "ms (from intended send)"
	var p50, p99 plotter.XYs
	for _, pt := range points {
		if pt.Load.P99MS <= 0 {
			continue
		}
		p50 = append(p50, plotter.XY{X: pt.T, Y: pt.Load.P50MS})
		p99 = append(p99, plotter.XY{X: pt.T, Y: pt.Load.P99MS})
	}
	addLines(p, []series{{"p50", p50}, {"p99", p99}})
	p.X.Min, p.Y.Min = 0, 0
	return p
}

func goroutinesOverTime(points []rundir.MetricsLine) *plot.Plot {
	p := plot.New()
	p.Title.Text = "goroutines and OS threads over time"
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "count"
	var g, run, th plotter.XYs
	for _, pt := range points {
		g = append(g, plotter.XY{X: pt.T, Y: pt.Target.Goroutines})
		run = append(run, plotter.XY{X: pt.T, Y: pt.Target.Runnable})
		th = append(th, plotter.XY{X: pt.T, Y: pt.Target.Threads})
	}
	addLines(p, []series{{"goroutines", g}, {"runnable", run}, {"OS threads", th}})
	p.X.Min, p.Y.Min = 0, 0
	return p
}

// renderCgroup writes each steady phase's cgroup CPU limit and throttling,
// when a poll read the target's cgroup, and a limit on a parent cgroup that
// the Go runtime does not see.
func renderCgroup(md *mdWriter, an *rundir.Analysis) {
	if !slices.ContainsFunc(an.Phases, func(f rundir.PhaseFigures) bool { return f.Cgroup != nil }) {
		return
	}
	md.f("## CPU limit\n\nThe target's cgroup: the tightest CPU limit (quota / period, in cores) of its own cgroup and its parents, the enforcement periods of the phase and those that ran out of quota (throttled), the time its threads waited for the next period per second, and its CPU use against the limit.\n\n")
	md.f("| phase | cgroup | limit (cores) | set on | periods | throttled | throttled s/s | cores used | of limit |\n")
	md.f("|---|---|---:|---|---:|---:|---:|---:|---:|\n")
	for _, f := range an.Phases {
		cg := f.Cgroup
		if cg == nil {
			continue
		}
		limit, on, of := "none", "-", "-"
		if cg.TightestCores > 0 {
			limit, on, of = strconv.FormatFloat(cg.TightestCores, 'f', -1, 64), "`"+cg.TightestPath+"`", fmt.Sprintf("%.0f %%", 100*cg.UseOfLimit)
			if cg.ParentLimit {
				on += " (a parent)"
			}
		}
		md.f("| %s | `%s` | %s | %s | %d | %d (%.0f %%) | %.2f | %.2f | %s |\n", f.Name, cg.Path, limit, on,
			cg.Periods, cg.ThrottledPeriods, 100*cg.ThrottledShare, cg.ThrottledPerS, f.CPUCores, of)
	}
	md.f("\n")
	for _, fd := range an.Findings {
		if fd.Kind == rundir.KindParentCPULimit {
			md.f("> **%s.** %s.\n\n", fd.Title, fd.Detail)
		}
	}
}

// renderDiagnosis writes the diagnosis and the request anatomy.
func renderDiagnosis(md *mdWriter, an *rundir.Analysis) {
	if d := an.Diagnosis; d != nil {
		md.f("## Diagnosis\n\nCauses ranked by their share of %s", d.BasisDetail)
		md.f(" and, for a ceiling, of the offered rate lost.\n\n")
		if len(d.Causes) == 0 {
			md.f("Nothing stands out.\n\n")
		}
		for i, c := range d.Causes {
			var parts []string
			if c.Share > 0 {
				parts = append(parts, fmt.Sprintf("%.0f %% of the time", 100*c.Share))
			}
			if c.LostShare > 0 {
				parts = append(parts, fmt.Sprintf("%.0f %% of the offered rate lost", 100*c.LostShare))
			}
			md.f("%d. **%s** (%s)\n", i+1, c.Title, strings.Join(parts, "; "))
			for _, e := range c.Evidence {
				if !strings.HasSuffix(e, "of the time") {
					md.f("   - %s\n", e)
				}
			}
			md.f("   - change: %s\n", c.Change)
		}
		md.f("\n")
	}
	if an.Trace == nil || an.Trace.Requests == nil {
		return
	}
	rq := an.Trace.Requests
	split := func(ss []analyze.Share) string {
		var parts []string
		for _, s := range ss[:min(len(ss), 6)] {
			if s.Pct < 0.5 {
				break
			}
			name := string(s.State)
			if s.Pool != "" {
				name += " " + s.Pool
			}
			parts = append(parts, fmt.Sprintf("%.0f %% %s", s.Pct, name))
		}
		return strings.Join(parts, ", ")
	}
	if rq.PerRequest {
		md.f("## Where the requests' time went\n\nFrom the execution trace: each request's handler split by scheduler state (%d requests", rq.Requests)
		if rq.Joined > 0 {
			md.f(", %d joined with the generator's request ids: time before the handler counted", rq.Joined)
		}
		md.f(").\n\n| band | requests | latency | split |\n|---|---:|---|---|\n")
		for _, b := range rq.Bands {
			md.f("| %s | %d | %s - %s | %s |\n", b.Name, b.Requests, time.Duration(b.FromNs).Round(time.Microsecond), time.Duration(b.ToNs).Round(time.Microsecond), split(b.Split))
		}
		md.f("\n")
		return
	}
	md.f("## Where the goroutines' time went, per class\n\n%s.\n\n| class | goroutines | split |\n|---|---:|---|\n", rq.Note)
	for _, c := range rq.Classes[:min(len(rq.Classes), 5)] {
		md.f("| `%s` | %d | %s |\n", c.Class, c.Goroutines, split(c.Split))
	}
	md.f("\n")
}
