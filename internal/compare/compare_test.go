package compare

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/figures"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/rundir/rundirtest"
)

// sets makes one Set per value: one phase group with a p99 (ms) and a
// 2xx/s figure, on the same load.
func sets(label string, p99ms ...float64) []*figures.Set {
	var out []*figures.Set
	for i, v := range p99ms {
		out = append(out, &figures.Set{
			Path: fmt.Sprintf("%s-%d", label, i+1), Kind: figures.KindRun, Label: label,
			Identity: figures.Identity{Method: "GET", Request: "/sleep", Phases: []figures.PhaseLoad{{OfferedRate: 100, DurationS: 10}}},
			Groups: []figures.Group{{Key: "phase 1", Title: "phase 1: steady, 100 req/s", Gate: true, Figures: []figures.Figure{
				{Key: "p99", Metric: "p99", Label: "latency p99", Unit: cond.Duration, Value: v * 1e6, Better: figures.Lower},
				{Key: "ok_per_s", Metric: "ok_per_s", Label: "2xx/s", Unit: cond.PerSecond, Value: 100, Better: figures.Higher},
			}}},
		})
	}
	return out
}

func row(t *testing.T, c *Comparison, key string) Row {
	t.Helper()
	for _, r := range c.Groups[0].Rows {
		if r.Key == key {
			return r
		}
	}
	t.Fatalf("no row %s", key)
	return Row{}
}

// The verdicts follow benchstat: a clear shift over 5 runs a side is
// significant at the smallest p the U test allows (2/252); overlapping
// runs are "~"; equal figures are "~" with p = 1; three runs a side can
// never be significant and say how many are needed; one run a side shows
// the change untested.
func TestVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		a, b        []float64
		verdict     string
		significant bool
		judgement   string
		need        int
	}{
		{"shift", []float64{10, 11, 12, 10.5, 11.5}, []float64{20, 21, 22, 20.5, 21.5}, "+90.91%", true, "worse", 0},
		{"better", []float64{20, 21, 22, 20.5, 21.5}, []float64{10, 11, 12, 10.5, 11.5}, "-47.62%", true, "better", 0},
		{"overlap", []float64{10, 12, 11, 13, 9}, []float64{11, 10, 12, 13.5, 9.5}, "~", false, "", 0},
		{"three a side", []float64{10, 11, 12}, []float64{20, 21, 22}, "~", false, "", 4},
		{"one a side", []float64{10}, []float64{12}, "+20.00%", false, "", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compare(sets("a", tc.a...), sets("b", tc.b...), Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := row(t, c, "p99")
			if r.Verdict != tc.verdict || r.Significant != tc.significant || r.Judgement != tc.judgement || r.Need != tc.need {
				t.Errorf("verdict %q significant %v judgement %q need %d (p=%.3f); want %q %v %q %d",
					r.Verdict, r.Significant, r.Judgement, r.Need, r.P, tc.verdict, tc.significant, tc.judgement, tc.need)
			}
			if tc.name == "shift" && (r.P < 0.0079 || r.P > 0.008) {
				t.Errorf("p = %g, want 2/252", r.P)
			}
			if ok := row(t, c, "ok_per_s"); ok.Verdict != "~" || ok.Significant {
				t.Errorf("equal figures: %+v", ok)
			}
		})
	}
}

// The test's limits and the run estimate.
func TestNeedAndEstimate(t *testing.T) {
	if n := needRuns(0.05); n != 4 {
		t.Errorf("needRuns(0.05) = %d, want 4 (2/C(8,4) = 0.029; 2/C(6,3) = 0.1)", n)
	}
	if n := needRuns(0.01); n != 5 {
		t.Errorf("needRuns(0.01) = %d, want 5", n)
	}
	// Means 1.12 standard deviations apart: 16.44 / 1.25 = 13.2, so 14.
	a := []float64{9, 10, 11, 9, 10, 11}
	b := []float64{10, 11, 12, 10, 11, 12}
	if n := estimateRuns(a, b, 1, 6); n != 14 {
		t.Errorf("estimateRuns(d=1.12) = %d, want 14", n)
	}
	if n := estimateRuns([]float64{1, 1}, []float64{1, 1}, 0, 2); n != 0 {
		t.Errorf("no spread: %d, want 0", n)
	}
}

// Sides on different loads are refused with the reason, or compared with
// --force, the difference stated; a run cannot be compared with a sweep.
func TestComparable(t *testing.T) {
	tmp := t.TempDir()
	read := func(name string, r rundirtest.Run) *figures.Set {
		s, err := figures.ReadRun(context.Background(), rundirtest.Write(t, filepath.Join(tmp, name), r))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	lat := rundirtest.Spread(50*time.Millisecond, 100)
	at100 := read("a", rundirtest.Run{Phases: []rundirtest.Phase{{Rate: 100, Latencies: lat}}})
	at200 := read("b", rundirtest.Run{Phases: []rundirtest.Phase{{Rate: 200, Latencies: lat}}})
	other := read("c", rundirtest.Run{URL: "http://127.0.0.1:9999/cpu", Phases: []rundirtest.Phase{{Rate: 100, Latencies: lat}}})
	cut := read("d", rundirtest.Run{Status: rundir.StatusInterrupted, Phases: []rundirtest.Phase{{Rate: 100, Duration: 4 * time.Second, Latencies: lat}}})

	if _, err := Compare([]*figures.Set{at100}, []*figures.Set{at200}, Options{}); err == nil ||
		!strings.Contains(err.Error(), "cannot compare: different offered loads: 100 req/s for 10s") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("different rates: %v", err)
	}
	c, err := Compare([]*figures.Set{at100}, []*figures.Set{at200}, Options{Force: true})
	if err != nil || len(c.Differences) != 1 {
		t.Errorf("--force: %v, differences %q", err, c.Differences)
	}
	if _, err := Compare([]*figures.Set{at100}, []*figures.Set{other}, Options{}); err == nil || !strings.Contains(err.Error(), "different requests: /sleep?ms=50") {
		t.Errorf("different request: %v", err)
	}
	if c, err := Compare([]*figures.Set{at100}, []*figures.Set{other}, Options{Force: true}); err != nil || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "addresses differ") {
		t.Errorf("different host: %v %q", err, c.Notes)
	}
	// A run cut short compares as far as it goes, its warning kept.
	c, err = Compare([]*figures.Set{at100}, []*figures.Set{cut}, Options{})
	if err != nil || len(c.B.Warnings) != 2 || !strings.Contains(c.B.Warnings[0], "interrupted") || !strings.Contains(c.B.Warnings[1], "cut after 4.0 s") {
		t.Errorf("interrupted run: %v, warnings %q", err, c.B.Warnings)
	}
	sweep := &figures.Set{Path: "s", Kind: figures.KindSweep}
	if _, err := Compare([]*figures.Set{at100}, []*figures.Set{sweep}, Options{Force: true}); err == nil || !strings.Contains(err.Error(), "both sides must be runs, sweeps or traces") {
		t.Errorf("run vs sweep: %v", err)
	}
	// Within a side too.
	if _, err := Compare([]*figures.Set{at100, at200}, []*figures.Set{at100}, Options{}); err == nil || !strings.Contains(err.Error(), "within one side") {
		t.Errorf("mixed side: %v", err)
	}
}

// A gate on a change holds only on a significant change; one on a figure
// reads B's median. A signed duration is a change too, B's median minus
// A's: one reading for every signed value.
func TestCheck(t *testing.T) {
	conds, err := cond.ParseList("p99>+10%, p99>15ms, p99>+5ms, p99>+15ms", cond.Run|cond.Changes)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compare(sets("a", 10, 11, 12, 10.5, 11.5), sets("b", 20, 21, 22, 20.5, 21.5), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := Check(c, conds)
	if len(got) != 3 || !strings.HasPrefix(got[0].Line, "p99 changed +90.9% > +10% (phase 1") || !strings.HasPrefix(got[1].Line, "p99 = 21ms > 15ms") ||
		!strings.HasPrefix(got[2].Line, "p99 changed +10ms > +5ms (phase 1") {
		t.Errorf("breaches %+v", got)
	}
	c, err = Compare(sets("a", 10, 12, 11, 13, 9), sets("b", 11, 10, 14, 13.5, 12.5), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := row(t, c, "p99"); r.Significant || r.DeltaPct < 10 {
		t.Fatalf("want a change over 10%% that is not significant: %+v", r)
	}
	if got := Check(c, []cond.Condition{conds[0], conds[2]}); len(got) != 0 {
		t.Errorf("a change that is not significant breached: %+v", got)
	}
}

// When other processes took more CPU during one side's runs, the
// comparison says so: the machine, not the change, may explain it.
func TestMachineNote(t *testing.T) {
	withOthers := func(ss []*figures.Set, cores ...float64) []*figures.Set {
		for i, s := range ss {
			g := &s.Groups[0]
			g.Figures = append(g.Figures, figures.Figure{Key: "others_cpu", Label: "other processes' CPU", Unit: cond.Cores, Value: cores[i]})
		}
		return ss
	}
	a := withOthers(sets("a", 10, 11, 12), 0.05, 0.1, 0.02)
	quiet := withOthers(sets("b", 10, 11, 12), 0.1, 0.03, 0.2)
	busy := withOthers(sets("b", 10, 11, 12), 0.9, 1.1, 0.7)
	if c, err := Compare(a, quiet, Options{}); err != nil || len(c.Notes) != 0 {
		t.Errorf("quiet: %v %q", err, c.Notes)
	}
	c, err := Compare(a, busy, Options{})
	if err != nil || len(c.Notes) != 1 || !strings.HasPrefix(c.Notes[0], "other processes used more CPU during B's runs (phase 1: steady, 100 req/s: 0.05 cores for A, 0.90 for B") {
		t.Errorf("busy: %v %q", err, c.Notes)
	}
}
