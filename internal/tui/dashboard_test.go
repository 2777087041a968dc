package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// press builds the key message bubbletea sends for s ("q", "tab", "ctrl+c").
func press(s string) tea.KeyPressMsg {
	switch s {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

// step runs msgs through Update in order and returns the model and the last Cmd.
func step(t *testing.T, m Dashboard, msgs ...tea.Msg) (Dashboard, tea.Cmd) {
	t.Helper()
	var cmd tea.Cmd
	for _, msg := range msgs {
		var mm tea.Model
		mm, cmd = m.Update(msg)
		m = mm.(Dashboard)
	}
	return m, cmd
}

// isQuit reports whether cmd (or one Cmd of a batch) quits the program.
func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if isQuit(c) {
				return true
			}
		}
	}
	return false
}

func sized[M tea.Model](m M, w, h int) M {
	mm, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return mm.(M)
}

func TestDashboardApplyFrames(t *testing.T) {
	m := NewDashboard(t.Context(), DashboardConfig{Title: "before"})
	frames := sampleFrames(20)
	for _, f := range frames {
		var cmd tea.Cmd
		m, cmd = step(t, m, frameMsg(f))
		if cmd != nil {
			t.Fatal("without a Frames channel the dashboard must not re-arm a reader")
		}
	}
	if got, want := len(m.p99), len(frames); got != want {
		t.Errorf("latency points = %d, want %d", got, want)
	}
	if got := len(m.verdicts); got != 2 {
		t.Errorf("verdict log = %d entries, want 2 (each verdict logged once)", got)
	}
	if m.verdicts[0].at != frames[8].Phase.RunElapsed {
		t.Errorf("first verdict logged at %v, want %v", m.verdicts[0].at, frames[8].Phase.RunElapsed)
	}
	if m.title != frames[0].Title || len(m.stages) != 0 {
		t.Errorf("title %q stages %v: the first Frame's title replaces the config's without a stage mark", m.title, m.stages)
	}
	next := frames[19]
	next.Title = "sleep 50 ms · goroutine model"
	next.Phase.RunElapsed += time.Second
	m, _ = step(t, m, frameMsg(next))
	if len(m.stages) != 1 || m.stages[0] != next.Phase.RunElapsed.Seconds() {
		t.Errorf("stages = %v, want one mark at %v", m.stages, next.Phase.RunElapsed.Seconds())
	}
}

func TestDashboardFeed(t *testing.T) {
	ch := make(chan Frame, 2)
	m := NewDashboard(t.Context(), DashboardConfig{Frames: ch})
	ch <- sampleFrames(1)[0]
	msg := m.Init()()
	if _, ok := msg.(frameMsg); !ok {
		t.Fatalf("Init's Cmd returned %T, want frameMsg", msg)
	}
	m, cmd := step(t, m, msg)
	if cmd == nil {
		t.Fatal("after a Frame the dashboard must re-arm its reader")
	}
	close(ch)
	if msg := cmd(); msg != (feedClosedMsg{}) {
		t.Fatalf("reader on a closed feed returned %T, want feedClosedMsg", msg)
	}
	m, _ = step(t, m, feedClosedMsg{})
	if m.End() == nil || m.End().Title != "run ended" {
		t.Fatalf("a closed feed must lead to the end screen, got %+v", m.End())
	}

	ctx, cancel := context.WithCancel(t.Context())
	idle := NewDashboard(ctx, DashboardConfig{Frames: make(chan Frame)})
	cancel()
	if msg := idle.Init()(); msg != nil {
		t.Fatalf("reader after cancel returned %T, want nil", msg)
	}
}

func TestDashboardKeys(t *testing.T) {
	frame := frameMsg(sampleFrames(12)[11])
	tests := []struct {
		name  string
		cfg   DashboardConfig
		keys  []string
		check func(t *testing.T, m Dashboard, last tea.Cmd)
	}{
		{"tab cycles panels", DashboardConfig{}, []string{"tab", "tab", "tab", "shift+tab"}, func(t *testing.T, m Dashboard, _ tea.Cmd) {
			if m.tab != tabVerdicts {
				t.Errorf("tab = %d, want %d", m.tab, tabVerdicts)
			}
		}},
		{"? toggles help", DashboardConfig{}, []string{"?"}, func(t *testing.T, m Dashboard, _ tea.Cmd) {
			if !m.showHelp || !strings.Contains(ansi.Strip(m.Render()), "trace window now") {
				t.Error("help not shown")
			}
		}},
		{"q without Stop leaves at once", DashboardConfig{}, []string{"q"}, func(t *testing.T, m Dashboard, last tea.Cmd) {
			if !m.Quit() || !isQuit(last) {
				t.Errorf("Quit()=%v, quit cmd=%v", m.Quit(), isQuit(last))
			}
		}},
		{"q with Stop stops the run and waits", DashboardConfig{Stop: func() {}}, []string{"q"}, func(t *testing.T, m Dashboard, last tea.Cmd) {
			if !m.Quit() || !m.stopping || last == nil {
				t.Fatalf("Quit()=%v stopping=%v cmd=%v", m.Quit(), m.stopping, last != nil)
			}
			if !strings.Contains(ansi.Strip(m.Render()), "stopping: saving the run") {
				t.Error("status does not say the run is being saved")
			}
		}},
		{"second ctrl+c leaves", DashboardConfig{Stop: func() {}}, []string{"ctrl+c", "ctrl+c"}, func(t *testing.T, m Dashboard, last tea.Cmd) {
			if !isQuit(last) {
				t.Error("second ctrl+c did not quit")
			}
		}},
		{"t without a trace source", DashboardConfig{}, []string{"t"}, func(t *testing.T, m Dashboard, last tea.Cmd) {
			if last != nil || m.status != "no trace source for this run" {
				t.Errorf("status %q cmd %v", m.status, last != nil)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := step(t, NewDashboard(t.Context(), tc.cfg), frame)
			var last tea.Cmd
			for _, k := range tc.keys {
				m, last = step(t, m, press(k))
			}
			tc.check(t, m, last)
		})
	}
}

func TestDashboardStopFlow(t *testing.T) {
	stopped := 0
	m := NewDashboard(t.Context(), DashboardConfig{Stop: func() { stopped++ }, StopGrace: time.Hour})
	m, cmd := step(t, m, frameMsg(sampleFrames(1)[0]), press("q"))
	// Run the stop Cmd (the first of the batch); the grace timer is not run.
	batch, ok := cmd().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("q returned %T, want a batch of the stop Cmd and the grace timer", cmd())
	}
	batch[0]()
	if stopped != 1 {
		t.Fatalf("Stop called %d times, want 1", stopped)
	}
	end := sampleFrames(2)[1]
	end.End = sampleSummary()
	m, cmd = step(t, m, frameMsg(end))
	if cmd != nil || m.End() == nil || !m.End().Stopped {
		t.Fatalf("End frame after q: cmd=%v end=%+v; want the end screen marked stopped", cmd != nil, m.End())
	}
	if !strings.Contains(ansi.Strip(m.Render()), "stopped early") {
		t.Error("end screen does not say the run was stopped early")
	}
	m, cmd = step(t, m, press("enter"))
	if !isQuit(cmd) || !m.Quit() {
		t.Error("enter on the end screen must leave, with Quit() true")
	}
}

func TestDashboardOutsideStopLeavesOnEnd(t *testing.T) {
	m := NewDashboard(t.Context(), DashboardConfig{Stop: func() {}})
	m, _ = step(t, m, stopRequestMsg{})
	end := sampleFrames(1)[0]
	end.End = sampleSummary()
	_, cmd := step(t, m, frameMsg(end))
	if !isQuit(cmd) {
		t.Fatal("after a stop from outside, the End frame must end the program (nobody may be there to press q)")
	}
}

func TestDashboardTakeTrace(t *testing.T) {
	calls := 0
	m := NewDashboard(t.Context(), DashboardConfig{TakeTrace: func(ctx context.Context) (string, error) {
		calls++
		if calls == 2 {
			return "", errors.New("agent busy")
		}
		return "runs/x/trace-window-1.trace", nil
	}})
	m, cmd := step(t, m, press("t"))
	if calls != 0 {
		t.Fatal("TakeTrace ran inside Update")
	}
	if _, again := step(t, m, press("t")); again != nil {
		t.Fatal("a second t while a window is being taken must not start another")
	}
	m, _ = step(t, m, cmd())
	if m.tracing || m.status != "trace window saved: runs/x/trace-window-1.trace" {
		t.Fatalf("after the window: tracing=%v status=%q", m.tracing, m.status)
	}
	m, cmd = step(t, m, press("t"))
	m, _ = step(t, m, cmd())
	if m.status != "trace window failed: agent busy" {
		t.Fatalf("status %q", m.status)
	}
}

// TestDashboardGolden renders every screen at a pinned 120x40 and compares
// the text (escape codes stripped) with testdata/*.golden (-update rewrites).
func TestDashboardGolden(t *testing.T) {
	base, _ := step(t, sized(NewDashboard(t.Context(), DashboardConfig{}), 120, 40))
	for _, f := range sampleFrames(60) {
		base, _ = step(t, base, frameMsg(f))
	}
	end := sampleFrames(61)[60]
	end.End = sampleSummary()
	screens := []struct {
		name string
		msgs []tea.Msg
	}{
		{"overview", nil},
		{"charts", []tea.Msg{press("tab")}},
		{"verdicts", []tea.Msg{press("tab"), press("tab")}},
		{"help", []tea.Msg{press("?")}},
		{"end", []tea.Msg{frameMsg(end)}},
	}
	for _, s := range screens {
		t.Run(s.name, func(t *testing.T) {
			m, _ := step(t, base, s.msgs...)
			screen := ansi.Strip(m.View().Content)
			checkFits(t, screen, 120, 40)
			golden.RequireEqual(t, screen)
		})
	}
}

// TestDashboardSmallTerminal checks that an 80x24 terminal gets a screen that
// fits, with the figures still there.
func TestDashboardSmallTerminal(t *testing.T) {
	m := sized(NewDashboard(t.Context(), DashboardConfig{}), 80, 24)
	for _, f := range sampleFrames(30) {
		m, _ = step(t, m, frameMsg(f))
	}
	screen := ansi.Strip(m.Render())
	checkFits(t, screen, 80, 24)
	for _, want := range []string{"offered", "GOMAXPROCS", "workers", "pool workers is saturated"} {
		if !strings.Contains(screen, want) {
			t.Errorf("80x24 screen lacks %q:\n%s", want, screen)
		}
	}
}

func checkFits(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) > h {
		t.Errorf("screen has %d lines, terminal %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d cells wide, terminal %d: %q", i, n, w, l)
		}
	}
}

// pprofOnlyFrames is sampleFrames against a target with only
// net/http/pprof: goroutines and threads ever created, nothing else.
func pprofOnlyFrames(n int) []Frame {
	frames := sampleFrames(n)
	for i := range frames {
		rt := frames[i].Runtime
		frames[i].Runtime = &Runtime{PprofOnly: true, ThreadsCreated: true, Goroutines: rt.Goroutines, Threads: 11}
		frames[i].Pools, frames[i].Verdicts, frames[i].CPUPerRequest = nil, nil, 0
	}
	return frames
}

// TestDashboardPprofOnly: the runtime panel shows what a pprof-only target
// gives, says the rest needs the agent, and the charts tab plots it.
func TestDashboardPprofOnly(t *testing.T) {
	m := sized(NewDashboard(t.Context(), DashboardConfig{}), 120, 40)
	for _, f := range pprofOnlyFrames(30) {
		m, _ = step(t, m, frameMsg(f))
	}
	if len(m.gor) != 30 || len(m.thr) != 30 {
		t.Errorf("runtime chart points %d goroutines %d threads, want 30 each", len(m.gor), len(m.thr))
	}
	screen := ansi.Strip(m.View().Content)
	checkFits(t, screen, 120, 40)
	for _, want := range []string{"goroutines 1,100", "threads    11 ever created", "net/http/pprof only", "need the in-target agent"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	for _, not := range []string{"no runtime figures yet", "GOMAXPROCS 0", "sched p99", "GC p99"} {
		if strings.Contains(screen, not) {
			t.Errorf("screen shows %q for a pprof-only target", not)
		}
	}
	golden.RequireEqual(t, screen)
	charts, _ := step(t, m, press("tab"))
	if s := ansi.Strip(charts.Render()); strings.Contains(s, "(no runtime figures)") {
		t.Errorf("charts tab has no runtime chart for a pprof-only target:\n%s", s)
	}
}

// TestDashboardFailedAtStart: a run that fails before its first Frame sends
// an End Frame with the reason; the dashboard shows it at once, waits for
// q, and the plain summary printed after the program carries it too.
func TestDashboardFailedAtStart(t *testing.T) {
	ch := make(chan Frame, 1)
	m := sized(NewDashboard(t.Context(), DashboardConfig{Frames: ch, Title: "schedscope run http://127.0.0.1:1/"}), 120, 40)
	reason := "target http://127.0.0.1:1/: dial tcp 127.0.0.1:1: connect: connection refused"
	m, cmd := step(t, m, frameMsg(Frame{Title: "schedscope run http://127.0.0.1:1/", End: &Summary{Title: "run failed", Err: reason}}))
	if cmd != nil {
		t.Error("after the End Frame the dashboard must neither read on nor quit before q")
	}
	if m.End() == nil || m.End().Err != reason {
		t.Fatalf("end %+v, want the failure", m.End())
	}
	screen := ansi.Strip(m.View().Content)
	checkFits(t, screen, 120, 40)
	if !strings.Contains(screen, "✗ target http://127.0.0.1:1/: dial tcp 127.0.0.1:1: connect:") || !strings.Contains(screen, "press q to leave") {
		t.Errorf("the end screen lacks the reason or the way out:\n%s", screen)
	}
	golden.RequireEqual(t, screen)
	if _, cmd := step(t, m, press("q")); !isQuit(cmd) {
		t.Error("q on the end screen must leave")
	}
	var b strings.Builder
	if err := WriteSummary(&b, *m.End()); err != nil {
		t.Fatal(err)
	}
	if want := "schedscope · run failed\n\n✗ " + reason + "\n"; !strings.HasPrefix(b.String(), want) {
		t.Errorf("plain summary %q, want it to start %q", b.String(), want)
	}
}
