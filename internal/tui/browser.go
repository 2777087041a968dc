package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/schedscope/schedscope/analyze"
)

// AnalyzeFunc runs an analysis, calling progress with the bytes read so far
// and the total (0 when unknown). It must return when ctx is cancelled; a
// non-nil Report with an error is a partial result (a damaged trace).
type AnalyzeFunc func(ctx context.Context, progress func(read, total int64)) (*analyze.Report, error)

// BrowserConfig is what the offline trace browser needs.
type BrowserConfig struct {
	// Source names what is analysed, for the title (a path).
	Source string
	// Analyze produces the report; it runs in a Cmd, never in Update.
	Analyze AnalyzeFunc
}

// Browser tabs, in tab order.
const (
	btabRequests = iota
	btabSched
	btabSleep
	btabPinned
	btabTimeline
	btabBlocking
	btabCount
)

var browserTabNames = [btabCount]string{"requests", "sched latency", "sleep", "pinned", "goroutines & threads", "blocking"}

// Messages the browser receives from its Cmds.
type (
	analyzeProgressMsg struct{ read, total int64 }
	analyzeDoneMsg     struct {
		rep *analyze.Report
		err error
	}
	progressClosedMsg struct{}
)

type browserKeys struct {
	Tab, BackTab, Up, Down, PgUp, PgDown, PrevBand, NextBand, Sort, Reverse, Enter, Search, Back, Quit, Help key.Binding
}

func newBrowserKeys() browserKeys {
	return browserKeys{
		Tab:      key.NewBinding(key.WithKeys("tab", "right", "l"), key.WithHelp("tab", "next tab")),
		BackTab:  key.NewBinding(key.WithKeys("shift+tab", "left", "h"), key.WithHelp("shift+tab", "previous tab")),
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PgUp:     key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PgDown:   key.NewBinding(key.WithKeys("pgdown", "space"), key.WithHelp("pgdn", "page down")),
		PrevBand: key.NewBinding(key.WithKeys("["), key.WithHelp("[", "previous latency band")),
		NextBand: key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next latency band")),
		Sort:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by next column")),
		Reverse:  key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse order")),
		Enter:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details (timeline, stack)")),
		Search:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back / clear search")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
	}
}

func (k browserKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Tab, k.BackTab, k.Up, k.Down, k.PgUp, k.PgDown}, {k.PrevBand, k.NextBand, k.Sort, k.Reverse, k.Enter, k.Search, k.Back}, {k.Quit, k.Help}}
}

// shortHelp is the footer's key list for what is on screen: the band keys
// on the requests tab's bands, enter where it opens something.
func (b Browser) shortHelp() []key.Binding {
	k := b.keys
	back := k.Back
	back.SetHelp("esc", "back")
	switch {
	case b.reqOpen && len(b.req.Timeline) > 0:
		return []key.Binding{k.Up, k.PgDown, k.Sort, back, k.Quit, k.Help}
	case b.reqOpen || b.detail:
		return []key.Binding{back, k.Quit, k.Help}
	}
	out := []key.Binding{k.Tab, k.Up}
	enter := k.Enter
	switch {
	case b.tab == btabRequests && b.rep != nil && b.byRequest():
		out = append(out, key.NewBinding(key.WithKeys("[", "]"), key.WithHelp("[ ]", "band")))
		enter.SetHelp("enter", "timeline")
	case b.tab == btabPinned:
		enter.SetHelp("enter", "stack")
	default:
		enter.SetEnabled(false)
	}
	if b.rep != nil && len(b.tables[b.tab].header) == 0 {
		return []key.Binding{k.Tab, k.Quit, k.Help} // a chart, not a table: nothing to move through, sort or search
	}
	return append(out, k.Sort, enter, k.Search, k.Quit, k.Help)
}

// Browser is the offline trace browser's bubbletea model: a progress bar
// while the analysis runs (in a Cmd), then one tab per analysis. Build it
// with NewBrowser, or NewBrowserReport for a report already at hand.
type Browser struct {
	cfg  BrowserConfig
	ctx  context.Context
	prog chan analyzeProgressMsg

	width, height int
	st            styles
	keys          browserKeys
	help          help.Model
	bar           progress.Model
	search        textinput.Model

	read, total int64
	rep         *analyze.Report
	err         error

	tab       int
	tables    [btabCount]browseTable
	detail    bool // showing the selected pinned event's stack
	band      int  // the requests tab's latency band, an index into Requests.Bands
	reqOpen   bool // showing req's timeline (the requests tab)
	req       analyze.Request
	segments  browseTable // req's timeline
	searching bool
	showHelp  bool
}

// NewBrowser returns a browser that runs cfg.Analyze when started. ctx
// bounds the analysis: cancel it after the program ends.
func NewBrowser(ctx context.Context, cfg BrowserConfig) Browser {
	b := newBrowser(ctx, cfg)
	b.prog = make(chan analyzeProgressMsg, 1)
	return b
}

// NewBrowserReport returns a browser on a report already computed (tests,
// or a report read back from JSON).
func NewBrowserReport(ctx context.Context, source string, rep *analyze.Report) Browser {
	b := newBrowser(ctx, BrowserConfig{Source: source})
	return b.loaded(rep, nil)
}

func newBrowser(ctx context.Context, cfg BrowserConfig) Browser {
	h := help.New()
	h.Styles = help.DefaultDarkStyles()
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "text in any column"
	return Browser{
		cfg: cfg, ctx: ctx, width: 120, height: 40,
		st: newStyles(), keys: newBrowserKeys(), help: h, search: ti,
		bar: progress.New(progress.WithWidth(50), progress.WithFillCharacters('█', '░'),
			progress.WithColors(lipgloss.Color("#7D56F4")), progress.WithoutPercentage()),
	}
}

// Report returns the analysis result once it is there (possibly partial,
// with Err), else nil.
func (b Browser) Report() *analyze.Report { return b.rep }

// Err returns the analysis error, if any.
func (b Browser) Err() error { return b.err }

// Init starts the analysis and the progress reader.
func (b Browser) Init() tea.Cmd {
	if b.rep != nil || b.cfg.Analyze == nil {
		return nil
	}
	ctx, run, prog := b.ctx, b.cfg.Analyze, b.prog
	analyzeCmd := func() tea.Msg {
		defer close(prog)
		rep, err := run(ctx, func(read, total int64) {
			select { // latest wins: drop a stale value nobody read yet
			case <-prog:
			default:
			}
			select {
			case prog <- analyzeProgressMsg{read, total}:
			default:
			}
		})
		return analyzeDoneMsg{rep, err}
	}
	return tea.Batch(analyzeCmd, b.nextProgress())
}

// nextProgress is the re-arming Cmd that reads the analysis's progress.
func (b Browser) nextProgress() tea.Cmd {
	ctx, prog := b.ctx, b.prog
	return func() tea.Msg {
		select {
		case p, ok := <-prog:
			if !ok {
				return progressClosedMsg{}
			}
			return p
		case <-ctx.Done():
			return nil
		}
	}
}

// Update handles one message; it never blocks and does no I/O.
func (b Browser) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		b.width, b.height = msg.Width, msg.Height
		return b, nil
	case analyzeProgressMsg:
		b.read, b.total = msg.read, msg.total
		return b, b.nextProgress()
	case progressClosedMsg:
		return b, nil
	case analyzeDoneMsg:
		if msg.rep == nil && msg.err == nil {
			msg.err = errors.New("the analysis returned nothing")
		}
		return b.loaded(msg.rep, msg.err), nil
	case tea.KeyPressMsg:
		return b.key(msg)
	}
	return b, nil
}

// loaded takes in the analysis result and builds the tables.
func (b Browser) loaded(rep *analyze.Report, err error) Browser {
	b.rep, b.err = rep, err
	if rep == nil {
		return b
	}
	if rr := rep.Requests; rr != nil {
		b.band = max(0, len(rr.Bands)-1) // the slowest band first: the tail is the question
	}
	b.tables[btabRequests] = b.requestsTabTable()
	b.tables[btabSched] = groupsTable(rep)
	b.tables[btabSleep] = sleepTable(rep)
	b.tables[btabPinned] = pinnedTable(rep)
	b.tables[btabBlocking] = blockingTable(rep)
	return b
}

func (b Browser) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if b.searching {
		switch k.String() {
		case "enter":
			b.searching = false
			b.search.Blur()
			return b, nil
		case "esc":
			b.searching = false
			b.search.Blur()
			b.search.SetValue("")
			b.tables[b.tab] = b.tables[b.tab].withFilter("")
			return b, nil
		}
		var cmd tea.Cmd
		b.search, cmd = b.search.Update(k)
		b.tables[b.tab] = b.tables[b.tab].withFilter(b.search.Value())
		return b, cmd
	}
	if key.Matches(k, b.keys.Quit) {
		return b, tea.Quit
	}
	if b.rep == nil {
		return b, nil
	}
	if b.detail {
		if key.Matches(k, b.keys.Back, b.keys.Enter) {
			b.detail = false
		}
		return b, nil
	}
	page := max(1, b.height-12)
	if b.reqOpen {
		switch {
		case b.showHelp && key.Matches(k, b.keys.Back, b.keys.Help):
			b.showHelp = false
		case key.Matches(k, b.keys.Back, b.keys.Enter):
			b.reqOpen = false
		case key.Matches(k, b.keys.Help):
			b.showHelp = !b.showHelp
		case key.Matches(k, b.keys.Up):
			b.segments = b.segments.move(-1)
		case key.Matches(k, b.keys.Down):
			b.segments = b.segments.move(1)
		case key.Matches(k, b.keys.PgUp):
			b.segments = b.segments.move(-page)
		case key.Matches(k, b.keys.PgDown):
			b.segments = b.segments.move(page)
		case key.Matches(k, b.keys.Sort):
			b.segments = b.segments.sortNext()
		case key.Matches(k, b.keys.Reverse):
			b.segments = b.segments.reverse()
		}
		return b, nil
	}
	t := b.tables[b.tab]
	switch {
	case key.Matches(k, b.keys.Help):
		b.showHelp = !b.showHelp
	case key.Matches(k, b.keys.Tab):
		b.tab, b.showHelp = (b.tab+1)%btabCount, false
		b.search.SetValue(b.tables[b.tab].filter)
	case key.Matches(k, b.keys.BackTab):
		b.tab, b.showHelp = (b.tab+btabCount-1)%btabCount, false
		b.search.SetValue(b.tables[b.tab].filter)
	case len(k.String()) == 1 && k.String()[0] >= '1' && k.String()[0] < '1'+btabCount:
		b.tab, b.showHelp = int(k.String()[0]-'1'), false
		b.search.SetValue(b.tables[b.tab].filter)
	case b.tab == btabRequests && key.Matches(k, b.keys.PrevBand):
		b = b.withBand(-1)
	case b.tab == btabRequests && key.Matches(k, b.keys.NextBand):
		b = b.withBand(1)
	case key.Matches(k, b.keys.Up):
		b.tables[b.tab] = t.move(-1)
	case key.Matches(k, b.keys.Down):
		b.tables[b.tab] = t.move(1)
	case key.Matches(k, b.keys.PgUp):
		b.tables[b.tab] = t.move(-page)
	case key.Matches(k, b.keys.PgDown):
		b.tables[b.tab] = t.move(page)
	case key.Matches(k, b.keys.Sort):
		b.tables[b.tab] = t.sortNext()
	case key.Matches(k, b.keys.Reverse):
		b.tables[b.tab] = t.reverse()
	case key.Matches(k, b.keys.Enter):
		row, ok := t.selected()
		switch {
		case !ok:
		case b.tab == btabPinned:
			b.detail = true
		case b.tab == btabRequests && b.byRequest():
			list, _ := bandRequests(b.rep.Requests, b.band)
			b = b.openRequest(list[row.ref])
		}
	case key.Matches(k, b.keys.Search) && len(t.header) > 0:
		b.searching = true
		b.search.SetValue(t.filter)
		return b, b.search.Focus()
	case key.Matches(k, b.keys.Back):
		b.showHelp = false
		b.search.SetValue("")
		b.tables[b.tab] = t.withFilter("")
	}
	return b, nil
}

// View renders the screen in the alternate screen buffer.
func (b Browser) View() tea.View {
	v := tea.NewView(b.Render())
	v.AltScreen = true
	v.WindowTitle = "schedscope analyze"
	return v
}

// Render returns the screen as text, cut to the window.
func (b Browser) Render() string {
	w, h := max(b.width, 40), max(b.height, 10)
	title := b.st.title.Render("schedscope analyze · " + b.cfg.Source)
	var body string
	switch {
	case b.rep == nil && b.err == nil:
		body = title + "\n\n" + b.progressView(w)
	case b.rep == nil:
		body = title + "\n\n" + b.st.bad.Render("analysis failed: ") + b.err.Error() + "\n\n" + b.st.help.Render("press q to leave")
	case b.showHelp:
		body = b.header(w) + "\n\n" + b.help.FullHelpView(b.keys.FullHelp())
	default:
		top := b.header(w) + "\n" + b.summaryLine()
		if b.err != nil {
			top += "\n" + b.st.warn.Render("partial report: ") + b.err.Error()
		}
		foot := b.footer(w)
		rest := max(3, h-lipgloss.Height(top)-lipgloss.Height(foot))
		var mid string
		switch {
		case b.detail:
			mid = b.stackView(w, rest)
		case b.reqOpen:
			mid = b.requestView(w, rest)
		default:
			switch b.tab {
			case btabRequests:
				mid = b.requestsView(w, rest)
			case btabSched:
				mid = b.schedView(w, rest)
			case btabSleep:
				mid = b.sleepView(w, rest)
			case btabPinned:
				mid = b.pinnedView(w, rest)
			case btabTimeline:
				mid = b.timelineView(w, rest)
			case btabBlocking:
				mid = b.blockingView(w, rest)
			}
		}
		body = screenBody(top, mid, foot, rest)
	}
	return fitHeight(fitWidth(body, w), h)
}

func (b Browser) progressView(w int) string {
	if b.total <= 0 {
		return b.st.label.Render("analysing… ") + fmtBytes(b.read) + " read"
	}
	bar := b.bar
	bar.SetWidth(min(60, w-30))
	frac := min(1, float64(b.read)/float64(b.total))
	return b.st.label.Render("analysing  ") + bar.ViewAs(frac) +
		fmt.Sprintf(" %3.0f%%  %s of %s", frac*100, fmtBytes(b.read), fmtBytes(b.total)) +
		"\n\n" + b.st.help.Render("The trace is read once, streaming; q leaves.")
}

func (b Browser) header(w int) string {
	left := b.st.title.Render("schedscope analyze · " + b.cfg.Source)
	var tabs []string
	for i, n := range browserTabNames {
		label := fmt.Sprintf("%d %s", i+1, n)
		if i == b.tab && !b.showHelp {
			tabs = append(tabs, b.st.tabOn.Render("["+label+"]"))
		} else {
			tabs = append(tabs, b.st.tabOff.Render(" "+label+" "))
		}
	}
	return left + "\n" + strings.Join(tabs, " ")
}

func (b Browser) summaryLine() string {
	r := b.rep
	return b.st.dim.Render(fmt.Sprintf("%s, %s events, %s · GOMAXPROCS %d · goroutines peak %s · threads peak %s",
		fmtBytes(r.Bytes), fmtCount(r.Events), fmtDur(time.Duration(r.DurationNs)), r.Procs.GOMAXPROCS,
		fmtCount(r.Goroutines.Peak), fmtCount(r.Threads.Peak)))
}

func (b Browser) footer(w int) string {
	if b.searching {
		return b.search.View()
	}
	h := b.help
	h.SetWidth(w)
	line := h.ShortHelpView(b.shortHelp())
	if f := b.tables[b.tab].filter; f != "" && !b.detail && !b.reqOpen {
		line = b.st.key.Render("search: "+f) + b.st.dim.Render(" (esc clears)") + "   " + line
	}
	return line
}

// schedView: totals, the latency histogram beside the by-cause table, and
// the sortable groups table.
func (b Browser) schedView(w, h int) string {
	s := b.rep.Sched
	p := s.PercentilesNs
	head := b.st.value.Render(fmt.Sprintf("%s wake-ups waited %s runnable", fmtCount(s.Count), fmtDur(time.Duration(s.TotalNs)))) +
		fmt.Sprintf("   p50 %s  p90 %s  p95 %s  p99 %s  p99.9 %s  max %s", ns(p.P50), ns(p.P90), ns(p.P95), ns(p.P99), ns(p.P999), ns(p.Max)) + "\n" +
		b.st.dim.Render(fmt.Sprintf("creation to first run (not above): %s goroutines, p99 %s · go tool trace -pprof=sched total: %s",
			fmtCount(s.Creation.Count), ns(s.Creation.PercentilesNs.P99), ns(s.Compat.TotalNs)))
	histH := min(12, max(4, h/3))
	hist := b.histogram(s.Histogram, w/2-2, histH)
	causes := textTable(causeTable(s.ByCause))
	if len(causes) > 0 {
		causes[0] = b.st.label.Render(causes[0])
	}
	top := lipgloss.JoinHorizontal(lipgloss.Top,
		lipgloss.NewStyle().Width(w/2).Render(b.st.label.Render("latency histogram (Runnable → Running)")+"\n"+hist),
		b.st.label.Render("by wake-up cause")+"\n"+strings.Join(fitLines(causes, histH), "\n"))
	rest := h - 3 - lipgloss.Height(top)
	return head + "\n" + top + "\n" + b.st.label.Render("by start function of the goroutine that waited (s: sort, /: search)") + "\n" +
		b.tables[btabSched].render(b.st, w, rest, true)
}

func fitLines(lines []string, h int) []string {
	if len(lines) > h {
		return lines[:h]
	}
	return lines
}

// histogram draws power-of-two buckets as horizontal bars.
func (b Browser) histogram(buckets []analyze.Bucket, w, h int) string {
	if len(buckets) == 0 {
		return b.st.dim.Render("(no scheduling latency recorded)")
	}
	// Merge the smallest buckets when there are more than h.
	for len(buckets) > h {
		merged := append([]analyze.Bucket{{LeNs: buckets[1].LeNs, Count: buckets[0].Count + buckets[1].Count}}, buckets[2:]...)
		buckets = merged
	}
	var maxC int64
	for _, bk := range buckets {
		maxC = max(maxC, bk.Count)
	}
	barW := max(5, w-22)
	var lines []string
	for _, bk := range buckets {
		n := int(math.Round(float64(barW) * float64(bk.Count) / float64(maxC)))
		if bk.Count > 0 && n == 0 {
			n = 1
		}
		lines = append(lines, padLeft("< "+fmtDur(time.Duration(bk.LeNs)), 10)+" "+
			b.st.p99.Render(strings.Repeat("█", n))+" "+fmtCount(bk.Count))
	}
	return strings.Join(lines, "\n")
}

func causeTable(causes []analyze.CauseLatency) Table {
	t := Table{Header: []string{"cause", "count", "total", "p50", "p99", "max"}}
	for _, c := range causes {
		p := c.PercentilesNs
		t.Rows = append(t.Rows, []string{c.Cause, fmtCount(c.Count), ns(c.TotalNs), ns(p.P50), ns(p.P99), ns(p.Max)})
	}
	return t
}

func groupsTable(r *analyze.Report) browseTable {
	var rows []browseRow
	for i, g := range r.Sched.ByGroup {
		p := g.PercentilesNs
		rows = append(rows, browseRow{
			cells: []string{g.StartFunc, fmtCount(g.Goroutines), fmtCount(g.Count), ns(g.TotalNs), ns(p.P50), ns(p.P99), ns(p.Max), ns(g.CreationNs)},
			nums:  []float64{math.NaN(), float64(g.Goroutines), float64(g.Count), float64(g.TotalNs), float64(p.P50), float64(p.P99), float64(p.Max), float64(g.CreationNs)},
			ref:   i,
		})
	}
	return newBrowseTable([]string{"start function", "goroutines", "wake-ups", "total", "p50", "p99", "max", "creation"},
		[]bool{false, true, true, true, true, true, true, true}, rows)
}

func sleepTable(r *analyze.Report) browseTable {
	var rows []browseRow
	for i, s := range r.Sleep.Sites {
		over50, over99 := "-", "-"
		o50, o99 := math.NaN(), math.NaN()
		if s.Overshoot != nil {
			over50, over99 = ns(s.Overshoot.PercentilesNs.P50), ns(s.Overshoot.PercentilesNs.P99)
			o50, o99 = float64(s.Overshoot.PercentilesNs.P50), float64(s.Overshoot.PercentilesNs.P99)
		}
		pw := s.PostWake.PercentilesNs
		rows = append(rows, browseRow{
			cells: []string{site(s.Func, s.File, s.Line), fmtCount(s.Count), ns(s.RequestedNs), ns(s.Blocked.PercentilesNs.P50), ns(pw.P50), ns(pw.P99), ns(pw.Max), over50, over99},
			nums:  []float64{math.NaN(), float64(s.Count), float64(s.RequestedNs), float64(s.Blocked.PercentilesNs.P50), float64(pw.P50), float64(pw.P99), float64(pw.Max), o50, o99},
			ref:   i,
		})
	}
	return newBrowseTable([]string{"call site", "calls", "requested", "blocked p50", "wake→run p50", "p99", "max", "overshoot p50", "p99"},
		[]bool{false, true, true, true, true, true, true, true, true}, rows)
}

func pinnedTable(r *analyze.Report) browseTable {
	var rows []browseRow
	for i, e := range r.Pinned.Events {
		p := "kept"
		if e.PLost {
			p = "lost"
		}
		d := ns(e.DurationNs)
		if e.Truncated {
			d += "+"
		}
		rows = append(rows, browseRow{
			cells: []string{e.Kind, d, fmtDur(time.Duration(e.StartNs)), fmt.Sprint(e.Thread), p, fmt.Sprint(e.GoID), site(e.Func, e.File, e.Line), e.Target},
			nums:  []float64{math.NaN(), float64(e.DurationNs), float64(e.StartNs), float64(e.Thread), math.NaN(), float64(e.GoID), math.NaN(), math.NaN()},
			ref:   i,
		})
	}
	return newBrowseTable([]string{"kind", "duration", "at", "thread", "P", "goid", "call site", "target"},
		[]bool{false, true, true, true, false, true, false, false}, rows)
}

func blockingTable(r *analyze.Report) browseTable {
	var rows []browseRow
	for i, br := range r.Blocking.Reasons {
		top := "-"
		if len(br.Sites) > 0 {
			s := br.Sites[0]
			top = site(s.Func, s.File, s.Line) + " " + ns(s.TotalNs)
		}
		rows = append(rows, browseRow{
			cells: []string{br.Reason, fmtCount(br.Count), ns(br.TotalNs), top},
			nums:  []float64{math.NaN(), float64(br.Count), float64(br.TotalNs), math.NaN()},
			ref:   i,
		})
	}
	return newBrowseTable([]string{"reason", "count", "total", "top call site"}, []bool{false, true, true, false}, rows)
}

func (b Browser) sleepView(w, h int) string {
	s := b.rep.Sleep
	head := b.st.value.Render(fmtCount(s.Count)+" time.Sleep calls") + b.st.dim.Render(
		" · blocked: sleep to timer wake-up · wake→run: wake-up to running again (scheduling) · overshoot: beyond the requested duration")
	return head + "\n\n" + b.tables[btabSleep].render(b.st, w, h-2, true)
}

func (b Browser) pinnedView(w, h int) string {
	p := b.rep.Pinned
	head := b.st.value.Render(fmt.Sprintf("%s spans of at least %s holding an OS thread without running Go code",
		fmtCount(int64(len(p.Events))+p.Dropped), ns(b.rep.PinThreshNs)))
	if len(p.Tracer) > 0 {
		head += b.st.dim.Render(fmt.Sprintf(" (plus %d of the tracer's own writer)", len(p.Tracer)))
	}
	locked := b.st.label.Render(fmt.Sprintf("%d goroutines locked to a thread", len(p.LockedGoroutines))) +
		b.st.dim.Render(" (inferred: runtime.LockOSThread leaves no trace event)")
	for i, g := range p.LockedGoroutines {
		if i == 3 {
			locked += b.st.dim.Render(fmt.Sprintf("\n  … %d more", len(p.LockedGoroutines)-3))
			break
		}
		locked += fmt.Sprintf("\n  goroutine %d %s on thread %d: %s wake-ups, hand-off p50 %s max %s",
			g.GoID, g.StartFunc, g.Thread, fmtCount(g.Wakeups), ns(g.HandoffP50Ns), ns(g.HandoffMaxNs))
	}
	top := head + "\n" + locked + "\n\n" + b.st.label.Render("events, longest first (enter: full stack)")
	return top + "\n" + b.tables[btabPinned].render(b.st, w, h-lipgloss.Height(top), true)
}

// stackView shows the selected pinned event with its full stack.
func (b Browser) stackView(w, h int) string {
	row, ok := b.tables[btabPinned].selected()
	if !ok {
		return ""
	}
	e := b.rep.Pinned.Events[row.ref]
	lines := []string{
		b.st.value.Render(fmt.Sprintf("%s span of %s on thread %d, goroutine %d, at %s", e.Kind, ns(e.DurationNs), e.Thread, e.GoID, fmtDur(time.Duration(e.StartNs)))),
		b.st.label.Render("target ") + e.Target + b.st.label.Render("   P ") + map[bool]string{true: "lost", false: "kept"}[e.PLost],
		"",
		b.st.label.Render("stack (leaf first)"),
	}
	for _, f := range e.Stack {
		lines = append(lines, "  "+b.st.value.Render(f.Func), b.st.dim.Render(fmt.Sprintf("      %s:%d", f.File, f.Line)))
	}
	if len(e.Stack) == 0 {
		lines = append(lines, b.st.dim.Render("  (no stack recorded)"))
	}
	lines = append(lines, "", b.st.help.Render("esc or enter: back to the list"))
	return strings.Join(fitLines(lines, h), "\n")
}

func (b Browser) timelineView(w, h int) string {
	r := b.rep
	head := b.st.value.Render(fmt.Sprintf("goroutines: %s at start, %s created, %s ended, peak %s alive, %s at end",
		fmtCount(r.Goroutines.AtStart), fmtCount(r.Goroutines.Created), fmtCount(r.Goroutines.Ended), fmtCount(r.Goroutines.Peak), fmtCount(r.Goroutines.AtEnd))) +
		"\n" + b.st.value.Render(fmt.Sprintf("threads: %s seen, peak %s busy (%s in syscalls) · GOMAXPROCS %d",
		fmtCount(r.Threads.Seen), fmtCount(r.Threads.Peak), fmtCount(r.Threads.PeakSyscall), r.Procs.GOMAXPROCS))
	var gor, run, thr []point
	for _, p := range r.Timeline.Points {
		x := float64(p.TNs) / 1e9
		gor = appendPoint(gor, point{x, float64(p.Goroutines)})
		run = appendPoint(run, point{x, float64(p.Runnable)})
		thr = appendPoint(thr, point{x, float64(p.Threads)})
	}
	legend := b.st.label.Render(fmt.Sprintf("over the trace (max per %s step)   ", fmtDur(time.Duration(r.Timeline.StepNs)))) +
		b.st.gor.Render("⣿ goroutines") + "  " + b.st.p99.Render("⣿ runnable") + "  " + b.st.thr.Render("⣿ busy threads")
	chart := renderChart(w, h-4, countLabel, nil,
		series{"goroutines", b.st.gor, gor}, series{"runnable", b.st.p99, run}, series{"threads", b.st.thr, thr})
	return head + "\n\n" + legend + "\n" + chart
}

func (b Browser) blockingView(w, h int) string {
	t := b.tables[btabBlocking]
	top := b.st.label.Render("time goroutines spent blocked, by reason (↑/↓ selects; its call sites below)")
	tableH := min(len(t.visible())+2, max(4, h/2))
	out := top + "\n" + t.render(b.st, w, tableH, true)
	if row, ok := t.selected(); ok {
		br := b.rep.Blocking.Reasons[row.ref]
		st := Table{Header: []string{"call site", "count", "total"}}
		for _, s := range br.Sites {
			st.Rows = append(st.Rows, []string{site(s.Func, s.File, s.Line), fmtCount(s.Count), ns(s.TotalNs)})
		}
		lines := textTable(st)
		if len(lines) > 0 {
			lines[0] = b.st.label.Render(lines[0])
		}
		out += "\n\n" + b.st.value.Render("top call sites for "+br.Reason) + "\n" + strings.Join(lines, "\n")
	}
	return out
}

// ns formats nanoseconds; 0 is "-".
func ns(v int64) string { return fmtDur(time.Duration(v)) }

// site formats a call site as "func (file.go:line)".
func site(fn, file string, line int64) string {
	if file == "" {
		return fn
	}
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		file = file[i+1:]
	}
	return fmt.Sprintf("%s (%s:%d)", fn, file, line)
}

// fmtBytes formats a byte count as KB/MB/GB (powers of 1024).
func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}

// RunBrowser analyses path (a trace file or a run directory; "-" is not
// accepted) with opts and shows the browser on t until the user quits. The
// analysis runs in a Cmd with a progress bar; the program (and the analysis)
// stop when ctx is cancelled. It returns the report (nil if the analysis
// produced none) and the analysis error, if any.
func RunBrowser(ctx context.Context, t Terminal, path string, opts analyze.Options) (*analyze.Report, error) {
	if path == "-" {
		return nil, errors.New("the browser needs a trace file or run directory, not standard input")
	}
	progCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	model := NewBrowser(progCtx, BrowserConfig{
		Source: path,
		Analyze: func(ctx context.Context, progress func(read, total int64)) (*analyze.Report, error) {
			o := opts
			o.Progress = progress
			return analyze.TraceFile(ctx, path, o)
		},
	})
	p := tea.NewProgram(model, append(t.options(), tea.WithContext(ctx))...)
	final, err := p.Run()
	cancel()
	// Wait (boundedly) for the analysis Cmd to see the cancel and return.
	wait := time.NewTimer(5 * time.Second)
	defer wait.Stop()
	for open := true; open; {
		select {
		case _, open = <-model.prog:
		case <-wait.C:
			open = false
		}
	}
	b, _ := final.(Browser)
	if err != nil {
		return b.Report(), fmt.Errorf("trace browser: %w", err)
	}
	return b.Report(), b.Err()
}
