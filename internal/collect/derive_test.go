package collect

import (
	"slices"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/collect/load"
)

func TestFindCeiling(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     PhaseFigures
		ph    load.PhaseResult
		want  string
		wantP string
	}{
		{
			name: "innermost saturated pool: workers wait on db, db holds for the query",
			f: PhaseFigures{AchievedPerS: 24, OfferedRate: 60, Pools: []PoolFigures{
				{Name: "workers", Size: 200, SaturatedShare: 1, MeanHoldMS: 8000, CapacityPerS: 25},
				{Name: "db", Size: 5, SaturatedShare: 1, MeanHoldMS: 209, CapacityPerS: 24},
			}},
			want: "pool", wantP: "db",
		},
		{
			name: "a pool full in few polls is not the ceiling; CPU is",
			f: PhaseFigures{AchievedPerS: 90, OfferedRate: 200, GOMAXPROCS: 2, CPUCores: 1.95, Pools: []PoolFigures{
				{Name: "workers", Size: 8, SaturatedShare: 0.2, MeanHoldMS: 10},
			}},
			want: "cpu",
		},
		{
			name: "unbounded pools never are",
			f:    PhaseFigures{AchievedPerS: 90, OfferedRate: 200, Pools: []PoolFigures{{Name: "workers", Size: 0, SaturatedShare: 1}}},
			ph:   load.PhaseResult{VerdictDetails: []load.Verdict{{Kind: load.GeneratorBound, Message: "send lag"}}},
			want: "generator",
		},
		{
			name: "nothing known",
			f:    PhaseFigures{AchievedPerS: 90, OfferedRate: 200},
			want: "unknown",
		},
	} {
		c := findCeiling(&tc.f, &tc.ph, false)
		if c.What != tc.want || c.Pool != tc.wantP {
			t.Errorf("%s: got %+v", tc.name, c)
		}
		if c.What == "pool" && !strings.Contains(c.Reason, "Little's law") {
			t.Errorf("%s: reason lacks the Little's-law figure: %s", tc.name, c.Reason)
		}
	}
}

func TestCleanRun(t *testing.T) {
	lines := []MetricsLine{{Capture: "fgprof"}, {Capture: "fgprof"}, {}, {}, {Capture: "trace"}, {}, {}, {}}
	got := cleanRun(lines, []int{0, 1, 2, 3, 4, 5, 6, 7})
	// The longest stretch is 5..7, with 4 before it as the baseline.
	if want := []int{4, 5, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("cleanRun = %v, want %v", got, want)
	}
}
