package collect

import (
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

func TestParseCondition(t *testing.T) {
	for _, tc := range []struct {
		in     string
		metric string
		op     string
		value  float64
	}{
		{"p99>500ms", "p99", ">", 500},
		{" goroutines >= 10000 ", "goroutines", ">=", 10000},
		{"ok/s<100", "ok/s", "<", 100},
		{"sched-p99<=2.5ms", "sched-p99", "<=", 2.5},
		{"p50>1s", "p50", ">", 1000},
	} {
		c, err := ParseCondition(tc.in)
		if err != nil || c.Metric != tc.metric || c.Op != tc.op || c.Value != tc.value {
			t.Errorf("ParseCondition(%q) = %+v, %v", tc.in, c, err)
		}
	}
	for _, bad := range []string{"", "p99", ">5", "latency>5ms", "p99>fast", "p99>NaN", "p99=5"} {
		if _, err := ParseCondition(bad); err == nil {
			t.Errorf("ParseCondition(%q) accepted", bad)
		}
	}
	c, _ := ParseCondition("p99>500ms")
	hot := &Live{Load: load.Progress{Completed: 10, IntervalP99: 600 * time.Millisecond}}
	cold := &Live{Load: load.Progress{Completed: 10, IntervalP99: 400 * time.Millisecond}}
	empty := &Live{Load: load.Progress{IntervalP99: time.Second}} // nothing completed yet
	if !c.Holds(hot) || c.Holds(cold) || c.Holds(empty) {
		t.Errorf("Holds: hot %v cold %v empty %v", c.Holds(hot), c.Holds(cold), c.Holds(empty))
	}
	g, _ := ParseCondition("goroutines>100")
	if g.Holds(&Live{Target: rundir.TargetPoint{Goroutines: 500}}) {
		t.Error("a goroutine condition held without an agent reading")
	}
}
