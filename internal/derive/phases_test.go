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
