package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"
)

// Terminal is where a TUI program draws and reads keys. The zero value means
// the process's own terminal (os.Stdin, os.Stdout, os.Environ()).
type Terminal struct {
	In  io.Reader
	Out io.Writer
	// Env is the environment that decides colours (NO_COLOR, TERM,
	// COLORTERM); nil means os.Environ().
	Env []string
	// Width and Height are the window size to assume when Out is not a
	// terminal (a test's buffer); 0 means 120x40. A real terminal reports
	// its own size.
	Width, Height int
}

// IsTerminal reports whether w is a terminal that can show a TUI, i.e.
// whether a caller should show one on it rather than plain lines: w is a
// terminal and the TERM environment variable does not say it cannot draw
// a full screen (see canDraw). It is the one place that decides between
// the dashboard and plain output.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(term.File)
	return ok && term.IsTerminal(f.Fd()) && canDraw(os.Getenv("TERM"), runtime.GOOS)
}

// canDraw reports whether a terminal whose TERM is termName can show a
// full-screen TUI (cursor addressing, an alternate screen). "dumb" cannot
// (Emacs' shell, some CI consoles and editors' terminals set it), nor can
// an unset TERM outside Windows (whose console sets none and can).
func canDraw(termName, goos string) bool {
	switch termName {
	case "dumb":
		return false
	case "":
		return goos == "windows"
	}
	return true
}

// options turns t into bubbletea program options. NO_COLOR set to anything
// non-empty (https://no-color.org) forces the ASCII colour profile: text
// attributes are kept, colours dropped.
func (t Terminal) options() []tea.ProgramOption {
	env := t.Env
	if env == nil {
		env = os.Environ()
	}
	opts := []tea.ProgramOption{tea.WithEnvironment(env)}
	if t.In != nil {
		opts = append(opts, tea.WithInput(t.In))
	}
	if t.Out != nil {
		opts = append(opts, tea.WithOutput(t.Out))
		if !IsTerminal(t.Out) {
			w, h := t.Width, t.Height
			if w <= 0 || h <= 0 {
				w, h = 120, 40
			}
			opts = append(opts, tea.WithWindowSize(w, h))
		}
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "NO_COLOR="); ok && v != "" {
			opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
		}
	}
	return opts
}

// Outcome is how the dashboard ended.
type Outcome struct {
	// Quit is true when the user stopped the run early (q, Ctrl-C) or the
	// caller's context was cancelled; the caller must make sure the run is
	// stopped and saved.
	Quit bool
	// End is the summary the dashboard showed, nil if the run never sent one.
	End *Summary
}

// RunDashboard shows the live dashboard on term until the user leaves it
// (after the run's End Frame, or after stopping the run). When ctx is
// cancelled the dashboard asks the run to stop (cfg.Stop) and waits for its
// End Frame like a press of q does. The terminal is restored on every exit,
// also after a panic in the model or a Cmd (bubbletea recovers it and
// RunDashboard returns an error wrapping tea.ErrProgramPanic). After the
// program ends, the end screen's summary is printed as plain text to
// term.Out so it stays in the scrollback.
func RunDashboard(ctx context.Context, t Terminal, cfg DashboardConfig) (Outcome, error) {
	progCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	model := NewDashboard(progCtx, cfg)
	p := tea.NewProgram(model, append(t.options(),
		tea.WithFPS(12), // Frames come 4 times a second; keys still feel instant
		// A SIGINT that reaches bubbletea (input not a TTY) stops the run
		// the way Ctrl-C as a key does, instead of killing the program.
		tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
			if _, ok := msg.(tea.InterruptMsg); ok {
				return stopRequestMsg{}
			}
			return msg
		}))...)

	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		select {
		case <-ctx.Done():
			p.Send(stopRequestMsg{})
		case <-progCtx.Done():
		}
	}()
	final, err := p.Run()
	cancel()
	<-watchDone
	var out Outcome
	if d, ok := final.(Dashboard); ok {
		out = Outcome{Quit: d.Quit(), End: d.End()}
	}
	if err != nil {
		return out, fmt.Errorf("dashboard: %w", err)
	}
	if out.End != nil {
		w := t.Out
		if w == nil {
			w = os.Stdout
		}
		if err := WriteSummary(w, *out.End); err != nil {
			return out, err
		}
	}
	return out, nil
}

// WriteSummary prints s as plain text (no colour, no escape codes).
func WriteSummary(w io.Writer, s Summary) error {
	_, err := io.WriteString(w, strings.Join(summaryLines(s, nil, 0), "\n")+"\n")
	if err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// FrameLine is the plain one-line form of a Frame, as printed on a non-TTY.
func FrameLine(f Frame) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", fmtClock(f.Phase.RunElapsed))
	if f.Title != "" {
		fmt.Fprintf(&b, " [%s]", f.Title)
	}
	if f.Phase.Name != "" {
		fmt.Fprintf(&b, " %s", f.Phase.Name)
		if f.Phase.Duration > 0 {
			fmt.Fprintf(&b, " %.0f%%", 100*min(1, float64(f.Phase.Elapsed)/float64(f.Phase.Duration)))
		}
	}
	l := f.Load
	if l.OfferedPerSec > 0 {
		fmt.Fprintf(&b, " offered %s/s", fmtRate(l.OfferedPerSec))
	}
	fmt.Fprintf(&b, " 2xx %s/s p50 %s p95 %s p99 %s in-flight %s not-sent %s",
		fmtRate(l.AchievedPerSec), fmtDur(l.P50), fmtDur(l.P95), fmtDur(l.P99), fmtCount(int64(l.InFlight)), fmtCount(l.NotSent))
	var errs int64
	for _, e := range l.Errors {
		errs += e.Count
	}
	fmt.Fprintf(&b, " errors %s", fmtCount(errs))
	if rt := f.Runtime; rt != nil {
		fmt.Fprintf(&b, " | goroutines %s threads %s", fmtCount(int64(rt.Goroutines)), fmtCount(int64(rt.Threads)))
	}
	for _, p := range f.Pools {
		fmt.Fprintf(&b, " | %s %d/%d waiting %d", p.Name, p.InUse, p.Size, p.Waiting)
	}
	return b.String()
}

// PrintFrames is the dashboard's plain counterpart for a non-TTY or
// --no-tui: it reads frames until the End Frame or until frames is closed,
// printing a line per interval of run time (0: every Frame),
// each new verdict once, and at the end the summary. It returns the summary
// (nil if none came) and stops early, with ctx's error, when ctx is done.
func PrintFrames(ctx context.Context, w io.Writer, frames <-chan Frame, interval time.Duration) (*Summary, error) {
	var last time.Duration = -1
	seen := map[string]bool{}
	for {
		var f Frame
		var ok bool
		select {
		case f, ok = <-frames:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if !ok {
			return nil, nil
		}
		if f.End != nil {
			if last >= 0 || len(seen) > 0 { // a blank line between the progress lines and the summary
				if _, err := fmt.Fprintln(w); err != nil {
					return f.End, fmt.Errorf("write summary: %w", err)
				}
			}
			if err := WriteSummary(w, *f.End); err != nil {
				return f.End, err
			}
			return f.End, nil
		}
		for _, v := range f.Verdicts {
			if !seen[v.Title] {
				seen[v.Title] = true
				if _, err := fmt.Fprintf(w, "%s %s %s: %s\n", fmtClock(f.Phase.RunElapsed), verdictMark(v.Kind), v.Title, v.Detail); err != nil {
					return nil, fmt.Errorf("print frame: %w", err)
				}
			}
		}
		if last >= 0 && f.Phase.RunElapsed-last < interval {
			continue
		}
		last = f.Phase.RunElapsed
		if _, err := fmt.Fprintln(w, FrameLine(f)); err != nil {
			return nil, fmt.Errorf("print frame: %w", err)
		}
	}
}
