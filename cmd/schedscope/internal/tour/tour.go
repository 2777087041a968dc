// Package tour is `schedscope demo`'s guided tour: the seeds' first lesson
// run live on this machine. It starts the fixture server in-process (with
// the in-target agent mounted), drives the same open-model ladder of offered
// rates at its /sleep scenario first in the pool model (N worker goroutines:
// a ceiling of N / sleep req/s by Little's law) and then in the goroutine
// model (a goroutine per request: no such ceiling), recording each as a
// schedscope run directory (with its analysis.json and summary.txt). It
// narrates through tui.Frames, so the dashboard (or plain lines) shows it,
// and ends with a one-screen comparison.
package tour

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/schedscope/schedscope/cmd/schedscope/internal/feed"
	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/collect"
	"github.com/schedscope/schedscope/internal/derive"
	"github.com/schedscope/schedscope/internal/fixtures"
	"github.com/schedscope/schedscope/internal/fixtures/fixtureagent"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/tui"
)

// Config is the tour's plan. Zero fields take the defaults noted.
type Config struct {
	// Workers is the pool model's worker goroutines (default 200).
	Workers int
	// Sleep is each request's blocking wait, whole milliseconds (default
	// 200 ms: the pool's ceiling is then 1,000 req/s, which a 2-core machine
	// can both generate and serve).
	Sleep time.Duration
	// Rates are the offered rates, req/s (default 0.5x, 1x and 1.5x the
	// pool's ceiling).
	Rates []float64
	// Duration is each step's length (default 4 s); Pause the pause between
	// steps (default 1 s); Warmup the warm-up before them (default 1 s).
	Duration, Pause, Warmup time.Duration
	// Dir is where the run directories are created (default "."); each is
	// Dir/Name-MODEL.
	Dir string
	// Name prefixes the run directories' names (default "demo").
	Name string
	// Command is how the closing screen spells schedscope in the commands
	// it suggests next (default "schedscope"; "go run ./cmd/schedscope"
	// for a person who started the demo that way).
	Command string
}

func (c Config) withDefaults() Config {
	if c.Workers == 0 {
		c.Workers = 200
	}
	if c.Sleep == 0 {
		c.Sleep = 200 * time.Millisecond
	}
	if c.Duration == 0 {
		c.Duration = 4 * time.Second
	}
	if c.Pause == 0 {
		c.Pause = time.Second
	}
	if c.Warmup == 0 {
		c.Warmup = time.Second
	}
	if c.Dir == "" {
		c.Dir = "."
	}
	if c.Name == "" {
		c.Name = "demo"
	}
	if c.Command == "" {
		c.Command = "schedscope"
	}
	if len(c.Rates) == 0 {
		ceil := c.Ceiling()
		c.Rates = []float64{ceil / 2, ceil, ceil * 3 / 2}
	}
	return c
}

// perRunOverhead is about what each run adds to its planned load on a
// 2-core machine: starting the fixture, the trace window, deriving the
// analysis (34.7 s measured for the default 2 x 16 s plan).
const perRunOverhead = 1500 * time.Millisecond

// Expected is about how long the whole tour takes: both models' planned
// load (warm-up, steps and pauses) and what saving each run adds.
func (c Config) Expected() time.Duration {
	c = c.withDefaults()
	return 2 * (c.loadConfig("http://127.0.0.1").PlannedDuration() + perRunOverhead)
}

// Ceiling is the pool model's Little's-law ceiling: workers / sleep, req/s.
func (c Config) Ceiling() float64 {
	c.Workers = max(c.Workers, 1)
	if c.Sleep <= 0 {
		return 0
	}
	return float64(c.Workers) / c.Sleep.Seconds()
}

// Validate says what is wrong with c, in one line.
func (c Config) Validate() error {
	switch {
	case c.Workers < 0:
		return fmt.Errorf("workers %d: must be at least 1", c.Workers)
	case c.Sleep < 0 || c.Sleep%time.Millisecond != 0:
		return fmt.Errorf("sleep %v: must be a whole number of milliseconds", c.Sleep)
	case c.Duration < 0 || c.Pause < 0 || c.Warmup < 0:
		return errors.New("durations must not be negative")
	}
	for _, r := range c.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			return fmt.Errorf("rate %v: must be positive", r)
		}
	}
	// The fixture's and the load's own bounds, checked before anything runs.
	d := c.withDefaults()
	if d.Sleep > fixtures.MaxSleep {
		return fmt.Errorf("sleep %v: at most %v", d.Sleep, fixtures.MaxSleep)
	}
	if err := d.fixtureConfig(fixtures.ModelPool).Validate(); err != nil {
		return err
	}
	return d.loadConfig("http://127.0.0.1:1").Validate()
}

// fixtureConfig is the fixture of model the tour starts.
func (c Config) fixtureConfig(model fixtures.Model) fixtures.Config {
	fcfg := fixtures.DefaultConfig()
	fcfg.Addr = "127.0.0.1:0"
	fcfg.Model = model
	fcfg.Workers = c.Workers
	return fcfg
}

// loadConfig is the load the tour offers the fixture at base.
func (c Config) loadConfig(base string) load.Config {
	return load.Config{
		URL:   fmt.Sprintf("%s/sleep?ms=%d", base, c.Sleep.Milliseconds()),
		Rates: c.Rates, Duration: c.Duration, Pause: c.Pause, Warmup: c.Warmup,
		CPUIncludesTarget: true,
	}
}

// Outcome is what the tour measured.
type Outcome struct {
	// Models are the models run, in order; Results and RunDirs match them.
	Models  []fixtures.Model
	Results []*load.Result
	RunDirs []string
	// Summary is the closing comparison (also sent as the End frame).
	Summary tui.Summary
	// Stopped is true when the tour was stopped or interrupted early.
	Stopped bool
	// Underived are the run directories whose analysis an interruption
	// left underived: `schedscope analyze --rederive DIR` derives it.
	Underived []string
}

// Runner runs the guided tour once. Stop and TakeTrace may be called from
// other goroutines while Run runs.
type Runner struct {
	cfg Config

	mu      sync.Mutex
	cur     *collect.Runner
	stopped bool
}

// New returns a Runner for cfg (defaults filled in) or cfg's problem.
func New(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg.withDefaults()}, nil
}

// Config returns the tour's plan with its defaults.
func (t *Runner) Config() Config { return t.cfg }

// Stop ends the current run early (it is saved) and skips the rest.
func (t *Runner) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	if t.cur != nil {
		t.cur.Stop()
	}
}

// TakeTrace records a trace window of the current run now.
func (t *Runner) TakeTrace(ctx context.Context) (string, error) {
	t.mu.Lock()
	r := t.cur
	t.mu.Unlock()
	if r == nil {
		return "", errors.New("no run in progress")
	}
	return r.TraceNow(ctx)
}

// Run runs the pool model, then the goroutine model, calling live with a
// Frame per load snapshot (about 4 a second; the last one carries End). live
// is called from the tour's goroutines, one call at a time; it must not
// block for long. The Outcome holds what was measured, also when ctx ends or
// Stop is called early.
func (t *Runner) Run(ctx context.Context, live func(tui.Frame)) (*Outcome, error) {
	cfg := t.cfg
	out := &Outcome{}
	var offset time.Duration // the dashboard's clock runs on across runs
	var runErr error
	for i, model := range []fixtures.Model{fixtures.ModelPool, fixtures.ModelGoroutine} {
		t.mu.Lock()
		stopped := t.stopped
		t.mu.Unlock()
		if stopped || ctx.Err() != nil {
			out.Stopped = true
			break
		}
		var last time.Duration
		res, dir, underived, err := t.runModel(ctx, model, func(l collect.Live) {
			last = max(last, l.At) // the runner's clock never goes back
			live(FrameFromLive(cfg, model, i, offset, l))
		})
		offset += last + time.Second
		if dir != "" {
			out.Models = append(out.Models, model)
			out.Results = append(out.Results, res)
			out.RunDirs = append(out.RunDirs, dir)
		}
		if underived {
			out.Underived = append(out.Underived, dir)
		}
		if err != nil {
			runErr = err
			out.Stopped = true
			break
		}
		if res != nil && res.Interrupted {
			out.Stopped = true
		}
	}
	out.Summary = Compare(cfg, out)
	live(tui.Frame{Title: "demo: pool vs goroutine", Phase: tui.Phase{RunElapsed: offset}, End: &out.Summary})
	return out, runErr
}

// runModel starts the fixture in model with the agent and records one run.
// underived: an interruption left the run's analysis underived
// (derive.AfterRun).
func (t *Runner) runModel(ctx context.Context, model fixtures.Model, live func(collect.Live)) (res *load.Result, dir string, underived bool, err error) {
	cfg := t.cfg
	fa, err := fixtureagent.New(agent.Options{})
	if err != nil {
		return nil, "", false, err
	}
	defer fa.Close()
	srv, err := fixtureagent.Start(ctx, cfg.fixtureConfig(model), fa)
	if err != nil {
		return nil, "", false, fmt.Errorf("starting the %s fixture: %w", model, err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // the figures are measured and saved already
	}()

	dir = filepath.Join(cfg.Dir, cfg.Name+"-"+string(model))
	r, err := collect.NewRunner(collect.Config{
		Load:     cfg.loadConfig(srv.URL()),
		Out:      dir,
		AgentURL: srv.URL() + fixtureagent.Prefix,
		Live:     live,
		Args:     []string{"schedscope", "demo", "--model", string(model)},
	})
	if err != nil {
		return nil, "", false, fmt.Errorf("%s run: %w", model, err)
	}
	t.mu.Lock()
	t.cur = r
	stopped := t.stopped
	t.mu.Unlock()
	if stopped {
		r.Stop()
	}
	o, err := r.Run(ctx)
	t.mu.Lock()
	t.cur = nil
	t.mu.Unlock()
	if o == nil {
		return nil, "", false, fmt.Errorf("%s run: %w", model, err)
	}
	_, underived, derr := derive.AfterRun(ctx, o.Dir, derive.InterruptedBudget)
	err = errors.Join(err, derr)
	if err != nil {
		return o.Result, o.Dir, underived, fmt.Errorf("%s run: %w", model, err)
	}
	return o.Result, o.Dir, underived, nil
}

// FrameFromLive maps one live snapshot of the tour's run number step (0:
// pool, 1: goroutine) onto a dashboard Frame, with the verdicts that hold
// and a narration line. offset is added to the run's clock.
func FrameFromLive(cfg Config, model fixtures.Model, step int, offset time.Duration, l collect.Live) tui.Frame {
	p := l.Load
	ceil := cfg.Ceiling()
	f := feed.Frame(fmt.Sprintf("demo %d/2 · sleep %v · %s model", step+1, cfg.Sleep, model), l)
	f.Phase.RunElapsed += offset
	if model == fixtures.ModelPool {
		f.Title += fmt.Sprintf(" (%d workers)", cfg.Workers)
		f.Note = fmt.Sprintf("Little's law caps the pool at %d workers / %v = %s req/s; watch the step above it.", cfg.Workers, cfg.Sleep, fmtRate(ceil))
	} else {
		f.Note = fmt.Sprintf("Same load, a goroutine per request: no pool, so no %s req/s ceiling.", fmtRate(ceil))
	}
	tp := l.Target
	for _, pl := range tp.Pools {
		if pl.Size == 0 || pl.Name != "workers" {
			continue // unbounded (goroutine model), or idle db/http pools of other scenarios
		}
		f.Pools = append(f.Pools, tui.Pool{Name: pl.Name, InUse: pl.InUse, Size: pl.Size, Waiting: pl.Waiting})
		if pl.Saturated {
			f.Verdicts = append(f.Verdicts, feed.PoolSaturated(pl.Name, pl.InUse, pl.Size, pl.Waiting,
				fmt.Sprintf("%s req/s (Little's law: %d / %v)", fmtRate(float64(pl.Size)/cfg.Sleep.Seconds()), pl.Size, cfg.Sleep)))
		}
	}
	// Rates over the phase so far: the live interval's 2xx/s swings as a
	// queue drains in bursts. Queueing: 2xx/s below the share of the offered
	// rate that load's verdicts and the derived phases call tracking.
	running := p.OfferedRate > 0 && p.Elapsed > time.Second && p.Kind == load.Steady
	var served float64
	if running {
		served = float64(p.OK) / p.Elapsed.Seconds()
	}
	if running && served < load.TrackingRatio*p.OfferedRate && p.IntervalP50 > 2*cfg.Sleep {
		f.Verdicts = append(f.Verdicts, tui.Verdict{Kind: rundir.KindQueueing, Title: "latency is growing without throughput (queueing)",
			Detail: fmt.Sprintf("offered %s req/s, %s answered per second of this step; p50 %s for %v of work", fmtRate(p.OfferedRate), fmtRate(served), fmtDur(p.IntervalP50), cfg.Sleep)})
	}
	if p.NotSent > 0 {
		f.Verdicts = append(f.Verdicts, tui.Verdict{Kind: rundir.KindOverCapacity, Title: "the target is overloaded: requests not sent",
			Detail: fmt.Sprintf("%d requests not sent this phase: every in-flight slot held a slow request", p.NotSent)})
	}
	if running && model != fixtures.ModelPool && p.OfferedRate > ceil && served > 1.05*ceil && p.IntervalP50 > 0 && p.IntervalP50 < 2*cfg.Sleep {
		f.Verdicts = append(f.Verdicts, tui.Verdict{Kind: rundir.KindPassed, Title: "passes the pool's ceiling",
			Detail: fmt.Sprintf("%s answered per second > %s req/s, the pool model's Little's-law limit; p50 %s", fmtRate(served), fmtRate(ceil), fmtDur(p.IntervalP50))})
	}
	f.Verdicts = append(f.Verdicts, feed.NoteVerdicts(l.Notes)...)
	return f
}

// Compare builds the closing screen: one row per model and step, the
// verdicts, the lesson and where the runs are.
func Compare(cfg Config, out *Outcome) tui.Summary {
	ceil := cfg.Ceiling()
	s := tui.Summary{Title: "demo: pool vs goroutine at /sleep " + cfg.Sleep.String(), RunDirs: out.RunDirs, Stopped: out.Stopped}
	s.Table.Header = []string{"model", "offered", "2xx/s", "p50", "p99", "not sent", "errors"}
	for i, res := range out.Results {
		if res == nil {
			continue
		}
		for _, ph := range res.Phases {
			s.Table.Rows = append(s.Table.Rows, []string{string(out.Models[i]), fmtRate(ph.OfferedRate) + " req/s", fmtRate(ph.OKPerS),
				fmtMS(ph.Latency.P50), fmtMS(ph.Latency.P99), fmt.Sprint(ph.NotSent), fmt.Sprint(ph.Errors.Total())})
		}
	}
	last := func(i int) (load.PhaseResult, bool) {
		if i >= len(out.Results) || out.Results[i] == nil || len(out.Results[i].Phases) == 0 {
			return load.PhaseResult{}, false
		}
		ph := out.Results[i].Phases
		return ph[len(ph)-1], true
	}
	pool, okP := last(0)
	gor, okG := last(1)
	if okP && pool.OfferedRate > ceil {
		s.Verdicts = append(s.Verdicts, tui.Verdict{Kind: rundir.KindPoolSaturated, Title: "the pool model stopped at its ceiling",
			Detail: fmt.Sprintf("offered %s req/s, served %s; Little's law predicts %d workers / %v = %s req/s; p99 %s",
				fmtRate(pool.OfferedRate), fmtRate(pool.OKPerS), cfg.Workers, cfg.Sleep, fmtRate(ceil), fmtMS(pool.Latency.P99))})
	}
	if okG && gor.OfferedRate > ceil {
		kind, title := rundir.KindPassed, "the goroutine model passed it"
		if gor.OKPerS < 1.05*ceil {
			kind, title = rundir.KindInfo, "the goroutine model did not pass it this time"
		}
		s.Verdicts = append(s.Verdicts, tui.Verdict{Kind: kind, Title: title,
			Detail: fmt.Sprintf("offered %s req/s, served %s, p99 %s", fmtRate(gor.OfferedRate), fmtRate(gor.OKPerS), fmtMS(gor.Latency.P99))})
	}
	s.Notes = []string{
		fmt.Sprintf("Below a limit the concurrency model makes little difference. A pool of N workers serves at most N / latency (%d / %v = %s req/s here): above it, requests queue and latency grows for as long as the overload lasts. A goroutine per request has no such ceiling: only the machine limits it (on a busy machine, both models slow down).",
			cfg.Workers, cfg.Sleep, fmtRate(ceil)),
		"Latency is measured from each request's intended send time (open model), so the queue shows; a closed-model client would report users / latency instead.",
	}
	s.Next = nextSteps(cfg, out)
	return s
}

// nextSteps are the commands the closing screen suggests on the run
// directories written: the trace browser on the first (the pool model's),
// the Markdown report on the last. Each run directory takes either.
func nextSteps(cfg Config, out *Outcome) []tui.NextStep {
	if len(out.RunDirs) == 0 {
		return nil
	}
	first, last := out.RunDirs[0], out.RunDirs[len(out.RunDirs)-1]
	model := func(i int) string {
		if i < len(out.Models) {
			return string(out.Models[i]) + " "
		}
		return ""
	}
	return []tui.NextStep{
		{Command: cfg.Command + " analyze --tui " + shellWord(first),
			Does: "browse the " + model(0) + "run's trace"},
		{Command: cfg.Command + " report " + shellWord(last),
			Does: "write the " + model(len(out.RunDirs)-1) + "run's report.md, with plots"},
	}
}

// shellWord quotes p for a POSIX shell when it holds anything but the
// characters of an ordinary path.
func shellWord(p string) string {
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,@", r)) {
			return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
		}
	}
	return p
}

func fmtRate(r float64) string {
	if r < 100 {
		return fmt.Sprintf("%.1f", r)
	}
	s := fmt.Sprintf("%.0f", r)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func fmtMS(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.2f s", ms/1000)
	}
	return fmt.Sprintf("%.1f ms", ms)
}

func fmtDur(d time.Duration) string { return fmtMS(float64(d) / float64(time.Millisecond)) }
