package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// SweepEvent is one update of a GOMAXPROCS sweep, the sweep view's input.
// Each event is complete for what it describes; the view keeps the rows.
type SweepEvent struct {
	// Done of Total steps are finished; Step is the 1-based step running
	// now (0 between steps).
	Done, Total, Step int
	// GOMAXPROCS, Iteration and Rate (or Users, closed model) identify the
	// step running now; Line, when set, names its line in a sweep over
	// more than GOMAXPROCS ("pool, GOMAXPROCS 2, workers=20").
	GOMAXPROCS, Iteration int
	Rate                  float64
	Users                 int
	Line                  string
	// Status says what the sweep is doing: "starting target", "warm-up",
	// "measuring", "stopping target".
	Status string
	// Elapsed of Duration of the current phase (Duration 0: no bar).
	Elapsed, Duration time.Duration
	// LiveOKPerSec and LiveP99 are the running phase's latest figures.
	LiveOKPerSec float64
	LiveP99      time.Duration
	// Row, when set, is a finished step for the table.
	Row *SweepRow
	// Finished marks the last event: every step is done (or the sweep
	// stopped); Dir is where the sweep was written.
	Finished bool
	Dir      string
	// Err is a problem worth showing (a target that had to be killed).
	Err string
}

// SweepRow is one finished step.
type SweepRow struct {
	GOMAXPROCS, Iteration int
	// Line and Users: see SweepEvent.
	Line            string
	Users           int
	Rate, OKPerSec  float64
	P50, P99        time.Duration
	Errors, NotSent int64
	// Quota says the step ran under a CPU quota; Throttled is then the
	// share of its 100 ms periods in which the target ran out of it.
	Quota     bool
	Throttled float64
	// Note flags the step, e.g. "generator-bound".
	Note string
}

type (
	sweepMsg       SweepEvent
	sweepClosedMsg struct{}
)

// Sweep is the sweep progress view: a bar for the whole sweep, a bar for
// the step running, and a table that fills in as steps finish. Update is
// pure; events arrive through a re-arming Cmd on the channel given to
// NewSweep.
type Sweep struct {
	ctx    context.Context
	events <-chan SweepEvent
	stop   func()

	width, height int
	st            styles
	bar           progress.Model

	last     SweepEvent
	rows     []SweepRow
	errs     []string
	finished bool
	stopping bool
}

// NewSweep returns the view reading events until the channel closes or an
// event has Finished. stop, when non-nil, is called (in a Cmd) on q or
// Ctrl-C to stop the sweep; a second q leaves at once.
func NewSweep(ctx context.Context, events <-chan SweepEvent, stop func()) Sweep {
	return Sweep{ctx: ctx, events: events, stop: stop, width: 120, height: 40, st: newStyles(),
		bar: progress.New(progress.WithWidth(40), progress.WithFillCharacters('█', '░'),
			progress.WithColors(lipgloss.Color("#7D56F4")), progress.WithoutPercentage())}
}

// Rows returns the finished steps received so far.
func (m Sweep) Rows() []SweepRow { return m.rows }

// Init starts reading events.
func (m Sweep) Init() tea.Cmd { return m.next() }

func (m Sweep) next() tea.Cmd {
	if m.events == nil {
		return nil
	}
	ctx, ch := m.ctx, m.events
	return func() tea.Msg {
		select {
		case e, ok := <-ch:
			if !ok {
				return sweepClosedMsg{}
			}
			return sweepMsg(e)
		case <-ctx.Done():
			return nil
		}
	}
}

// Update handles one message; it never blocks and does no I/O.
func (m Sweep) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case sweepMsg:
		e := SweepEvent(msg)
		m.last = e
		if e.Row != nil {
			m.rows = append(m.rows, *e.Row)
		}
		if e.Err != "" {
			m.errs = append(m.errs, e.Err)
		}
		if e.Finished {
			m.finished = true
			return m, nil
		}
		return m, m.next()
	case sweepClosedMsg:
		m.finished = true
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "ctrl+c", "esc", "enter":
			if m.finished || m.stopping || m.stop == nil {
				return m, tea.Quit
			}
			if msg.String() == "q" || msg.String() == "ctrl+c" {
				m.stopping = true
				stop := m.stop
				return m, func() tea.Msg { stop(); return nil }
			}
		}
	}
	return m, nil
}

// View renders the screen.
func (m Sweep) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "schedscope sweep"
	return v
}

// Render returns the screen as text, cut to the window.
func (m Sweep) Render() string {
	w, h := max(m.width, 40), max(m.height, 10)
	e := m.last
	var b strings.Builder
	b.WriteString(m.st.title.Render("schedscope sweep · GOMAXPROCS") + "\n\n")
	overall := 0.0
	if e.Total > 0 {
		overall = float64(e.Done) / float64(e.Total)
	}
	bar := m.bar
	bar.SetWidth(max(10, min(30, w/4)))
	fmt.Fprintf(&b, "%s %s %d of %d steps\n", m.st.label.Render("sweep "), bar.ViewAs(overall), e.Done, e.Total)
	switch {
	case m.finished:
		b.WriteString(m.st.good.Render("finished") + "\n")
	case e.Step > 0:
		step := 0.0
		if e.Duration > 0 {
			step = min(1, float64(e.Elapsed)/float64(e.Duration))
		}
		fmt.Fprintf(&b, "%s %s step %d: %s, iter %d, %s, %s",
			m.st.label.Render("step  "), bar.ViewAs(step), e.Step, lineOf(e.Line, e.GOMAXPROCS), e.Iteration, offeredOf(e.Rate, e.Users), e.Status)
		if e.LiveOKPerSec > 0 {
			fmt.Fprintf(&b, m.st.dim.Render(" · %s 2xx/s, p99 %s"), fmtRate(e.LiveOKPerSec), fmtDur(e.LiveP99))
		}
		b.WriteString("\n")
	default:
		b.WriteString(m.st.dim.Render(e.Status) + "\n")
	}
	if m.stopping && !m.finished {
		b.WriteString(m.st.key.Render("stopping: the finished steps are saved (q again to leave now)") + "\n")
	}
	b.WriteString("\n")
	t := Table{Header: []string{"GOMAXPROCS", "iter", "offered", "2xx/s", "p50", "p99", "errors", "not sent", "note"}}
	quota := false
	for _, r := range m.rows {
		quota = quota || r.Quota
	}
	if quota {
		t.Header = slices.Insert(t.Header, 8, "throttled")
	}
	for _, r := range m.rows {
		line, offered := fmt.Sprint(r.GOMAXPROCS), fmtRate(r.Rate)
		if r.Line != "" {
			t.Header[0], line = "line", r.Line
		}
		if r.Users > 0 {
			offered = fmt.Sprintf("%d users", r.Users)
		}
		row := []string{line, fmt.Sprint(r.Iteration), offered, fmtRate(r.OKPerSec),
			fmtDur(r.P50), fmtDur(r.P99), fmtCount(r.Errors), fmtCount(r.NotSent), r.Note}
		if quota {
			th := "-"
			if r.Quota {
				th = fmt.Sprintf("%.0f%%", 100*r.Throttled)
			}
			row = slices.Insert(row, 8, th)
		}
		t.Rows = append(t.Rows, row)
	}
	lines := textTable(t)
	if len(lines) > 0 {
		lines[0] = m.st.label.Render(lines[0])
	}
	room := h - lipgloss.Height(b.String()) - 3 - len(m.errs)
	if len(lines)-1 > room && room > 1 {
		lines = append(lines[:1], lines[len(lines)-room+1:]...) // keep the newest rows
	}
	b.WriteString(strings.Join(lines, "\n"))
	for _, err := range m.errs {
		b.WriteString("\n" + m.st.warn.Render("! ") + err)
	}
	if m.finished && e.Dir != "" {
		b.WriteString("\n\n" + m.st.label.Render("sweep directory: ") + e.Dir)
	}
	help := "q stop (finished steps are kept)"
	if m.finished {
		help = "q leave"
	}
	b.WriteString("\n\n" + m.st.help.Render(help))
	return fitHeight(fitWidth(b.String(), w), h)
}

// RunSweep shows the sweep view on t until the sweep finishes and the user
// leaves (or a stop from ctx or q ends it). Closing events without a
// Finished event also ends the view.
func RunSweep(ctx context.Context, t Terminal, events <-chan SweepEvent, stop func()) ([]SweepRow, error) {
	progCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := tea.NewProgram(NewSweep(progCtx, events, stop), append(t.options(), tea.WithContext(ctx), tea.WithFPS(12))...)
	final, err := p.Run()
	cancel()
	m, _ := final.(Sweep)
	if err != nil {
		return m.Rows(), fmt.Errorf("sweep view: %w", err)
	}
	return m.Rows(), nil
}

// lineOf names the running step's line: its label, else its GOMAXPROCS.
func lineOf(line string, gomaxprocs int) string {
	if line != "" {
		return line
	}
	return fmt.Sprintf("GOMAXPROCS %d", gomaxprocs)
}

// offeredOf is the running step's load: "200 req/s" or "50 users".
func offeredOf(rate float64, users int) string {
	if users > 0 {
		return fmt.Sprintf("%d users", users)
	}
	return fmtRate(rate) + " req/s"
}
