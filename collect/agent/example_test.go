package agent_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"runtime/trace"
	"sync/atomic"

	"github.com/schedscope/schedscope/collect/agent"
)

// Mount the agent on a server's own mux, register a pool, and read
// /metrics the way `schedscope run` does.
func Example() {
	a, err := agent.New(agent.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	// A worker pool of 8, with 3 busy: any pool the adapters (DBPool,
	// NewTransportPool) do not cover can report through a PoolFunc.
	var busy atomic.Int64
	busy.Store(3)
	a.Pools().Register("workers", agent.PoolFunc(func() agent.PoolStats {
		return agent.PoolStats{Size: 8, InUse: int(busy.Load()), Known: agent.Known{Waiting: true}}
	}))

	mux := http.NewServeMux()
	a.Mount(mux, "/debug/schedscope/")
	srv := httptest.NewServer(mux) // on 127.0.0.1: the agent serves loopback clients only by default
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/debug/schedscope/metrics")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var snap agent.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		log.Fatal(err)
	}
	w := snap.Pools["workers"]
	fmt.Printf("workers: kind %s, size %d, in use %d\n", w.Kind, w.Size, w.InUse)
	_, ok := snap.Values["/sched/goroutines:goroutines"]
	fmt.Println("has /sched/goroutines:goroutines:", ok)
	fmt.Println("flight recorder running:", snap.FlightRecorder)
	// Output:
	// workers: kind func, size 8, in use 3
	// has /sched/goroutines:goroutines: true
	// flight recorder running: false
}

// By default the flight recorder is on demand: it costs nothing until a
// client arms it for a while (`schedscope run --snapshot-when` does), and
// stops by itself when that period ends. Options.FlightRecorder.AlwaysOn
// would run it from New on instead.
func Example_flightRecorder() {
	a, err := agent.New(agent.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	mux := http.NewServeMux()
	a.Mount(mux, "/debug/schedscope/")
	srv := httptest.NewServer(mux)
	defer srv.Close()
	base := srv.URL + "/debug/schedscope/"

	state := func() string {
		resp, err := http.Get(base)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		var idx agent.Index
		if err := json.NewDecoder(resp.Body).Decode(&idx); err != nil {
			log.Fatal(err)
		}
		return idx.FlightRecorder
	}
	fmt.Println("before arming:", state())

	resp, err := http.Post(base+"flightrecorder/arm?for=1m", "", nil)
	if err != nil {
		log.Fatal(err)
	}
	var armed agent.ArmState
	err = json.NewDecoder(resp.Body).Decode(&armed)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("armed:", armed.FlightRecorder, "until set:", armed.Until != nil)
	fmt.Println("after arming:", state())

	resp, err = http.Get(base + "flightrecorder") // the execution trace of the last seconds
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("snapshot:", resp.StatusCode, resp.Header.Get("Content-Type"))
	// Output:
	// before arming: on demand
	// armed: on until set: true
	// after arming: on
	// snapshot: 200 application/octet-stream
}

// With a token, put net/http/pprof behind the agent's guard too: a token
// that protects the agent's traces and profiles while /debug/pprof/ serves
// the same for nothing protects nothing. Read the token from the
// environment or a file, never from the command line (ps and
// /debug/pprof/cmdline show it); cmdline is left out here for that reason.
func ExampleGuard() {
	opts := agent.Options{Token: os.Getenv("EXAMPLE_AGENT_TOKEN")}
	if opts.Token == "" {
		opts.Token = "example-token" // so that the example runs
	}
	a, err := agent.New(opts)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	mux := http.NewServeMux()
	a.Mount(mux, "/debug/schedscope/")
	mux.Handle("/debug/pprof/", a.Guard(http.HandlerFunc(pprof.Index)))
	mux.Handle("/debug/pprof/profile", a.Guard(http.HandlerFunc(pprof.Profile)))
	mux.Handle("/debug/pprof/trace", a.Guard(http.HandlerFunc(pprof.Trace)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	get := func(path, token string) int {
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		if err != nil {
			log.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fmt.Println("heap without the token:", get("/debug/pprof/heap", ""))
	fmt.Println("heap with the token:", get("/debug/pprof/heap", opts.Token))
	fmt.Println("agent metrics without the token:", get("/debug/schedscope/metrics", ""))
	// Output:
	// heap without the token: 401
	// heap with the token: 200
	// agent metrics without the token: 401
}

// Histograms in a Snapshot are cumulative: subtract the previous poll's to
// get the distribution of one interval, then ask for a quantile.
func ExampleHistogram_Sub() {
	prev := agent.Histogram{
		Lower:  []float64{0, 1e-6, 1e-5},
		Upper:  []float64{1e-6, 1e-5, 1e-4},
		Counts: []uint64{10, 5, 0},
	}
	now := agent.Histogram{
		Lower:  []float64{0, 1e-6, 1e-5, 1e-4},
		Upper:  []float64{1e-6, 1e-5, 1e-4, 1e-3},
		Counts: []uint64{10, 95, 4, 1},
	}
	d := now.Sub(prev)
	fmt.Println("samples in the interval:", d.Total())
	fmt.Println("p50 at most:", d.Quantile(0.5))
	fmt.Println("p99 at most:", d.Quantile(0.99))
	// Output:
	// samples in the interval: 95
	// p50 at most: 1e-05
	// p99 at most: 0.001
}

// Wrap the handlers whose requests schedscope measures (not the agent's own
// endpoints). While an execution trace is being recorded, each request runs
// in a task of type agent.RequestTaskType that logs its start time and the
// load generator's agent.RequestHeader; with none, the handler runs as it
// would without Middleware.
func ExampleMiddleware() {
	mux := http.NewServeMux()
	mux.Handle("/hello", agent.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	})))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/hello", nil)
	if err != nil {
		log.Fatal(err)
	}
	// What `schedscope run` sends: "<tag>-<seq> <intended-unix-ns>".
	req.Header.Set(agent.RequestHeader, "run1-42 1700000000000000000")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(resp.StatusCode, " ", string(body))
	// Output:
	// 200 hello
}

// Mark each wait for a bounded resource with Wait, under the request's
// context, so the analyzer shows how long the request waited for which pool;
// and run work handed to a worker goroutine inside a region under the
// request's context, so the analyzer counts the worker's time as the
// request's.
func ExampleWait() {
	permits := make(chan struct{}, 2) // a limit of two at once
	handler := func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		end := agent.Wait(ctx, "workers")
		select {
		case permits <- struct{}{}:
			end()
		case <-ctx.Done():
			end()
			return
		}
		defer func() { <-permits }()

		// Work on another goroutine, in a region carrying the request's task.
		done := make(chan struct{})
		go trace.WithRegion(ctx, agent.WorkRegionType, func() {
			defer close(done)
			fmt.Fprintln(w, "done")
		})
		<-done
	}
	srv := httptest.NewServer(agent.Middleware(http.HandlerFunc(handler)))
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(body))
	// Output:
	// done
}

// Name a TransportPool after the pool it is registered as, so that its
// connection waits appear in a trace as waits for that pool.
func ExampleTransportPool_Named() {
	a, err := agent.New(agent.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	tp := agent.NewTransportPool(&http.Transport{MaxConnsPerHost: 4}).Named("payments")
	a.Pools().Register("payments", tp)
	client := &http.Client{Transport: tp}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	resp, err := client.Get(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	tp.Transport().CloseIdleConnections()
	s := a.Pools().Stats()["payments"]
	fmt.Printf("%s: size %d, acquired %d, in use %d\n", s.Kind, s.Size, s.Acquired, s.InUse)
	// Output:
	// http.Transport: size 4, acquired 1, in use 0
}
