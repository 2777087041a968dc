// Package report writes schedscope's Markdown reports with PNG plots: for a
// GOMAXPROCS sweep directory (read through internal/rundir) the results table, knee,
// capacity by Little's law, scaling verdict, carriers needed and recommended
// GOMAXPROCS; for a run directory, latency and goroutines/threads over time.
//
// Reports read like the seed benchmarks' tables: each says how it was
// measured (target, model, rates, durations, iterations, machine), so it can
// be pasted into a design document as it is.
package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/capacity"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// File names a sweep report writes into its directory.
const (
	ReportFile     = "report.md"
	ThroughputPlot = "throughput.png"
	P99Plot        = "p99.png"
	ThrottledPlot  = "throttled.png"
)

// SweepReport is a sweep directory's analysis, as rendered.
type SweepReport struct {
	Sweep    *rundir.Sweep
	Analysis capacity.Analysis
	// Files are the paths written, report first.
	Files []string
}

// Samples converts a sweep's steps to capacity samples.
func Samples(steps []rundir.SweepStep) []capacity.Sample {
	out := make([]capacity.Sample, 0, len(steps))
	for _, st := range steps {
		out = append(out, capacity.Sample{
			GOMAXPROCS: st.GOMAXPROCS, RuntimeGOMAXPROCS: st.RuntimeGOMAXPROCS, CPULimit: st.CPULimit, Model: st.Model, Set: st.Set, Iteration: st.Iteration, OfferedRate: st.Rate, Users: st.Users,
			OK: st.OK, OKPerSec: st.OKPerSec, Answered: st.AnsweredPerSec, P50: msDur(st.P50MS), P95: msDur(st.P95MS), P99: msDur(st.P99MS),
			Mean:       msDur(st.MeanMS),
			ServiceP50: msDur(st.ServiceP50MS),
			Errors:     st.Errors, NotSent: st.NotSent, Planned: st.Sent + st.NotSent,
			CPUCores:       targetCores(st),
			MachineBusy:    st.MachineBusy,
			Goroutines:     goroutines(st),
			Threads:        threads(st),
			CPUPerRequest:  time.Duration(st.CPUPerRequestUS * float64(time.Microsecond)),
			RSSBytes:       st.RSSBytes,
			GeneratorBound: st.GeneratorBound,
		})
		if t := st.Throttle; t != nil {
			s := &out[len(out)-1]
			s.Quota, s.Throttled, s.ThrottledS, s.QuotaUse = true, t.Share(), t.ThrottledS, t.QuotaUse
		}
	}
	return out
}

// targetCores is the cores the target used during a step: measured over
// the wall time between the /proc readings when the step has it, else over
// the phase's length (older sweep files), which overstates it when
// stragglers ran after the phase.
func targetCores(st rundir.SweepStep) float64 {
	switch {
	case st.TargetCPUCores > 0:
		return st.TargetCPUCores
	case st.DurationS > 0:
		return st.TargetCPUS / st.DurationS
	}
	return 0
}

func goroutines(st rundir.SweepStep) float64 {
	if st.Agent != nil {
		return st.Agent.Goroutines
	}
	return 0
}

// threads prefers the agent's count (the runtime's own threads) over /proc's.
func threads(st rundir.SweepStep) float64 {
	if st.Agent != nil && st.Agent.Threads > 0 {
		return st.Agent.Threads
	}
	return float64(st.Threads)
}

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// AnalyzeSweep loads and analyzes the sweep directory dir without writing.
func AnalyzeSweep(dir string) (*SweepReport, error) {
	s, err := rundir.ReadSweep(dir)
	if err != nil {
		return nil, err
	}
	if len(s.Steps) == 0 {
		return nil, fmt.Errorf("sweep %s: no finished step yet", dir)
	}
	a, err := capacity.Analyze(Samples(s.Steps), Options(s.Plan))
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", dir, err)
	}
	return &SweepReport{Sweep: s, Analysis: a}, nil
}

// Options are the capacity rules' inputs from a sweep's plan: the think
// time, the CPUs targets could use (see CPUs) and each line's concurrency
// limit (see LineConcurrencyLimit).
func Options(p rundir.SweepPlan) capacity.Options {
	return capacity.Options{
		ConcurrencyLimit:     p.ConcurrencyLimit,
		LineConcurrencyLimit: func(l rundir.Line) int { return LineConcurrencyLimit(p, l) },
		Think:                p.Think(),
		CPUs:                 CPUs(p),
		TargetP99:            msDur(p.TargetP99MS),
		LimitOnParent:        p.LimitOnParent,
	}
}

// CPUs is the number of CPUs a sweep's targets could run on: the pinning
// set (--target-cpus) when given, else the CPUs the sweep could use
// (machine.allowed_cpus), else the machine's; 0 when unknown.
func CPUs(p rundir.SweepPlan) int {
	for _, list := range []string{p.TargetCPUs, p.Machine.AllowedCPUs} {
		if list == "" {
			continue
		}
		if cpus, err := target.ParseCPUList(list); err == nil && len(cpus) > 0 {
			return len(cpus)
		}
	}
	return p.Machine.CPUs
}

// fixtureBounded are the fixture's models that cap requests in service.
var fixtureBounded = map[string]bool{"pool": true, "threads": true, "bulkhead": true}

// LineConcurrencyLimit is a line's known cap on requests in service. For a
// fixture whose model is swept, or whose workers are (--set workers=N), it
// follows the line: 0 for an unbounded model, else the line's workers, else
// the plan's limit, else the fixture's default max(8 x GOMAXPROCS, 200).
// Otherwise it is the plan's ConcurrencyLimit.
func LineConcurrencyLimit(p rundir.SweepPlan, l rundir.Line) int {
	w, hasWorkers := l.Set.Get("workers")
	if p.Fixture == "" || (l.Model == "" && !hasWorkers) {
		return p.ConcurrencyLimit
	}
	model := l.Model
	if model == "" {
		model = p.Model
	}
	if !fixtureBounded[model] {
		return 0
	}
	if n, err := strconv.Atoi(w); hasWorkers && err == nil && n > 0 {
		return n
	}
	if p.ConcurrencyLimit > 0 {
		return p.ConcurrencyLimit
	}
	return max(8*l.GOMAXPROCS, 200)
}

// WriteSweep analyzes the sweep directory dir and writes report.md,
// throughput.png and p99.png into outDir (dir itself when outDir is ""). An
// unfinished sweep is reported with what it has, and says so. An outDir of
// another kind (a run or sweep directory, other files) is refused before
// anything is written.
func WriteSweep(dir, outDir string) (*SweepReport, error) {
	r, err := AnalyzeSweep(dir)
	if err != nil {
		return nil, err
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
	tp := filepath.Join(outDir, ThroughputPlot)
	if err := SavePlot(tp, throughputPlot(sweepLines(r))); err != nil {
		return nil, err
	}
	pp := filepath.Join(outDir, P99Plot)
	if err := SavePlot(pp, p99Plot(sweepLines(r))); err != nil {
		return nil, err
	}
	plots := SweepPlots{Throughput: ThroughputPlot, P99: P99Plot}
	files := []string{tp, pp}
	if len(r.Sweep.Plan.CPULimits) > 0 {
		th := filepath.Join(outDir, ThrottledPlot)
		if err := SavePlot(th, throttledPlot(sweepLines(r))); err != nil {
			return nil, err
		}
		plots.Throttled, files = ThrottledPlot, append(files, th)
	}
	md := filepath.Join(outDir, ReportFile)
	if err := writeMarkdown(md, func(w io.Writer) error { return RenderSweep(w, r, plots) }); err != nil {
		return nil, err
	}
	r.Files = append([]string{md}, files...)
	return r, nil
}

// SweepPlots are the image paths a sweep report links ("" leaves a plot
// out).
type SweepPlots struct {
	Throughput, P99 string
	// Throttled is the CPU quota's throttled share per line (a sweep with
	// CPU limits).
	Throttled string
}

// RenderSweep writes r as Markdown to w, linking plots.
func RenderSweep(w io.Writer, r *SweepReport, plots SweepPlots) error {
	throughputPNG, p99PNG := plots.Throughput, plots.P99
	md := &mdWriter{w: w}
	p := r.Sweep.Plan
	a := r.Analysis

	cpus := CPUs(p)
	if len(p.Models) == 0 && len(p.Sets) == 0 && len(p.CPULimits) == 0 {
		md.f("# GOMAXPROCS sweep: %s\n\n", title(p))
	} else {
		md.f("# Sweep over %s: %s\n\n", axesName(p), title(p))
	}
	if len(a.Families) > 1 {
		md.f("The lines differ in more than GOMAXPROCS, so scaling and the recommended GOMAXPROCS are judged per %s:\n\n", familyName(p))
		for _, f := range a.Families {
			md.f("- **%s**: %s; scaling %s: %s.\n", f.Label, recommendation(f.Recommendation, cpus), f.Scaling.Kind, f.Scaling.Reason)
		}
		md.f("\n")
	} else {
		rec := a.Recommendation
		if rec.GOMAXPROCS > 0 {
			md.f("**Recommended GOMAXPROCS: %s.** %s.\n\n", strings.TrimPrefix(rundir.GOMAXPROCSLabel(rec.GOMAXPROCS, cpus), "GOMAXPROCS "), capitalize(rec.Reason))
		} else {
			md.f("**No recommendation.** %s.\n\n", capitalize(rec.Reason))
		}
		md.f("**Scaling: %s.** %s.\n\n", a.Scaling.Kind, capitalize(a.Scaling.Reason))
	}
	if rem := len(r.Sweep.Remaining()); rem > 0 {
		md.f("> **Unfinished sweep:** %d of %d steps are missing; the figures below use the %d finished ones.\n\n",
			rem, len(p.Steps()), len(r.Sweep.Steps))
	}

	md.f("## How it was measured\n\n")
	md.f("| | |\n|---|---|\n")
	md.f("| target | %s |\n", targetLine(p))
	md.f("| URL | `%s` |\n", p.URL)
	if p.Model != "" {
		limit := ""
		if p.ConcurrencyLimit > 0 {
			limit = fmt.Sprintf(", at most %d requests in service", p.ConcurrencyLimit)
		}
		md.f("| model | %s%s |\n", p.Model, limit)
	}
	if len(p.Models) > 0 {
		md.f("| models | %s (each passed as `--model` to the fixture) |\n", strings.Join(p.Models, ", "))
	}
	for _, ax := range p.Sets {
		how := fmt.Sprintf("each passed as `--%s=VALUE` to the fixture", ax.Name)
		if param, ok := rundir.QueryParam(ax.Name); ok {
			how = fmt.Sprintf("each sent as the query parameter `%s=VALUE` of the URL", param)
		}
		md.f("| %s | %s (%s) |\n", ax.Name, strings.Join(ax.Values, ", "), how)
	}
	if p.Closed() {
		md.f("| load | closed model (each user sends a request, waits for its answer, thinks %s, repeats); %s users; warm-up %s at the fewest users, then %s per user count, pause %s |\n",
			secs(p.ThinkS), joinInts(p.Users), secs(p.WarmupS), secs(p.DurationS), secs(p.PauseS))
	} else {
		arrivals := "fixed arrival rate"
		if p.Arrivals == "poisson" {
			arrivals = "fixed mean arrival rate, Poisson arrivals from one seed"
		}
		md.f("| load | open model (%s, latency from the intended send time); offered %s req/s; warm-up %s at the lowest rate, then %s per rate, pause %s |\n",
			arrivals, joinRates(p.Rates), secs(p.WarmupS), secs(p.DurationS), secs(p.PauseS))
	}
	md.f("| GOMAXPROCS | %s; %s |\n", joinGOMAXPROCS(p.GOMAXPROCS, cpus), isolation(p))
	if len(p.CPULimits) > 0 {
		md.f("| CPU limits | %s (CPUs; each target in a fresh cgroup v%d with a quota of L x 100 ms per 100 ms period) |\n", joinLimits(p.CPULimits), p.CgroupVersion)
	}
	md.f("| iterations | %d (each figure is the median over iterations) |\n", p.Iterations)
	m := p.Machine
	md.f("| machine | %d CPUs (%s), %s/%s, kernel %s, %s; load average at start %s |\n",
		m.CPUs, orDash(m.CPUModel), m.GOOS, m.GOARCH, orDash(m.Kernel), m.GoVersion, orDash(m.LoadAverage))
	md.f("| date | %s |\n\n", p.Started.UTC().Format("2006-01-02 15:04 UTC"))

	md.f("## Results\n\n")
	loadCol, loadUnit := "offered req/s", "rate"
	if p.Closed() {
		loadCol, loadUnit = "users", "user count"
	}
	md.f("Median over iterations per line and %s. 2xx/s is the load generator's figure: the rate at which the target answered the phase's requests with 2xx, from the phase's first completion to its last (so a saturated target shows its ceiling even when its queue drains after the phase); answered is the share of the phase's requests answered 2xx, whenever the answer came (closed model: the share of answers that were 2xx); latency is measured from each request's intended send time, over every response (quick 503s from a full queue included, which pull p50 down when most requests are rejected); CPU/request is the target's user+system CPU (from /proc) divided by its 2xx responses; RSS is the target's resident set at the end of the phase; goroutines and OS threads are the target's at the end of the phase (from its agent when it has one, threads from /proc otherwise). ", loadUnit)
	if p.Closed() {
		md.f("**knee**: the most users whose throughput still grows with them (2xx/s >= 90 %% of users / (think + the mean latency at the fewest users), by Little's law, with at most 1 %% errors, every smaller count served too); **over**: not served; ")
	} else {
		md.f("**knee**: the highest rate still served (>= 99 %% of its requests answered 2xx, 2xx/s >= %.0f %% of the offered rate while the phase ran, and p99 within 2x the p99 at the lowest rate, every lower rate served too; a line whose lowest rate is not served has no knee: offer lower rates); **over**: not served; ", 100*load.TrackingRatio)
	}
	md.f("**gen-bound**: not served while the load generator was a material limit in every iteration (see Notes): neither the knee nor a break in the ladder, and used for the ceiling only when it still sent 99 %% of its requests. A step served while the generator lagged counts as served: its latency, measured from the intended send time, includes the lag.\n\n")
	quota := len(p.CPULimits) > 0
	if quota {
		md.f("**throttled**: the share of the CPU quota's 100 ms periods (with runnable threads) in which the target ran out of quota and waited for the next one, and the time its threads waited, summed (cgroup cpu.stat); **quota use**: the target's CPU use over its quota.\n\n")
	}
	for _, l := range a.Levels {
		md.f("**%s**\n\n", l.Label)
		md.f("| %s | 2xx/s | answered | p50 ms | p95 ms | p99 ms | errors | not sent | CPU/request | RSS MB | goroutines / threads |%s |\n", loadCol, iff(quota, " throttled | quota use |", ""))
		md.f("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|%s---|\n", iff(quota, "---:|---:|", ""))
		for _, c := range l.Cells {
			md.f("| %s | %s | %s | %s | %s | %s | %d | %d | %s | %s | %s |",
				num(c.X()), num(c.OKPerSec), answered(c), msf(c.P50), msOrDash(c.P95), msf(c.P99), c.Errors, c.NotSent,
				cpuf(c.CPUPerRequest), mb(c.RSSBytes), gt(c))
			if quota {
				md.f(" %s |", throttleCell(c))
			}
			md.f(" %s |\n", mark(c))
		}
		md.f("\n")
	}
	if throughputPNG != "" {
		md.f("![2xx/s vs %s, one line per %s](%s)\n", loadName(p), lineName(p), throughputPNG)
	}
	if p99PNG != "" {
		md.f("![p99 latency vs %s, one line per %s](%s)\n", loadName(p), lineName(p), p99PNG)
	}
	md.f("\n## Capacity\n\n")
	md.f("The ceiling is the highest 2xx/s measured at any rate. Little's law (throughput = concurrency / latency) turns it into the number of requests in service at the low-load service time (the median time from each request's actual send to its response at the lowest rate: the target's own latency, without the generator's send lag); CPU fraction is CPU per request over that service time; busy Ps is the target's CPU use (cores, from /proc) in the step that set the ceiling.\n\n")
	little := false
	for _, l := range a.Levels {
		little = little || l.LittlePrediction > 0
	}
	kneeUnit := "req/s"
	if p.Closed() {
		kneeUnit = "users"
	}
	md.f("| line | knee %s | ceiling 2xx/s | limit | low-load service ms | CPU/request | CPU fraction | busy Ps at ceiling | in service at ceiling | CPU-only limit req/s |%s\n",
		kneeUnit, iff(little, " Little's law limit req/s |", ""))
	md.f("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|%s\n", iff(little, "---:|", ""))
	for _, l := range a.Levels {
		knee := num(l.Knee)
		if l.StartsOver {
			knee = "offer lower rates"
		} else if l.Knee == 0 {
			knee = "none"
		}
		service := msf(l.LowLoadService)
		if l.LowLoadService <= 0 {
			service = "-"
		}
		ceiling := num(l.Ceiling)
		if !l.Saturated {
			ceiling = ">= " + ceiling
		}
		md.f("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", l.Label, knee, ceiling, orDash(string(l.Limit)), service,
			cpuf(l.CPUPerRequest), pct(l.CPUFraction), fixed(l.BusyPs, 2), fixed(l.InService, 1), num(l.CPUPrediction))
		if little {
			md.f(" %s |", num(l.LittlePrediction))
		}
		md.f("\n")
	}
	md.f("\n")
	for _, line := range littleLines(p, a) {
		md.f("- %s\n", line)
	}
	if quota {
		renderQuota(md, r, plots.Throttled)
	}
	md.f("\n## Carriers needed\n\n")
	c := a.Carriers
	if len(a.Families) > 1 {
		c = capacity.Carriers{}
		md.f("Per %s: ", familyName(p))
		for i, f := range a.Families {
			md.f("%s**%s** about %s Ps for %s req/s", iff(i > 0, "; ", ""), f.Label, fixed(f.Carriers.Needed, 2), num(f.Carriers.Rate))
		}
		md.f(" (rate x CPU per request; \"-\" where CPU was not measured).\n")
	} else if c.Needed > 0 {
		md.f("Carriers needed ~ concurrency x CPU fraction. At the highest offered rate, %s req/s, with a low-load service time of %s ms, Little's law puts %.1f requests in service; each spends %s of its time on a P (%s of CPU per request), so the load needs about **%.2f Ps**",
			num(c.Rate), msf(c.Latency), c.Concurrency, pct(c.CPUFraction), cpuf(c.CPUPerRequest), c.Needed)
		md.f(" (the same figure as rate x CPU per request). The Ps are only the limit when this exceeds GOMAXPROCS.\n")
	} else if c.Latency <= 0 && startsOver(a) {
		md.f("Not estimated: no line was served at its lowest rate, so there is no low-load service time; offer lower rates.\n")
	} else {
		md.f("Not estimated: the target's CPU was not measured (no /proc).\n")
	}
	notes := append([]string(nil), a.Notes...)
	if n := immaterialGeneratorVerdicts(r.Sweep.Steps); n > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d steps carried the load generator's generator-bound verdict for a send lag that is small against the latency measured (latency counts from the intended send time, so it includes the lag); they are kept. The generator counts as a material limit only when it used 0.9 cores or its send lag p99 exceeded 1 ms and 10 %% of the latency p99, and even then a step that was served counts as served", n, len(r.Sweep.Steps)))
	}
	notes = append(notes, generatorNotes(r.Sweep)...)
	if len(notes) > 0 {
		md.f("\n## Notes\n\n")
		for _, n := range notes {
			md.f("- %s.\n", n)
		}
	}
	if md.err != nil {
		return fmt.Errorf("writing report: %w", md.err)
	}
	return nil
}

// startsOver reports whether some line of a started over capacity.
func startsOver(a capacity.Analysis) bool {
	for _, l := range a.Levels {
		if l.StartsOver {
			return true
		}
	}
	return false
}

// generatorNotes summarises the materially generator-bound steps, one line
// per line of the sweep.
func generatorNotes(s *rundir.Sweep) []string {
	var out []string
	cpus := CPUs(s.Plan)
	for _, line := range s.Plan.Lines() {
		var loads []string
		n, total, worst := 0, 0, ""
		worstLag := -1.0
		for _, st := range s.Steps {
			if st.Line() != line {
				continue
			}
			total++
			if !st.GeneratorBound {
				continue
			}
			n++
			loads = append(loads, fmt.Sprintf("%s (iteration %d)", stepLoad(st.StepKey), st.Iteration))
			if lag := lagOf(st); lag > worstLag {
				worstLag, worst = lag, st.GeneratorNote
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s: the generator was a material limit in %d of %d steps, at %s; the worst: %s; a load's figures are the medians of its other iterations, and one served all the same counts as served",
				line.Label(cpus), n, total, strings.Join(loads, ", "), worst))
		}
	}
	return out
}

// stepLoad is "200 req/s" or "50 users".
func stepLoad(k rundir.StepKey) string {
	if k.Users > 0 {
		return fmt.Sprintf("%d users", k.Users)
	}
	return num(k.Rate) + " req/s"
}

// lagOf reads the send lag back from a step's generator note ("send lag p99
// X ms"), -1 when absent.
func lagOf(st rundir.SweepStep) float64 {
	var lag float64
	if i := strings.Index(st.GeneratorNote, "send lag p99 "); i >= 0 {
		if _, err := fmt.Sscanf(st.GeneratorNote[i:], "send lag p99 %f ms", &lag); err == nil {
			return lag
		}
	}
	return -1
}

// gt renders "goroutines / threads", with a dash for what is unknown.
func gt(c capacity.Cell) string {
	g, t := "-", "-"
	if c.Goroutines > 0 {
		g = fmt.Sprintf("%.0f", c.Goroutines)
	}
	if c.Threads > 0 {
		t = fmt.Sprintf("%.0f", c.Threads)
	}
	return g + " / " + t
}

// answered is the share of the offered rate answered 2xx; in the closed
// model, the share of answers that were 2xx.
func answered(c capacity.Cell) string {
	if c.Users > 0 && c.OK+c.Errors > 0 {
		return fmt.Sprintf("%.1f %%", 100*float64(c.OK)/float64(c.OK+c.Errors))
	}
	if c.OfferedRate <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*min(c.Answered/c.OfferedRate, 9.99))
}

func immaterialGeneratorVerdicts(steps []rundir.SweepStep) int {
	n := 0
	for _, st := range steps {
		if st.GeneratorVerdict && !st.GeneratorBound {
			n++
		}
	}
	return n
}

// littleLines states, per GOMAXPROCS, what held the ceiling and the
// Little's-law and CPU predictions beside it.
func littleLines(p rundir.SweepPlan, a capacity.Analysis) []string {
	var out []string
	for _, l := range a.Levels {
		if l.LowLoadService <= 0 || l.Ceiling <= 0 {
			continue
		}
		if l.Limit != "" {
			out = append(out, fmt.Sprintf("%s: **%s**: %s", l.Label, l.Limit, l.LimitReason))
		}
		if limit := LineConcurrencyLimit(p, l.Line); limit > 0 && l.LittlePrediction > 0 {
			verdict := "the ladder did not reach it"
			if l.Saturated {
				verdict = fmt.Sprintf("measured ceiling %s 2xx/s, %.0f %% of the prediction", num(l.Ceiling), 100*l.Ceiling/l.LittlePrediction)
			}
			out = append(out, fmt.Sprintf("%s: Little's law predicts %d in service / %s ms = %s req/s; %s",
				l.Label, limit, msf(l.LowLoadService), num(l.LittlePrediction), verdict))
		}
		if l.CPUPrediction > 0 && l.Saturated {
			out = append(out, fmt.Sprintf("%s: the Ps alone would allow %d / %s = %s req/s; the ceiling is %.0f %% of that (%.2f Ps busy)",
				l.Label, l.GOMAXPROCS, cpuf(l.CPUPerRequest), num(l.CPUPrediction), 100*l.Ceiling/l.CPUPrediction, l.BusyPs))
		}
	}
	return out
}

func title(p rundir.SweepPlan) string {
	switch {
	case p.Scenario != "" && p.Model != "":
		return fmt.Sprintf("%s scenario, %s model", p.Scenario, p.Model)
	case p.Scenario != "":
		return p.Scenario + " scenario"
	case p.Command != "":
		return "`" + p.Command + "`"
	}
	return p.URL
}

func targetLine(p rundir.SweepPlan) string {
	switch {
	case p.Fixture != "":
		return fmt.Sprintf("`schedscope fixture` (`--fixture '%s'`)", p.Fixture)
	case p.Command != "":
		return "`" + p.Command + "`"
	case len(p.Argv) > 0:
		return "`" + strings.Join(p.Argv, " ") + "`"
	}
	return "a running target"
}

// axesName says what a sweep varies besides the load: "GOMAXPROCS, model
// and workers".
func axesName(p rundir.SweepPlan) string {
	parts := []string{"GOMAXPROCS"}
	if len(p.CPULimits) > 0 {
		parts = append(parts, "CPU limit")
	}
	if len(p.Models) > 0 {
		parts = append(parts, "model")
	}
	for _, ax := range p.Sets {
		parts = append(parts, ax.Name)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// familyName says what a family is: "model and workers value".
func familyName(p rundir.SweepPlan) string {
	var parts []string
	if len(p.Models) > 0 {
		parts = append(parts, "model")
	}
	if len(p.CPULimits) > 0 {
		parts = append(parts, "CPU limit")
	}
	for _, ax := range p.Sets {
		parts = append(parts, ax.Name)
	}
	if len(parts) == 0 {
		return "line"
	}
	return strings.Join(parts, " and ") + " value"
}

// lineName says what identifies a line, for plot captions.
func lineName(p rundir.SweepPlan) string {
	if len(p.Models) == 0 && len(p.Sets) == 0 && len(p.CPULimits) == 0 {
		return "GOMAXPROCS"
	}
	return "combination of " + axesName(p)
}

// loadName is the plots' x axis.
func loadName(p rundir.SweepPlan) string {
	if p.Closed() {
		return "users"
	}
	return "offered rate"
}

// recommendation renders a family's recommendation in a sentence.
func recommendation(r capacity.Recommendation, cpus int) string {
	if r.GOMAXPROCS == 0 {
		return "no recommendation (" + r.Reason + ")"
	}
	return fmt.Sprintf("recommended %s (%s)", rundir.GOMAXPROCSLabel(r.GOMAXPROCS, cpus), r.Reason)
}

// joinGOMAXPROCS lists GOMAXPROCS values, each above the CPUs labelled.
// joinLimits is "0.5, 1, 1.5".
func joinLimits(ls []float64) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = strconv.FormatFloat(l, 'g', -1, 64)
	}
	return strings.Join(parts, ", ")
}

func joinGOMAXPROCS(xs []int, cpus int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
		if x == 0 {
			parts[i] = "auto (unset: the runtime chose)"
		}
		if cpus > 0 && x > cpus {
			parts[i] += fmt.Sprintf(" (> %d CPUs)", cpus)
		}
	}
	return strings.Join(parts, ", ")
}

func msOrDash(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return msf(d)
}

func isolation(p rundir.SweepPlan) string {
	if p.Live {
		return "one live process, GOMAXPROCS changed through the in-target agent (a warmed heap and pools carry over between values)"
	}
	s := "a fresh target process per line and iteration, GOMAXPROCS set in its environment"
	switch {
	case p.Pinned && p.TargetCPUs != "":
		s += fmt.Sprintf(", pinned with taskset to that many of CPUs %s; the load generator ran on CPUs %s", p.TargetCPUs, orDash(p.Machine.AllowedCPUs))
	case p.Pinned:
		s += fmt.Sprintf(", pinned with taskset to that many CPUs where the machine had them (it has %d; the load generator was not pinned and shares them)", p.Machine.CPUs)
	}
	return s
}

func mark(c capacity.Cell) string {
	switch {
	case c.Ambiguous():
		return "gen-bound"
	case c.Knee:
		return "**knee**"
	case !c.Served:
		return "over"
	}
	return ""
}

type mdWriter struct {
	w   io.Writer
	err error
}

func (m *mdWriter) f(format string, args ...any) {
	if m.err == nil {
		_, m.err = fmt.Fprintf(m.w, format, args...)
	}
}

// num formats a rate: integers plainly, small values with one decimal.
func num(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return thousands(int64(v))
	case math.Abs(v) >= 100:
		return thousands(int64(math.Round(v)))
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

func msf(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func cpuf(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	if d >= time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

func mb(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(b)/1e6)
}

func pct(f float64) string {
	if f <= 0 {
		return "-"
	}
	if f < 0.1 {
		return fmt.Sprintf("%.1f %%", 100*f)
	}
	return fmt.Sprintf("%.0f %%", 100*f)
}

func fixed(v float64, prec int) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

func secs(s float64) string { return (time.Duration(s * float64(time.Second))).String() }

func joinRates(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = num(r)
	}
	return strings.Join(parts, ", ")
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func iff(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
