package derive

import (
	"strings"
	"testing"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

// TestSummaryClosedPhase: the summary's table of the steady phases shows a
// closed-model phase's users and think time where an open one shows its
// offered rate, never "0".
func TestSummaryClosedPhase(t *testing.T) {
	res := &load.Result{Model: "closed", Users: 32, ThinkMS: 10, Phases: []load.PhaseResult{{Name: "steady", Users: 32}}}
	an := &rundir.Analysis{Phases: []rundir.PhaseFigures{{Name: "steady", AchievedPerS: 158}}}
	var b strings.Builder
	writeSummary(&b, &rundir.Manifest{}, res, an)
	var row string
	for l := range strings.Lines(b.String()) {
		if strings.HasPrefix(l, "steady ") && strings.Contains(l, "158") && !strings.Contains(l, "users ") {
			row = l
		}
	}
	if !strings.Contains(row, "32 users, think 10ms") {
		t.Errorf("steady-phase row %q, want its users and think time in place of an offered rate; summary:\n%s", row, b.String())
	}
}
