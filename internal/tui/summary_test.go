package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// finishedSummary is a run that succeeded, with the commands to try next.
func finishedSummary() Summary {
	s := *sampleSummary()
	s.Next = []NextStep{
		{Command: "schedscope analyze --tui runs/2026-11-30T01-55-00-sleep-pool", Does: "browse the run's trace"},
		{Command: "schedscope report runs/2026-11-30T01-55-00-sleep-pool", Does: "write report.md with plots"},
	}
	return s
}

// TestPlainSummary prints end-of-run summaries as plain text (what a
// non-terminal and the scrollback after the dashboard get) and compares them
// with testdata/TestPlainSummary/*.golden (-update rewrites them). No line
// may be a lone mark: an empty Err once printed a line holding only "✗ ".
func TestPlainSummary(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Summary
	}{
		{"succeeded", finishedSummary()},
		{"failed", Summary{Title: "run failed", Err: "target http://127.0.0.1:1/: dial tcp 127.0.0.1:1: connect: connection refused"}},
		{"stopped", Summary{Title: "run interrupted", Stopped: true, Table: sampleSummary().Table, RunDirs: []string{"runs/x"},
			Err: "pprof http://127.0.0.1:1/debug/pprof/: refused\nthe trace window was not taken\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteSummary(&b, c.s); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for i, l := range strings.Split(out, "\n") {
				if f := strings.Fields(l); len(f) == 1 && strings.Contains("✗✓•▲", f[0]) {
					t.Errorf("line %d is a lone mark %q:\n%s", i+1, l, out)
				}
			}
			if c.s.Err == "" && strings.Contains(out, "✗") {
				t.Errorf("a run without an error shows a failure mark:\n%s", out)
			}
			golden.RequireEqual(t, out)
		})
	}
}

// TestDashboardEndScreenNext: the end screen ends with the commands to try
// next, real directory names included, and fits a 120x40 window.
func TestDashboardEndScreenNext(t *testing.T) {
	ch := make(chan Frame, 1)
	m := sized(NewDashboard(t.Context(), DashboardConfig{Frames: ch, Title: "demo"}), 120, 40)
	s := finishedSummary()
	m, _ = step(t, m, frameMsg(Frame{Title: "demo", End: &s}))
	screen := ansi.Strip(m.View().Content)
	checkFits(t, screen, 120, 40)
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	var last []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			last = append(last, l)
		}
	}
	if len(last) < 4 || !strings.HasPrefix(last[len(last)-3], s.Next[0].Command) || !strings.HasPrefix(last[len(last)-2], s.Next[1].Command) {
		t.Errorf("the end screen's last lines are not the next commands:\n%s", screen)
	}
	if strings.Contains(screen, "✗") {
		t.Errorf("a run without an error shows a failure mark:\n%s", screen)
	}
	golden.RequireEqual(t, screen)
}
