// Package sweep runs a sweep over axes: for each line (a GOMAXPROCS value,
// and, for the fixture, a concurrency model and values of its flags) and
// iteration it starts a fresh target process with GOMAXPROCS in its
// environment (pinned with taskset to that many CPUs when the machine has
// them), waits until the target answers, warms it up, offers a ladder of
// load (open-model rates, or closed-model users), records what the generator
// measured and the target's CPU and RSS, and stops the process.
//
// Every finished step is written to the sweep directory at once (see rundir.SweepPlan,
// rundir.SweepStep and rundir.ReadSweep), so an interrupted sweep keeps its finished steps and Run
// with Config.Resume continues where it stopped. The analysis (knee,
// capacity, recommendation) lives in analyze/capacity and analyze/report;
// this package only measures.
//
// Why a fresh process per step group is the default: in one long-lived
// process a warmed heap, sync.Pools, caches, grown goroutine stacks and the
// connection pool carry over from one GOMAXPROCS value to the next, so the
// later values are measured on a warmer target than the earlier ones. Live
// mode (Config.Live) changes GOMAXPROCS through the in-target agent instead,
// for a target that cannot be restarted; its results carry that bias.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/cgroup"
	"github.com/schedscope/schedscope/internal/redact"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// Loader offers load to the target. Run calls it for the warm-up and once per
// step, from one goroutine at a time.
type Loader interface {
	Offer(ctx context.Context, o Offer) (Measured, error)
}

// LoaderFunc adapts a function to Loader.
type LoaderFunc func(ctx context.Context, o Offer) (Measured, error)

// Offer calls f.
func (f LoaderFunc) Offer(ctx context.Context, o Offer) (Measured, error) { return f(ctx, o) }

var _ Loader = LoaderFunc(nil)

// Offer is one phase of load: open model (Rate) or closed model (Users).
type Offer struct {
	URL  string
	Rate float64 // requests per second; 0 with Users
	// Users selects the closed model: Users users each send a request,
	// wait for its answer, wait Think, and repeat.
	Users    int
	Think    time.Duration
	Duration time.Duration
	// Arrivals spaces an open model's send times: "" or "uniform", or
	// "poisson" (one seeded schedule, the same for every step).
	Arrivals string
	Warmup   bool // a warm-up phase: measured but not recorded as a step
	// Progress, when set, receives the phase's live figures; the Loader
	// calls it from one goroutine and never after Offer returns.
	Progress func(PhaseProgress)
}

// PhaseProgress is a live snapshot of the phase being offered.
type PhaseProgress struct {
	Elapsed, Total time.Duration
	Sent, OK       int64
	Errors         int64
	NotSent        int64
	OKPerSec       float64       // over the last progress interval
	P99            time.Duration // phase so far
}

// Measured is what the generator measured over one phase.
type Measured struct {
	Duration          time.Duration
	Sent, OK, NotSent int64
	Errors, Timeouts  int64
	// OKPerSec is the generator's 2xx/s (the rate the target answered the
	// phase's requests with 2xx); AnsweredPerSec is the phase's requests
	// answered 2xx, whenever, per second of the phase.
	OKPerSec       float64
	AnsweredPerSec float64
	P50, P95, P99  time.Duration
	Max, Mean      time.Duration
	ServiceP50     time.Duration // from the actual send, without send lag
	Verdicts       []string
	// GeneratorVerdict: the generator judged itself a limit (any reason).
	// GeneratorBound: it was a material one (see MaterialGeneratorBound);
	// GeneratorNote says why either way.
	GeneratorVerdict  bool
	GeneratorBound    bool
	GeneratorNote     string
	GeneratorCPUCores float64
	// Interrupted: the context ended during the phase; the figures are
	// partial and Run does not record them.
	Interrupted bool
}

// Config is one sweep. Zero values of optional fields have the documented
// defaults; Run validates everything before it starts a process.
type Config struct {
	// Command is the target's shell command line (run with sh -c), or Argv
	// the target's argv. One of them is required, except in Live mode where
	// neither means the target is already running at URL.
	Command string
	Argv    []string
	// Fixture, Scenario, Model and ConcurrencyLimit describe the target for
	// the plan (see ParseFixture); informational only.
	Fixture          string
	Scenario         string
	Model            string
	ConcurrencyLimit int
	// URL receives the load; it must answer 2xx before any load is sent.
	URL string
	// Agent is the in-target agent's base URL; "" means none (no agent
	// figures). AgentToken is its bearer token, if it needs one.
	Agent      string
	AgentToken string
	// AgentOptional: an agent that does not answer is ignored (its figures
	// are left out) instead of stopping the sweep. Set for the fixture's
	// agent, which a build may not mount.
	AgentOptional bool
	// Live: one process, GOMAXPROCS set through the agent before each
	// value's ladder. Requires Agent.
	Live bool

	// GOMAXPROCS is the values to sweep, each >= 1, or 0 for auto:
	// GOMAXPROCS left unset so the target's runtime chooses (each step
	// records what it chose, through the agent). Required.
	GOMAXPROCS []int
	// CPULimits (optional) is the CPU-limit axis, in CPUs, each in
	// (cgroup.MinLimit, the CPUs targets may use]: each line's target starts
	// in a fresh child cgroup with that CPU quota, removed after the line.
	// It needs a writable cgroup cpu controller (root), checked by Run
	// before anything starts. CgroupRoot is where the cgroup file systems
	// are mounted; "" means cgroup.DefaultRoot.
	CPULimits  []float64
	CgroupRoot string
	// LimitOnParent sets each quota on a cgroup above the target's own
	// (cgroup.CreateParent): the runtime's blind spot, golang/go#81180.
	LimitOnParent bool
	// TargetP99 (optional, > 0) is the p99 the report sizes the CPU limit
	// for (the smallest limit carrying each rate within it).
	TargetP99 time.Duration
	// Arrivals (open model) is "" or "uniform" (evenly spaced send times),
	// or "poisson" (exponential gaps from one seed: the bursts real
	// traffic has, which a CPU quota feels).
	Arrivals string
	// Rates (open model, req/s, each > 0) or Users (closed model, each
	// >= 1, with Think between an answer and a user's next request) is the
	// load axis; exactly one is required.
	Rates []float64
	Users []int
	Think time.Duration
	// Models (fixture only) sweeps the fixture's --model; Sets (fixture
	// only) sweeps fixture flags by name (see FixtureFlags). Each
	// combination of GOMAXPROCS, model and set values is a line, run in its
	// own target processes.
	Models     []string
	Sets       []rundir.SetAxis
	Iterations int // processes per line; 0 means 3
	Warmup     time.Duration
	Duration   time.Duration // per rate; 0 means 20 s
	Pause      time.Duration // after the warm-up and between rates
	// ReadyTimeout bounds the wait for a new target to answer; 0 means 20 s.
	ReadyTimeout time.Duration
	// NoPin disables taskset pinning.
	NoPin bool
	// TargetCPUs is a taskset list of the CPUs targets may be pinned to
	// ("4-19"); "" means every CPU this process may run on. A target with
	// GOMAXPROCS n is pinned to the last n of them when there are n.
	TargetCPUs string

	// Dir is the sweep directory. It must not hold a sweep unless Resume
	// is set; with Resume, the plan in Dir is used and the other fields
	// above are ignored, except Command and URL when sweep.json holds them
	// redacted (they must then be given again, and match once redacted)
	// and AgentToken, which sweep.json never holds.
	Dir    string
	Resume bool

	// Loader sends the load. Required.
	Loader Loader
	// Progress, when set, receives every Event, from Run's goroutine (or
	// the Loader's, for PhaseProgress). It must return quickly.
	Progress func(Event)
}

// Defaults of Config.
const (
	DefaultIterations   = 3
	DefaultDuration     = 20 * time.Second
	DefaultReadyTimeout = 20 * time.Second
)

// Bounds NewPlan holds a Config to, each named in its error (the rates'
// count, warm-up, duration and pause are collect/load's: load.MaxSteps,
// load.MaxPhase, load.MaxWait).
const (
	// MaxIterations bounds Config.Iterations.
	MaxIterations = 100
	// MaxGOMAXPROCS bounds each GOMAXPROCS value.
	MaxGOMAXPROCS = 4096
	// MaxLevels bounds how many GOMAXPROCS values (and CPU limits) are
	// swept, and how many lines (combinations of CPU limit, GOMAXPROCS,
	// model and --set values).
	MaxLevels = 64
	// MaxSetAxes bounds how many --set axes a sweep has.
	MaxSetAxes = 8
	// MaxSteps bounds the plan: values x rates x iterations.
	MaxSteps = 10_000
	// MaxReadyTimeout bounds Config.ReadyTimeout.
	MaxReadyTimeout = 10 * time.Minute
	// MaxConcurrencyLimit bounds Config.ConcurrencyLimit.
	MaxConcurrencyLimit = 10_000_000
)

// EventKind says what an Event reports.
type EventKind string

// The event kinds, in the order a step group produces them.
const (
	EventStart    EventKind = "start"    // a target process was started (or GOMAXPROCS set, live)
	EventReady    EventKind = "ready"    // it answered 2xx
	EventWarmup   EventKind = "warmup"   // warm-up began
	EventPhase    EventKind = "phase"    // a step's phase began
	EventTick     EventKind = "tick"     // live figures of the running phase
	EventStep     EventKind = "step"     // a step finished and was written
	EventStop     EventKind = "stop"     // the target was stopped
	EventResumed  EventKind = "resumed"  // a resumed sweep found steps already done
	EventFinished EventKind = "finished" // every step is done
	// EventCgroup is a note about the CPU limits' cgroups (Message): a
	// stale one from a crashed sweep was removed, or one could not be.
	EventCgroup EventKind = "cgroup"
)

// Event is the progress value Run delivers to Config.Progress. A TUI can
// keep a bar per step (Index of Total) and fill a table from EventStep.
type Event struct {
	Kind       EventKind
	GOMAXPROCS int
	Iteration  int
	Rate       float64
	// Users is the closed-model load (Rate is then 0); Line the step's
	// line (GOMAXPROCS, model, fixture flags); Label names it
	// ("pool, GOMAXPROCS 2, workers=20").
	Users int
	Line  rundir.Line
	Label string
	// Index is the 1-based number of the step in the plan; Total the
	// plan's step count; Done the steps finished so far.
	Index, Total, Done int
	// Duration is the phase's planned length (EventWarmup, EventPhase).
	Duration time.Duration
	PID      int    // the target's process id (EventStart, EventReady)
	Pinned   string // taskset CPU list, "" when not pinned (EventStart)
	// Cgroup is the target's CPU-limit cgroup, "" when none (EventStart).
	Cgroup string
	// RuntimeGOMAXPROCS is what an auto line's target chose, once known
	// (EventReady and later); 0 otherwise.
	RuntimeGOMAXPROCS int
	// Message is EventCgroup's note.
	Message string
	// Tick is set for EventTick; Step for EventStep.
	Tick *PhaseProgress
	Step *rundir.SweepStep
	// Err is a non-fatal problem (EventStop: the target had to be killed).
	Err error
}

// Run runs the sweep described by cfg and returns the sweep directory's
// contents. On error or interruption the returned Sweep (when not nil) holds
// every step finished so far; they are on disk, and Run with Resume continues.
func Run(ctx context.Context, cfg Config) (*rundir.Sweep, error) {
	if cfg.Loader == nil {
		return nil, errors.New("sweep: no load generator")
	}
	if cfg.Dir == "" {
		return nil, errors.New("sweep: no output directory")
	}
	var plan rundir.SweepPlan
	if cfg.Resume {
		s, err := rundir.ReadSweep(cfg.Dir)
		if err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
		plan = s.Plan
		if len(s.Remaining()) > 0 { // a finished sweep starts no target
			if err := restoreSecrets(&plan, cfg); err != nil {
				return nil, fmt.Errorf("resume: %w", err)
			}
		}
	} else {
		var err error
		if plan, err = NewPlan(cfg); err != nil {
			return nil, err
		}
		if err := CheckNewDir(cfg.Dir); err != nil {
			return nil, err
		}
	}
	var cgroups cgroup.Hierarchy
	if len(plan.CPULimits) > 0 {
		h, stale, err := PrepareCgroups(cfg.CgroupRoot)
		for _, d := range stale {
			if cfg.Progress != nil {
				cfg.Progress(Event{Kind: EventCgroup, Message: "removed stale cgroup " + d + " (the sweep that made it is gone)"})
			}
		}
		if err != nil {
			return nil, err
		}
		if cfg.Resume && plan.CgroupVersion != 0 && int(h.Version) != plan.CgroupVersion {
			return nil, fmt.Errorf("resume: the sweep's CPU limits used cgroup v%d, this machine has %v", plan.CgroupVersion, h)
		}
		plan.CgroupVersion, cgroups = int(h.Version), h
		defer func() {
			// The parent goes when no other sweep's cgroup is in it.
			if err := h.RemoveParent(); err != nil && cfg.Progress != nil {
				cfg.Progress(Event{Kind: EventCgroup, Message: err.Error()})
			}
		}()
	}
	for _, d := range []string{cfg.Dir, filepath.Join(cfg.Dir, rundir.StepsDir), filepath.Join(cfg.Dir, rundir.LogsDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("sweep directory: %w", err)
		}
	}
	if !cfg.Resume {
		if err := rundir.WriteSweepPlan(cfg.Dir, plan); err != nil {
			return nil, fmt.Errorf("sweep plan: %w", err)
		}
	}
	allowed := target.AllowedCPUs()
	if plan.TargetCPUs != "" {
		var err error
		if allowed, err = target.ParseCPUList(plan.TargetCPUs); err != nil {
			return nil, fmt.Errorf("sweep plan: target CPUs: %w", err)
		}
	}
	r := &runner{cfg: cfg, plan: plan, allowed: allowed, cgroups: cgroups, sweepID: cgroupName(cfg.Dir)}
	err := r.run(ctx)
	s, lerr := rundir.ReadSweep(cfg.Dir)
	if lerr != nil {
		return nil, errors.Join(err, lerr)
	}
	return s, err
}

// PrepareCgroups finds the cpu controller under root ("" means
// cgroup.DefaultRoot), checks that schedscope may create cgroups there,
// and removes the stale ones a crashed sweep left, returning their
// directories (also when err is not nil). The error is one line naming
// what is missing.
func PrepareCgroups(root string) (cgroup.Hierarchy, []string, error) {
	if root == "" {
		root = cgroup.DefaultRoot
	}
	h, err := cgroup.Detect(root)
	if err != nil {
		return h, nil, fmt.Errorf("--cpu-limits: %w", err)
	}
	if err := h.Check(); err != nil {
		return h, nil, fmt.Errorf("--cpu-limits (%v): %w", h, err)
	}
	stale, err := h.RemoveStale()
	if err != nil {
		return h, stale, fmt.Errorf("--cpu-limits: %w", err)
	}
	return h, stale, nil
}

// cgroupName is the sweep directory's name made safe for a cgroup name.
func cgroupName(dir string) string {
	b := []byte(filepath.Base(dir))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[len(b)-64:]
	}
	return string(b)
}

// restoreSecrets gives a resumed plan back the secrets sweep.json was
// written without (rundir.SweepPlan.Redacted): a redacted command or URL is
// replaced by cfg's, which must redact to the recorded one. A redacted
// argv or agent URL cannot be given again, and is an error.
func restoreSecrets(plan *rundir.SweepPlan, cfg Config) error {
	for _, f := range []struct {
		recorded *string
		given    string
		flag     string
	}{
		{&plan.Command, cfg.Command, "--cmd"},
		{&plan.URL, cfg.URL, "--url"},
	} {
		if !strings.Contains(*f.recorded, redact.Marker) {
			continue
		}
		switch {
		case f.given == "":
			return fmt.Errorf("%s holds %s %q with its secrets redacted: give it again with %s (it must match once redacted)",
				rundir.SweepFile, f.flag, *f.recorded, f.flag)
		case redact.Text(f.given) != *f.recorded:
			return fmt.Errorf("%s %q does not match %s's %q once redacted", f.flag, redact.Text(f.given), rundir.SweepFile, *f.recorded)
		}
		*f.recorded = f.given
	}
	if strings.Contains(strings.Join(plan.Argv, " ")+plan.Agent, redact.Marker) {
		return fmt.Errorf("%s's target was recorded with its secrets redacted and cannot be started again: start a new sweep, with the secrets in the environment or a file rather than the command line", rundir.SweepFile)
	}
	return nil
}

// CheckNewDir returns nil when a new sweep may be written into dir: nothing
// is there, an empty directory, or a sweep directory whose sweep failed
// before its first step. Its error says what else dir is: a sweep with
// finished steps (resume it), a run directory, or a directory holding other
// files; Run never writes into those.
func CheckNewDir(dir string) error {
	kind, err := rundir.DirKindOf(dir)
	if err != nil {
		return fmt.Errorf("sweep directory %s: %w", dir, err)
	}
	switch kind {
	case rundir.DirAbsent, rundir.DirEmpty:
		return nil
	case rundir.DirSweep:
		prev, err := rundir.ReadSweep(dir)
		if err != nil {
			return fmt.Errorf("%s holds an unreadable sweep (%v): choose another --out", dir, err)
		}
		if len(prev.Steps) > 0 {
			return fmt.Errorf("%s already holds a sweep with %d finished steps: use --resume %s, or another --out", dir, len(prev.Steps), dir)
		}
		return nil
	case rundir.DirOther:
		return fmt.Errorf("%s holds other files (%s): choose a new or empty --out", dir, rundir.SomeEntries(dir))
	case rundir.NotDir:
		return fmt.Errorf("%s exists and is not a directory: choose another --out", dir)
	}
	return fmt.Errorf("%s is %s: choose a new or empty --out", dir, kind)
}

// NewPlan validates cfg (everything except Loader and Dir) and returns the
// plan it describes, with defaults applied and this machine described. Bad
// input gives a one-line error naming the problem.
func NewPlan(cfg Config) (rundir.SweepPlan, error) {
	p := rundir.SweepPlan{
		Version: rundir.SweepVersion, Command: cfg.Command, Argv: cfg.Argv, Fixture: cfg.Fixture,
		URL: cfg.URL, Agent: cfg.Agent, AgentOptional: cfg.AgentOptional, Live: cfg.Live, Scenario: cfg.Scenario, Model: cfg.Model,
		ConcurrencyLimit: cfg.ConcurrencyLimit,
		Iterations:       cfg.Iterations, Pinned: !cfg.NoPin && !cfg.Live, TargetCPUs: cfg.TargetCPUs,
		Machine: target.DescribeMachine(), Started: time.Now().UTC(),
		LimitOnParent: cfg.LimitOnParent, TargetP99MS: float64(cfg.TargetP99) / float64(time.Millisecond),
	}
	if len(cfg.GOMAXPROCS) == 0 {
		return p, errors.New("no GOMAXPROCS values: give --gomaxprocs 1,2,4")
	}
	if len(cfg.GOMAXPROCS) > MaxLevels {
		return p, fmt.Errorf("%d GOMAXPROCS values: at most %d", len(cfg.GOMAXPROCS), MaxLevels)
	}
	seen := map[int]bool{}
	for _, g := range cfg.GOMAXPROCS {
		if g < 0 || g > MaxGOMAXPROCS {
			return p, fmt.Errorf("GOMAXPROCS %d: must be in [1, %d], or auto", g, MaxGOMAXPROCS)
		}
		if seen[g] {
			return p, fmt.Errorf("GOMAXPROCS %s given twice", gomaxprocsName(g))
		}
		seen[g] = true
		p.GOMAXPROCS = append(p.GOMAXPROCS, g)
	}
	sort.Ints(p.GOMAXPROCS) // auto (0) first
	if err := planCPULimits(&p, cfg); err != nil {
		return p, err
	}
	if err := planLoad(&p, cfg); err != nil {
		return p, err
	}
	if err := planAxes(&p, cfg); err != nil {
		return p, err
	}
	if p.Iterations == 0 {
		p.Iterations = DefaultIterations
	}
	if cfg.TargetCPUs != "" {
		if _, err := target.ParseCPUList(cfg.TargetCPUs); err != nil {
			return p, fmt.Errorf("--target-cpus: %w", err)
		}
	}
	if p.Iterations < 1 || p.Iterations > MaxIterations {
		return p, fmt.Errorf("iterations %d: must be in [1, %d]", cfg.Iterations, MaxIterations)
	}
	lines := len(p.Lines())
	if lines > MaxLevels {
		return p, fmt.Errorf("%d lines (combinations of GOMAXPROCS, --cpu-limits, --models and --set values): at most %d", lines, MaxLevels)
	}
	loadName, loads := "rates", len(p.Rates)
	if p.Closed() {
		loadName, loads = "user counts", len(p.Users)
	}
	if n := lines * loads * p.Iterations; n > MaxSteps {
		if lines == len(p.GOMAXPROCS) {
			return p, fmt.Errorf("%d steps (%d GOMAXPROCS values x %d %s x %d iterations): at most %d", n, len(p.GOMAXPROCS), loads, loadName, p.Iterations, MaxSteps)
		}
		return p, fmt.Errorf("%d steps (%d lines x %d %s x %d iterations): at most %d", n, lines, loads, loadName, p.Iterations, MaxSteps)
	}
	for _, b := range []struct {
		name     string
		d, limit time.Duration
	}{{"warmup", cfg.Warmup, load.MaxPhase}, {"duration", cfg.Duration, load.MaxPhase}, {"pause", cfg.Pause, load.MaxWait}, {"think", cfg.Think, load.MaxWait}, {"ready timeout", cfg.ReadyTimeout, MaxReadyTimeout}} {
		if b.d < 0 {
			return p, fmt.Errorf("%s %v: must not be negative", b.name, b.d)
		}
		if b.d > b.limit {
			return p, fmt.Errorf("%s %v: at most %v", b.name, b.d, b.limit)
		}
	}
	if cfg.ConcurrencyLimit < 0 || cfg.ConcurrencyLimit > MaxConcurrencyLimit {
		return p, fmt.Errorf("concurrency %d: must be in [0, %d]", cfg.ConcurrencyLimit, MaxConcurrencyLimit)
	}
	dur := cfg.Duration
	if dur == 0 {
		dur = DefaultDuration
	}
	p.WarmupS, p.DurationS, p.PauseS = cfg.Warmup.Seconds(), dur.Seconds(), cfg.Pause.Seconds()
	if err := checkHTTPURL("--url", cfg.URL); err != nil {
		return p, err
	}
	if cfg.Agent != "" {
		if err := checkHTTPURL("--agent", cfg.Agent); err != nil {
			return p, err
		}
	}
	hasCmd := strings.TrimSpace(cfg.Command) != "" || len(cfg.Argv) > 0
	switch {
	case cfg.Live && cfg.Agent == "":
		return p, errors.New("--live changes GOMAXPROCS through the agent: give --agent URL")
	case cfg.Live && seen[0]:
		return p, errors.New("--live sets GOMAXPROCS through the agent: GOMAXPROCS auto needs a fresh target process per line")
	case cfg.Live && len(cfg.CPULimits) > 0:
		return p, errors.New("--live keeps one target process: --cpu-limits needs a fresh one per line")
	case cfg.LimitOnParent && len(cfg.CPULimits) == 0:
		return p, errors.New("--cpu-limit-on parent places the --cpu-limits quotas: give --cpu-limits")
	case cfg.TargetP99 < 0:
		return p, fmt.Errorf("--target-p99 %v: must be positive", cfg.TargetP99)
	case cfg.TargetP99 > 0 && len(cfg.CPULimits) == 0:
		return p, errors.New("--target-p99 sizes the CPU limit: give --cpu-limits")
	case cfg.Arrivals != "" && cfg.Arrivals != "uniform" && cfg.Arrivals != "poisson":
		return p, fmt.Errorf("--arrivals %q: want uniform or poisson", cfg.Arrivals)
	case cfg.Arrivals == "poisson" && p.Closed():
		return p, errors.New("--arrivals poisson spaces an open model's sends: give --rates, not --users")
	case cfg.TargetP99 > 0 && p.Closed():
		return p, errors.New("--target-p99 sizes the CPU limit for offered rates: give --rates, not --users")
	case !cfg.Live && !hasCmd:
		return p, errors.New("no target command: give --cmd 'COMMAND' or --fixture 'SCENARIO --model M' (or --live --agent URL for a running target)")
	}
	if cfg.Arrivals == "poisson" {
		p.Arrivals = cfg.Arrivals // uniform is the default: left out
	}
	return p, nil
}

// gomaxprocsName is n, or "auto" for 0.
func gomaxprocsName(n int) string {
	if n == 0 {
		return "auto"
	}
	return strconv.Itoa(n)
}

// planCPULimits validates the CPU-limit axis into p: each limit in
// (cgroup.MinLimit, the CPUs targets may use], none twice, ascending.
func planCPULimits(p *rundir.SweepPlan, cfg Config) error {
	if len(cfg.CPULimits) > MaxLevels {
		return fmt.Errorf("%d CPU limits: at most %d", len(cfg.CPULimits), MaxLevels)
	}
	cpus := p.Machine.CPUs
	if cfg.TargetCPUs != "" {
		if list, err := target.ParseCPUList(cfg.TargetCPUs); err == nil {
			cpus = len(list)
		}
	}
	for _, l := range cfg.CPULimits {
		if err := cgroup.CheckLimit(l, cpus); err != nil {
			return fmt.Errorf("--cpu-limits: %w", err)
		}
		if slices.Contains(p.CPULimits, l) {
			return fmt.Errorf("--cpu-limits: %g given twice", l)
		}
		p.CPULimits = append(p.CPULimits, l)
	}
	sort.Float64s(p.CPULimits)
	return nil
}

// planLoad validates the load axis, rates or users, into p.
func planLoad(p *rundir.SweepPlan, cfg Config) error {
	switch {
	case len(cfg.Rates) > 0 && len(cfg.Users) > 0:
		return errors.New("give either --rates (open model) or --users (closed model), not both")
	case len(cfg.Users) > 0:
		return planUsers(p, cfg)
	case cfg.Think != 0:
		return errors.New("--think is the closed model's pause: it needs --users")
	}
	if len(cfg.Rates) == 0 {
		return errors.New("no offered rates: give --rates 100,200,400 (open model) or --users 10,50,200 (closed model)")
	}
	if len(cfg.Rates) > load.MaxSteps {
		return fmt.Errorf("%d rates: at most %d", len(cfg.Rates), load.MaxSteps)
	}
	seenRate := map[float64]bool{}
	for _, r := range cfg.Rates {
		if !(r > 0) || r > load.MaxRate || math.IsInf(r, 0) {
			return fmt.Errorf("rate %g: must be > 0 and at most 10,000,000 req/s", r)
		}
		if seenRate[r] {
			return fmt.Errorf("rate %g given twice", r)
		}
		seenRate[r] = true
		p.Rates = append(p.Rates, r)
	}
	sort.Float64s(p.Rates)
	return nil
}

func planUsers(p *rundir.SweepPlan, cfg Config) error {
	if len(cfg.Users) > load.MaxSteps {
		return fmt.Errorf("%d user counts: at most %d", len(cfg.Users), load.MaxSteps)
	}
	seen := map[int]bool{}
	for _, u := range cfg.Users {
		if u < 1 || u > load.MaxUsers {
			return fmt.Errorf("users %d: must be in [1, %d]", u, load.MaxUsers)
		}
		if seen[u] {
			return fmt.Errorf("users %d given twice", u)
		}
		seen[u] = true
		p.Users = append(p.Users, u)
	}
	sort.Ints(p.Users)
	p.ThinkS = cfg.Think.Seconds()
	return nil
}

// FixtureModels are the fixture's concurrency models, the values --models
// takes.
var FixtureModels = []string{"goroutine", "pool", "threads", "bulkhead"}

// FixtureFlags are the fixture flags a sweep may vary with --set NAME=...:
// its numeric and duration knobs. The others are left out on purpose:
// --model has its own axis (--models), --addr is the sweep's, and
// --downstream and --db-dsn are URLs (which may hold secrets, and make
// poor file names). A test in cmd/schedscope checks each is a real flag of
// `schedscope fixture`.
var FixtureFlags = []string{"workers", "queue", "bulkhead-wait", "fanout-deadline", "fanout-conns", "downstream-delay", "db-delay", "db-pool", "db-acquire-timeout"}

// planAxes validates the fixture's axes, --models and --set, into p.
func planAxes(p *rundir.SweepPlan, cfg Config) error {
	if len(cfg.Models) == 0 && len(cfg.Sets) == 0 {
		return nil
	}
	if cfg.Fixture == "" {
		return errors.New("--models and --set vary the fixture's flags: they need --fixture (a --cmd target takes its settings in its own command line)")
	}
	if cfg.Live {
		return errors.New("--models and --set need a fresh target per value: drop --live")
	}
	given := fixtureSpecFlags(cfg.Fixture)
	if len(cfg.Models) > 0 && given["model"] {
		return fmt.Errorf("--fixture %q gives --model and --models sweeps it: give the models in --models only", cfg.Fixture)
	}
	seen := map[string]bool{}
	for _, m := range cfg.Models {
		if !slices.Contains(FixtureModels, m) {
			return fmt.Errorf("--models %q: unknown model (known: %s)", m, strings.Join(FixtureModels, ", "))
		}
		if seen[m] {
			return fmt.Errorf("--models %s given twice", m)
		}
		seen[m] = true
		p.Models = append(p.Models, m)
	}
	if len(cfg.Sets) > MaxSetAxes {
		return fmt.Errorf("%d --set axes: at most %d", len(cfg.Sets), MaxSetAxes)
	}
	names := map[string]bool{}
	query := fixtureSpecQuery(cfg.Fixture)
	for _, ax := range cfg.Sets {
		param, isQuery := rundir.QueryParam(ax.Name)
		switch {
		case isQuery && !validQueryName(param):
			return fmt.Errorf("--set %s: a query parameter's name holds letters, digits, - and _ only", ax.Name)
		case isQuery && query.Has(param):
			return fmt.Errorf("--fixture %q gives %s and --set sweeps it: give it in --set only", cfg.Fixture, param)
		case isQuery:
		case ax.Name == "model":
			return errors.New("--set model=...: use --models")
		case !isQuery && !slices.Contains(FixtureFlags, ax.Name):
			return fmt.Errorf("--set %s: not a fixture flag a sweep can vary (these can: %s)", ax.Name, strings.Join(FixtureFlags, ", "))
		case names[ax.Name]:
			return fmt.Errorf("--set %s given twice: give its values once, comma-separated", ax.Name)
		case given[ax.Name]:
			return fmt.Errorf("--fixture %q gives --%s and --set sweeps it: give it in --set only", cfg.Fixture, ax.Name)
		case len(ax.Values) == 0:
			return fmt.Errorf("--set %s: no values", ax.Name)
		}
		names[ax.Name] = true
		vals := map[string]bool{}
		for _, v := range ax.Values {
			if !validSetValue(v) {
				return fmt.Errorf("--set %s=%q: a value holds letters, digits and . : + - only", ax.Name, v)
			}
			if vals[v] {
				return fmt.Errorf("--set %s: %s given twice", ax.Name, v)
			}
			vals[v] = true
		}
		p.Sets = append(p.Sets, rundir.SetAxis{Name: ax.Name, Values: slices.Clone(ax.Values)})
	}
	return nil
}

// validQueryName: a query axis' name goes into file names and labels.
func validQueryName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// fixtureSpecQuery is the query a --fixture spec's scenario gives
// ("split?mode=serial" gives mode).
func fixtureSpecQuery(spec string) url.Values {
	f := strings.Fields(spec)
	if len(f) == 0 {
		return url.Values{}
	}
	_, q, _ := strings.Cut(f[0], "?")
	v, err := url.ParseQuery(q)
	if err != nil {
		return url.Values{}
	}
	return v
}

// validSetValue: a --set value goes into step file names and the
// fixture's argv, so it is short and plain.
func validSetValue(v string) bool {
	if v == "" || len(v) > 32 {
		return false
	}
	for _, r := range v {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".:+-", r)
		if !ok {
			return false
		}
	}
	return true
}

// fixtureSpecFlags are the flag names given in a --fixture spec.
func fixtureSpecFlags(spec string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(spec)[min(1, len(strings.Fields(spec))):] {
		if strings.HasPrefix(w, "-") {
			name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
			out[name] = true
		}
	}
	return out
}

// lineArgv is the target's argv for a line: the plan's, with the line's
// model and fixture flags added (--model M --NAME=VALUE).
func lineArgv(p rundir.SweepPlan, l rundir.Line) []string {
	if l.Model == "" && l.Set.IsZero() {
		return p.Argv
	}
	argv := slices.Clone(p.Argv)
	if l.Model != "" {
		argv = append(argv, "--model", l.Model)
	}
	for _, kv := range l.Set.Pairs() {
		if !isQueryAxis(kv[0]) {
			argv = append(argv, "--"+kv[0]+"="+kv[1])
		}
	}
	return argv
}

func isQueryAxis(name string) bool { _, ok := rundir.QueryParam(name); return ok }

// lineURL is the URL a line's load goes to: the plan's, with the line's
// query axes set.
func lineURL(raw string, set rundir.Settings) string {
	var pairs [][2]string
	for _, kv := range set.Pairs() {
		if isQueryAxis(kv[0]) {
			pairs = append(pairs, kv)
		}
	}
	if len(pairs) == 0 {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw // the plan's URL was checked: not reached
	}
	q := u.Query()
	for _, kv := range pairs {
		param, _ := rundir.QueryParam(kv[0])
		q.Set(param, kv[1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func checkHTTPURL(flag, s string) error {
	if s == "" {
		return fmt.Errorf("no %s given", strings.TrimPrefix(flag, "--"))
	}
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return fmt.Errorf("%s %q: want an http:// URL", flag, s)
	}
	return nil
}

// runner carries one Run's state.
type runner struct {
	cfg     Config
	plan    rundir.SweepPlan
	allowed []int
	// cgroups is the cpu controller's hierarchy, set when the plan has
	// CPU limits; sweepID names this sweep's cgroups.
	cgroups cgroup.Hierarchy
	sweepID string
	done    int
	total   int
}

func (r *runner) emit(e Event) {
	if r.cfg.Progress == nil {
		return
	}
	e.Total, e.Done = r.total, r.done
	r.cfg.Progress(e)
}

// group is the steps one target process (or one live GOMAXPROCS setting)
// runs: one line in one iteration.
type group struct {
	gomaxprocs, iteration int
	line                  rundir.Line
	// runtime is the GOMAXPROCS an auto line's target chose (0 until its
	// agent said); cg is the line's CPU-limit cgroup, nil when none.
	runtime int
	cg      *cgroup.Group
	steps   []rundir.StepKey
	first   int // plan index (0-based) of the group's first step
}

// name is the group in errors: "GOMAXPROCS 2, iteration 1" or
// "pool, GOMAXPROCS 2, workers=4, iteration 1".
func (g group) name() string { return fmt.Sprintf("%s, iteration %d", g.line.Label(0), g.iteration) }

// event fills e's step identity from g and k (k may be zero: the group's).
func (r *runner) event(e Event, g group, k rundir.StepKey) Event {
	e.GOMAXPROCS, e.Iteration, e.Line, e.RuntimeGOMAXPROCS = g.gomaxprocs, g.iteration, g.line, g.runtime
	e.Label = g.line.LabelRuntime(r.cpus(), g.runtime)
	e.Rate, e.Users = k.Rate, k.Users
	return e
}

// cpus is the number of CPUs targets may use: the pinning set, else the
// machine's.
func (r *runner) cpus() int {
	if len(r.allowed) > 0 {
		return len(r.allowed)
	}
	return r.plan.Machine.CPUs
}

// loadName is a step's load for errors: "200 req/s" or "50 users".
func loadName(k rundir.StepKey) string {
	if k.Users > 0 {
		return fmt.Sprintf("%d users", k.Users)
	}
	return fmt.Sprintf("%g req/s", k.Rate)
}

func (r *runner) groups() []group {
	s := &rundir.Sweep{Plan: r.plan}
	if loaded, err := rundir.ReadSweep(r.cfg.Dir); err == nil {
		s = loaded
	}
	done := s.Done()
	all := r.plan.Steps()
	r.total = len(all)
	var out []group
	for i, k := range all {
		if done[k] {
			r.done++
			continue
		}
		n := len(out)
		if n == 0 || out[n-1].line != k.Line() || out[n-1].iteration != k.Iteration {
			out = append(out, group{gomaxprocs: k.GOMAXPROCS, iteration: k.Iteration, line: k.Line(), first: i})
			n++
		}
		out[n-1].steps = append(out[n-1].steps, k)
	}
	return out
}

func (r *runner) run(ctx context.Context) error {
	groups := r.groups()
	if r.done > 0 {
		r.emit(Event{Kind: EventResumed})
	}
	if len(groups) == 0 {
		r.emit(Event{Kind: EventFinished})
		return nil
	}
	var agent *target.Agent
	if r.plan.Agent != "" {
		var err error
		if agent, err = target.NewAgent(r.plan.Agent, r.cfg.AgentToken); err != nil {
			return err
		}
		defer agent.Close()
	}
	if r.plan.Live {
		return r.runLive(ctx, groups, agent)
	}
	for _, g := range groups {
		if err := r.runGroup(ctx, g, agent); err != nil {
			return err
		}
	}
	r.emit(Event{Kind: EventFinished})
	return nil
}

// runGroup runs one fresh target process through its steps.
func (r *runner) runGroup(ctx context.Context, g group, agent *target.Agent) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	pinned := ""
	if r.plan.Pinned {
		if list, ok := PinList(r.allowed, g.gomaxprocs); ok {
			pinned = list
		}
	}
	logPath := filepath.Join(r.cfg.Dir, rundir.LogsDir, g.steps[0].LogFile())
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("target log: %w", err)
	}
	defer func() {
		if cerr := logFile.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("target log: %w", cerr)
		}
	}()
	spec := target.Spec{Command: r.plan.Command, Argv: lineArgv(r.plan, g.line), GOMAXPROCS: g.gomaxprocs, CPUs: pinned, Log: logFile}
	if g.line.CPULimit > 0 {
		create := r.cgroups.Create
		if r.plan.LimitOnParent {
			create = r.cgroups.CreateParent
		}
		if g.cg, err = create(fmt.Sprintf("%s-s%d", r.sweepID, g.first+1), g.line.CPULimit); err != nil {
			return fmt.Errorf("%s: %w", g.name(), err)
		}
		// Registered before the target's Stop, so it runs after it.
		defer func() {
			if rerr := removeCgroup(g.cg); rerr != nil {
				r.emit(Event{Kind: EventCgroup, Message: rerr.Error()})
				if err == nil {
					err = rerr
				}
			}
		}()
		// The target joins the cgroup before it execs, so its runtime sees
		// the limit from its first instruction.
		if len(spec.Argv) > 0 {
			spec.Argv = g.cg.Wrap(spec.Argv)
		} else {
			spec.Command = "echo $$ > " + shellQuote(g.cg.ProcsFile()) + " && exec sh -c " + shellQuote(spec.Command)
		}
	}
	p, err := target.Start(spec)
	if err != nil {
		return err
	}
	cgDir := ""
	if g.cg != nil {
		cgDir = g.cg.Dir
	}
	r.emit(r.event(Event{Kind: EventStart, PID: p.PID(), Pinned: pinned, Cgroup: cgDir}, g, rundir.StepKey{}))
	defer func() {
		serr := p.Stop()
		r.emit(r.event(Event{Kind: EventStop, PID: p.PID(), Err: serr}, g, rundir.StepKey{}))
	}()
	if err := target.WaitReady(ctx, p, r.plan.URL, r.readyTimeout()); err != nil {
		return fmt.Errorf("%s: %w", g.name(), err)
	}
	r.emit(r.event(Event{Kind: EventReady, PID: p.PID()}, g, rundir.StepKey{}))
	if agent != nil {
		fig, err := agent.Figures(ctx)
		switch {
		case err != nil && r.plan.AgentOptional:
			agent = nil
		case err != nil:
			return fmt.Errorf("%s: %w", g.name(), err)
		case g.gomaxprocs == 0:
			g.runtime = int(fig.GOMAXPROCS)
		case int(fig.GOMAXPROCS) != g.gomaxprocs:
			return fmt.Errorf("%s: the target reports GOMAXPROCS %d: does it set it itself?", g.name(), int(fig.GOMAXPROCS))
		}
	}
	return r.ladder(ctx, g, p, pinned, agent)
}

// removeCgroup removes a line's cgroup once its target has exited. The
// target's own children may take a moment to go after it, so a busy cgroup
// is tried again for up to two seconds.
func removeCgroup(g *cgroup.Group) error {
	var err error
	for range 20 {
		if err = g.Remove(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// runLive runs every group in one target, setting GOMAXPROCS via the agent.
func (r *runner) runLive(ctx context.Context, groups []group, agent *target.Agent) (err error) {
	var p *target.Process
	if strings.TrimSpace(r.plan.Command) != "" || len(r.plan.Argv) > 0 {
		logFile, err := os.OpenFile(filepath.Join(r.cfg.Dir, rundir.LogsDir, "live.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("target log: %w", err)
		}
		defer logFile.Close()
		if p, err = target.Start(target.Spec{Command: r.plan.Command, Argv: r.plan.Argv, Log: logFile}); err != nil {
			return err
		}
		r.emit(Event{Kind: EventStart, PID: p.PID()})
		defer func() {
			serr := p.Stop()
			r.emit(Event{Kind: EventStop, PID: p.PID(), Err: serr})
		}()
	}
	if err := target.WaitReady(ctx, p, r.plan.URL, r.readyTimeout()); err != nil {
		return err
	}
	for _, g := range groups {
		if err := agent.SetGOMAXPROCS(ctx, g.gomaxprocs); err != nil {
			return fmt.Errorf("live GOMAXPROCS %d: %w", g.gomaxprocs, err)
		}
		r.emit(r.event(Event{Kind: EventReady}, g, rundir.StepKey{}))
		if err := r.ladder(ctx, g, p, "", agent); err != nil {
			return err
		}
	}
	r.emit(Event{Kind: EventFinished})
	return nil
}

func (r *runner) readyTimeout() time.Duration {
	if r.cfg.ReadyTimeout > 0 {
		return r.cfg.ReadyTimeout
	}
	return DefaultReadyTimeout
}

// ladder warms the target up at the group's lowest rate, then offers each
// step's rate and writes the step when it ends. p may be nil (live mode on a
// running target): then no CPU or RSS is recorded.
func (r *runner) ladder(ctx context.Context, g group, p *target.Process, pinned string, agent *target.Agent) error {
	if w := r.plan.Warmup(); w > 0 {
		first := g.steps[0]
		r.emit(r.event(Event{Kind: EventWarmup, Duration: w}, g, first))
		m, err := r.cfg.Loader.Offer(ctx, Offer{URL: lineURL(r.plan.URL, first.Set), Rate: first.Rate, Users: first.Users, Think: r.plan.Think(), Arrivals: r.plan.Arrivals,
			Duration: w, Warmup: true, Progress: r.ticker(g, first)})
		if err != nil {
			return fmt.Errorf("%s: warm-up: %w", g.name(), err)
		}
		if m.Interrupted || ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err := sleep(ctx, r.plan.Pause()); err != nil {
			return err
		}
	}
	for i, k := range g.steps {
		if i > 0 {
			if err := sleep(ctx, r.plan.Pause()); err != nil {
				return err
			}
		}
		if p != nil {
			if exited, xerr := p.Exited(); exited {
				return fmt.Errorf("%s: target exited before %s: %v", g.name(), loadName(k), xerr)
			}
		}
		st, err := r.step(ctx, g, i, k, p, pinned, agent)
		if err != nil {
			return err
		}
		if err := rundir.WriteJSONFile(filepath.Join(r.cfg.Dir, rundir.StepsDir, k.File()), st); err != nil {
			return fmt.Errorf("sweep step: %w", err)
		}
		r.done++
		r.emit(r.event(Event{Kind: EventStep, Index: g.first + i + 1, Step: st}, g, k))
	}
	return nil
}

func (r *runner) step(ctx context.Context, g group, i int, k rundir.StepKey, p *target.Process, pinned string, agent *target.Agent) (*rundir.SweepStep, error) {
	var before, after target.Usage
	var usageErr error
	var usageAt time.Time
	if p != nil {
		before, usageErr = p.Usage()
		usageAt = time.Now()
	}
	var figBefore *rundir.AgentFigures
	if agent != nil {
		figBefore, _ = agent.Figures(ctx)
	}
	machine0, machineErr := target.ReadMachineCPU()
	var cg0 cgroup.Stat
	var cgErr error
	if g.cg != nil {
		cg0, cgErr = g.cg.Stat()
	}
	r.emit(r.event(Event{Kind: EventPhase, Index: g.first + i + 1, Duration: r.plan.Duration()}, g, k))
	start := time.Now().UTC()
	m, err := r.cfg.Loader.Offer(ctx, Offer{URL: lineURL(r.plan.URL, k.Set), Rate: k.Rate, Users: k.Users, Think: r.plan.Think(), Arrivals: r.plan.Arrivals,
		Duration: r.plan.Duration(), Progress: r.ticker(g, k)})
	if err != nil {
		return nil, fmt.Errorf("%s, %s: %w", g.name(), loadName(k), err)
	}
	if m.Interrupted || ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	st := &rundir.SweepStep{
		StepKey: k, Pinned: pinned, Start: start, DurationS: m.Duration.Seconds(),
		Sent: m.Sent, OK: m.OK, Errors: m.Errors, Timeouts: m.Timeouts, NotSent: m.NotSent, OKPerSec: m.OKPerSec,
		AnsweredPerSec: m.AnsweredPerSec,
		P50MS:          durMS(m.P50), P95MS: durMS(m.P95), P99MS: durMS(m.P99), MaxMS: durMS(m.Max), MeanMS: durMS(m.Mean),
		ServiceP50MS:     durMS(m.ServiceP50),
		GeneratorVerdict: m.GeneratorVerdict, GeneratorBound: m.GeneratorBound, GeneratorNote: m.GeneratorNote,
		Verdicts: m.Verdicts, GeneratorCPUCores: m.GeneratorCPUCores,
	}
	if machine1, err := target.ReadMachineCPU(); err == nil && machineErr == nil {
		st.MachineBusy = machine1.BusyShare(machine0)
	}
	if p != nil {
		st.TargetPID = p.PID()
		after, err = p.Usage()
		if usageErr == nil && err == nil {
			st.TargetCPUS = (after.CPU - before.CPU).Seconds()
			if wall := time.Since(usageAt).Seconds(); wall > 0 {
				st.TargetCPUCores = st.TargetCPUS / wall
			}
			if st.OK > 0 {
				st.CPUPerRequestUS = st.TargetCPUS / float64(st.OK) * 1e6
			}
			st.RSSBytes, st.PeakRSSBytes, st.Threads = after.RSS, after.PeakRSS, after.Threads
		}
	}
	if g.cg != nil && cgErr == nil {
		if cg1, err := g.cg.Stat(); err == nil {
			d := cg1.Sub(cg0)
			st.Throttle = &rundir.Throttle{Periods: d.Periods, Throttled: d.Throttled, ThrottledS: d.Time.Seconds(),
				QuotaUse: st.TargetCPUCores / g.cg.Limit}
		}
	}
	if agent != nil {
		if fig, err := agent.Figures(ctx); err == nil {
			if figBefore != nil {
				fig.GoroutinesCreated -= figBefore.GoroutinesCreated
			}
			st.Agent = fig
		}
	}
	if g.gomaxprocs == 0 {
		st.RuntimeGOMAXPROCS = g.runtime
		if st.Agent != nil {
			st.RuntimeGOMAXPROCS = int(st.Agent.GOMAXPROCS)
		}
	}
	return st, nil
}

func (r *runner) ticker(g group, k rundir.StepKey) func(PhaseProgress) {
	if r.cfg.Progress == nil {
		return nil
	}
	return func(pp PhaseProgress) {
		r.emit(r.event(Event{Kind: EventTick, Tick: &pp}, g, k))
	}
}

// durMS is d in milliseconds.
func durMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
