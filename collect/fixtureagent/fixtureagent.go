// Package fixtureagent mounts schedscope's in-target agent on the fixture
// server, at /debug/schedscope/, with the fixture's pools registered:
//
//	fa, err := fixtureagent.New(agent.Options{})
//	defer fa.Close()
//	srv, err := fixtureagent.Start(ctx, cfg, fa)
//
// Pools: "workers" (the pool and threads models' worker goroutines, the
// bulkhead's permits; unbounded in the goroutine model), "db" (the
// database/sql pool) and "http" (the /fanout HTTP transport's
// MaxConnsPerHost).
package fixtureagent

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/fixtures"
)

// Prefix is where the agent is mounted on the fixture's mux.
const Prefix = "/debug/schedscope/"

// Default profiling rates New sets when the options leave them zero, so the
// fixture's block and mutex profiles are not empty: one blocking event
// sampled per 10 us blocked, one mutex contention in 10.
const (
	DefaultBlockProfileRate     = 10_000
	DefaultMutexProfileFraction = 10
)

// FixtureAgent is an agent for one fixture server. Its methods are safe for
// concurrent use.
type FixtureAgent struct {
	a *agent.Agent
}

// New creates the agent (starting its flight recorder). Zero
// BlockProfileRate and MutexProfileFraction in opts take this package's
// defaults.
func New(opts agent.Options) (*FixtureAgent, error) {
	if opts.BlockProfileRate == 0 {
		opts.BlockProfileRate = DefaultBlockProfileRate
	}
	if opts.MutexProfileFraction == 0 {
		opts.MutexProfileFraction = DefaultMutexProfileFraction
	}
	a, err := agent.New(opts)
	if err != nil {
		return nil, fmt.Errorf("fixture agent: %w", err)
	}
	return &FixtureAgent{a: a}, nil
}

// Wrap returns a FixtureAgent over an agent the caller created, leaving its
// options (profiling rates included) as they are. Close closes a.
func Wrap(a *agent.Agent) *FixtureAgent { return &FixtureAgent{a: a} }

// Agent returns the underlying agent.
func (fa *FixtureAgent) Agent() *agent.Agent { return fa.a }

// Routes mounts the agent at Prefix; it fits fixtures.Config.Routes.
func (fa *FixtureAgent) Routes(mux *http.ServeMux) { fa.a.Mount(mux, Prefix) }

// Attach registers srv's pools with the agent. Call it once srv has started.
func (fa *FixtureAgent) Attach(srv *fixtures.Server) {
	p := fa.a.Pools()
	p.Register("workers", agent.PoolFunc(func() agent.PoolStats { return WorkerPool(srv.Stats()) }))
	db := agent.DBPool(srv.DB())
	p.Register("db", agent.PoolFunc(func() agent.PoolStats { return DBPool(db.PoolStats(), srv.Stats().DB) }))
	p.Register("http", agent.PoolFunc(func() agent.PoolStats { return HTTPPool(srv.Stats().Fanout) }))
}

// Close stops the agent's flight recorder.
func (fa *FixtureAgent) Close() error { return fa.a.Close() }

// WorkerPool reads the worker pool from the fixture's stats: size = workers
// (0, unbounded, in the goroutine model), in use = requests running their
// work, waiting = queued. Acquisitions are the requests whose work ran to its
// end and hold time the time they ran it, both counted by the fixture, so the
// mean hold (and the Little's-law capacity) needs no outside figure.
func WorkerPool(st fixtures.Stats) agent.PoolStats {
	size := st.Workers
	if st.Model == fixtures.ModelGoroutine {
		size = 0
	}
	return agent.PoolStats{Kind: "workers", Size: size, InUse: int(st.Running), Waiting: int(st.Queued),
		Acquired: st.Handled, HoldDuration: time.Duration(st.WorkNanos), Known: agent.Known{Waiting: true, Acquired: true}}
}

// DBPool is database/sql's pool (db) with the fixture's query counters:
// each query holds one connection for its duration, so acquisitions and hold
// time are the queries and their busy time.
func DBPool(db agent.PoolStats, st fixtures.DBStats) agent.PoolStats {
	db.Acquired = st.Queries
	db.HoldDuration = time.Duration(st.BusySeconds * float64(time.Second))
	db.Known.Acquired = true
	return db
}

// HTTPPool is the /fanout HTTP connection pool: size MaxConnsPerHost, in use
// the calls holding a connection, waiting those waiting for one.
func HTTPPool(f fixtures.FanoutStats) agent.PoolStats {
	return agent.PoolStats{Kind: "http.Transport", Size: f.MaxConnsPerHost, InUse: int(f.ActiveConns), Waiting: int(f.WaitingForConn),
		Acquired: f.Sent, Known: agent.Known{Waiting: true}}
}

// Start starts a fixture server with fa mounted at Prefix (after any routes
// cfg already adds) and the server's pools registered with it. A nil fa
// starts the fixture without the agent.
func Start(ctx context.Context, cfg fixtures.Config, fa *FixtureAgent) (*fixtures.Server, error) {
	if fa != nil {
		extra := cfg.Routes
		cfg.Routes = func(mux *http.ServeMux) {
			if extra != nil {
				extra(mux)
			}
			fa.Routes(mux)
		}
	}
	srv, err := fixtures.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if fa != nil {
		fa.Attach(srv)
	}
	return srv, nil
}
