package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// DashboardConfig is what the live dashboard needs from its caller: a feed of
// Frames and the actions behind its keys. Only Frames is required.
type DashboardConfig struct {
	// Title heads the screen until the first Frame brings its own.
	Title string

	// Frames is the run's live feed. The Frame with End set is the last one
	// shown; closing the channel without such a Frame ends the run too.
	Frames <-chan Frame

	// TakeTrace, when non-nil, is called (in a Cmd, never in Update) when the
	// user presses t. It records a trace window now and returns where it was
	// written. It must return when ctx is cancelled.
	TakeTrace func(ctx context.Context) (path string, err error)

	// Stop, when non-nil, is called (in a Cmd) when the user presses q or
	// Ctrl-C, or when the caller's context is cancelled: it must make the run
	// stop early and save what it has, then send its End Frame. When nil, q
	// leaves the dashboard at once and the caller stops the run.
	Stop func()

	// StopGrace is how long the dashboard waits for the End Frame after Stop
	// before it leaves anyway; zero means 15 s.
	StopGrace time.Duration
}

// Tabs of the dashboard, in tab order.
const (
	tabOverview = iota
	tabCharts
	tabVerdicts
	tabCount
)

var tabNames = [tabCount]string{"overview", "charts", "verdicts"}

// Messages the dashboard receives from its Cmds.
type (
	frameMsg      Frame
	feedClosedMsg struct{}
	traceDoneMsg  struct {
		path string
		err  error
	}
	// stopRequestMsg is a stop asked from outside (SIGINT, context cancelled).
	stopRequestMsg struct{}
	stopGraceMsg   struct{}
)

// loggedVerdict is a verdict with the run time at which it first held.
type loggedVerdict struct {
	at time.Duration
	v  Verdict
}

// dashKeys are the dashboard's key bindings (also its help).
type dashKeys struct {
	Help, Quit, Trace, Tab, BackTab key.Binding
}

func newDashKeys() dashKeys {
	return dashKeys{
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "stop & save")),
		Trace:   key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "trace window now")),
		Tab:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next panel")),
		BackTab: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous panel")),
	}
}

// ShortHelp implements help.KeyMap.
func (k dashKeys) ShortHelp() []key.Binding { return []key.Binding{k.Trace, k.Tab, k.Quit, k.Help} }

// FullHelp implements help.KeyMap.
func (k dashKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Trace, k.Tab, k.BackTab}, {k.Quit, k.Help}}
}

// Dashboard is the live run's bubbletea model. Build it with NewDashboard;
// its Update is pure (I/O happens in the Cmds it returns), so a test can drive
// it with messages and read View.
type Dashboard struct {
	cfg DashboardConfig
	ctx context.Context

	width, height int
	st            styles
	keys          dashKeys
	help          help.Model
	bar           progress.Model

	frame    Frame
	hasFrame bool
	title    string

	p50, p99, gor, thr []point
	stages             []float64
	verdicts           []loggedVerdict

	tab      int
	showHelp bool
	status   string
	tracing  bool
	stopping bool
	quit     bool
	// leaveOnEnd: the stop came from outside (context, signal), so nobody
	// may be there to press q on the end screen.
	leaveOnEnd bool
	end        *Summary
}

// NewDashboard returns the dashboard for cfg. ctx bounds the Cmds it starts
// (reading Frames, taking a trace window): cancel it after the program ends.
func NewDashboard(ctx context.Context, cfg DashboardConfig) Dashboard {
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = 15 * time.Second
	}
	h := help.New()
	h.Styles = help.DefaultDarkStyles()
	return Dashboard{
		cfg:    cfg,
		ctx:    ctx,
		width:  100,
		height: 30,
		st:     newStyles(),
		keys:   newDashKeys(),
		help:   h,
		bar: progress.New(progress.WithWidth(30), progress.WithFillCharacters('█', '░'),
			progress.WithColors(lipgloss.Color("#7D56F4")), progress.WithoutPercentage()),
		title: cfg.Title,
	}
}

// Quit reports whether the user asked to stop the run early (q or Ctrl-C),
// as opposed to the run reaching its end.
func (m Dashboard) Quit() bool { return m.quit }

// End returns the summary the dashboard ended on, or nil.
func (m Dashboard) End() *Summary { return m.end }

// Init starts reading the feed.
func (m Dashboard) Init() tea.Cmd { return m.nextFrame() }

// nextFrame is the re-arming Cmd that waits for the next Frame.
func (m Dashboard) nextFrame() tea.Cmd {
	if m.cfg.Frames == nil {
		return nil
	}
	ctx, frames := m.ctx, m.cfg.Frames
	return func() tea.Msg {
		select {
		case f, ok := <-frames:
			if !ok {
				return feedClosedMsg{}
			}
			return frameMsg(f)
		case <-ctx.Done():
			return nil
		}
	}
}

// Update handles one message. It never blocks and never does I/O.
func (m Dashboard) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case frameMsg:
		m = m.apply(Frame(msg))
		if m.end != nil {
			if m.leaveOnEnd {
				return m, tea.Quit
			}
			return m, nil
		}
		return m, m.nextFrame()
	case feedClosedMsg:
		if m.end == nil {
			m.end = &Summary{Title: "run ended", Stopped: m.stopping}
		}
		if m.leaveOnEnd {
			return m, tea.Quit
		}
		return m, nil
	case traceDoneMsg:
		m.tracing = false
		if msg.err != nil {
			m.status = "trace window failed: " + msg.err.Error()
		} else {
			m.status = "trace window saved: " + msg.path
		}
		return m, nil
	case stopRequestMsg:
		m.leaveOnEnd = true
		return m.requestStop()
	case stopGraceMsg:
		return m, tea.Quit
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

// apply takes in a Frame: the latest figures, the chart points, new verdicts.
func (m Dashboard) apply(f Frame) Dashboard {
	x := f.Phase.RunElapsed.Seconds()
	if f.Title != "" && f.Title != m.title {
		if m.hasFrame {
			m.stages = append(m.stages, x)
		}
		m.title = f.Title
	}
	m.frame, m.hasFrame = f, true
	if f.Load.P50 > 0 || f.Load.P99 > 0 {
		m.p50 = appendPoint(m.p50, point{x, durMS(f.Load.P50)})
		m.p99 = appendPoint(m.p99, point{x, durMS(f.Load.P99)})
	}
	if rt := f.Runtime; rt != nil {
		m.gor = appendPoint(m.gor, point{x, float64(rt.Goroutines)})
		m.thr = appendPoint(m.thr, point{x, float64(rt.Threads)})
	}
	for _, v := range f.Verdicts {
		seen := false
		for _, l := range m.verdicts {
			if l.v.Title == v.Title {
				seen = true
				break
			}
		}
		if !seen {
			m.verdicts = append(m.verdicts, loggedVerdict{f.Phase.RunElapsed, v})
		}
	}
	if f.End != nil {
		end := *f.End
		end.Stopped = end.Stopped || m.stopping
		m.end = &end
	}
	return m
}

// durMS is d in milliseconds.
func durMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// key handles a key press.
func (m Dashboard) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if m.end != nil {
		switch k.String() {
		case "q", "ctrl+c", "esc", "enter":
			return m, tea.Quit
		}
		return m, nil
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		return m.requestStop()
	case key.Matches(k, m.keys.Help):
		m.showHelp = !m.showHelp
	case key.Matches(k, m.keys.Tab):
		m.tab = (m.tab + 1) % tabCount
		m.showHelp = false
	case key.Matches(k, m.keys.BackTab):
		m.tab = (m.tab + tabCount - 1) % tabCount
		m.showHelp = false
	case key.Matches(k, m.keys.Trace):
		switch {
		case m.cfg.TakeTrace == nil:
			m.status = "no trace source for this run"
		case m.tracing:
			m.status = "a trace window is already being taken"
		default:
			m.tracing = true
			m.status = "taking a trace window…"
			ctx, take := m.ctx, m.cfg.TakeTrace
			return m, func() tea.Msg {
				path, err := take(ctx)
				return traceDoneMsg{path, err}
			}
		}
	case k.String() == "esc":
		m.showHelp = false
	}
	return m, nil
}

// requestStop handles q, Ctrl-C and outside stop requests: the first asks
// the run to stop and save, a second leaves at once.
func (m Dashboard) requestStop() (tea.Model, tea.Cmd) {
	if m.stopping || m.cfg.Stop == nil {
		m.quit, m.stopping = true, true
		return m, tea.Quit
	}
	m.quit, m.stopping = true, true
	m.status = "stopping: saving the run… (q again to leave now)"
	stop, grace := m.cfg.Stop, m.cfg.StopGrace
	return m, tea.Batch(
		func() tea.Msg { stop(); return nil },
		m.after(grace, stopGraceMsg{}),
	)
}

// after delivers msg after d, or nothing once the dashboard's context ends
// (unlike tea.Tick, whose goroutine cannot be stopped).
func (m Dashboard) after(d time.Duration, msg tea.Msg) tea.Cmd {
	ctx := m.ctx
	return func() tea.Msg {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return msg
		case <-ctx.Done():
			return nil
		}
	}
}

// View renders the screen.
func (m Dashboard) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "schedscope"
	return v
}

// Render returns the screen as text (what View shows), cut to the window.
func (m Dashboard) Render() string {
	w, h := max(m.width, 40), max(m.height, 10)
	var body string
	switch {
	case m.end != nil:
		body = m.endScreen(w)
	case m.showHelp:
		body = m.header(w) + "\n\n" + m.help.FullHelpView(m.keys.FullHelp()) + "\n\n" +
			m.st.dim.Render("Figures: latency from each request's intended send time; sched p99 from the\n"+
				"runtime's /sched/latencies histogram, which samples 1 transition in 8.")
	default:
		top := m.header(w) + "\n" + m.phaseLine(w)
		if m.frame.Note != "" {
			top += "\n" + m.st.key.Render("» ") + m.frame.Note
		}
		foot := m.footer(w)
		rest := h - lipgloss.Height(top) - lipgloss.Height(foot)
		var mid string
		switch m.tab {
		case tabOverview:
			mid = m.overview(w, rest)
		case tabCharts:
			mid = m.charts(w, rest)
		case tabVerdicts:
			mid = m.verdictLog(w, rest)
		}
		body = screenBody(top, mid, foot, rest)
	}
	return fitHeight(fitWidth(body, w), h)
}

// header is the title line with the tabs on the right.
func (m Dashboard) header(w int) string {
	title := m.title
	if title == "" {
		title = "run"
	}
	left := m.st.title.Render("schedscope · " + title)
	var tabs []string
	for i, n := range tabNames {
		if i == m.tab && !m.showHelp {
			tabs = append(tabs, m.st.tabOn.Render("["+n+"]"))
		} else {
			tabs = append(tabs, m.st.tabOff.Render(" "+n+" "))
		}
	}
	right := strings.Join(tabs, " ")
	gap := w - lipgloss.Width(left) - lipgloss.Width(right)
	if gap < 1 {
		return left
	}
	return left + strings.Repeat(" ", gap) + right
}

// phaseLine shows the phase, its progress bar and the run clock.
func (m Dashboard) phaseLine(w int) string {
	if !m.hasFrame {
		return m.st.dim.Render("waiting for the first figures…")
	}
	p := m.frame.Phase
	name := p.Name
	if name == "" {
		name = "running"
	}
	if p.Count > 0 {
		name = fmt.Sprintf("%s (%d/%d)", name, p.Index, p.Count)
	}
	s := m.st.label.Render("phase ") + m.st.value.Render(name)
	if p.Duration > 0 {
		bar := m.bar
		bar.SetWidth(max(10, min(40, w/4)))
		frac := min(1, max(0, float64(p.Elapsed)/float64(p.Duration)))
		s += "  " + bar.ViewAs(frac) + fmt.Sprintf(" %3.0f%%  %s / %s", frac*100, fmtClock(p.Elapsed), fmtClock(p.Duration))
	}
	clock := m.st.dim.Render("run " + fmtClock(p.RunElapsed))
	if gap := w - lipgloss.Width(s) - lipgloss.Width(clock); gap > 0 {
		s += strings.Repeat(" ", gap) + clock
	}
	return s
}

// footer is the status line and the short key help.
func (m Dashboard) footer(w int) string {
	h := m.help
	h.SetWidth(w)
	line := h.ShortHelpView(m.keys.ShortHelp())
	if m.status != "" {
		line = m.st.key.Render(m.status) + "   " + line
	}
	return line
}

// row is one "label value" line of a panel.
func (m Dashboard) row(label string, lw int, value string) string {
	return m.st.label.Render(padRight(label, lw)) + " " + value
}

// overview is the one-glance screen: three panels, the latency chart, banners.
func (m Dashboard) overview(w, h int) string {
	pw := w / 3
	panels := lipgloss.JoinHorizontal(lipgloss.Top,
		m.panel("load", m.loadLines(), pw),
		m.panel("runtime (target)", m.runtimeLines(pw-4), pw),
		m.panel("pools", m.poolLines(), w-2*pw),
	)
	banners := m.banners(w)
	chartH := h - lipgloss.Height(panels) - lipgloss.Height(banners) - 1
	var b strings.Builder
	b.WriteString(panels)
	if chartH >= 5 {
		b.WriteString("\n" + m.latencyChart(w, chartH))
	}
	if banners != "" {
		b.WriteString("\n" + banners)
	}
	return b.String()
}

// panelRows is how many lines each overview panel holds.
const panelRows = 7

// panel draws lines in a bordered box of width w with a title.
func (m Dashboard) panel(title string, lines []string, w int) string {
	const rows = panelRows
	for len(lines) < rows {
		lines = append(lines, "")
	}
	inner := w - 4
	for i, l := range lines {
		lines[i] = padRight(l, inner)
	}
	body := m.st.panel.Width(w).Render(strings.Join(lines[:rows], "\n"))
	// Put the title into the top border.
	first, rest, _ := strings.Cut(body, "\n")
	label := " " + title + " "
	if lipgloss.Width(first) > len(label)+3 {
		first = m.st.dim.Render("╭─") + m.st.value.Render(label) +
			m.st.dim.Render(strings.Repeat("─", max(0, w-3-lipgloss.Width(label)))+"╮")
	}
	return first + "\n" + rest
}

func (m Dashboard) loadLines() []string {
	if !m.hasFrame {
		return []string{m.st.dim.Render("no figures yet")}
	}
	l := m.frame.Load
	v := m.st.value.Render
	offered := "-" // a pause
	if l.OfferedPerSec > 0 {
		offered = v(fmtRate(l.OfferedPerSec)) + " req/s"
	} else if l.Users > 0 {
		offered = v(fmtCount(int64(l.Users))) + " users (closed model)"
	}
	errs := "none"
	if len(l.Errors) > 0 {
		var parts []string
		for _, e := range l.Errors {
			parts = append(parts, e.Class+" "+m.st.bad.Render(fmtCount(e.Count)))
		}
		errs = strings.Join(parts, " · ")
	}
	notSent := v(fmtCount(l.NotSent))
	if l.NotSent > 0 {
		notSent = m.st.warn.Render(fmtCount(l.NotSent))
	}
	return []string{
		m.row("offered", 9, offered),
		m.row("achieved", 9, v(fmtRate(l.AchievedPerSec))+" 2xx/s"),
		m.row("in flight", 9, v(fmtCount(int64(l.InFlight)))+m.st.dim.Render("  sent ")+fmtCount(l.Sent)),
		m.row("not sent", 9, notSent),
		m.row("errors", 9, errs),
		m.row("latency", 9, m.st.p50.Render(padRight("p50", latencyCol))+padRight("p95", latencyCol)+m.st.p99.Render("p99")),
		m.row("", 9, m.st.p50.Render(padRight(fmtDur(l.P50), latencyCol))+v(padRight(fmtDur(l.P95), latencyCol))+m.st.p99.Render(fmtDur(l.P99))),
	}
}

// latencyCol is the width of a latency column in the load panel: the
// longest fmtDur ("95.0 ms") and a space.
const latencyCol = 8

// runtimeLines is the runtime panel's text, w cells wide.
func (m Dashboard) runtimeLines(w int) []string {
	rt := m.frame.Runtime
	if rt == nil {
		return []string{m.st.dim.Render("no runtime figures yet"), m.st.dim.Render("(before the first poll, or no agent)")}
	}
	v := m.st.value.Render
	n := func(i int) string { return fmtCount(int64(i)) }
	if rt.PprofOnly {
		threads := m.row("threads", 10, v(n(rt.Threads)))
		if rt.ThreadsCreated {
			threads += m.st.dim.Render(" ever created")
		}
		lines := []string{m.row("goroutines", 10, v(n(rt.Goroutines))), threads, ""}
		for _, l := range wrap("", "net/http/pprof only: GOMAXPROCS, goroutine states, sched latency and GC need the in-target agent", w) {
			lines = append(lines, m.st.dim.Render(l))
		}
		return lines
	}
	gcCycles := "" // unknown when 0: not every feed counts cycles
	if rt.GCCycles > 0 {
		gcCycles = m.st.dim.Render(fmt.Sprintf(" · %s cycles", fmtCount(int64(rt.GCCycles))))
	}
	return []string{
		m.row("GOMAXPROCS", 10, v(n(rt.GOMAXPROCS))+m.st.label.Render("   threads ")+v(n(rt.Threads))),
		m.row("goroutines", 10, v(n(rt.Goroutines))),
		m.st.dim.Render(" running ") + n(rt.Running) + m.st.dim.Render(" · runnable ") + n(rt.Runnable),
		m.st.dim.Render(" waiting ") + n(rt.Waiting) + m.st.dim.Render(" · syscall ") + n(rt.Syscall),
		m.row("sched p99", 10, v(fmtDur(rt.SchedLatencyP99))+m.st.dim.Render(" (sampled 1/8)")),
		m.row("GC p99", 10, v(fmtDur(rt.GCPauseP99))+gcCycles),
	}
}

func (m Dashboard) poolLines() []string {
	var lines []string
	for _, p := range m.frame.Pools {
		if len(lines) >= 4 {
			break
		}
		use := fmt.Sprintf("%s/%s", fmtCount(int64(p.InUse)), fmtCount(int64(p.Size)))
		style := m.st.value
		if p.Size > 0 && p.InUse >= p.Size {
			style = m.st.bad
		}
		waiting := m.st.dim.Render("0 waiting")
		if p.Waiting > 0 {
			waiting = m.st.warn.Render(fmtCount(int64(p.Waiting))) + " waiting"
		}
		lines = append(lines,
			m.row(p.Name, 11, style.Render(use)+" in use"),
			m.row("", 11, waiting))
	}
	if len(lines) == 0 {
		lines = append(lines, m.st.dim.Render("no pools reported"))
	}
	for len(lines) < panelRows-1 {
		lines = append(lines, "")
	}
	cpu := "-"
	if m.frame.CPUPerRequest > 0 {
		cpu = m.st.value.Render(fmtDur(m.frame.CPUPerRequest)) + m.st.dim.Render(" (target)")
	}
	return append(lines[:panelRows-1], m.row("CPU/request", 11, cpu))
}

// banners are the verdicts that hold now, one line each.
func (m Dashboard) banners(w int) string {
	var lines []string
	for _, v := range m.frame.Verdicts {
		s := m.st.verdictStyle(v.Kind)
		line := s.Render(verdictMark(v.Kind)+" "+v.Title) + "  " + v.Detail
		lines = append(lines, fitWidth(line, w))
	}
	return strings.Join(lines, "\n")
}

// latencyChart is the p50/p99 chart over the run, with its legend line.
func (m Dashboard) latencyChart(w, h int) string {
	legend := m.st.label.Render("latency from intended send time   ") +
		m.st.p50.Render("⣿ p50") + "  " + m.st.p99.Render("⣿ p99")
	if len(m.p99) == 0 {
		return legend + "\n" + m.st.dim.Render("(no responses yet)")
	}
	return legend + "\n" + renderChart(w, h-1, msLabel, m.stages,
		series{"p50", m.st.p50, m.p50}, series{"p99", m.st.p99, m.p99})
}

// charts is the detail tab: latency and goroutines/threads over time.
func (m Dashboard) charts(w, h int) string {
	top := h / 2
	s := m.latencyChart(w, top)
	legend := m.st.label.Render("target runtime   ") + m.st.gor.Render("⣿ goroutines") + "  " + m.st.thr.Render("⣿ threads")
	if len(m.gor) == 0 {
		return s + "\n" + legend + "\n" + m.st.dim.Render("(no runtime figures)")
	}
	return s + "\n" + legend + "\n" + renderChart(w, h-top-1, countLabel, m.stages,
		series{"goroutines", m.st.gor, m.gor}, series{"threads", m.st.thr, m.thr})
}

// verdictLog lists every verdict seen, when it first held, and whether it
// still holds.
func (m Dashboard) verdictLog(w, h int) string {
	if len(m.verdicts) == 0 {
		return m.st.dim.Render("No verdict yet: every limit is still ahead of the load.")
	}
	var lines []string
	for _, l := range m.verdicts {
		now, detail := m.st.dim.Render("(no longer holds)"), l.v.Detail
		for _, v := range m.frame.Verdicts {
			if v.Title == l.v.Title {
				now, detail = m.st.good.Render("(holds now)"), v.Detail
			}
		}
		s := m.st.verdictStyle(l.v.Kind)
		lines = append(lines, m.st.dim.Render(fmtClock(l.at))+"  "+s.Render(verdictMark(l.v.Kind)+" "+l.v.Title)+"  "+now)
		lines = append(lines, wrap("      ", detail, w)...)
	}
	return strings.Join(lines, "\n")
}

// endScreen shows the run's summary and where it was saved.
func (m Dashboard) endScreen(w int) string {
	st := m.st
	return strings.Join(summaryLines(*m.end, &st, w), "\n") + "\n\n" + st.help.Render("press q to leave")
}

// summaryLines renders a Summary; st nil means plain text.
func summaryLines(s Summary, st *styles, w int) []string {
	style := func(f func(styles) lipgloss.Style, text string) string {
		if st == nil {
			return text
		}
		return f(*st).Render(text)
	}
	title := s.Title
	if title == "" {
		title = "run finished"
	}
	if s.Stopped {
		title += " (stopped early; what ran is saved)"
	}
	lines := []string{style(func(s styles) lipgloss.Style { return s.title }, "schedscope · "+title), ""}
	var errLines []string // the failure first, marked, each of its lines wrapped
	if strings.TrimSpace(s.Err) != "" {
		for _, l := range strings.Split(strings.TrimSpace(s.Err), "\n") {
			errLines = append(errLines, wrap("  ", l, w)...)
		}
	}
	if len(errLines) > 0 {
		errLines[0] = "✗ " + strings.TrimPrefix(errLines[0], "  ")
		for _, l := range errLines {
			lines = append(lines, style(func(s styles) lipgloss.Style { return s.bad }, l))
		}
		lines = append(lines, "")
	}
	if t := textTable(s.Table); len(s.Table.Rows) > 0 {
		lines = append(lines, style(func(s styles) lipgloss.Style { return s.value }, t[0]))
		lines = append(lines, t[1:]...)
		lines = append(lines, "")
	}
	for _, v := range s.Verdicts {
		lines = append(lines, style(func(s styles) lipgloss.Style { return s.verdictStyle(v.Kind) }, verdictMark(v.Kind)+" "+v.Title))
		if v.Detail != "" {
			lines = append(lines, wrap("  ", v.Detail, w)...)
		}
	}
	if len(s.Verdicts) > 0 {
		lines = append(lines, "")
	}
	for _, n := range s.Notes {
		lines = append(lines, wrap("", n, w)...)
	}
	if len(s.Notes) > 0 {
		lines = append(lines, "")
	}
	for _, d := range s.RunDirs {
		lines = append(lines, style(func(s styles) lipgloss.Style { return s.label }, "run directory: ")+d)
	}
	if len(s.Next) > 0 {
		if len(s.RunDirs) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, style(func(s styles) lipgloss.Style { return s.label }, "try next:"))
		width := 0
		for _, n := range s.Next {
			width = max(width, lipgloss.Width(n.Command))
		}
		for _, n := range s.Next {
			if n.Does == "" || (w > 0 && 2+width+2+lipgloss.Width(n.Does) > w) {
				// Too wide for the screen: what it does goes under it.
				lines = append(lines, "  "+style(func(s styles) lipgloss.Style { return s.key }, n.Command))
				if n.Does == "" {
					continue
				}
				for _, l := range wrap("    ", n.Does, w) {
					lines = append(lines, style(func(s styles) lipgloss.Style { return s.dim }, l))
				}
				continue
			}
			lines = append(lines, "  "+style(func(s styles) lipgloss.Style { return s.key }, padRight(n.Command, width))+
				"  "+style(func(s styles) lipgloss.Style { return s.dim }, n.Does))
		}
	}
	for len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// wrap breaks text into lines of at most w cells, each starting with indent;
// w <= 0 means one line.
func wrap(indent, text string, w int) []string {
	if w <= 0 {
		return []string{indent + text}
	}
	w = max(20, w-len(indent))
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && lipgloss.Width(line)+1+lipgloss.Width(word) > w {
			lines = append(lines, indent+line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, indent+line)
	}
	return lines
}
