package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"runtime"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/internal/fixtures"
	"github.com/schedscope/schedscope/internal/fixtures/fixtureagent"
)

// drainTimeout is how long SIGINT/SIGTERM lets in-flight requests finish:
// under a second, as every command ends within a second of the signal.
const drainTimeout = 800 * time.Millisecond

// runFixture serves the seed scenarios: `schedscope fixture [flags]`, or the
// slow downstream alone: `schedscope fixture downstream [flags]`.
func runFixture(ctx context.Context, s *stdio, args []string) error {
	if len(args) > 0 && args[0] == "downstream" {
		return runDownstream(ctx, s, args[1:])
	}
	cfg := fixtures.DefaultConfig()
	fs := newFlags("fixture", "fixture [flags]   |   fixture downstream [--addr A] [--delay D]", s.out)
	model := fs.String("model", string(cfg.Model), "concurrency model: goroutine, pool, threads or bulkhead")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (port 0 picks a free port)")
	// The default depends on GOMAXPROCS: the usage states it once, as the
	// rule and its value here, and the flag's own default (0) prints nothing.
	workersFlag := fs.Int("workers", 0, fmt.Sprintf("workers (pool, threads) or permits (bulkhead) (default max(8 x GOMAXPROCS, 200): %d at GOMAXPROCS %d)",
		cfg.Workers, runtime.GOMAXPROCS(0)))
	fs.IntVar(&cfg.QueueSize, "queue", cfg.QueueSize, "worker queue capacity (pool, threads); a request finding it full gets 503")
	fs.DurationVar(&cfg.BulkheadWait, "bulkhead-wait", cfg.BulkheadWait, "bulkhead: longest wait for a permit before 503")
	fs.DurationVar(&cfg.FanoutDeadline, "fanout-deadline", cfg.FanoutDeadline, "fanout: one deadline over both downstream calls (504 when it expires)")
	fs.IntVar(&cfg.FanoutConns, "fanout-conns", cfg.FanoutConns, "fanout: HTTP connections to the downstream (MaxConnsPerHost; the seed's wide pool is 1000)")
	fs.StringVar(&cfg.DownstreamURL, "downstream", cfg.DownstreamURL, "fanout: downstream base URL (empty: start one in-process on another loopback port)")
	fs.DurationVar(&cfg.DownstreamDelay, "downstream-delay", cfg.DownstreamDelay, "fanout: the in-process downstream's delay per call")
	fs.StringVar(&cfg.DBDSN, "db-dsn", cfg.DBDSN, "db: postgres://... for PostgreSQL via pgx (empty: the embedded engine, no server needed); leave the password out of it, where ps shows it, and set $PGPASSWORD or ~/.pgpass, which pgx reads")
	fs.DurationVar(&cfg.DBDelay, "db-delay", cfg.DBDelay, "db: how long the query takes")
	fs.IntVar(&cfg.DBPool, "db-pool", cfg.DBPool, "db: database/sql pool size (SetMaxOpenConns)")
	fs.DurationVar(&cfg.DBAcquireTimeout, "db-acquire-timeout", cfg.DBAcquireTimeout, "db: longest wait for a pool connection before 503")
	withAgent := fs.Bool("agent", true, "mount schedscope's in-target agent at "+fixtureagent.Prefix+" (metrics, traces, profiles, pools)")
	var aopts agent.Options
	tokenFile := addTokenFile(fs, "agent-token-file", "that every /debug/schedscope/ and /debug/pprof/ path then requires")
	fs.BoolVar(&aopts.AllowSetGOMAXPROCS, "agent-set-gomaxprocs", false, "let the agent change GOMAXPROCS (schedscope sweep --live)")
	fr := frMode("on-demand")
	fs.Var(&fr, "agent-flight-recorder", "the agent's execution-trace flight recorder: on-demand (off until armed: schedscope run --snapshot-when arms it), on (from the start; 2-6 % more target CPU per request on the fixture), or off")
	if err := refuseSecretFlag(args, "agent-token", "--agent-token-file PATH or $"+tokenEnv); err != nil {
		return err
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q (the only sub-command is 'downstream')", fs.Arg(0))
	}
	token, tokenFrom, err := tokenFile.read()
	if err != nil {
		return err
	}
	aopts.Token = token
	// pprof's handlers sit behind the agent's guard, with or without the
	// agent: the token protects every capture path of the process.
	cfg.DebugGuard = func(h http.Handler) http.Handler { return agent.Guard(aopts, h) }
	aopts.FlightRecorder.Disabled = fr == "off"
	aopts.FlightRecorder.AlwaysOn = fr == "on"
	m, err := fixtures.ParseModel(*model)
	if err != nil {
		return usageErr("--model: %v", err)
	}
	cfg.Model = m
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "workers" {
			cfg.Workers = *workersFlag // given, 0 included, which Validate refuses
		}
	})
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", err)
	}

	var fa *fixtureagent.Agent
	if *withAgent {
		var err error
		if fa, err = fixtureagent.New(aopts); err != nil {
			return err
		}
		defer fa.Close()
	}
	srv, err := fixtureagent.Start(ctx, cfg, fa)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "listening on %s\n", srv.URL())
	st := srv.Stats()
	workers := fmt.Sprintf("workers %d", st.Workers)
	if cfg.Model == fixtures.ModelGoroutine {
		workers = "a goroutine per request"
	}
	fmt.Fprintf(s.out, "model %s, %s, GOMAXPROCS %d; downstream %s; db %s (pool %d)\n",
		cfg.Model, workers, st.GOMAXPROCS, st.DownstreamURL, st.DB.Engine, cfg.DBPool)
	if token != "" {
		fmt.Fprintf(s.out, "/debug/schedscope/ and /debug/pprof/ require the bearer token from %s\n", tokenFrom)
	}
	<-ctx.Done()
	return drain(s, srv.Shutdown)
}

// runDownstream serves the slow downstream alone.
func runDownstream(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags("fixture downstream", "fixture downstream [--addr A] [--delay D]", s.out)
	addr := fs.String("addr", "127.0.0.1:8081", "listen address (port 0 picks a free port)")
	delay := fs.Duration("delay", 100*time.Millisecond, "delay per call")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	if *delay < 0 || *delay > fixtures.MaxSleep {
		return usageErr("--delay: must be in [0, %v], got %v", fixtures.MaxSleep, *delay)
	}
	d, err := fixtures.StartDownstream(ctx, *addr, *delay)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "listening on %s\n", d.URL())
	fmt.Fprintf(s.out, "every call waits %v; counters at %s/stats\n", *delay, d.URL())
	<-ctx.Done()
	return drain(s, d.Shutdown)
}

// drain shuts down with drainTimeout. Requests cut off by the timeout are
// reported on stderr; the exit status stays 0 (the signal asked to stop).
func drain(s *stdio, shutdown func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		fmt.Fprintf(s.errOut, "schedscope fixture: stopped without a full drain: %v\n", err)
	}
	return nil
}

// frMode is --agent-flight-recorder: on-demand (the default), on or off. It
// stays a boolean flag too, as before on-demand existed:
// --agent-flight-recorder alone means on, =false means off.
type frMode string

func (m *frMode) String() string   { return string(*m) }
func (m *frMode) IsBoolFlag() bool { return true }
func (m *frMode) Set(s string) error {
	switch s {
	case "on", "true", "1":
		*m = "on"
	case "off", "false", "0":
		*m = "off"
	case "on-demand":
		*m = "on-demand"
	default:
		return fmt.Errorf("want on, off or on-demand")
	}
	return nil
}
