package rundir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPlanAxesProductKeysAndFiles(t *testing.T) {
	p := SweepPlan{
		GOMAXPROCS: []int{1, 2}, Users: []int{2, 8}, Models: []string{"goroutine", "pool"},
		Sets:       []SetAxis{{Name: "workers", Values: []string{"4", "20"}}, {Name: "queue", Values: []string{"16"}}},
		Iterations: 2,
	}
	lines := p.Lines()
	if len(lines) != 2*2*2*1 {
		t.Fatalf("%d lines, want 8 (2 models x 2 GOMAXPROCS x 2 workers x 1 queue)", len(lines))
	}
	if got, want := lines[1].Label(0), "goroutine, GOMAXPROCS 1, queue=16, workers=20"; got != want {
		t.Errorf("line label %q, want %q", got, want)
	}
	steps := p.Steps()
	if len(steps) != 8*2*2 {
		t.Fatalf("%d steps, want 32 (8 lines x 2 user counts x 2 iterations)", len(steps))
	}
	// Iterations outermost, then lines, then the load.
	if k := steps[0]; k.Iteration != 1 || k.Model != "goroutine" || k.GOMAXPROCS != 1 || k.Users != 2 || k.Rate != 0 {
		t.Errorf("first step %+v", k)
	}
	if k := steps[16]; k.Iteration != 2 {
		t.Errorf("step 17 is in iteration %d, want 2", k.Iteration)
	}
	files := map[string]bool{}
	for _, k := range steps {
		if files[k.File()] {
			t.Fatalf("two steps share the file %s", k.File())
		}
		files[k.File()] = true
	}
	k := steps[1]
	if got, want := k.File(), "gomaxprocs-001_model-goroutine_queue=16_workers=4_iter-01_users-8.json"; got != want {
		t.Errorf("file %q, want %q", got, want)
	}
	if got, want := k.LogFile(), "gomaxprocs-001_model-goroutine_queue=16_workers=4_iter-01.log"; got != want {
		t.Errorf("log %q, want %q", got, want)
	}
	// A key survives JSON (Set as an object) and stays comparable.
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	var back StepKey
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != k {
		t.Errorf("round trip: %+v, want %+v (json %s)", back, k, b)
	}
	if v, ok := back.Set.Get("workers"); !ok || v != "4" {
		t.Errorf("set workers = %q %v in %s", v, ok, b)
	}
	// A version 1 key keeps its version 1 name.
	old := StepKey{GOMAXPROCS: 2, Iteration: 3, Rate: 150}
	if got, want := old.File(), "gomaxprocs-002_iter-03_rate-150.json"; got != want {
		t.Errorf("version 1 file %q, want %q", got, want)
	}
	if got, want := old.LogFile(), "gomaxprocs-002_iter-03.log"; got != want {
		t.Errorf("version 1 log %q, want %q", got, want)
	}
}

// The sweeps committed under docs/ are version 1 directories written by an
// earlier schedscope: they must read whole, every step under the name its
// key gives, with nothing left to resume, and a step removed must be the
// one step a resume would run again.
func TestReadsVersion1Sweeps(t *testing.T) {
	for _, name := range []string{"sweep-cpu", "sweep-sleep", "sweep-cpu-busy"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join("..", "..", "docs", name)
			s, err := ReadSweep(src)
			if err != nil {
				t.Fatal(err)
			}
			if s.Plan.Version != 1 || len(s.Steps) == 0 || len(s.Steps) != len(s.Plan.Steps()) {
				t.Fatalf("version %d, %d of %d steps", s.Plan.Version, len(s.Steps), len(s.Plan.Steps()))
			}
			if rem := s.Remaining(); len(rem) != 0 {
				t.Errorf("a finished version 1 sweep has %d steps to resume", len(rem))
			}
			for _, st := range s.Steps {
				if _, err := os.Stat(filepath.Join(src, StepsDir, st.File())); err != nil {
					t.Errorf("step %+v is not under its key's name: %v", st.StepKey, err)
				}
				if st.Users != 0 || st.Model != "" || !st.Set.IsZero() {
					t.Errorf("version 1 step read with new axes: %+v", st.StepKey)
				}
			}
			// Resume: copy the sweep without one step.
			dir := t.TempDir()
			copyTree(t, src, dir)
			gone := s.Steps[len(s.Steps)/2].StepKey
			if err := os.Remove(filepath.Join(dir, StepsDir, gone.File())); err != nil {
				t.Fatal(err)
			}
			s2, err := ReadSweep(dir)
			if err != nil {
				t.Fatal(err)
			}
			if rem := s2.Remaining(); !slices.Equal(rem, []StepKey{gone}) {
				t.Errorf("remaining %v, want [%v]", rem, gone)
			}
		})
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSettingsRejectsSeparators(t *testing.T) {
	var s Settings
	if err := json.Unmarshal([]byte(`{"workers":"4,5"}`), &s); err == nil {
		t.Error("a value with ',' was accepted")
	}
	if err := json.Unmarshal([]byte(`{"b":"2","a":"1"}`), &s); err != nil || s.String() != "a=1,b=2" {
		t.Errorf("settings %q, %v; want a=1,b=2", s, err)
	}
}

func TestPlanCPULimitsAndAuto(t *testing.T) {
	p := SweepPlan{GOMAXPROCS: []int{0, 2}, CPULimits: []float64{0.5, 1.5}, Rates: []float64{100}, Iterations: 1}
	lines := p.Lines()
	want := []Line{{GOMAXPROCS: 0, CPULimit: 0.5}, {GOMAXPROCS: 2, CPULimit: 0.5}, {GOMAXPROCS: 0, CPULimit: 1.5}, {GOMAXPROCS: 2, CPULimit: 1.5}}
	if !slices.Equal(lines, want) {
		t.Fatalf("lines %+v, want %+v", lines, want)
	}
	for _, tc := range []struct {
		line        Line
		runtime     int
		label, file string
	}{
		{Line{GOMAXPROCS: 0, CPULimit: 1}, 2, "limit 1 CPU, GOMAXPROCS auto (2)", "gomaxprocs-auto_cpu-1_iter-01_rate-100.json"},
		{Line{GOMAXPROCS: 0, CPULimit: 0.5}, 0, "limit 0.5 CPU, GOMAXPROCS auto", "gomaxprocs-auto_cpu-0.5_iter-01_rate-100.json"},
		{Line{GOMAXPROCS: 2, CPULimit: 1.5, Model: "pool"}, 0, "pool, limit 1.5 CPUs, GOMAXPROCS 2", "gomaxprocs-002_model-pool_cpu-1.5_iter-01_rate-100.json"},
	} {
		if got := tc.line.LabelRuntime(0, tc.runtime); got != tc.label {
			t.Errorf("label %q, want %q", got, tc.label)
		}
		k := tc.line.stepKey(1)
		k.Rate = 100
		if got := k.File(); got != tc.file {
			t.Errorf("file %q, want %q", got, tc.file)
		}
		if k.Line() != tc.line {
			t.Errorf("key's line %+v, want %+v", k.Line(), tc.line)
		}
	}
	if (&Throttle{Periods: 20, Throttled: 5}).Share() != 0.25 || (*Throttle)(nil).Share() != 0 {
		t.Error("Throttle.Share")
	}
}

func TestDefaultGOMAXPROCS(t *testing.T) {
	for _, tc := range []struct {
		cpus  int
		limit float64
		want  int
	}{
		{16, 0, 16}, {16, 0.5, 2}, {16, 1, 2}, {16, 2.1, 3}, {16, 4, 4}, {2, 8, 2}, {1, 0.5, 1},
	} {
		if got := DefaultGOMAXPROCS(tc.cpus, tc.limit); got != tc.want {
			t.Errorf("DefaultGOMAXPROCS(%d, %v) = %d, want %d", tc.cpus, tc.limit, got, tc.want)
		}
	}
}
