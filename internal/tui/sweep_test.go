package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

func sstep(t *testing.T, m Sweep, msgs ...tea.Msg) (Sweep, tea.Cmd) {
	t.Helper()
	var cmd tea.Cmd
	for _, msg := range msgs {
		var mm tea.Model
		mm, cmd = m.Update(msg)
		m = mm.(Sweep)
	}
	return m, cmd
}

// sampleSweep is a sweep of GOMAXPROCS 1, 2 x two rates, three steps done.
func sampleSweep() []tea.Msg {
	var msgs []tea.Msg
	done := 0
	for _, p := range []int{1, 2} {
		for _, r := range []float64{200, 400} {
			if done == 3 {
				msgs = append(msgs, sweepMsg{Done: 3, Total: 4, Step: 4, GOMAXPROCS: p, Iteration: 1, Rate: r, Status: "measuring",
					Elapsed: 2 * time.Second, Duration: 5 * time.Second, LiveOKPerSec: 391, LiveP99: 31 * time.Millisecond})
				return msgs
			}
			done++
			ok := min(r, float64(p)*190)
			msgs = append(msgs, sweepMsg{Done: done, Total: 4, Step: done, GOMAXPROCS: p, Iteration: 1, Rate: r, Status: "step written",
				Row: &SweepRow{GOMAXPROCS: p, Iteration: 1, Rate: r, OKPerSec: ok, P50: 11 * time.Millisecond, P99: time.Duration(r/ok*30) * time.Millisecond}})
		}
	}
	return msgs
}

func TestSweepView(t *testing.T) {
	m := sized(NewSweep(t.Context(), nil, func() {}), 120, 40)
	m, _ = sstep(t, m, sampleSweep()...)
	if len(m.Rows()) != 3 {
		t.Fatalf("%d rows, want 3", len(m.Rows()))
	}
	screen := ansi.Strip(m.View().Content)
	checkFits(t, screen, 120, 40)
	golden.RequireEqual(t, screen)

	m, cmd := sstep(t, m, press("q"))
	if !m.stopping || cmd == nil || isQuit(cmd) {
		t.Fatal("q must ask the sweep to stop, not leave")
	}
	_, cmd = sstep(t, m, press("q"))
	if !isQuit(cmd) {
		t.Fatal("a second q must leave")
	}
	m, _ = sstep(t, m, sweepMsg{Done: 4, Total: 4, Finished: true, Dir: "sweep-1"})
	if s := ansi.Strip(m.Render()); !strings.Contains(s, "sweep directory: sweep-1") || !strings.Contains(s, "finished") {
		t.Errorf("finished screen:\n%s", s)
	}
}

// Under CPU quotas the table gains a throttled column.
func TestSweepViewThrottled(t *testing.T) {
	m := sized(NewSweep(t.Context(), nil, func() {}), 120, 40)
	m, _ = sstep(t, m,
		sweepMsg{Done: 1, Total: 2, Row: &SweepRow{GOMAXPROCS: 1, Iteration: 1, Line: "limit 1 CPU, GOMAXPROCS 1", Rate: 400, OKPerSec: 400, P99: 9 * time.Millisecond, Quota: true}},
		sweepMsg{Done: 2, Total: 2, Row: &SweepRow{GOMAXPROCS: 2, Iteration: 1, Line: "limit 1 CPU, GOMAXPROCS 2", Rate: 400, OKPerSec: 400, P99: 190 * time.Millisecond, Quota: true, Throttled: 0.72}})
	screen := ansi.Strip(m.Render())
	var header, two string
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "throttled") && strings.Contains(l, "note") {
			header = l
		}
		if strings.Contains(l, "GOMAXPROCS 2") {
			two = l
		}
	}
	if header == "" || !strings.Contains(two, "72%") || !strings.Contains(screen, "0%") {
		t.Errorf("no throttled column, or its figures are missing:\n%s", screen)
	}
}

func TestSweepFeed(t *testing.T) {
	ch := make(chan SweepEvent, 1)
	m := NewSweep(t.Context(), ch, nil)
	ch <- SweepEvent{Done: 0, Total: 2, Status: "starting target"}
	m, cmd := sstep(t, m, m.Init()())
	if m.last.Status != "starting target" || cmd == nil {
		t.Fatal("event not taken in, or reader not re-armed")
	}
	close(ch)
	m, _ = sstep(t, m, cmd())
	if !m.finished {
		t.Fatal("a closed feed ends the sweep view")
	}
}
