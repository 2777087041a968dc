package feed

import (
	"errors"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/sweep"
)

func TestSweepMapper(t *testing.T) {
	m := SweepMapper{Dir: "sweep-x"}
	m.Map(sweep.Event{Kind: sweep.EventStart, GOMAXPROCS: 2, Iteration: 1, Index: 3, Total: 8, Done: 2, PID: 42})
	v := m.Map(sweep.Event{Kind: sweep.EventPhase, Rate: 400, Index: 3, Total: 8, Done: 2, Duration: 5 * time.Second})
	if v.Status != "measuring" || v.Duration != 5*time.Second || v.GOMAXPROCS != 2 || v.Step != 3 {
		t.Fatalf("phase: %+v", v)
	}
	v = m.Map(sweep.Event{Kind: sweep.EventTick, Index: 3, Total: 8, Done: 2, Tick: &sweep.PhaseProgress{Elapsed: time.Second, Total: 5 * time.Second, OKPerSec: 390, P99: 30 * time.Millisecond}})
	if v.Elapsed != time.Second || v.LiveOKPerSec != 390 || v.Rate != 400 {
		t.Fatalf("tick keeps the step and adds live figures: %+v", v)
	}
	step := &rundir.SweepStep{StepKey: rundir.StepKey{GOMAXPROCS: 2, Iteration: 1, Rate: 400}, OKPerSec: 380, P50MS: 10, P99MS: 31.5, GeneratorBound: true, GeneratorNote: "not sent"}
	v = m.Map(sweep.Event{Kind: sweep.EventStep, Index: 3, Total: 8, Done: 3, Step: step})
	if v.Row == nil || v.Row.P99 != 31500*time.Microsecond || v.Row.Note != "generator-bound: not sent" || v.Done != 3 {
		t.Fatalf("step row: %+v", v.Row)
	}
	v = m.Map(sweep.Event{Kind: sweep.EventStop, Total: 8, Done: 3, Err: errors.New("killed after 5s")})
	if v.Row != nil || v.Err != "killed after 5s" {
		t.Fatalf("a row is reported once; errors pass through: %+v", v)
	}
	v = m.Map(sweep.Event{Kind: sweep.EventFinished, Total: 8, Done: 8})
	if !v.Finished || v.Dir != "sweep-x" {
		t.Fatalf("finished: %+v", v)
	}
}
