package sweep

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/internal/rundir"
)

// The test binary doubles as the target process: with SWEEP_TEST_TARGET set
// it serves /ok, /sleep?ms=, /cpu?rounds= and a stand-in for the agent's
// /debug/schedscope/metrics on that address, until SIGTERM.
func TestMain(m *testing.M) {
	if addr := os.Getenv("SWEEP_TEST_TARGET"); addr != "" {
		serveTestTarget(addr)
		return
	}
	goleak.VerifyTestMain(m)
}

func serveTestTarget(addr string) {
	switch os.Getenv("SWEEP_TEST_MODE") {
	case "exit":
		fmt.Fprintln(os.Stderr, "listen tcp: address already in use")
		os.Exit(3)
	case "mute":
		time.Sleep(time.Minute) // never listens
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		time.Sleep(time.Duration(n) * time.Millisecond)
	})
	mux.HandleFunc("/cpu", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("rounds"))
		sum := sha256.Sum256([]byte("x"))
		for i := 0; i < n; i++ {
			sum = sha256.Sum256(sum[:])
		}
		fmt.Fprintf(w, "%x", sum[:4])
	})
	// The real in-target agent, with GOMAXPROCS settable for --live.
	a, err := agent.New(agent.Options{AllowSetGOMAXPROCS: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer a.Close()
	a.Mount(mux, "/debug/schedscope/")
	if err := http.ListenAndServe(addr, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// testTarget returns argv and URL base for a target on a free port.
func testTarget(t *testing.T, mode string) (argv []string, base string, env func()) {
	t.Helper()
	addr, err := FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SWEEP_TEST_TARGET", addr)
	t.Setenv("SWEEP_TEST_MODE", mode)
	return []string{exe}, "http://" + addr, func() {}
}

func TestWaitReadyAndUsage(t *testing.T) {
	argv, base, _ := testTarget(t, "")
	p, err := Start(Target{Argv: argv, GOMAXPROCS: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
	}()
	ctx := context.Background()
	if err := WaitReady(ctx, p, base+"/ok", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		resp, err := http.Get(base + "/cpu?rounds=20000")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	u, err := p.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.RSS <= 0 || u.PeakRSS < u.RSS || u.Threads < 1 {
		t.Errorf("usage %+v: want RSS > 0, peak >= RSS, threads >= 1", u)
	}
	if u.CPU <= 0 {
		t.Errorf("usage %+v: want some CPU after 400,000 SHA-256 rounds", u)
	}
	err = WaitReady(ctx, p, base+"/nothing-here", 5*time.Second)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("404 URL: err = %v, want ErrNotFound", err)
	}
}

func TestWaitReadyFailures(t *testing.T) {
	t.Run("exits", func(t *testing.T) {
		argv, base, _ := testTarget(t, "exit")
		p, err := Start(Target{Argv: argv})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		err = WaitReady(context.Background(), p, base+"/ok", 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), "exit status 3") {
			t.Errorf("err = %v, want the exit status and the last output line", err)
		}
	})
	t.Run("never answers", func(t *testing.T) {
		argv, base, _ := testTarget(t, "mute")
		p, err := Start(Target{Argv: argv})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		err = WaitReady(context.Background(), p, base+"/ok", 2*time.Second)
		if err == nil || !strings.Contains(err.Error(), "did not answer 2xx within 2s") || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("err = %v, want a deadline error", err)
		}
	})
	t.Run("command not found", func(t *testing.T) {
		p, err := Start(Target{Command: "/nonexistent/schedscope-target --x"})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		addr, err := FreeLoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		err = WaitReady(context.Background(), p, "http://"+addr+"/", 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), "exited (exit status 127) before answering") {
			t.Errorf("err = %v, want exit status 127 from sh", err)
		}
	})
}

func TestNewPlanRejectsBadInput(t *testing.T) {
	good := Config{Command: "x", URL: "http://127.0.0.1:1/", GOMAXPROCS: []int{1, 2}, Rates: []float64{10}}
	tests := []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"empty GOMAXPROCS", func(c *Config) { c.GOMAXPROCS = nil }, "no GOMAXPROCS values"},
		{"zero GOMAXPROCS", func(c *Config) { c.GOMAXPROCS = []int{0} }, "GOMAXPROCS 0"},
		{"duplicate GOMAXPROCS", func(c *Config) { c.GOMAXPROCS = []int{2, 2} }, "given twice"},
		{"no rates", func(c *Config) { c.Rates = nil }, "no offered rates"},
		{"negative rate", func(c *Config) { c.Rates = []float64{-1} }, "rate -1"},
		{"no URL", func(c *Config) { c.URL = "" }, "no url"},
		{"bad URL", func(c *Config) { c.URL = "127.0.0.1:80" }, "want an http:// URL"},
		{"no command", func(c *Config) { c.Command = "" }, "no target command"},
		{"live without agent", func(c *Config) { c.Live = true }, "give --agent"},
		{"negative warmup", func(c *Config) { c.Warmup = -time.Second }, "warmup"},
		{"iterations", func(c *Config) { c.Iterations = -1 }, "iterations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.edit(&c)
			_, err := NewPlan(c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
	p, err := NewPlan(good)
	if err != nil {
		t.Fatal(err)
	}
	if p.Iterations != DefaultIterations || p.DurationS != DefaultDuration.Seconds() || !p.Pinned {
		t.Errorf("defaults not applied: %+v", p)
	}
}

// requestLoader is a tiny closed loop standing in for the open-model
// generator: it sends one request every 1/rate seconds (sequentially, never
// more than the rate) for the duration, so tests of the orchestration do not
// depend on the load package.
func requestLoader(calls *atomic.Int64) Loader {
	return LoaderFunc(func(ctx context.Context, o Offer) (Measured, error) {
		calls.Add(1)
		var m Measured
		start := time.Now()
		tick := time.NewTicker(time.Duration(float64(time.Second) / o.Rate))
		defer tick.Stop()
		client := &http.Client{Timeout: 2 * time.Second}
		defer client.CloseIdleConnections()
		for time.Since(start) < o.Duration {
			select {
			case <-ctx.Done():
				m.Interrupted = true
				return m, nil
			case <-tick.C:
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.URL, nil)
			m.Sent++
			resp, err := client.Do(req)
			if err != nil {
				if ctx.Err() != nil {
					m.Interrupted = true
					return m, nil
				}
				m.Errors++
				continue
			}
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				m.OK++
			}
		}
		m.Duration = time.Since(start)
		m.OKPerSec = float64(m.OK) / m.Duration.Seconds()
		m.P50, m.P99 = time.Millisecond, 2*time.Millisecond
		return m, nil
	})
}

func TestRunInterruptAndResume(t *testing.T) {
	argv, base, _ := testTarget(t, "")
	dir := t.TempDir()
	var calls atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var events []Event
	cfg := Config{
		Argv: argv, URL: base + "/cpu?rounds=1000", Agent: base + "/debug/schedscope/",
		GOMAXPROCS: []int{2, 1}, Rates: []float64{40, 20}, Iterations: 1,
		Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond,
		Dir: dir, Loader: requestLoader(&calls),
		Progress: func(e Event) {
			events = append(events, e)
			if e.Kind == EventStep && e.Done == 3 {
				cancel() // interrupt during the 4th step's process
			}
		},
	}
	s, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: err = %v, want context.Canceled", err)
	}
	if s == nil || len(s.Steps) != 3 {
		t.Fatalf("interrupted run kept %v steps, want 3", s)
	}
	// run order: GOMAXPROCS sorted ascending, rates ascending
	want := []rundir.StepKey{{GOMAXPROCS: 1, Iteration: 1, Rate: 20}, {GOMAXPROCS: 1, Iteration: 1, Rate: 40}, {GOMAXPROCS: 2, Iteration: 1, Rate: 20}}
	for i, st := range s.Steps {
		if st.StepKey != want[i] {
			t.Errorf("step %d = %+v, want %+v", i, st.StepKey, want[i])
		}
		if st.Agent == nil || int(st.Agent.GOMAXPROCS) != st.GOMAXPROCS {
			t.Errorf("step %+v: the target's GOMAXPROCS (agent) = %+v, want %d", st.StepKey, st.Agent, st.GOMAXPROCS)
		}
		if st.OK == 0 || st.RSSBytes == 0 || st.TargetPID == 0 {
			t.Errorf("step %+v: OK %d RSS %d pid %d: want all > 0", st.StepKey, st.OK, st.RSSBytes, st.TargetPID)
		}
	}
	if len(s.Remaining()) != 1 {
		t.Fatalf("remaining = %v, want 1 step", s.Remaining())
	}
	if line := FormatEvent(events[len(events)-1]); !strings.Contains(line, "stopped") {
		t.Errorf("last event %q: want the target stopped", line)
	}

	// Resume with a fresh context: only the missing step runs.
	before := calls.Load()
	cfg.Progress = nil
	cfg.Resume = true
	cfg.GOMAXPROCS = nil // ignored: the plan on disk rules
	s, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Steps) != 4 || len(s.Remaining()) != 0 {
		t.Fatalf("after resume: %d steps, %d remaining; want 4 and 0", len(s.Steps), len(s.Remaining()))
	}
	if got := calls.Load() - before; got != 2 { // warm-up + the one step
		t.Errorf("resume made %d Offer calls, want 2", got)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.LogsDir, "gomaxprocs-002_iter-01.log")); err != nil {
		t.Errorf("target log: %v", err)
	}

	// A new sweep into a directory with finished steps is refused.
	cfg.Resume = false
	cfg.GOMAXPROCS = []int{1}
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("second sweep into %s: err = %v, want a hint to --resume", dir, err)
	}
}

func TestRunFailsBeforeAnyLoad(t *testing.T) {
	tests := []struct {
		name, mode, path string
		want             string
	}{
		{"404", "", "/nothing-here", "404"},
		{"exits", "exit", "/ok", "address already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, base, _ := testTarget(t, tt.mode)
			var calls atomic.Int64
			_, err := Run(context.Background(), Config{
				Argv: argv, URL: base + tt.path, GOMAXPROCS: []int{1}, Rates: []float64{10}, Iterations: 1,
				Duration: 100 * time.Millisecond, Dir: t.TempDir(), Loader: requestLoader(&calls),
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
			if calls.Load() != 0 {
				t.Errorf("%d load phases were offered before the error", calls.Load())
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	line := "1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 7 0 100 1000 200 18446744073709551615"
	st, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st.pgrp != 1234 || st.utime != 250 || st.stime != 50 || st.threads != 7 {
		t.Errorf("parsed %+v, want pgrp 1234 utime 250 stime 50 threads 7", st)
	}
	if _, err := parseStat([]byte("1 (x) S 1 2")); err == nil {
		t.Error("short stat line parsed without error")
	}
}

func TestPinList(t *testing.T) {
	tests := []struct {
		allowed []int
		n       int
		want    string
		ok      bool
	}{
		{[]int{0, 1}, 1, "1", true},
		{[]int{0, 1}, 2, "0-1", true},
		{[]int{0, 1}, 4, "", false},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, 4, "4-7", true},
		{[]int{0, 2, 3, 5}, 3, "2-3,5", true},
	}
	for _, tt := range tests {
		got, ok := PinList(tt.allowed, tt.n)
		if got != tt.want || ok != tt.ok {
			t.Errorf("PinList(%v, %d) = %q, %v; want %q, %v", tt.allowed, tt.n, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFreeLoopbackAddrAvoidsEphemeralPorts(t *testing.T) {
	low := ephemeralLow()
	if low <= 10000 {
		t.Skipf("ephemeral range starts at %d: nothing to avoid", low)
	}
	addr, err := FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(addr, ":")
	if n, _ := strconv.Atoi(port); n < 10000 || n >= low {
		t.Errorf("port %d: want one in [10000, %d), below the ephemeral range", n, low)
	}
}

func TestParseCPUList(t *testing.T) {
	got, err := ParseCPUList("4-6, 1,5")
	if err != nil || fmt.Sprint(got) != "[1 4 5 6]" {
		t.Errorf("ParseCPUList = %v, %v; want [1 4 5 6]", got, err)
	}
	for _, bad := range []string{"", "x", "3-1", "-2", "1-"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q): no error", bad)
		}
	}
}

func TestParseFixture(t *testing.T) {
	ft, err := ParseFixture("sleep?ms=20 --model pool --workers=8 --queue 100", "/bin/schedscope", "127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	wantArgv := "/bin/schedscope fixture --model pool --workers=8 --queue 100 --addr 127.0.0.1:9"
	if got := strings.Join(ft.Argv, " "); got != wantArgv {
		t.Errorf("argv = %q, want %q", got, wantArgv)
	}
	if ft.URL != "http://127.0.0.1:9/sleep?ms=20" || ft.Model != "pool" || ft.Workers != 8 || !ft.Bounded() {
		t.Errorf("parsed %+v", ft)
	}
	for _, bad := range []string{"", "nap --model pool", "cpu --workers x", "cpu --addr :1", "cpu --model"} {
		if _, err := ParseFixture(bad, "x", "127.0.0.1:9"); err == nil {
			t.Errorf("ParseFixture(%q): no error", bad)
		}
	}
}

func TestRunLive(t *testing.T) {
	argv, base, _ := testTarget(t, "")
	var calls atomic.Int64
	var pids []int
	s, err := Run(context.Background(), Config{
		Argv: argv, URL: base + "/ok", Agent: base + "/debug/schedscope/", Live: true,
		GOMAXPROCS: []int{1, 2}, Rates: []float64{20}, Iterations: 2,
		Duration: 200 * time.Millisecond, Dir: t.TempDir(), Loader: requestLoader(&calls),
		Progress: func(e Event) {
			if e.Kind == EventStart {
				pids = append(pids, e.PID)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pids) != 1 {
		t.Errorf("live sweep started %d processes, want 1", len(pids))
	}
	if len(s.Steps) != 4 {
		t.Fatalf("steps = %d, want 4", len(s.Steps))
	}
	for _, st := range s.Steps {
		if st.Agent == nil || int(st.Agent.GOMAXPROCS) != st.GOMAXPROCS {
			t.Errorf("step %+v: the agent reports GOMAXPROCS %+v", st.StepKey, st.Agent)
		}
	}
	if !s.Plan.Live || s.Plan.Pinned {
		t.Errorf("plan live %v pinned %v, want live and unpinned", s.Plan.Live, s.Plan.Pinned)
	}
}
