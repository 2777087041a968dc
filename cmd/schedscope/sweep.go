package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/cmd/schedscope/internal/feed"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/report"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/sweep"
	"github.com/schedscope/schedscope/internal/target"
	"github.com/schedscope/schedscope/internal/tui"
)

const sweepSynopsis = "sweep (--cmd 'COMMAND' --url URL | --fixture 'SCENARIO --model M') --gomaxprocs 1,2,4 (--rates 500,1000,2000 | --users 10,50,200 [--think D]) [flags]\n" +
	"       schedscope sweep --fixture 'SCENARIO' --models goroutine,pool --set workers=20,200 --gomaxprocs 2 --rates 500,1000 [flags]\n" +
	"       schedscope sweep --resume DIR"

// runSweep is `schedscope sweep`: flags -> sweep.Config -> sweep.Run, then
// the report of the sweep directory.
func runSweep(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags("sweep", sweepSynopsis, s.out)
	var (
		cfg                 sweep.Config
		gomaxprocs, rates   string
		cpuLimits, limitOn  string
		users, models       string
		sets                setFlag
		out, resume, client string
		timeout             time.Duration
		noReport            bool
	)
	var gates gateFlag
	fs.Var(&gates, "fail-on", "at the end, exit 4 when a condition holds on the sweep, e.g. 'knee<1000' or 'ceiling<1800, p99>250ms' (knee, ceiling, gomaxprocs, p99, service.p50: at the recommended GOMAXPROCS)")
	fs.StringVar(&cfg.Command, "cmd", "", "target command line, run with sh -c in a fresh process per GOMAXPROCS value and iteration")
	fs.StringVar(&cfg.URL, "url", "", "URL the load is sent to; it must answer 2xx before any load is sent")
	fs.StringVar(&cfg.Fixture, "fixture", "", "run schedscope's own fixture as the target: 'SCENARIO[?QUERY] [fixture flags]', e.g. 'sleep --model pool --workers 8' or 'cpu?rounds=20000'")
	fs.StringVar(&gomaxprocs, "gomaxprocs", "", "GOMAXPROCS values to sweep, e.g. 1,2,4,8; auto leaves it unset, so the target's runtime chooses (Go >= 1.25 follows --cpu-limits)")
	fs.StringVar(&cpuLimits, "cpu-limits", "", "CPU limits to sweep, in CPUs, e.g. 0.5,1,2: each line's target starts in a fresh cgroup with that CPU quota (needs root and a writable cgroup cpu controller)")
	fs.StringVar(&limitOn, "cpu-limit-on", "leaf", "where each --cpu-limits quota goes: leaf (the target's own cgroup) or parent (a cgroup above the target's, as a pod-level limit: the Go runtime does not read it, golang/go#81180)")
	fs.DurationVar(&cfg.TargetP99, "target-p99", 0, "with --cpu-limits and --rates: the report names the smallest limit that carries each rate with a p99 within this, e.g. 50ms")
	fs.StringVar(&cfg.Arrivals, "arrivals", "uniform", "open model: uniform (evenly spaced sends) or poisson (exponential gaps from one seed: the bursts real traffic has, which a CPU quota feels)")
	fs.StringVar(&rates, "rates", "", "open model: offered rates of the ladder in req/s, e.g. 500,1000,2000")
	fs.StringVar(&users, "users", "", "closed model instead of --rates: user counts of the ladder, e.g. 10,50,200 (each user sends, waits for the answer, thinks, repeats)")
	fs.DurationVar(&cfg.Think, "think", 0, "closed model: each user's pause between an answer and its next request")
	fs.StringVar(&models, "models", "", "with --fixture: the fixture's concurrency models to sweep, e.g. goroutine,pool,threads (each passed as --model)")
	fs.Var(&sets, "set", "with --fixture, repeatable: sweep a fixture flag, NAME=V1,V2 (e.g. workers=20,200 or db-pool=10,50; passed as --NAME=V); NAME one of "+strings.Join(sweep.FixtureFlags, ", ")+"; or the scenario's query parameter, ?NAME=V1,V2 (e.g. '?mode=serial,parallel' with --fixture split)")
	fs.IntVar(&cfg.Iterations, "iterations", sweep.DefaultIterations, "fresh processes per line (GOMAXPROCS, model and --set values); figures are medians over them")
	fs.DurationVar(&cfg.Warmup, "warmup", 10*time.Second, "warm-up at the lowest load after each start, not recorded")
	fs.DurationVar(&cfg.Duration, "duration", sweep.DefaultDuration, "length of each load's phase")
	fs.DurationVar(&cfg.Pause, "pause", 5*time.Second, "pause after the warm-up and between loads")
	fs.StringVar(&out, "out", "", "sweep directory (default runs/sweep-TIME)")
	fs.StringVar(&resume, "resume", "", "continue the interrupted sweep in DIR (its plan is used; other flags are ignored, but for the token and a --cmd or --url that sweep.json holds redacted, which must be given again)")
	fs.BoolVar(&cfg.Live, "live", false, "one process: change GOMAXPROCS through the agent instead of restarting (a warmed heap and pools carry over)")
	fs.StringVar(&cfg.Agent, "agent", "", "in-target agent URL, e.g. http://127.0.0.1:8080/debug/schedscope/ (required with --live)")
	tokenFile := addTokenFile(fs, "agent-token-file", "sent to the agent, if it needs one")
	fs.IntVar(&cfg.ConcurrencyLimit, "concurrency", 0, "the target's known cap on requests in service (pool workers), for Little's-law predictions")
	fs.BoolVar(&cfg.NoPin, "no-pin", false, "do not pin targets with taskset")
	fs.StringVar(&cfg.TargetCPUs, "target-cpus", "", "CPUs targets may be pinned to, e.g. 4-19 (default: every CPU this process may use); run the sweep itself under 'taskset -c 0-3' to keep the generator apart")
	fs.DurationVar(&cfg.ReadyTimeout, "ready-timeout", sweep.DefaultReadyTimeout, "how long a new target has to answer 2xx")
	fs.DurationVar(&timeout, "timeout", load.DefaultTimeout, "client timeout per request")
	fs.StringVar(&client, "client", string(load.Lean), "HTTP client of the generator: lean or net/http")
	fs.BoolVar(&noReport, "no-report", false, "do not write report.md and plots at the end")
	noTUI := fs.Bool("no-tui", false, "plain progress lines even on a terminal")
	if err := refuseSecretFlag(args, "agent-token", "--agent-token-file PATH or $"+tokenEnv); err != nil {
		return err
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	lists := map[string]string{"gomaxprocs": gomaxprocs, "cpu-limits": cpuLimits, "rates": rates, "users": users, "models": models}
	var blank error
	fs.Visit(func(f *flag.Flag) {
		if v, ok := lists[f.Name]; ok && blank == nil && strings.TrimSpace(v) == "" {
			blank = usageErr("--%s %q: an empty list; give values separated by commas, or leave the flag out", f.Name, v)
		}
	})
	if blank != nil {
		return blank
	}
	base := load.Config{Timeout: timeout, Client: load.Client(client)}
	if timeout <= 0 {
		return usageErr("--timeout %v: must be > 0", timeout)
	}
	probe := base
	probe.URL, probe.Rate = "http://127.0.0.1:1/", 1
	if err := probe.Validate(); err != nil {
		return usageErr("%v", err) // --timeout and --client, checked before a target starts
	}
	conds, err := gates.parse(cond.Sweep)
	if err != nil {
		return err
	}
	if cfg.AgentToken, _, err = tokenFile.read(); err != nil {
		return err
	}
	cfg.Loader = sweep.LoadGenerator(base)

	if resume != "" {
		if _, err := rundir.ReadSweep(resume); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		cfg.Dir, cfg.Resume = resume, true
	} else {
		if cfg.Iterations < 1 { // sweep.Config takes 0 for its default: the flag's 0 is a mistake
			return usageErr("--iterations %d: must be in [1, %d]", cfg.Iterations, sweep.MaxIterations)
		}
		if cfg.GOMAXPROCS, err = sweepGOMAXPROCS(gomaxprocs); err != nil {
			return usageErr("--gomaxprocs: %v", err)
		}
		if cfg.CPULimits, err = sweepFloats(cpuLimits); err != nil {
			return usageErr("--cpu-limits: %v", err)
		}
		switch limitOn {
		case "leaf":
		case "parent":
			cfg.LimitOnParent = true
		default:
			return usageErr("--cpu-limit-on %q: want leaf or parent", limitOn)
		}
		if cfg.Rates, err = sweepFloats(rates); err != nil {
			return usageErr("--rates: %v", err)
		}
		if cfg.Users, err = sweepInts(users); err != nil {
			return usageErr("--users: %v", err)
		}
		if cfg.Models, err = sweepList(models); err != nil {
			return usageErr("--models: %v", err)
		}
		cfg.Sets = sets.axes
		if cfg.Fixture != "" {
			if err := useFixture(&cfg); err != nil {
				return usageErr("%v", err)
			}
		}
		if _, err := sweep.NewPlan(cfg); err != nil {
			return usageErr("%v", err)
		}
		cfg.Dir = out
		if cfg.Dir == "" {
			cfg.Dir = filepath.Join("runs", "sweep-"+time.Now().Format("20060102-150405"))
		}
		if err := sweep.CheckNewDir(cfg.Dir); err != nil {
			return usageErr("--out: %v", err)
		}
	}
	if err := prepareCgroups(s, cfg); err != nil {
		return err
	}
	fmt.Fprintf(s.errOut, "sweep directory: %s\n", cfg.Dir)
	var (
		swept   *rundir.Sweep
		stopped bool
	)
	if !*noTUI && tui.IsTerminal(s.out) {
		swept, stopped, err = sweepInView(ctx, s, cfg)
	} else {
		cfg.Progress = sweep.PlainProgress(s.errOut)
		swept, err = sweep.Run(ctx, cfg)
		stopped = ctx.Err() != nil
	}
	if err != nil && stopped {
		err = fmt.Errorf("interrupted; finished steps are kept: continue with 'schedscope sweep --resume %s'", cfg.Dir)
	}
	if noReport || swept == nil {
		return err // nothing was swept into cfg.Dir: a report already there stays as it was
	}
	rep, rerr := report.WriteSweep(cfg.Dir, "")
	if rerr != nil {
		if err != nil {
			return err // nothing finished: the sweep's error says why
		}
		return rerr
	}
	printSweepSummary(s, rep)
	if err != nil || len(conds) == 0 {
		return err
	}
	return gateDir(ctx, s, cfg.Dir, conds)
}

// sweepInView runs the sweep behind the TUI's sweep view (a bar per step, the
// table filling in). q in the view stops the sweep, keeping finished steps;
// stopped reports whether the sweep was stopped before its end.
func sweepInView(ctx context.Context, s *stdio, cfg sweep.Config) (swept *rundir.Sweep, stopped bool, err error) {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	// A finished step's row and the end must reach the view; a tick it has
	// no room for is dropped, as the next one carries the same counters.
	events := newStream(64, func(v tui.SweepEvent) bool { return v.Row != nil || v.Finished })
	mapper := &feed.SweepMapper{Dir: cfg.Dir}
	cfg.Progress = func(e sweep.Event) { events.send(mapper.Map(e)) }
	view := func(evs <-chan tui.SweepEvent) error {
		_, err := tui.RunSweep(ctx, tui.Terminal{In: s.in, Out: s.out}, evs, stop)
		return err
	}
	swept, err = withView(runCtx, events, view, stop, func(ctx context.Context) (*rundir.Sweep, error) {
		return sweep.Run(ctx, cfg)
	})
	return swept, runCtx.Err() != nil, err
}

// useFixture fills cfg's target from the --fixture shorthand.
func useFixture(cfg *sweep.Config) error {
	if cfg.Command != "" || cfg.URL != "" {
		return errors.New("--fixture sets the command and URL: drop --cmd/--url (put a query on the scenario, e.g. 'sleep?ms=20 --model pool')")
	}
	if err := refuseSecretFlag(strings.Fields(cfg.Fixture), "agent-token", "--agent-token-file PATH or $"+tokenEnv+", which the fixture inherits"); err != nil {
		return fmt.Errorf("--fixture: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--fixture: finding this binary: %w", err)
	}
	addr, err := target.FreeLoopbackAddr()
	if err != nil {
		return err
	}
	ft, err := sweep.ParseFixture(cfg.Fixture, exe, addr)
	if err != nil {
		return err
	}
	cfg.Argv, cfg.URL, cfg.Scenario, cfg.Model = ft.Argv, ft.URL, ft.Scenario, ft.Model
	if cfg.Agent == "" {
		cfg.Agent, cfg.AgentOptional = ft.Agent, true
	}
	switch {
	case cfg.ConcurrencyLimit != 0 || len(cfg.GOMAXPROCS) == 0:
	case len(cfg.Models) > 0:
		// The limit of the bounded models' lines (the report gives an
		// unbounded model's lines none): the spec's --workers, else the
		// fixture's default, per line.
		cfg.ConcurrencyLimit = ft.Workers
	default:
		cfg.ConcurrencyLimit = ft.ConcurrencyLimit(cfg.GOMAXPROCS[len(cfg.GOMAXPROCS)-1])
	}
	return nil
}

// setFlag is the repeatable --set NAME=V1,V2.
type setFlag struct{ axes []rundir.SetAxis }

func (f *setFlag) String() string {
	var parts []string
	for _, ax := range f.axes {
		parts = append(parts, ax.Name+"="+strings.Join(ax.Values, ","))
	}
	return strings.Join(parts, " ")
}

func (f *setFlag) Set(s string) error {
	name, values, ok := strings.Cut(s, "=")
	name = strings.TrimLeft(strings.TrimSpace(name), "-")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=V1,V2, e.g. workers=20,200")
	}
	vs, err := sweepList(values)
	if err != nil {
		return err
	}
	f.axes = append(f.axes, rundir.SetAxis{Name: name, Values: vs})
	return nil
}

// offerLower stands in the knee column for a line whose lowest rate was
// already over capacity (capacity.Level.StartsOver).
const offerLower = "offer lower rates"

// printSweepSummary prints one row per line (GOMAXPROCS, and the model and
// fixture flags when swept), then the scaling and recommendation: the
// sweep's, or each family's when lines differ in more than GOMAXPROCS.
func printSweepSummary(s *stdio, r *report.SweepReport) {
	a := r.Analysis
	width, kneeWidth := len("line"), len("knee req/s")
	closed := false
	for _, l := range a.Levels {
		width = max(width, len(l.Label))
		closed = closed || l.Closed
		if l.StartsOver {
			kneeWidth = max(kneeWidth, len(offerLower))
		}
	}
	kneeCol := "knee req/s"
	if closed {
		kneeCol = "knee users"
	}
	fmt.Fprintf(s.out, "%-*s  %*s  %13s  %12s  %12s  %s\n", width, "line", kneeWidth, kneeCol, "ceiling 2xx/s", "low-load p50", "low-load p95", "limit")
	for _, l := range a.Levels {
		limit := string(l.Limit)
		if limit == "" {
			limit = "not reached"
		}
		p95 := "-"
		if len(l.Cells) > 0 && l.Cells[0].P95 > 0 {
			p95 = fmt.Sprintf("%.2f ms", float64(l.Cells[0].P95)/1e6)
		}
		knee, p50 := fmt.Sprintf("%.0f", l.Knee), fmt.Sprintf("%.2f ms", float64(l.LowLoadP50)/1e6)
		if l.StartsOver { // no knee, and the lowest rate's latency is a queue's, not a low load's
			knee, p50, p95 = offerLower, "-", "-"
		}
		fmt.Fprintf(s.out, "%-*s  %*s  %13.1f  %12s  %12s  %s\n", width, l.Label, kneeWidth, knee, l.Ceiling, p50, p95, limit)
	}
	cpus := report.CPUs(r.Sweep.Plan)
	if len(a.Families) > 1 {
		for _, f := range a.Families {
			fmt.Fprintf(s.out, "%s: scaling %s: %s\n", f.Label, f.Scaling.Kind, f.Scaling.Reason)
			if f.Recommendation.GOMAXPROCS > 0 {
				fmt.Fprintf(s.out, "%s: recommended %s: %s\n", f.Label, rundir.GOMAXPROCSLabel(f.Recommendation.GOMAXPROCS, cpus), f.Recommendation.Reason)
			} else if f.StartsOver {
				fmt.Fprintf(s.out, "%s: no recommendation: %s\n", f.Label, f.Recommendation.Reason)
			}
		}
	} else {
		fmt.Fprintf(s.out, "scaling: %s: %s\n", a.Scaling.Kind, a.Scaling.Reason)
		if a.Recommendation.GOMAXPROCS > 0 {
			fmt.Fprintf(s.out, "recommended %s: %s\n", rundir.GOMAXPROCSLabel(a.Recommendation.GOMAXPROCS, cpus), a.Recommendation.Reason)
		} else if len(a.Families) == 1 && a.Families[0].StartsOver {
			fmt.Fprintf(s.out, "no recommendation: %s\n", a.Recommendation.Reason)
		}
	}
	for _, f := range a.Quota.Findings {
		fmt.Fprintf(s.out, "%s: %s\n", f.Kind, f.Detail)
	}
	if q := a.Quota; q.TargetP99 > 0 {
		for _, sz := range q.Sizing {
			if sz.Limit > 0 {
				fmt.Fprintf(s.out, "p99 <= %v at %g req/s: smallest limit %g CPUs (%s, p99 %.2f ms)\n", q.TargetP99, sz.Load, sz.Limit, sz.Label, float64(sz.P99)/1e6)
			} else {
				fmt.Fprintf(s.out, "p99 <= %v at %g req/s: no limit tried (the lowest p99: %.2f ms, %s)\n", q.TargetP99, sz.Load, float64(sz.P99)/1e6, sz.Label)
			}
		}
	}
	fmt.Fprintf(s.out, "report: %s\n", strings.Join(r.Files, ", "))
}

func sweepInts(s string) ([]int, error) {
	var out []int
	items, err := sweepList(s)
	if err != nil {
		return nil, err
	}
	for _, f := range items {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// prepareCgroups checks, before any target starts, that a sweep with CPU
// limits may create cgroups, and names on stderr the stale cgroups of a
// crashed sweep that it removed (sweep.Run does it again: with a TUI,
// stderr is the only place they are seen).
func prepareCgroups(s *stdio, cfg sweep.Config) error {
	limits := len(cfg.CPULimits) > 0
	if cfg.Resume {
		plan, err := rundir.ReadSweep(cfg.Dir)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		limits = len(plan.Plan.CPULimits) > 0 && len(plan.Remaining()) > 0
	}
	if !limits {
		return nil
	}
	_, stale, err := sweep.PrepareCgroups(cfg.CgroupRoot)
	for _, d := range stale {
		fmt.Fprintf(s.errOut, "removed stale cgroup %s (the sweep that made it is gone)\n", d)
	}
	return err
}

// sweepGOMAXPROCS parses --gomaxprocs: integers, and auto (0).
func sweepGOMAXPROCS(s string) ([]int, error) {
	var out []int
	items, err := sweepList(s)
	if err != nil {
		return nil, err
	}
	for _, f := range items {
		if f == "auto" {
			out = append(out, 0)
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer or auto", f)
		}
		if n < 1 { // 0 is auto inside sweep.Config: say so only by name
			return nil, fmt.Errorf("GOMAXPROCS %d: must be >= 1, or auto", n)
		}
		out = append(out, n)
	}
	return out, nil
}

func sweepFloats(s string) ([]float64, error) {
	var out []float64
	items, err := sweepList(s)
	if err != nil {
		return nil, err
	}
	for _, f := range items {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// sweepList splits a list flag's value at its commas: "" (the flag not
// given) is no item, but an empty item ("1,,2", "1,", ",") is refused: a
// list that silently lost items would sweep less than was asked.
func sweepList(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			return nil, fmt.Errorf("%q: an empty item; want values separated by commas, e.g. 1,2,4", s)
		}
		out = append(out, f)
	}
	return out, nil
}
