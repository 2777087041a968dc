package sweep

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/cgroup"
	"github.com/schedscope/schedscope/internal/target/targettest"
)

// TestRunCPULimit runs a real line under a 0.1 CPU quota with GOMAXPROCS
// auto, on the machine's cgroup hierarchy: the step records throttling
// and the GOMAXPROCS the runtime chose, and the cgroup is gone afterwards.
// Skipped without root or a writable cpu controller.
func TestRunCPULimit(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	h, _, err := PrepareCgroups("")
	if err != nil {
		t.Skip(err)
	}
	argv, base := targettest.Argv(t, targettest.Serving)
	var calls atomic.Int64
	var events []Event
	cfg := Config{
		Argv: argv, URL: base + "/cpu?rounds=100000", Agent: base + "/debug/schedscope/",
		GOMAXPROCS: []int{0}, CPULimits: []float64{0.1}, Rates: []float64{50}, Iterations: 1,
		Duration: time.Second, Dir: t.TempDir(), Loader: requestLoader(&calls),
		Progress: func(e Event) { events = append(events, e) },
	}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Steps) != 1 {
		t.Fatalf("%d steps, want 1", len(s.Steps))
	}
	st := s.Steps[0]
	t.Logf("%s", FormatEvent(events[len(events)-3]))
	// The control: a target the machine starved (other processes on every
	// core) never reaches even 0.1 core and is rightly not throttled; one
	// that used 80 % of its quota's CPU reached it in most periods (a quiet
	// machine gives it the whole quota, throttled in nearly every period).
	if st.Throttle != nil && st.Throttle.Throttled == 0 && st.Throttle.QuotaUse > 0 && st.Throttle.QuotaUse < 0.8 {
		t.Skipf("machine too busy to reach the quota: the target used %.0f %% of its 0.1 CPU, %d periods, none throttled", 100*st.Throttle.QuotaUse, st.Throttle.Periods)
	}
	if st.Throttle == nil || st.Throttle.Periods == 0 || st.Throttle.Throttled == 0 {
		t.Errorf("a CPU-bound target under 0.1 CPU: throttle %+v, want throttled periods", st.Throttle)
	}
	if st.RuntimeGOMAXPROCS < 1 {
		t.Errorf("runtime GOMAXPROCS %d, want the agent's figure", st.RuntimeGOMAXPROCS)
	}
	if s.Plan.CgroupVersion != int(h.Version) {
		t.Errorf("plan's cgroup version %d, want %d", s.Plan.CgroupVersion, h.Version)
	}
	for _, e := range events {
		if e.Kind == EventStart {
			if !strings.Contains(e.Cgroup, cgroup.Parent) {
				t.Errorf("start event's cgroup %q", e.Cgroup)
			}
			if _, err := os.Stat(e.Cgroup); !os.IsNotExist(err) {
				t.Errorf("cgroup %s left after the sweep: %v", e.Cgroup, err)
			}
		}
	}
}
