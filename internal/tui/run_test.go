package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// teatest waits for SIGINT in a goroutine that outlives the program.
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"),
		goleak.IgnoreAnyFunction("os/signal.signal_recv"),
	)
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls out until it contains want, failing the test after 10 s.
func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output never contained %q; it ends with:\n%q", want, tail(out.String(), 600))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestDashboardProgramGolden runs the dashboard as a real bubbletea program
// under teatest (120x40, ASCII colour profile, TERM pinned), feeds Frames
// through its channel, presses q on the end screen, and compares the final
// screens with golden files.
func TestDashboardProgramGolden(t *testing.T) {
	frames := make(chan Frame)
	tm := teatest.NewTestModel(t, NewDashboard(t.Context(), DashboardConfig{Frames: frames}),
		teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(
			tea.WithColorProfile(colorprofile.Ascii),
			tea.WithEnvironment([]string{"TERM=xterm-256color"}),
		))
	all := sampleFrames(18)
	for _, f := range all[:17] {
		frames <- f
	}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("latency grows without throughput"))
	}, teatest.WithDuration(10*time.Second))

	last := all[17]
	last.End = sampleSummary()
	frames <- last
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("press q to leave"))
	}, teatest.WithDuration(10*time.Second))
	tm.Type("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Dashboard)
	if final.Quit() {
		t.Error("leaving the end screen is not an early stop")
	}
	golden.RequireEqual(t, ansi.Strip(final.Render()))
}

var colourSGR = regexp.MustCompile(`\x1b\[[0-9;]*[34]8;[25];`)

// runToEnd runs RunDashboard on a fake terminal with env, feeds a short run,
// presses q on the end screen and returns what reached the terminal.
func runToEnd(t *testing.T, env []string) (Outcome, string) {
	t.Helper()
	frames := make(chan Frame, 16)
	for _, f := range sampleFrames(10) {
		frames <- f
	}
	end := sampleFrames(11)[10]
	end.End = sampleSummary()
	frames <- end
	in, keys := io.Pipe()
	defer keys.Close()
	out := &syncBuffer{}
	go func() {
		waitFor(t, out, "press q to leave")
		keys.Write([]byte("q"))
	}()
	got, err := RunDashboard(t.Context(), Terminal{In: in, Out: out, Env: env}, DashboardConfig{Frames: frames})
	if err != nil {
		t.Fatal(err)
	}
	return got, out.String()
}

func TestRunDashboardColourAndNoColor(t *testing.T) {
	colourEnv := []string{"TERM=xterm-256color", "COLORTERM=truecolor", "TTY_FORCE=1"}
	outcome, out := runToEnd(t, colourEnv)
	if outcome.End == nil || outcome.Quit {
		t.Fatalf("outcome %+v, want the run's end and no early stop", outcome)
	}
	if !colourSGR.MatchString(out) {
		t.Fatal("control: a true-colour terminal got no colour, so the NO_COLOR check below proves nothing")
	}
	if !strings.Contains(out, "run directory: runs/2026-11-30T01-55-00-sleep-pool\n") {
		t.Error("the summary was not printed as plain text after the program")
	}

	_, out = runToEnd(t, append(colourEnv, "NO_COLOR=1"))
	if m := colourSGR.FindString(out); m != "" {
		t.Errorf("NO_COLOR=1: output still sets colours (%q)", m)
	}
	_, out = runToEnd(t, append(colourEnv, "NO_COLOR=yes"))
	if m := colourSGR.FindString(out); m != "" {
		t.Errorf("NO_COLOR=yes (any non-empty value counts): output still sets colours (%q)", m)
	}
}

// TestRunDashboardRestoresOnPanic makes the trace callback panic (it runs in
// a Cmd) and checks that the terminal is given back: alternate screen left,
// cursor shown, and the panic reported as an error, not a crash.
func TestRunDashboardRestoresOnPanic(t *testing.T) {
	in, keys := io.Pipe()
	defer keys.Close()
	out := &syncBuffer{}
	go func() {
		waitFor(t, out, "waiting for the first figures")
		keys.Write([]byte("t"))
	}()
	_, err := RunDashboard(t.Context(), Terminal{In: in, Out: out, Env: []string{"TERM=xterm-256color"}},
		DashboardConfig{
			Frames:    make(chan Frame),
			TakeTrace: func(context.Context) (string, error) { panic("injected failure in a Cmd") },
		})
	if !errors.Is(err, tea.ErrProgramPanic) {
		t.Fatalf("err = %v, want one wrapping tea.ErrProgramPanic", err)
	}
	s := out.String()
	enter, leave := strings.LastIndex(s, ansi.SetModeAltScreenSaveCursor), strings.LastIndex(s, ansi.ResetModeAltScreenSaveCursor)
	if enter < 0 || leave < enter {
		t.Errorf("alternate screen entered at %d, left at %d: terminal not restored", enter, leave)
	}
	if !strings.Contains(s[max(enter, 0):], ansi.ShowCursor) {
		t.Error("cursor not shown again after the panic")
	}
}

// TestRunDashboardContextCancel: a cancelled context (SIGINT/SIGTERM in
// main) stops the run through cfg.Stop and leaves after the End frame.
func TestRunDashboardContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	frames := make(chan Frame, 4)
	frames <- sampleFrames(1)[0]
	stop := func() {
		end := sampleFrames(2)[1]
		end.End = &Summary{Title: "run finished", RunDirs: []string{"runs/x"}}
		frames <- end
	}
	in, keys := io.Pipe()
	defer keys.Close()
	out := &syncBuffer{}
	go func() {
		waitFor(t, out, "pool model")
		cancel()
	}()
	got, err := RunDashboard(ctx, Terminal{In: in, Out: out, Env: []string{"TERM=dumb"}}, DashboardConfig{Frames: frames, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Quit || got.End == nil || !got.End.Stopped {
		t.Fatalf("outcome %+v: want an early stop with the run's summary marked stopped", got)
	}
	if !strings.Contains(out.String(), "stopped early") {
		t.Error("plain summary does not say the run stopped early")
	}
}

func TestPrintFrames(t *testing.T) {
	frames := make(chan Frame, 64)
	for _, f := range sampleFrames(20) {
		frames <- f
	}
	end := sampleFrames(21)[20]
	end.End = sampleSummary()
	frames <- end
	var out bytes.Buffer
	sum, err := PrintFrames(t.Context(), &out, frames, time.Second)
	if err != nil || sum == nil {
		t.Fatalf("PrintFrames = %v, %v", sum, err)
	}
	s := out.String()
	if strings.Contains(s, "\x1b") {
		t.Error("plain output contains escape codes")
	}
	// 20 frames 250 ms apart: one line a second -> 5 lines, plus 2 verdicts.
	if n := strings.Count(s, "[sleep 50 ms · pool model (200 workers)]"); n != 5 {
		t.Errorf("%d progress lines, want 5:\n%s", n, s)
	}
	if n := strings.Count(s, "▲ pool workers is saturated:"); n != 1 {
		t.Errorf("verdict printed %d times, want once", n)
	}
	if !strings.HasSuffix(s, "run directory: runs/2026-11-30T01-55-00-sleep-pool\n") {
		t.Errorf("output does not end with the summary:\n%s", tail(s, 300))
	}
	if !strings.Contains(s, "waiting 480\n\nschedscope · run finished\n") {
		t.Errorf("no blank line between the last progress line and the summary:\n%s", tail(s, 1200))
	}
	want := "0:05 [sleep 50 ms · pool model (200 workers)] measure 4,500 req/s 0% offered 4,500/s 2xx 3,702/s p50 54.0 ms p95 96.5 ms p99 111 ms in-flight 200 not-sent 0 errors 0 | goroutines 230 threads 9 | workers 200/200 waiting 0"
	if first, _, _ := strings.Cut(s, "\n"); first != want {
		t.Errorf("first line\n got %q\nwant %q", first, want)
	}
}

// TestCanDraw: a terminal whose TERM says it cannot draw a full screen gets
// plain output, as a pipe does.
func TestCanDraw(t *testing.T) {
	for _, c := range []struct {
		term, goos string
		want       bool
	}{
		{"xterm-256color", "linux", true},
		{"screen", "linux", true},
		{"tmux-256color", "darwin", true},
		{"dumb", "linux", false},
		{"dumb", "windows", false},
		{"", "linux", false},
		{"", "darwin", false},
		{"", "windows", true},
	} {
		if got := canDraw(c.term, c.goos); got != c.want {
			t.Errorf("canDraw(%q, %s) = %v, want %v", c.term, c.goos, got, c.want)
		}
	}
}
