package report

import (
	"strings"
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
)

// TestRenderRunCgroup: the run report has a CPU-limit table per steady
// phase and says when the limit is on a parent cgroup.
func TestRenderRunCgroup(t *testing.T) {
	an := &rundir.Analysis{Phases: []rundir.PhaseFigures{
		{Name: "steady", CPUCores: 0.5, Cgroup: &rundir.CgroupFigures{Path: "/pod/app", TightestCores: 0.5, TightestPath: "/pod", ParentLimit: true,
			Periods: 100, ThrottledPeriods: 60, ThrottledShare: 0.6, ThrottledSeconds: 2.4, ThrottledPerS: 0.24, UseOfLimit: 1}},
		{Name: "no cgroup"},
	}, Findings: []rundir.Finding{{Kind: rundir.KindParentCPULimit, Title: "the limit is a parent's", Detail: "the runtime does not see it"}}}
	var b strings.Builder
	if err := RenderRun(&b, &RunReport{Analysis: an}, "", ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## CPU limit",
		"| steady | `/pod/app` | 0.5 | `/pod` (a parent) | 100 | 60 (60 %) | 0.24 | 0.50 | 100 % |",
		"> **the limit is a parent's.** the runtime does not see it.",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "| no cgroup |") {
		t.Errorf("a phase without cgroup figures has a row:\n%s", b.String())
	}
}
