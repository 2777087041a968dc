// Package agent is schedscope's in-target agent: an http.Handler a Go server
// mounts on its own mux, like net/http/pprof, so that `schedscope run` can read
// what the Go scheduler did while load was applied.
//
// Mount it with
//
//	a, err := agent.New(agent.Options{})
//	if err != nil { ... }
//	defer a.Close()
//	a.Pools().Register("db", agent.DBPool(db))
//	a.Mount(mux, "/debug/schedscope/") // or mux.Handle with http.StripPrefix
//
// and point `schedscope run --agent http://127.0.0.1:8080/debug/schedscope/` at it.
//
// The package needs only the standard library and github.com/felixge/fgprof,
// and builds with Go 1.25 and later; metrics that exist only on newer releases
// are read by name when the running runtime has them, and simply absent
// otherwise.
//
// # Endpoints
//
// Paths are relative to the mount point:
//
//	GET  /                 index: Go version, endpoints, capabilities (JSON)
//	GET  /metrics          runtime/metrics snapshot plus pool usage (JSON, see Snapshot)
//	GET  /metrics?format=prometheus  Options.Exposition's answer, when set (the
//	                       Prometheus collector of module .../collect/agent/prom)
//	GET  /pools            pool usage only (JSON)
//	GET  /trace?seconds=N  execution trace of the next N seconds            [capture]
//	GET  /flightrecorder   flight-recorder snapshot of the last seconds
//	POST /flightrecorder/arm?for=D  start an on-demand recorder for D (default
//	                       10m, at most 24h; a no-op when it runs for good)
//	GET  /profile/NAME     goroutine, block, mutex or threadcreate profile
//	                       (pprof proto; ?debug=1|2 for the text forms)
//	GET  /fgprof?seconds=N fgprof wall-clock profile (pprof proto)          [capture]
//	POST /sleepprobe?goroutines=K&sleep=D&seconds=S
//	                       K goroutines sleep D repeatedly for S seconds (it
//	                       ends at S or when the client goes, whichever is
//	                       first); overshoot distribution (JSON, see
//	                       ProbeResult)                                     [capture]
//	GET  /gomaxprocs       current GOMAXPROCS (JSON)
//	POST /gomaxprocs?n=N   set it (n=default restores the runtime default), only
//	                       when Options.AllowSetGOMAXPROCS
//
// Safe by default: only loopback clients are served unless Options.AllowRemote
// is set (403 otherwise); when Options.Token is set, every endpoint needs
// "Authorization: Bearer TOKEN" (401 otherwise); endpoints marked [capture]
// run one at a time across the whole agent (429 while another runs; a
// flight-recorder snapshot is instant and not a capture, but two at once get
// 429 too, as the recorder writes one snapshot at a time); every
// duration parameter is bounded by Options.MaxCapture (400 beyond it).
//
// Guard puts any other handler behind the same checks. A process that
// mounts net/http/pprof beside the agent should mount it through Guard:
// otherwise a token protects the agent's traces and profiles while
// /debug/pprof/ serves the same for nothing.
//
// The loopback check trusts whatever connects from this host: a TCP
// forwarder or proxy on the same host (an SSH tunnel, a sidecar, socat,
// kubectl port-forward) connects from loopback and passes it on behalf of
// anyone who can reach the forwarder. On a host that runs other services,
// set a token, read from a file or the environment.
//
// # Pools
//
// The runtime's metrics say what the scheduler did; the pools say what the
// server was waiting for. Register each bounded resource under a name:
// DBPool adapts a *sql.DB, NewTransportPool wraps an *http.Transport (use it
// as the client's RoundTripper) and PoolFunc adapts any function that can
// report a PoolStats (a worker pool, a semaphore). /metrics then carries
// every pool's size, use and waits beside the runtime's figures, and
// `schedscope run` derives each pool's Little's-law capacity from them.
//
// # Request anatomy
//
// schedscope's trace analyzer splits each request's wall time by what the Go
// scheduler did with its goroutines (running, runnable, blocked, waiting for
// a pool). It finds the requests and the pool waits in the execution trace
// through three annotations, which cost nothing measurable while no trace
// is being recorded:
//
//   - Middleware runs each request in a runtime/trace task of type
//     RequestTaskType and logs, under RequestLogCategory on the handler's
//     goroutine, the handler's start (unix ns) and, when the request carries
//     the load generator's RequestHeader, its id and intended start:
//     "1700000000123456789 run1-42 1700000000000000000".
//   - Wait(ctx, pool) marks a wait for a pool as a region of type
//     WaitRegionPrefix+pool ("schedscope.wait:db") on the waiting goroutine;
//     end it on that goroutine as soon as the wait is over. TransportPool
//     marks its connection waits so by itself, under its name (see Named).
//   - Work handed to another goroutine (a worker pool's) runs in a region
//     under the request's context: trace.WithRegion(reqCtx, WorkRegionType,
//     work). The analyzer then counts the worker's time as the request's, and
//     shows the request's own goroutine waiting for it meanwhile.
//
// # Flight recorder
//
// The agent can keep a runtime/trace.FlightRecorder: the execution trace of
// the last seconds, in memory, for a snapshot when something goes wrong. By
// default it is on demand: nothing runs until a client arms it with POST
// /flightrecorder/arm?for=D (`schedscope run --snapshot-when` does, for the
// run plus a minute), and it stops by itself when that period ends.
// FlightRecorderOptions.AlwaysOn runs it from New to Close instead, and
// FlightRecorderOptions.Disabled never runs it.
//
// The recorder is continuous execution tracing by the Go runtime, and it is
// not free. On schedscope's fixture it cost 2 to 6 % more target CPU per
// request (bench/agent-overhead, 1,000 req/s, 16 rounds each on a quiet
// machine, medians of the per-round differences: +4.4 % for a handler that
// sleeps 1 ms, +1.9 % for one that spends 100 us of CPU; +6.1 % and +5.7 %
// in totals). An earlier, sequential run of 6 rounds at 500 req/s measured
// +19 % for the 1 ms sleep handler, on rounds too far apart to separate the
// effect from the machine's drift. The agent without a recorder, and an
// on-demand one not armed, cost nothing measurable. docs/readme-agent.md in
// the repository has the runs.
package agent
