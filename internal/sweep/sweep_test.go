package sweep

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target/targettest"
)

// The test binary doubles as the target process (see targettest).
func TestMain(m *testing.M) {
	if targettest.Serve() {
		return
	}
	goleak.VerifyTestMain(m)
}

func TestNewPlanRejectsBadInput(t *testing.T) {
	good := Config{Command: "x", URL: "http://127.0.0.1:1/", GOMAXPROCS: []int{1, 2}, Rates: []float64{10}}
	tests := []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"empty GOMAXPROCS", func(c *Config) { c.GOMAXPROCS = nil }, "no GOMAXPROCS values"},
		{"negative GOMAXPROCS", func(c *Config) { c.GOMAXPROCS = []int{-1} }, "GOMAXPROCS -1: must be in [1, 4096], or auto"},
		{"auto twice", func(c *Config) { c.GOMAXPROCS = []int{0, 0} }, "GOMAXPROCS auto given twice"},
		{"duplicate GOMAXPROCS", func(c *Config) { c.GOMAXPROCS = []int{2, 2} }, "given twice"},
		{"no rates", func(c *Config) { c.Rates = nil }, "no offered rates"},
		{"negative rate", func(c *Config) { c.Rates = []float64{-1} }, "rate -1"},
		{"no URL", func(c *Config) { c.URL = "" }, "no url"},
		{"bad URL", func(c *Config) { c.URL = "127.0.0.1:80" }, "want an http:// URL"},
		{"no command", func(c *Config) { c.Command = "" }, "no target command"},
		{"live without agent", func(c *Config) { c.Live = true }, "give --agent"},
		{"negative warmup", func(c *Config) { c.Warmup = -time.Second }, "warmup"},
		{"iterations", func(c *Config) { c.Iterations = -1 }, "iterations"},
		// Every bound, named in its error.
		{"too many iterations", func(c *Config) { c.Iterations = MaxIterations + 1 }, "iterations 101: must be in [1, 100]"},
		{"too many GOMAXPROCS values", func(c *Config) { c.GOMAXPROCS = make([]int, MaxLevels+1) }, "65 GOMAXPROCS values: at most 64"},
		{"GOMAXPROCS too large", func(c *Config) { c.GOMAXPROCS = []int{MaxGOMAXPROCS + 1} }, "GOMAXPROCS 4097: must be in [1, 4096]"},
		{"too many rates", func(c *Config) { c.Rates = make([]float64, 101) }, "101 rates: at most 100"},
		{"too many steps", func(c *Config) {
			c.GOMAXPROCS = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
			c.Rates = make([]float64, 100)
			for i := range c.Rates {
				c.Rates[i] = float64(i + 1)
			}
			c.Iterations = 10
		}, "11000 steps (11 GOMAXPROCS values x 100 rates x 10 iterations): at most 10000"},
		{"duration too long", func(c *Config) { c.Duration = 25 * time.Hour }, "duration 25h0m0s: at most 24h0m0s"},
		{"pause too long", func(c *Config) { c.Pause = 2 * time.Hour }, "pause 2h0m0s: at most 1h0m0s"},
		{"ready timeout too long", func(c *Config) { c.ReadyTimeout = time.Hour }, "ready timeout 1h0m0s: at most 10m0s"},
		{"negative concurrency", func(c *Config) { c.ConcurrencyLimit = -1 }, "concurrency -1: must be in [0, 10000000]"},
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
	argv, base := targettest.Argv(t, targettest.Serving)
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

// TestSweepRecordsNoSecretAndResumes: sweep.json holds the target's
// command and URL with their secrets redacted; a resume asks for them
// again, checks them against the redacted plan, and then finishes.
func TestSweepRecordsNoSecretAndResumes(t *testing.T) {
	argv, base := targettest.Argv(t, targettest.Serving)
	dir := t.TempDir()
	var calls atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	command := "API_TOKEN=zq-envsecret exec '" + argv[0] + "' --token zq-flagsecret"
	url := base + "/cpu?rounds=1000&password=zq-qpass"
	cfg := Config{
		Command: command, URL: url, GOMAXPROCS: []int{1}, Rates: []float64{20, 40}, Iterations: 1,
		Duration: 200 * time.Millisecond, Dir: dir, Loader: requestLoader(&calls),
		Progress: func(e Event) {
			if e.Kind == EventStep && e.Done == 1 {
				cancel() // interrupt during the second step
			}
		},
	}
	if _, err := Run(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sweep: err = %v, want context.Canceled", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.SweepFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"zq-envsecret", "zq-flagsecret", "zq-qpass"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("sweep.json holds %q:\n%s", secret, b)
		}
	}
	if !strings.Contains(string(b), "API_TOKEN=REDACTED") {
		t.Errorf("sweep.json does not show what was redacted:\n%s", b)
	}

	cfg.Progress, cfg.Resume = nil, true
	for _, tc := range []struct{ command, url, want string }{
		{"", url, "give it again with --cmd"},
		{command, "", "give it again with --url"},
		{command + " --extra", url, "does not match"},
	} {
		cfg.Command, cfg.URL = tc.command, tc.url
		if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("resume with --cmd %q --url %q: err = %v, want one containing %q", tc.command, tc.url, err, tc.want)
		}
	}
	cfg.Command, cfg.URL = command, url
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("resume with the command and URL given again: %v", err)
	}
	s, err := rundir.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Remaining()) != 0 {
		t.Errorf("after resume: %d steps remaining, want 0", len(s.Remaining()))
	}
	// A finished sweep starts no target: resuming it needs no secret.
	cfg.Command, cfg.URL = "", ""
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Errorf("resume of a finished sweep without --cmd: %v", err)
	}
}

func TestRunFailsBeforeAnyLoad(t *testing.T) {
	tests := []struct {
		name string
		mode targettest.Mode
		path string
		want string
	}{
		{"404", targettest.Serving, "/nothing-here", "404"},
		{"exits", targettest.Exit, "/ok", "address already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, base := targettest.Argv(t, tt.mode)
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
	argv, base := targettest.Argv(t, targettest.Serving)
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
