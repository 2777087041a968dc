package derive

import (
	"slices"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

func TestFindCeiling(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     rundir.PhaseFigures
		ph    load.PhaseResult
		busy  float64 // the trace's P busy share, -1 none
		cpus  int     // the machine's
		want  rundir.Kind
		wantP string
	}{
		{
			name: "innermost saturated pool: workers wait on db, db holds for the query",
			f: rundir.PhaseFigures{AchievedPerS: 24, OfferedRate: 60, Pools: []rundir.PoolFigures{
				{Name: "workers", Size: 200, SaturatedShare: 1, MeanHoldMS: 8000, CapacityPerS: 25},
				{Name: "db", Size: 5, SaturatedShare: 1, MeanHoldMS: 209, CapacityPerS: 24},
			}},
			want: rundir.KindPool, wantP: "db",
		},
		{
			name: "a pool full in few polls is not the ceiling; CPU is",
			f: rundir.PhaseFigures{AchievedPerS: 90, OfferedRate: 200, GOMAXPROCS: 2, CPUCores: 1.95, Pools: []rundir.PoolFigures{
				{Name: "workers", Size: 8, SaturatedShare: 0.2, MeanHoldMS: 10},
			}},
			want: rundir.KindCPU,
		},
		{
			name: "unbounded pools never are; a generator short of CPU in its own process is",
			f:    rundir.PhaseFigures{AchievedPerS: 90, OfferedRate: 200, Pools: []rundir.PoolFigures{{Name: "workers", Size: 0, SaturatedShare: 1}}},
			ph:   load.PhaseResult{GeneratorCPUCores: 0.97, VerdictDetails: []load.Verdict{{Kind: load.GeneratorBound, Message: "send lag"}}},
			busy: -1, want: rundir.KindGenerator,
		},
		{
			name: "a late generator beside a target whose Ps are busy: the CPU",
			f:    rundir.PhaseFigures{AchievedPerS: 1700, OfferedRate: 3000, GOMAXPROCS: 2, CPUCores: 1.4},
			ph:   load.PhaseResult{GeneratorCPUCores: 0.5, NotSent: 4000, VerdictDetails: []load.Verdict{{Kind: load.GeneratorBound, Message: "send lag"}}},
			busy: 0.99, want: rundir.KindCPU,
		},
		{
			name: "no trace, but target and generator fill the machine: the CPU",
			f:    rundir.PhaseFigures{AchievedPerS: 1700, OfferedRate: 3000, GOMAXPROCS: 2, CPUCores: 1.4, CPUFromProc: true},
			ph:   load.PhaseResult{GeneratorCPUCores: 0.5},
			busy: -1, cpus: 2, want: rundir.KindCPU,
		},
		{
			name: "nothing known",
			f:    rundir.PhaseFigures{AchievedPerS: 90, OfferedRate: 200},
			busy: -1, want: rundir.KindUnknown,
		},
	} {
		c := findCeiling(&tc.f, &tc.ph, false, tc.busy, tc.cpus)
		if c.What != tc.want || c.Pool != tc.wantP {
			t.Errorf("%s: got %+v", tc.name, c)
		}
		if c.What == rundir.KindPool && !strings.Contains(c.Reason, "Little's law") {
			t.Errorf("%s: reason lacks the Little's-law figure: %s", tc.name, c.Reason)
		}
	}
}

func TestCleanRun(t *testing.T) {
	lines := []rundir.MetricsLine{{Capture: "fgprof"}, {Capture: "fgprof"}, {}, {}, {Capture: "trace"}, {}, {}, {}}
	got := cleanRun(lines, []int{0, 1, 2, 3, 4, 5, 6, 7})
	// The longest stretch is 5..7, with 4 before it as the baseline.
	if want := []int{4, 5, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("cleanRun = %v, want %v", got, want)
	}
}

// TestClosedPhaseNamesPoolCeiling: a closed-model phase whose pool was polled
// at its size names the pool as the ceiling, with Little's law; one whose
// pools had room names none (the users set its figure).
func TestClosedPhaseNamesPoolCeiling(t *testing.T) {
	res := &load.Result{Model: "closed", Users: 32, Phases: []load.PhaseResult{{Name: "steady", Users: 32}}}
	full := rundir.PhaseFigures{Name: "steady", AchievedPerS: 158, Pools: []rundir.PoolFigures{
		{Name: "workers", Kind: "goroutines", Size: 16, MaxInUse: 16, MeanInUse: 15.9, SaturatedShare: 0.96, MeanHoldMS: 100, HoldFrom: rundir.HoldFromPool, CapacityPerS: 160},
	}}
	fs := findings([]rundir.PhaseFigures{full}, nil, res, nil, 0)
	i := slices.IndexFunc(fs, func(f rundir.Finding) bool { return f.Kind == rundir.KindCeiling })
	if i < 0 {
		t.Fatalf("no ceiling finding for a closed phase at its pool's size: %+v", fs)
	}
	if c := fs[i]; c.Title != "steady: the ceiling was pool workers" || !strings.Contains(c.Detail, "Little's law: 16 / 100.0 ms = 160 req/s") ||
		!strings.Contains(c.Detail, "32 users") || c.Numbers["capacity_per_s"] != 160 {
		t.Errorf("ceiling finding %q: %q %v", c.Title, c.Detail, c.Numbers)
	}

	roomy := full
	roomy.Pools = []rundir.PoolFigures{{Name: "workers", Size: 16, MaxInUse: 9, SaturatedShare: 0.1, MeanHoldMS: 100, CapacityPerS: 160}}
	for _, f := range findings([]rundir.PhaseFigures{roomy}, nil, res, nil, 0) {
		if f.Kind == rundir.KindCeiling {
			t.Errorf("a closed phase whose pool had room got a ceiling: %+v", f)
		}
	}
}
