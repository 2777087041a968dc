// Command agent-overhead measures what schedscope's in-target agent costs the
// target: CPU time per request at a fixed offered rate, with and without the
// agent (flight recorder on, /metrics polled at 1 Hz), in fresh target
// processes, alternating the two variants round after round.
//
//	go run ./bench/agent-overhead -rounds 6 -rate 1000 -duration 10s -variants none,agent,agent-nofr
//
// The cost of a Prometheus scrape of the agent at 1 Hz, against no
// scraping (both with the flight recorder on demand, not armed):
//
//	go run ./bench/agent-overhead -rounds 8 -rate 1000 -duration 10s -variants agent-idle,agent-prom
//
// The target is this program itself in -serve mode: the fixture server
// (goroutine model) with or without the agent at /debug/schedscope/. Its CPU
// comes from /proc over each steady phase. The load generator runs
// in this process, so the machine's load matters: the program prints the load
// average before and after.
//
// It also serves a fixture with the agent for manual runs:
//
//	go run ./bench/agent-overhead -serve 127.0.0.1:8080 -agent
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/agent/prom"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/fixtures"
	"github.com/schedscope/schedscope/internal/fixtures/fixtureagent"
	"github.com/schedscope/schedscope/internal/target"
)

func main() {
	serve := flag.String("serve", "", "serve the fixture on ADDR (target mode)")
	withAgent := flag.Bool("agent", false, "target mode: mount the agent (flight recorder on)")
	tokenFile := flag.String("token-file", "", "target mode: file holding the agent's bearer token (default: $SCHEDSCOPE_AGENT_TOKEN); never on the command line, where ps shows it")
	noFR := flag.Bool("no-fr", false, "target mode: the agent's flight recorder off")
	onDemand := flag.Bool("fr-on-demand", false, "target mode: the agent's flight recorder on demand (not armed)")
	variantList := flag.String("variants", "none,agent", "variants to compare, the first is the baseline: none, agent, agent-nofr, agent-ondemand, agent+profiling")
	together := flag.Bool("together", false, "run the variants of a round at the same time (each its own target and load), so they share the machine's state")
	withProm := flag.Bool("prom", false, "target mode: the agent serves metrics?format=prometheus (its collector and the Go collector, as the fixture's agent)")
	profiling := flag.Bool("profiling", false, "target mode: also enable block and mutex profiling (fixtureagent's rates)")
	model := flag.String("model", "goroutine", "target mode: the fixture's concurrency model")
	workers := flag.Int("workers", 0, "target mode: workers of the pool model (0: the fixture's default)")
	dbPool := flag.Int("db-pool", 0, "target mode: database pool size (0: the fixture's default)")
	rounds := flag.Int("rounds", 5, "rounds; each runs both variants in fresh processes")
	rate := flag.Float64("rate", 2000, "offered rate, req/s")
	duration := flag.Duration("duration", 10*time.Second, "steady phase per variant and round")
	warmup := flag.Duration("warmup", 2*time.Second, "warm-up before each steady phase")
	path := flag.String("path", "/sleep?ms=1", "request path on the fixture")
	for _, a := range os.Args[1:] {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "token" {
			fmt.Fprintln(os.Stderr, "agent-overhead: -token no longer exists: a token on the command line is visible to every user of the host (ps, /proc); use -token-file PATH or $SCHEDSCOPE_AGENT_TOKEN")
			os.Exit(2)
		}
	}
	flag.Parse()
	token, err := readToken(*tokenFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent-overhead:", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *serve != "" {
		err = serveFixture(ctx, *serve, *withAgent, *withProm, *profiling, *noFR, *onDemand, token, *model, *workers, *dbPool)
	} else {
		err = bench(ctx, *rounds, *rate, *duration, *warmup, *path, strings.Split(*variantList, ","), *together)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent-overhead:", err)
		os.Exit(1)
	}
}

// readToken reads the agent's token from path, or from
// $SCHEDSCOPE_AGENT_TOKEN when path is empty; "" when neither is set.
func readToken(path string) (string, error) {
	if path == "" {
		return strings.TrimSpace(os.Getenv("SCHEDSCOPE_AGENT_TOKEN")), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("-token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("-token-file %s: want the token alone, on one line", path)
	}
	return token, nil
}

func serveFixture(ctx context.Context, addr string, withAgent, withProm, profiling, noFR, onDemand bool, token, model string, workers, dbPool int) error {
	cfg := fixtures.DefaultConfig()
	cfg.Addr = addr
	m, err := fixtures.ParseModel(model)
	if err != nil {
		return err
	}
	cfg.Model = m
	if workers > 0 {
		cfg.Workers = workers
	}
	if dbPool > 0 {
		cfg.DBPool = dbPool
	}
	var fa *fixtureagent.Agent
	if withAgent {
		// The agent's default is on demand; the "agent" variant measures an
		// always-on recorder, as it did when that was the default.
		opts := agent.Options{Token: token, FlightRecorder: agent.FlightRecorderOptions{Disabled: noFR, AlwaysOn: !noFR && !onDemand}}
		reg := prometheus.NewRegistry()
		if withProm {
			opts.Exposition = prom.Handler(reg)
		}
		if profiling {
			fa, err = fixtureagent.New(opts) // block and mutex profiling on
		} else {
			var a *agent.Agent
			a, err = agent.New(opts) // the agent's defaults: profiling rates untouched (off)
			fa = fixtureagent.Wrap(a)
		}
		if err != nil {
			return err
		}
		defer fa.Close()
		if withProm {
			reg.MustRegister(prom.NewCollector(fa.Unwrap(), prom.Options{}),
				collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler, collectors.MetricsGC)))
		}
	}
	srv, err := fixtureagent.Start(ctx, cfg, fa)
	if err != nil {
		return err
	}
	fmt.Printf("listening on %s (agent %v)\n", srv.URL(), withAgent)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// measurement is one variant's figures in one round.
type measurement struct {
	cpuUSPerReq float64
	completed   int64
	okPerS      float64
	polls       int
}

// variants maps a variant name to the target's flags; every agent variant
// is polled at 1 Hz (see polled).
var variants = map[string][]string{
	"none":            nil,
	"agent":           {"-agent"},
	"agent-nofr":      {"-agent", "-no-fr"},
	"agent-ondemand":  {"-agent", "-fr-on-demand"},
	"agent+profiling": {"-agent", "-profiling"},
	"agent-idle":      {"-agent", "-fr-on-demand", "-prom"},
	"agent-prom":      {"-agent", "-fr-on-demand", "-prom"},
}

// polled is the path an agent variant's target is polled on at 1 Hz:
// /metrics (JSON) unless named here; "" is not polled. agent-idle and
// agent-prom compare the Prometheus exposition scraped at 1 Hz with no
// scraping at all.
var polled = map[string]string{
	"agent-idle": "",
	"agent-prom": "/debug/schedscope/metrics?format=prometheus",
}

// pollPath is the path variant name's target is polled on, "" for none.
func pollPath(name string) string {
	if p, ok := polled[name]; ok {
		return p
	}
	if slices.Contains(variants[name], "-agent") {
		return "/debug/schedscope/metrics"
	}
	return ""
}

func bench(ctx context.Context, rounds int, rate float64, duration, warmup time.Duration, path string, names []string, together bool) error {
	for _, n := range names {
		if _, ok := variants[n]; !ok {
			return fmt.Errorf("unknown variant %q (known: none, agent, agent-nofr, agent-ondemand, agent+profiling, agent-idle, agent-prom)", n)
		}
	}
	fmt.Printf("load average before: %s\n", target.LoadAverage())
	fmt.Printf("variants %s (agent: flight recorder on, /metrics polled at 1 Hz; -nofr: recorder off; +profiling: block/mutex profiling on; agent-idle: recorder on demand, not polled; agent-prom: recorder on demand, metrics?format=prometheus scraped at 1 Hz)\n", strings.Join(names, ", "))
	fmt.Printf("variants run at the same time: %v\n", together)
	fmt.Printf("rate %.0f req/s, %v steady + %v warm-up per variant, %d rounds, path %s\n\n", rate, duration, warmup, rounds, path)
	res := map[string][]measurement{}
	for i := 0; i < rounds; i++ {
		order := slices.Clone(names)
		for range i % len(order) { // rotate the order every round
			order = append(order[1:], order[0])
		}
		ms := make([]measurement, len(order))
		errs := make([]error, len(order))
		if together {
			// Every variant at once, each with its own target and load: they
			// share whatever else the machine does at that moment.
			var wg sync.WaitGroup
			for k, name := range order {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ms[k], errs[k] = measure(ctx, variants[name], pollPath(name), rate, duration, warmup, path)
				}()
			}
			wg.Wait()
		} else {
			for k, name := range order {
				ms[k], errs[k] = measure(ctx, variants[name], pollPath(name), rate, duration, warmup, path)
			}
		}
		for k, name := range order {
			if errs[k] != nil {
				return fmt.Errorf("%s: %w", name, errs[k])
			}
			m := ms[k]
			res[name] = append(res[name], m)
			fmt.Printf("round %d %-16s target CPU %.1f us/req, %d requests, %.0f 2xx/s, %d polls\n",
				i+1, name, m.cpuUSPerReq, m.completed, m.okPerS, m.polls)
		}
	}
	base := names[0]
	fmt.Printf("\nmedian target CPU per request, and the median of the per-round differences from %s:\n", base)
	for _, name := range names {
		var diffs []measurement
		for i := range min(len(res[base]), len(res[name])) {
			diffs = append(diffs, measurement{cpuUSPerReq: 100 * (res[name][i].cpuUSPerReq/res[base][i].cpuUSPerReq - 1)})
		}
		fmt.Printf("  %-16s %7.1f us   %+6.1f %% (median total %+.1f %%)\n", name, median(res[name]), median(diffs),
			100*(median(res[name])/median(res[base])-1))
	}
	fmt.Printf("load average after: %s\n", target.LoadAverage())
	return nil
}

func median(ms []measurement) float64 {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = m.cpuUSPerReq
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// measure starts a fresh target, drives the load and returns the target's
// CPU per request over the steady phase.
// poll, when not empty, is the path polled at 1 Hz.
func measure(ctx context.Context, flags []string, poll string, rate float64, duration, warmup time.Duration, path string) (measurement, error) {
	// The target picks its own port and says which: a port picked here and
	// released would race with the load generators' ephemeral ports.
	args := append([]string{"-serve", "127.0.0.1:0"}, flags...)
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return measurement{}, err
	}
	if err := cmd.Start(); err != nil {
		return measurement{}, err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return measurement{}, fmt.Errorf("reading the target's address: %w", err)
	}
	base, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "listening on "), " ")
	go io.Copy(io.Discard, stdout)
	if err := target.WaitReady(ctx, nil, base+"/stats", 15*time.Second); err != nil {
		return measurement{}, err
	}

	var m measurement
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	pollDone := make(chan struct{})
	go func() {
		defer close(pollDone)
		if poll == "" {
			return
		}
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-pollCtx.Done():
				return
			case <-t.C:
			}
			if resp, err := http.Get(base + poll); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					m.polls++ // polls counts the answered ones
				}
			}
		}
	}()

	var cpuStart, cpuEnd time.Duration
	pid := cmd.Process.Pid
	res, err := load.Run(ctx, load.Config{
		URL: base + path, Rate: rate, Duration: duration, Warmup: warmup,
		Progress: func(p load.Progress) {
			if p.Kind == load.Steady && cpuStart == 0 {
				cpuStart = procCPU(pid)
			}
			if p.Kind == load.Steady && p.Done {
				cpuEnd = procCPU(pid)
			}
		},
	})
	stopPoll()
	<-pollDone
	if err != nil {
		return m, err
	}
	if len(res.Phases) == 0 || cpuEnd <= cpuStart {
		return m, fmt.Errorf("no steady phase measured")
	}
	ph := res.Phases[0]
	m.completed, m.okPerS = ph.Completed, ph.OKPerS
	m.cpuUSPerReq = float64((cpuEnd - cpuStart).Microseconds()) / float64(ph.Completed)
	return m, nil
}

// procCPU is the process's user+system time, 0 when /proc cannot say.
func procCPU(pid int) time.Duration {
	u, _ := target.ReadUsage(pid)
	return u.CPU
}
