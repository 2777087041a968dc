package sweep

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

func TestNewPlanAxes(t *testing.T) {
	good := Config{Argv: []string{"ss", "fixture", "--addr", "127.0.0.1:1"}, Fixture: "sleep?ms=20", URL: "http://127.0.0.1:1/sleep",
		GOMAXPROCS: []int{2, 1}, Users: []int{8, 2}, Think: 10 * time.Millisecond, Models: []string{"goroutine", "pool"},
		Sets: []rundir.SetAxis{{Name: "workers", Values: []string{"4", "20"}}}}
	p, err := NewPlan(good)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Users, []int{2, 8}) || p.ThinkS != 0.01 || len(p.Rates) != 0 || !p.Closed() ||
		!slices.Equal(p.Models, []string{"goroutine", "pool"}) || len(p.Sets) != 1 || p.Version != rundir.SweepVersion {
		t.Errorf("plan %+v", p)
	}
	if n := len(p.Steps()); n != 2*2*2*2*DefaultIterations {
		t.Errorf("%d steps, want %d", n, 16*DefaultIterations)
	}
	tests := []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"rates and users", func(c *Config) { c.Rates = []float64{10} }, "either --rates (open model) or --users (closed model)"},
		{"neither", func(c *Config) { c.Users, c.Think = nil, 0 }, "no offered rates"},
		{"think without users", func(c *Config) { c.Users, c.Rates = nil, []float64{10} }, "--think is the closed model's pause"},
		{"zero users", func(c *Config) { c.Users = []int{0} }, "users 0: must be in [1, 100000]"},
		{"users twice", func(c *Config) { c.Users = []int{2, 2} }, "users 2 given twice"},
		{"models without fixture", func(c *Config) { c.Fixture = "" }, "they need --fixture"},
		{"unknown model", func(c *Config) { c.Models = []string{"actor"} }, `--models "actor": unknown model`},
		{"model in spec too", func(c *Config) { c.Fixture = "sleep --model pool" }, "gives --model and --models sweeps it"},
		{"unknown flag", func(c *Config) { c.Sets = []rundir.SetAxis{{Name: "wrokers", Values: []string{"1"}}} }, "--set wrokers: not a fixture flag a sweep can vary"},
		{"secret flag", func(c *Config) { c.Sets = []rundir.SetAxis{{Name: "db-dsn", Values: []string{"x"}}} }, "--set db-dsn: not a fixture flag"},
		{"set model", func(c *Config) { c.Sets = []rundir.SetAxis{{Name: "model", Values: []string{"pool"}}} }, "use --models"},
		{"set in spec too", func(c *Config) { c.Fixture = "sleep --workers=8" }, "gives --workers and --set sweeps it"},
		{"bad value", func(c *Config) { c.Sets = []rundir.SetAxis{{Name: "workers", Values: []string{"4,5_"}}} }, "letters, digits and . : + - only"},
		{"set twice", func(c *Config) { c.Sets = append(c.Sets, rundir.SetAxis{Name: "workers", Values: []string{"8"}}) }, "--set workers given twice"},
		{"live", func(c *Config) { c.Live, c.Agent = true, "http://127.0.0.1:1/" }, "drop --live"},
		{"too many lines", func(c *Config) {
			c.Sets = []rundir.SetAxis{{Name: "workers", Values: strings.Split("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", ",")}}
		}, "68 lines (combinations of GOMAXPROCS, --cpu-limits, --models and --set values): at most 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.edit(&c)
			_, err := NewPlan(c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestLineArgv(t *testing.T) {
	p := rundir.SweepPlan{Argv: []string{"ss", "fixture", "--addr", "127.0.0.1:1"}}
	line := rundir.Line{GOMAXPROCS: 2, Model: "pool", Set: rundir.Settings{}.With("workers", "4").With("db-pool", "10")}
	got := lineArgv(p, line)
	want := []string{"ss", "fixture", "--addr", "127.0.0.1:1", "--model", "pool", "--db-pool=10", "--workers=4"}
	if !slices.Equal(got, want) {
		t.Errorf("argv %q, want %q", got, want)
	}
	if p.Argv[len(p.Argv)-1] != "127.0.0.1:1" {
		t.Error("lineArgv changed the plan's argv")
	}
	if got := lineArgv(p, rundir.Line{GOMAXPROCS: 1}); !slices.Equal(got, p.Argv) {
		t.Errorf("plain line argv %q", got)
	}
}

func TestMaterialGeneratorBound(t *testing.T) {
	tests := []struct {
		lag, p99, cpu float64
		want          bool
	}{
		{0.8, 5, 0.2, false}, // under 1 ms: never
		{3, 40, 0.2, false},  // 7.5 % of the p99
		{3, 17, 0.2, true},   // 18 % of the p99 (the step still counts when served: package capacity)
		{0.1, 5, 0.95, true}, // a full core
	}
	for _, tt := range tests {
		got, why := MaterialGeneratorBound(tt.lag, tt.p99, tt.cpu)
		if got != tt.want || why == "" {
			t.Errorf("lag %v p99 %v cpu %v: %v (%q), want %v", tt.lag, tt.p99, tt.cpu, got, why, tt.want)
		}
	}
}

func TestFormatEventNamesTheLine(t *testing.T) {
	st := &rundir.SweepStep{StepKey: rundir.StepKey{GOMAXPROCS: 1, Iteration: 1, Users: 8}, OKPerSec: 190, P50MS: 41, P95MS: 43, P99MS: 45}
	got := FormatEvent(Event{Kind: EventStep, Done: 4, Total: 4, GOMAXPROCS: 1, Iteration: 1, Users: 8, Label: "pool, GOMAXPROCS 1, workers=4", Step: st})
	want := "[4/4] pool, GOMAXPROCS 1, workers=4 iteration 1: 8 users -> 190.0 2xx/s, p50 41.0 ms, p95 43.0 ms, p99 45.0 ms"
	if !strings.HasPrefix(got, want) {
		t.Errorf("got  %q\nwant %q...", got, want)
	}
}

func TestP95(t *testing.T) {
	if got := p95(load.PhaseResult{Latency: load.Percentiles{P95: 12.5}}); got != 12500*time.Microsecond {
		t.Errorf("p95 from the generator's percentiles: %v, want 12.5ms", got)
	}
	h := hdrhistogram.New(1, int64(time.Minute), 3)
	for i := int64(1); i <= 100; i++ {
		_ = h.RecordValue(i * int64(time.Millisecond))
	}
	if got := p95(load.PhaseResult{LatencyHist: h}); got < 94*time.Millisecond || got > 96*time.Millisecond {
		t.Errorf("p95 from the histogram: %v, want about 95ms", got)
	}
	if got := p95(load.PhaseResult{}); got != 0 {
		t.Errorf("p95 of nothing: %v", got)
	}
}

// A query axis varies the scenario's query parameter: each line loads its
// own URL, the fixture's argv does not get it, and its step files name it
// without a "?".
func TestQueryAxis(t *testing.T) {
	set := rundir.Settings{}.With("?mode", "parallel").With("workers", "4")
	if got := lineURL("http://127.0.0.1:1/split?items=8", set); got != "http://127.0.0.1:1/split?items=8&mode=parallel" {
		t.Errorf("lineURL = %s", got)
	}
	if got := lineURL("http://127.0.0.1:1/split", rundir.Settings{}); got != "http://127.0.0.1:1/split" {
		t.Errorf("lineURL without a query axis = %s", got)
	}
	argv := lineArgv(rundir.SweepPlan{Argv: []string{"fixture"}}, rundir.Line{Set: set})
	if strings.Join(argv, " ") != "fixture --workers=4" {
		t.Errorf("argv %q: a query axis is no fixture flag", argv)
	}
	key := rundir.StepKey{GOMAXPROCS: 2, Iteration: 1, Users: 1, Set: rundir.Settings{}.With("?mode", "serial")}
	if f := key.File(); f != "gomaxprocs-002_q-mode=serial_iter-01_users-1.json" {
		t.Errorf("file %s", f)
	}
	for _, tc := range []struct {
		fixture string
		sets    []rundir.SetAxis
		want    string
	}{
		{"split?mode=serial", []rundir.SetAxis{{Name: "?mode", Values: []string{"a"}}}, "gives mode and --set sweeps it"},
		{"split", []rundir.SetAxis{{Name: "?mo de", Values: []string{"a"}}}, "a query parameter's name holds letters"},
		{"split", []rundir.SetAxis{{Name: "?mode", Values: []string{"a b"}}}, "a value holds letters"},
	} {
		p := rundir.SweepPlan{}
		if err := planAxes(&p, Config{Fixture: tc.fixture, Sets: tc.sets}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want %q", tc.fixture, tc.sets, err, tc.want)
		}
	}
	p := rundir.SweepPlan{}
	if err := planAxes(&p, Config{Fixture: "split", Sets: []rundir.SetAxis{{Name: "?mode", Values: []string{"serial", "parallel"}}}}); err != nil || len(p.Sets) != 1 {
		t.Errorf("a query axis: %v %+v", err, p.Sets)
	}
}

func TestNewPlanCPULimits(t *testing.T) {
	good := Config{Argv: []string{"ss", "fixture"}, URL: "http://127.0.0.1:1/cpu", Rates: []float64{100},
		GOMAXPROCS: []int{2, 0, 1}, CPULimits: []float64{1, 0.5}, TargetCPUs: "0-1"}
	p, err := NewPlan(good)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.GOMAXPROCS, []int{0, 1, 2}) || !slices.Equal(p.CPULimits, []float64{0.5, 1}) {
		t.Errorf("plan GOMAXPROCS %v, CPU limits %v", p.GOMAXPROCS, p.CPULimits)
	}
	lines := p.Lines()
	if len(lines) != 6 || lines[0] != (rundir.Line{GOMAXPROCS: 0, CPULimit: 0.5}) || lines[5] != (rundir.Line{GOMAXPROCS: 2, CPULimit: 1}) {
		t.Errorf("lines %+v", lines)
	}
	if got := lines[3].LabelRuntime(2, 2); got != "limit 1 CPU, GOMAXPROCS auto (2)" {
		t.Errorf("label %q", got)
	}
	for _, tt := range []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"zero", func(c *Config) { c.CPULimits = []float64{0} }, "--cpu-limits: CPU limit 0: must be above 0.01"},
		{"too small", func(c *Config) { c.CPULimits = []float64{0.01} }, "must be above 0.01"},
		{"negative", func(c *Config) { c.CPULimits = []float64{-1} }, "must be above 0.01"},
		{"above the CPUs", func(c *Config) { c.CPULimits = []float64{2.5} }, "CPU limit 2.5: at most the 2 CPUs targets may use"},
		{"twice", func(c *Config) { c.CPULimits = []float64{1, 1} }, "--cpu-limits: 1 given twice"},
		{"live", func(c *Config) { c.Live, c.Agent, c.GOMAXPROCS = true, "http://127.0.0.1:1/", []int{1} }, "--cpu-limits needs a fresh one per line"},
		{"live auto", func(c *Config) { c.Live, c.Agent, c.CPULimits = true, "http://127.0.0.1:1/", nil }, "GOMAXPROCS auto needs a fresh target process"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.edit(&c)
			_, err := NewPlan(c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestRunRefusesWithoutCgroups: a CPU limit on a machine without a cpu
// controller fails before any directory or process exists.
func TestRunRefusesWithoutCgroups(t *testing.T) {
	dir := t.TempDir() + "/sweep"
	cfg := Config{Argv: []string{"false"}, URL: "http://127.0.0.1:1/", Rates: []float64{100}, GOMAXPROCS: []int{1},
		CPULimits: []float64{0.5}, CgroupRoot: t.TempDir(), Dir: dir,
		Loader: LoaderFunc(func(context.Context, Offer) (Measured, error) { t.Fatal("load offered"); return Measured{}, nil })}
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "--cpu-limits: no cpu controller under") {
		t.Fatalf("Run = %v", err)
	}
	if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
		t.Errorf("sweep directory made: %v", serr)
	}
}
