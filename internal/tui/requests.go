package tui

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/schedscope/schedscope/analyze"
)

// The browser's requests tab draws analyze's request anatomy
// (Report.Requests): per latency band, where the requests' time went as one
// stacked bar, the band's slowest requests, and a request's timeline; per
// goroutine class when the trace had no request tasks.

// shareKey is what one part of a stacked bar stands for: a state, and for
// StatePool the pool's name. The zero State is time the timeline did not
// keep.
type shareKey struct {
	state analyze.State
	pool  string
}

// label names the key as the legend and the tables show it: "pool db".
func (k shareKey) label() string {
	switch {
	case k.state == "":
		return "not kept"
	case k.state == analyze.StatePool && k.pool != "":
		return "pool " + k.pool
	}
	return string(k.state)
}

// stateLook is how a state is drawn: a glyph, so that a bar reads without
// colour (and in the golden files), and a colour.
func stateLook(s analyze.State) (glyph string, colour string) {
	switch s {
	case analyze.StateRunning:
		return "█", "#5FD75F"
	case analyze.StateRunnable:
		return "▓", "#FF5F87"
	case analyze.StatePool:
		return "▒", "#D75FD7"
	case analyze.StateSleep:
		return "░", "#5FAFFF"
	case analyze.StateFanout:
		return "▟", "#5F87FF"
	case analyze.StateNetwork:
		return "▚", "#5FD7D7"
	case analyze.StateHTTP:
		return "▙", "#AF87FF"
	case analyze.StateChan:
		return "▄", "#FFD75F"
	case analyze.StateSync:
		return "▀", "#FF8700"
	case analyze.StateSyscall:
		return "▌", "#D7AF87"
	case analyze.StateCgo:
		return "▐", "#AF875F"
	case analyze.StateGCAssist:
		return "▜", "#FFAF00"
	case analyze.StateGCWait:
		return "▛", "#D7875F"
	case analyze.StateBlocked:
		return "▞", "#BCBCBC"
	case analyze.StateLag:
		return "▘", "#D7D7AF"
	case analyze.StateSocket:
		return "▃", "#87AFAF"
	case analyze.StateBefore:
		return "▖", "#808080"
	case analyze.StateAfter:
		return "▗", "#A8A8A8"
	case analyze.StateIdle:
		return "▝", "#585858"
	}
	return "·", "#6C6C6C" // not kept, or a state this browser does not know
}

func (k shareKey) style() (string, lipgloss.Style) {
	g, c := stateLook(k.state)
	return g, lipgloss.NewStyle().Foreground(lipgloss.Color(c))
}

// barPart is one stretch of a stacked bar.
type barPart struct {
	key shareKey
	ns  int64
}

func partsOf(shares []analyze.Share) []barPart {
	out := make([]barPart, 0, len(shares))
	for _, s := range shares {
		out = append(out, barPart{shareKey{s.State, s.Pool}, s.Ns})
	}
	return out
}

// cellWidths splits w cells among the parts in proportion to ns (largest
// remainders), giving every part with time at least one cell when there are
// no more such parts than cells. The widths add up to w when any part has
// time.
func cellWidths(ns []int64, w int) []int {
	out := make([]int, len(ns))
	var total float64
	nonzero := 0
	for _, v := range ns {
		if v > 0 {
			total += float64(v)
			nonzero++
		}
	}
	if total == 0 || w <= 0 {
		return out
	}
	atLeastOne := nonzero <= w
	rem := make([]float64, len(ns))
	used := 0
	for i, v := range ns {
		if v <= 0 {
			rem[i] = math.Inf(-1)
			continue
		}
		exact := float64(w) * float64(v) / total
		out[i] = int(exact)
		rem[i] = exact - float64(out[i])
		if atLeastOne && out[i] == 0 {
			out[i], rem[i] = 1, math.Inf(-1)
		}
		used += out[i]
	}
	for used < w {
		best := 0
		for i := range rem {
			if rem[i] > rem[best] {
				best = i
			}
		}
		if math.IsInf(rem[best], -1) { // every remainder taken: give the rest to the largest part
			best = slices.Index(out, slices.Max(out))
		}
		out[best]++
		rem[best] = math.Inf(-1)
		used++
	}
	for used > w { // the one-cell minimums overshot: take from the widest
		widest := slices.Index(out, slices.Max(out))
		out[widest]--
		used--
	}
	return out
}

// barCells returns the key drawn in each of w cells: proportional widths
// when every part can have a cell, else each cell shows the key with the
// most time in its stretch (a long timeline in a narrow terminal).
func barCells(parts []barPart, w int) []shareKey {
	cells := make([]shareKey, 0, max(w, 0))
	ns := make([]int64, len(parts))
	var total int64
	nonzero := 0
	for i, p := range parts {
		ns[i] = p.ns
		if p.ns > 0 {
			total += p.ns
			nonzero++
		}
	}
	if total == 0 || w <= 0 {
		return cells
	}
	if nonzero <= w {
		for i, n := range cellWidths(ns, w) {
			for range n {
				cells = append(cells, parts[i].key)
			}
		}
		return cells
	}
	// Majority per cell, walking the parts once.
	i, at := 0, 0.0 // the part under the walk, and the time consumed of it
	for c := range w {
		span := float64(total) * float64(c+1) / float64(w)
		span -= float64(total) * float64(c) / float64(w)
		var keys []shareKey
		var times []float64
		for span > 1e-9 && i < len(parts) {
			left := float64(max(parts[i].ns, 0)) - at
			take := min(left, span)
			if take > 0 {
				if k := slices.Index(keys, parts[i].key); k >= 0 {
					times[k] += take
				} else {
					keys, times = append(keys, parts[i].key), append(times, take)
				}
			}
			span -= take
			at += take
			if at >= float64(max(parts[i].ns, 0))-1e-9 {
				i, at = i+1, 0
			}
		}
		if len(keys) == 0 { // rounding at the end of the walk
			k := parts[len(parts)-1].key
			if len(cells) > 0 {
				k = cells[len(cells)-1]
			}
			cells = append(cells, k)
			continue
		}
		cells = append(cells, keys[slices.Index(times, slices.Max(times))])
	}
	return cells
}

// stackedBar draws parts as one bar of w cells.
func stackedBar(parts []barPart, w int) string {
	cells := barCells(parts, w)
	var b strings.Builder
	for i := 0; i < len(cells); {
		j := i
		for j < len(cells) && cells[j] == cells[i] {
			j++
		}
		g, st := cells[i].style()
		b.WriteString(st.Render(strings.Repeat(g, j-i)))
		i = j
	}
	return b.String()
}

// legendItem is one entry of a bar's legend.
type legendItem struct {
	key shareKey
	pct float64
}

func legendOf(shares []analyze.Share) []legendItem {
	out := make([]legendItem, 0, len(shares))
	for _, s := range shares {
		out = append(out, legendItem{shareKey{s.State, s.Pool}, s.Pct})
	}
	return out
}

// fmtPct formats a share: one decimal, "<0.1%" for a sliver.
func fmtPct(p float64) string {
	if p > 0 && p < 0.05 {
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", p)
}

// legend lists the items ("▒ pool db 94.4%") wrapped to w cells, each line
// indented by two.
func legend(items []legendItem, w int) string {
	var lines []string
	line := ""
	for _, it := range items {
		g, st := it.key.style()
		entry := st.Render(g) + " " + it.key.label() + " " + fmtPct(it.pct)
		switch {
		case line == "":
			line = entry
		case ansi.StringWidth(line)+2+ansi.StringWidth(entry) <= w-2:
			line += "  " + entry
		default:
			lines = append(lines, "  "+line)
			line = entry
		}
	}
	if line != "" {
		lines = append(lines, "  "+line)
	}
	return strings.Join(lines, "\n")
}

// splitView is a bar with its legend, indented by two.
func splitView(parts []barPart, items []legendItem, w int) string {
	return "  " + stackedBar(parts, max(1, w-4)) + "\n" + legend(items, w)
}

// shareCell is a share as a table cell: "pool db 94.4%".
func shareCell(shares []analyze.Share, i int) (string, float64) {
	if i >= len(shares) {
		return "-", math.Inf(-1)
	}
	s := shares[i]
	return shareKey{s.State, s.Pool}.label() + " " + fmtPct(s.Pct), s.Pct
}

// byRequest reports whether the report splits time per request (the
// requests tab shows bands), rather than per goroutine class only.
func (b Browser) byRequest() bool {
	rr := b.rep.Requests
	return rr != nil && rr.PerRequest && len(rr.Bands) > 0
}

// bandRequests returns the requests the requests tab lists for band: the
// band's slowest, or the overall slowest (overall true) when it kept none.
func bandRequests(rr *analyze.RequestsReport, band int) (list []analyze.Request, overall bool) {
	if band >= 0 && band < len(rr.Bands) && len(rr.Bands[band].Slowest) > 0 {
		return rr.Bands[band].Slowest, false
	}
	return rr.Slowest, true
}

// requestName is how the tab names a request: the generator's sequence
// number when joined, else the trace's task id.
func requestName(rq analyze.Request) string {
	if rq.Seq > 0 {
		return fmt.Sprintf("seq %d", rq.Seq)
	}
	return fmt.Sprintf("task %d", rq.Task)
}

func requestsTable(list []analyze.Request) browseTable {
	var rows []browseRow
	for i, rq := range list {
		first, p1 := shareCell(rq.Split, 0)
		second, p2 := shareCell(rq.Split, 1)
		id := float64(rq.Task)
		if rq.Seq > 0 {
			id = float64(rq.Seq)
		}
		rows = append(rows, browseRow{
			cells: []string{requestName(rq), ns(rq.TotalNs), ns(rq.HandlerNs), first, second},
			nums:  []float64{id, float64(rq.TotalNs), float64(rq.HandlerNs), p1, p2},
			ref:   i,
		})
	}
	return newBrowseTable([]string{"request", "latency", "handler", "top state", "next state"},
		[]bool{false, true, true, false, false}, rows)
}

func classTable(classes []analyze.ClassSplit) browseTable {
	var rows []browseRow
	for i, c := range classes {
		first, p1 := shareCell(c.Split, 0)
		second, p2 := shareCell(c.Split, 1)
		rows = append(rows, browseRow{
			cells: []string{c.Class, fmtCount(c.Goroutines), ns(c.TotalNs), first, second, ns(c.IdleNs)},
			nums:  []float64{math.NaN(), float64(c.Goroutines), float64(c.TotalNs), p1, p2, float64(c.IdleNs)},
			ref:   i,
		})
	}
	return newBrowseTable([]string{"goroutine class", "goroutines", "time", "top state", "next state", "idle"},
		[]bool{false, true, true, false, false, true}, rows)
}

// requestsTabTable is the requests tab's table: the selected band's
// slowest requests, or the goroutine classes.
func (b Browser) requestsTabTable() browseTable {
	rr := b.rep.Requests
	switch {
	case rr == nil:
		return browseTable{}
	case b.byRequest():
		list, _ := bandRequests(rr, b.band)
		return requestsTable(list)
	}
	return classTable(rr.Classes)
}

// withBand selects band d steps from the current one (wrapping).
func (b Browser) withBand(d int) Browser {
	if !b.byRequest() {
		return b
	}
	n := len(b.rep.Requests.Bands)
	b.band = ((b.band+d)%n + n) % n
	b.tables[btabRequests] = b.requestsTabTable()
	b.search.SetValue("")
	return b
}

// openRequest shows rq's timeline: its own, or the one kept for the same
// task among the overall slowest.
func (b Browser) openRequest(rq analyze.Request) Browser {
	if len(rq.Timeline) == 0 {
		for _, s := range b.rep.Requests.Slowest {
			if s.Task == rq.Task && len(s.Timeline) > 0 {
				rq = s
				break
			}
		}
	}
	b.req, b.reqOpen = rq, true
	b.segments = segmentsTable(rq)
	return b
}

func segmentsTable(rq analyze.Request) browseTable {
	var rows []browseRow
	for i, s := range rq.Timeline {
		var pct float64
		if rq.TotalNs > 0 {
			pct = 100 * float64(s.DurNs) / float64(rq.TotalNs)
		}
		rows = append(rows, browseRow{
			cells: []string{fmtAt(s.AtNs), ns(s.DurNs), fmtPct(pct), shareKey{s.State, s.Pool}.label()},
			nums:  []float64{float64(s.AtNs), float64(s.DurNs), pct, math.NaN()},
			ref:   i,
		})
	}
	return newBrowseTable([]string{"at", "duration", "of latency", "state"}, []bool{true, true, true, false}, rows)
}

// goroutines counts goroutines in words: "1 goroutine", "64 goroutines".
func goroutines(n int64) string {
	if n == 1 {
		return "1 goroutine"
	}
	return fmtCount(n) + " goroutines"
}

// fmtAt formats a time since a start: unlike a duration, 0 is "0".
func fmtAt(v int64) string {
	if v == 0 {
		return "0"
	}
	return ns(v)
}

// timelineParts lays rq's timeline over its whole latency: the time before
// its handler, the handler's segments (with what the timeline did not keep),
// the time after it.
func timelineParts(rq analyze.Request) []barPart {
	var lag, socket, before, after int64
	for _, s := range rq.Split {
		switch s.State {
		case analyze.StateLag:
			lag += s.Ns
		case analyze.StateSocket:
			socket += s.Ns
		case analyze.StateBefore:
			before += s.Ns
		case analyze.StateAfter:
			after += s.Ns
		}
	}
	var parts []barPart
	for _, p := range []barPart{{shareKey{state: analyze.StateLag}, lag}, {shareKey{state: analyze.StateSocket}, socket}, {shareKey{state: analyze.StateBefore}, before}} {
		if p.ns > 0 {
			parts = append(parts, p)
		}
	}
	var at int64
	for _, s := range rq.Timeline {
		if s.AtNs > at {
			parts = append(parts, barPart{shareKey{}, s.AtNs - at})
		}
		parts = append(parts, barPart{shareKey{s.State, s.Pool}, s.DurNs})
		at = max(at, s.AtNs+s.DurNs)
	}
	if rq.HandlerNs > at {
		parts = append(parts, barPart{shareKey{}, rq.HandlerNs - at})
	}
	if after > 0 {
		parts = append(parts, barPart{shareKey{state: analyze.StateAfter}, after})
	}
	return parts
}

// legendOfParts sums parts by key, largest first, as shares of their total.
func legendOfParts(parts []barPart) []legendItem {
	var keys []shareKey
	var sums []int64
	var total int64
	for _, p := range parts {
		total += p.ns
		if i := slices.Index(keys, p.key); i >= 0 {
			sums[i] += p.ns
		} else {
			keys, sums = append(keys, p.key), append(sums, p.ns)
		}
	}
	out := make([]legendItem, 0, len(keys))
	for i, k := range keys {
		if sums[i] > 0 && total > 0 {
			out = append(out, legendItem{k, 100 * float64(sums[i]) / float64(total)})
		}
	}
	slices.SortStableFunc(out, func(x, y legendItem) int { return cmp.Compare(y.pct, x.pct) })
	return out
}

// requestsView is the requests tab: by band when the trace has request
// tasks, else by goroutine class.
func (b Browser) requestsView(w, h int) string {
	rr := b.rep.Requests
	switch {
	case rr == nil:
		return b.st.dim.Render("this report has no request anatomy (it was written before schedscope split requests' time)")
	case !b.byRequest():
		return b.classesView(w, h)
	}
	bd := rr.Bands[b.band]
	stats := b.st.value.Render(fmtCount(rr.Requests) + " requests")
	if rr.Joined > 0 {
		stats += b.st.dim.Render(fmt.Sprintf(" · %s joined with the generator's ids (%s with its latencies)",
			fmtCount(rr.Joined), fmtCount(rr.ClientJoined)))
	} else {
		stats += b.st.dim.Render(" · latency is the handler's time (no generator ids to join)")
	}
	if rr.Open > 0 {
		stats += b.st.dim.Render(fmt.Sprintf(" · %s still open at the end", fmtCount(rr.Open)))
	}
	chips := []string{b.st.label.Render("bands [ ]")}
	for i, band := range rr.Bands {
		chip := band.Name + " " + fmtCount(band.Requests)
		if i == b.band {
			chips = append(chips, b.st.tabOn.Render("["+chip+"]"))
		} else {
			chips = append(chips, b.st.tabOff.Render(" "+chip+" "))
		}
	}
	head := b.st.value.Render(fmt.Sprintf("%s: %s requests, latency %s to %s", bd.Name, fmtCount(bd.Requests), ns(bd.FromNs), ns(bd.ToNs))) +
		b.st.dim.Render(" · where their time went")
	split := splitView(partsOf(bd.Split), legendOf(bd.Split), w)
	var children string
	if len(bd.Children) > 0 {
		children = b.st.label.Render("the goroutines working for them (fan-out, workers), their own time") + "\n" +
			splitView(partsOf(bd.Children), legendOf(bd.Children), w)
	}
	_, overall := bandRequests(rr, b.band)
	title := fmt.Sprintf("slowest requests in %s (enter: timeline)", bd.Name)
	if overall {
		title = fmt.Sprintf("slowest requests overall (%s lists none; enter: timeline)", bd.Name)
	}
	sections := []string{stats, strings.Join(chips, " "), head + "\n" + split}
	if children != "" {
		sections = append(sections, children)
	}
	// In a short window the table keeps at least three lines: the
	// children's split, then the totals line, go first.
	height := func() int {
		n := 1 // the table's title
		for _, s := range sections {
			n += lipgloss.Height(s)
		}
		return n
	}
	if h-height() < 3 && children != "" {
		sections = sections[:len(sections)-1]
	}
	if h-height() < 3 {
		sections = sections[1:]
	}
	top := strings.Join(sections, "\n") + "\n" + b.st.label.Render(title)
	return top + "\n" + b.tables[btabRequests].render(b.st, w, max(2, h-lipgloss.Height(top)), true)
}

// classesView is the requests tab without request tasks: the Note, the
// goroutine classes, and the selected class's split.
func (b Browser) classesView(w, h int) string {
	rr := b.rep.Requests
	note := rr.Note
	if rr.PerRequest && len(rr.Bands) == 0 {
		note = fmt.Sprintf("no request finished its handler within the trace (%s still in one at its end): the split is per goroutine class", fmtCount(rr.Open))
	}
	var out []string
	if note != "" {
		for _, l := range fitLines(strings.Split(ansi.Wordwrap(note, max(10, w-1), ""), "\n"), max(1, h/4)) {
			out = append(out, b.st.dim.Render(l)) // line by line: lipgloss pads a block to its widest line
		}
	}
	t := b.tables[btabRequests]
	out = append(out, b.st.label.Render("goroutine classes, busiest first (↑/↓ selects; its split below)"))
	used := lipgloss.Height(strings.Join(out, "\n"))
	tableH := min(len(t.visible())+1, max(3, (h-used)/2))
	out = append(out, t.render(b.st, w, tableH, true))
	if row, ok := t.selected(); ok {
		c := rr.Classes[row.ref]
		head := b.st.value.Render(c.Class) + b.st.dim.Render(fmt.Sprintf(" · %s, %s of goroutine time", goroutines(c.Goroutines), ns(c.TotalNs)))
		if c.IdleNs > 0 {
			head += b.st.dim.Render(fmt.Sprintf(" (plus %s idle between requests)", ns(c.IdleNs)))
		}
		if c.Serving {
			head += b.st.dim.Render(" · serves requests")
		}
		out = append(out, "", head, splitView(partsOf(c.Split), legendOf(c.Split), w))
		if len(c.Created) > 0 {
			out = append(out, b.st.label.Render(fmt.Sprintf("the %s they created, their own time", goroutines(c.CreatedGoroutines))),
				splitView(partsOf(c.Created), legendOf(c.Created), w))
		}
	}
	return strings.Join(out, "\n")
}

// requestView is one request: its latency as a bar of its timeline's
// states, the legend, and the segments.
func (b Browser) requestView(w, h int) string {
	rq := b.req
	gap := "\n" // a blank line between sections when there is room
	if h >= 20 {
		gap = "\n\n"
	}
	name := requestName(rq)
	if rq.Seq > 0 {
		name += fmt.Sprintf(" · task %d", rq.Task)
	}
	head := b.st.value.Render(fmt.Sprintf("request %s · goroutine %d", name, rq.Goroutine))
	if rq.ChildGoroutines > 0 {
		head += b.st.dim.Render(fmt.Sprintf(" · %s worked for it", goroutines(rq.ChildGoroutines)))
	}
	head += "\n" + fmt.Sprintf("latency %s · handler %s, from %s into the trace", ns(rq.TotalNs), ns(rq.HandlerNs), fmtAt(rq.StartNs))
	if rq.ClientJoined {
		head += b.st.dim.Render(" · latency as the generator saw it")
	}
	if len(rq.Timeline) == 0 {
		n := 0
		if b.rep.Requests != nil {
			n = len(b.rep.Requests.Slowest)
		}
		return head + gap + b.st.label.Render("where its time went") + "\n" +
			splitView(partsOf(rq.Split), legendOf(rq.Split), w) + gap +
			b.st.warn.Render(fmt.Sprintf("no timeline kept for this request (only the %d slowest have one)", n))
	}
	parts := timelineParts(rq)
	title := fmt.Sprintf("its %s in order: the handler's states, and the time before and after it", ns(rq.TotalNs))
	top := head + gap + b.st.label.Render(title) + "\n" + splitView(parts, legendOfParts(parts), w)
	list := fmt.Sprintf("the handler's %d segments (at: since it began)", len(rq.Timeline))
	if rq.TimelineCut {
		list += b.st.warn.Render(" · cut: its later segments were not kept")
	}
	top += gap + b.st.label.Render(list)
	return top + "\n" + b.segments.render(b.st, w, max(2, h-lipgloss.Height(top)), true)
}
