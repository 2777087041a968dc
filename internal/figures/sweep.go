package figures

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/internal/capacity"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/report"
	"github.com/schedscope/schedscope/internal/rundir"
)

// RecommendedKey is the group key of a sweep's figures at its recommended
// GOMAXPROCS, the ones its conditions check.
const RecommendedKey = "recommended"

// LevelKey is the group key of a sweep's GOMAXPROCS level, in a sweep
// whose only line axis is GOMAXPROCS (LineKey of such a line).
func LevelKey(gomaxprocs int) string { return fmt.Sprintf("gomaxprocs %d", gomaxprocs) }

// LineKey is the group key of a sweep's line: "gomaxprocs 2" in a
// GOMAXPROCS-only sweep (LevelKey), else the model, CPU limit, GOMAXPROCS
// and fixture flag values, "pool, limit 1 cpu, gomaxprocs 2, workers=20"
// ("gomaxprocs auto" for an auto line), so the same line of two sweeps is
// compared.
func LineKey(l rundir.Line) string {
	var parts []string
	if l.Model != "" {
		parts = append(parts, l.Model)
	}
	if l.CPULimit > 0 {
		parts = append(parts, fmt.Sprintf("limit %g cpu", l.CPULimit))
	}
	if l.GOMAXPROCS == 0 {
		parts = append(parts, "gomaxprocs auto")
	} else {
		parts = append(parts, LevelKey(l.GOMAXPROCS))
	}
	for _, kv := range l.Set.Pairs() {
		parts = append(parts, kv[0]+"="+kv[1])
	}
	return strings.Join(parts, ", ")
}

// ReadSweep reads a sweep directory's figures: each line's knee, ceiling
// and low-load service time, and, when GOMAXPROCS is the only line axis,
// the recommendation. A sweep cut short gives the steps it holds, with a
// warning.
func ReadSweep(dir string) (*Set, error) {
	r, err := report.AnalyzeSweep(dir)
	if err != nil {
		return nil, err
	}
	p := r.Sweep.Plan
	s := &Set{Path: dir, Kind: KindSweep, Label: sweepLabel(p, dir)}
	s.Identity = Identity{Request: p.URL, Target: p.Command, MachineCPUs: p.Machine.CPUs}
	if p.Fixture != "" {
		s.Identity.Target = "fixture " + p.Fixture
	}
	if u := urlRequest(p.URL); u.request != "" {
		s.Identity.Request, s.Identity.Host = u.request, u.host
	}
	for _, rate := range p.Rates {
		s.Identity.Phases = append(s.Identity.Phases, PhaseLoad{OfferedRate: rate, DurationS: p.DurationS})
	}
	for _, u := range p.Users {
		s.Identity.Phases = append(s.Identity.Phases, PhaseLoad{Users: u, DurationS: p.DurationS})
	}
	if left := len(r.Sweep.Remaining()); left > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %d of %d steps were not measured (the sweep was cut short): compared on the steps it holds", dir, left, len(p.Steps())))
	}
	s.Warnings = append(s.Warnings, r.Analysis.Notes...)
	a := r.Analysis
	for _, l := range a.Levels {
		g := Group{Key: LineKey(l.Line), Title: l.Label}
		g.Figures = levelFigures(l, "")
		s.Groups = append(s.Groups, g)
	}
	rec := a.Recommendation.GOMAXPROCS
	// A value set beats an auto line whose runtime chose the same.
	i := slices.IndexFunc(a.Levels, func(l capacity.Level) bool { return l.Line.GOMAXPROCS == rec })
	if i < 0 {
		i = slices.IndexFunc(a.Levels, func(l capacity.Level) bool { return l.GOMAXPROCS == rec })
	}
	if i >= 0 {
		l := a.Levels[i]
		g := Group{Key: RecommendedKey, Title: "at the recommended GOMAXPROCS (each sweep's own)", Gate: true}
		g.Figures = append(levelFigures(l, "metric"),
			Figure{Key: "gomaxprocs", Metric: "gomaxprocs", Label: "recommended GOMAXPROCS", Unit: cond.Count, Value: float64(rec)})
		s.Groups = append(s.Groups, g)
		for _, c := range l.Cells {
			s.Throughput = append(s.Throughput, Point{c.X(), c.OKPerSec})
		}
	}
	return s, nil
}

// levelFigures are one level's figures; with metrics set they carry the
// Sweep context's metric names (the recommended level's).
func levelFigures(l capacity.Level, metrics string) []Figure {
	name := func(m string) string {
		if metrics == "" {
			return ""
		}
		return m
	}
	knee := Figure{Key: "knee", Metric: name("knee"), Label: "knee req/s", Unit: cond.PerSecond, Value: l.Knee, Better: Higher}
	if l.Closed {
		knee.Label, knee.Unit = "knee users", cond.Count
	}
	fs := []Figure{
		knee,
		{Key: "ceiling", Metric: name("ceiling"), Label: "ceiling 2xx/s", Unit: cond.PerSecond, Value: l.Ceiling, Better: Higher},
	}
	if p99 := kneeP99(l); p99 > 0 {
		fs = append(fs, Figure{Key: "p99", Metric: name("p99"), Label: "latency p99 at the knee", Unit: cond.Duration, Value: float64(p99), Better: Lower})
	}
	if l.LowLoadService > 0 {
		fs = append(fs, Figure{Key: "service.p50", Metric: name("service.p50"), Label: "low-load service p50", Unit: cond.Duration, Value: float64(l.LowLoadService), Better: Lower})
	}
	if l.BusyPs > 0 {
		fs = append(fs, Figure{Key: "busy_ps", Label: "busy Ps at the ceiling", Unit: cond.Cores, Value: l.BusyPs})
	}
	return fs
}

// kneeP99 is the p99 of the level's knee cell; 0 without a knee.
func kneeP99(l capacity.Level) time.Duration {
	for _, c := range l.Cells {
		if c.Knee {
			return c.P99
		}
	}
	return 0
}

// sweepLabel names a sweep: its fixture model, scenario, or directory.
func sweepLabel(p rundir.SweepPlan, dir string) string {
	switch {
	case p.Model != "" && p.Scenario != "":
		return p.Scenario + " " + p.Model
	case p.Model != "":
		return p.Model
	}
	return filepath.Base(filepath.Clean(dir))
}

// ReadTrace reads an execution trace's figures: every metric of the Trace
// context, in one group. A truncated trace gives what came before the
// damage, with a warning.
func ReadTrace(ctx context.Context, path string, opts analyze.Options) (*Set, error) {
	rep, err := analyze.TraceFile(ctx, path, opts)
	if rep == nil {
		return nil, err
	}
	s := &Set{Path: path, Kind: KindTrace, Label: filepath.Base(path)}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %v: compared up to the damage", path, err))
	}
	src := cond.ReportSource(rep)
	g := Group{Key: "trace", Title: "trace", Gate: true}
	for _, m := range cond.Metrics(cond.Trace) {
		v, ok := src.Value(m.Name)
		if !ok {
			continue
		}
		f := Figure{Key: m.Name, Metric: m.Name, Label: m.Name, Unit: m.Unit, Value: v, Better: Lower}
		if m.Name == "goroutines.peak" || m.Name == "threads.peak" || m.Name == "locked" {
			f.Better = Neutral
		}
		g.Figures = append(g.Figures, f)
	}
	s.Groups = []Group{g}
	return s, nil
}
