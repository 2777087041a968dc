package tui

import (
	"bytes"
	"context"
	"fmt"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/schedscope/schedscope/analyze"
)

const ms = 1_000_000 // nanoseconds

// sampleRequests is a fixed request anatomy: four bands (p90-p99 lists no
// requests of its own, so the tab falls back to the overall slowest), fan-out
// children in the tail, and the overall slowest with timelines (one of them
// also the p50-p90 band's slowest, under the same task id; one cut; one
// longer than a small terminal is wide).
func sampleRequests() *analyze.RequestsReport {
	sh := func(st analyze.State, pool string, n int64, pct float64) analyze.Share {
		return analyze.Share{State: st, Pool: pool, Ns: n, Pct: pct}
	}
	seg := func(at, dur int64, st analyze.State, pool string) analyze.Segment {
		return analyze.Segment{AtNs: at, DurNs: dur, State: st, Pool: pool}
	}
	tailSplit := []analyze.Share{
		sh(analyze.StatePool, "db", 140*ms, 70), sh(analyze.StateFanout, "", 24*ms, 12), sh(analyze.StateRunnable, "", 16*ms, 8),
		sh(analyze.StateRunning, "", 12*ms, 6), sh(analyze.StateBefore, "", 6*ms, 3), sh(analyze.StateAfter, "", 2*ms, 1),
	}
	slow1 := analyze.Request{Seq: 9001, Task: 7, Goroutine: 41, StartNs: 1200 * ms, HandlerNs: 192 * ms, TotalNs: 200 * ms, ClientJoined: true,
		ChildGoroutines: 3, Split: tailSplit,
		Children: []analyze.Share{sh(analyze.StateSleep, "", 20*ms, 90), sh(analyze.StateRunnable, "", 1300000, 6), sh(analyze.StateRunning, "", 900000, 4)},
		Timeline: []analyze.Segment{
			seg(0, 2*ms, analyze.StateRunning, ""), seg(2*ms, 140*ms, analyze.StatePool, "db"), seg(142*ms, 16*ms, analyze.StateRunnable, ""),
			seg(158*ms, 6*ms, analyze.StateRunning, ""), seg(164*ms, 24*ms, analyze.StateFanout, ""), seg(188*ms, 4*ms, analyze.StateRunning, ""),
		}}
	slow2 := analyze.Request{Seq: 8123, Task: 12, Goroutine: 55, StartNs: 900 * ms, HandlerNs: 150 * ms, TotalNs: 150 * ms,
		Split:    []analyze.Share{sh(analyze.StatePool, "db", 120*ms, 80), sh(analyze.StateRunning, "", 30*ms, 20)},
		Timeline: []analyze.Segment{seg(0, 30*ms, analyze.StateRunning, ""), seg(30*ms, 60*ms, analyze.StatePool, "db")}, TimelineCut: true}
	// A chatty handler: 120 short segments alternating running, chan, runnable.
	chatty := analyze.Request{Seq: 8777, Task: 31, Goroutine: 60, StartNs: 300 * ms, HandlerNs: 120 * ms, TotalNs: 120 * ms,
		Split: []analyze.Share{sh(analyze.StateChan, "", 48*ms, 40), sh(analyze.StateRunning, "", 40*ms, 33.3), sh(analyze.StateRunnable, "", 32*ms, 26.7)}}
	for i := range int64(40) {
		chatty.Timeline = append(chatty.Timeline, seg(3*i*ms, ms, analyze.StateRunning, ""),
			seg((3*i+1)*ms, 1200000, analyze.StateChan, ""), seg((3*i+2)*ms+200000, 800000, analyze.StateRunnable, ""))
	}
	return &analyze.RequestsReport{
		PerRequest: true, Requests: 1000, Open: 4, Joined: 1000, ClientJoined: 998,
		Bands: []analyze.Band{
			{Name: "<=p50", FromNs: 2100000, ToNs: 10400000, Requests: 500, TotalNs: 3000 * ms,
				Split: []analyze.Share{sh(analyze.StateRunning, "", 1650*ms, 55), sh(analyze.StatePool, "db", 600*ms, 20),
					sh(analyze.StateRunnable, "", 450*ms, 15), sh(analyze.StateNetwork, "", 299*ms, 9.97), sh(analyze.StateGCAssist, "", ms, 0.03)},
				Slowest: []analyze.Request{
					{Seq: 17, Task: 401, Goroutine: 90, StartNs: 4100 * ms, HandlerNs: 10300000, TotalNs: 10400000, Split: []analyze.Share{sh(analyze.StateRunning, "", 6*ms, 58), sh(analyze.StatePool, "db", 4*ms, 42)}},
					{Seq: 18, Task: 402, Goroutine: 91, StartNs: 4200 * ms, HandlerNs: 10200000, TotalNs: 10300000, Split: []analyze.Share{sh(analyze.StateRunning, "", 10*ms, 100)}},
				}},
			{Name: "p50-p90", FromNs: 10400000, ToNs: 24 * ms, Requests: 400, TotalNs: 6000 * ms,
				Split: []analyze.Share{sh(analyze.StatePool, "db", 2700*ms, 45), sh(analyze.StateRunning, "", 2100*ms, 35), sh(analyze.StateRunnable, "", 1200*ms, 20)},
				// Task 31 is among the overall slowest too: its timeline is there.
				Slowest: []analyze.Request{{Seq: 8777, Task: 31, HandlerNs: 120 * ms, TotalNs: 120 * ms, Split: chatty.Split},
					{Seq: 3, Task: 77, Goroutine: 92, StartNs: 0, HandlerNs: 23 * ms, TotalNs: 23 * ms, Split: []analyze.Share{sh(analyze.StatePool, "db", 13*ms, 56.5), sh(analyze.StateRunning, "", 10*ms, 43.5)}}}},
			{Name: "p90-p99", FromNs: 24 * ms, ToNs: 80 * ms, Requests: 90, TotalNs: 3600 * ms,
				Split:    []analyze.Share{sh(analyze.StatePool, "db", 2520*ms, 70), sh(analyze.StateFanout, "", 720*ms, 20), sh(analyze.StateRunning, "", 360*ms, 10)},
				Children: []analyze.Share{sh(analyze.StateSleep, "", 700*ms, 95), sh(analyze.StateRunnable, "", 37*ms, 5)}},
			{Name: ">=p99", FromNs: 80 * ms, ToNs: 200 * ms, Requests: 10, TotalNs: 1200 * ms, Split: tailSplit,
				Children: []analyze.Share{sh(analyze.StateSleep, "", 200*ms, 90), sh(analyze.StateRunnable, "", 13*ms, 6), sh(analyze.StateRunning, "", 9*ms, 4)},
				Slowest:  []analyze.Request{slow1, slow2}},
		},
		Slowest: []analyze.Request{slow1, slow2, chatty},
	}
}

// sampleClasses is the anatomy of a trace without request tasks.
func sampleClasses() *analyze.RequestsReport {
	return &analyze.RequestsReport{
		Note: "no request tasks (" + analyze.RequestTaskType + ") in the trace: the split is per goroutine class, not per request; mount agent.Middleware in the target for a per-request split",
		Classes: []analyze.ClassSplit{
			{Class: "net/http.(*conn).serve", Goroutines: 64, Serving: true, TotalNs: 9000 * ms, IdleNs: 31000 * ms,
				Split: []analyze.Share{{State: analyze.StatePool, Pool: "db", Ns: 5400 * ms, Pct: 60}, {State: analyze.StateRunning, Ns: 2700 * ms, Pct: 30},
					{State: analyze.StateNetwork, Ns: 900 * ms, Pct: 10}},
				CreatedGoroutines: 128, Created: []analyze.Share{{State: analyze.StateSleep, Ns: 800 * ms, Pct: 80}, {State: analyze.StateRunning, Ns: 200 * ms, Pct: 20}}},
			{Class: "main.worker", Goroutines: 8, TotalNs: 4000 * ms,
				Split: []analyze.Share{{State: analyze.StateCgo, Ns: 3000 * ms, Pct: 75}, {State: analyze.StateRunnable, Ns: 1000 * ms, Pct: 25}}},
			{Class: "net/http.(*persistConn).readLoop", Goroutines: 4, TotalNs: 800 * ms,
				Split: []analyze.Share{{State: analyze.StateNetwork, Ns: 780 * ms, Pct: 97.5}, {State: analyze.StateRunning, Ns: 20 * ms, Pct: 2.5}}},
		},
	}
}

// requestsBrowser is a browser on the mixed report with rr as its anatomy.
func requestsBrowser(t *testing.T, rr *analyze.RequestsReport, w, h int) Browser {
	rep := *loadReport(t, "mixed")
	rep.Requests = rr
	return sized(NewBrowserReport(t.Context(), "mixed.trace", &rep), w, h)
}

// TestBrowserRequestsGolden renders the requests tab (the first) and
// compares the text with testdata/TestBrowserRequestsGolden/*.golden.
func TestBrowserRequestsGolden(t *testing.T) {
	screens := []struct {
		name string
		rr   *analyze.RequestsReport
		w, h int
		msgs []tea.Msg
	}{
		{"tail", sampleRequests(), 120, 40, nil},
		{"band-overall", sampleRequests(), 120, 40, []tea.Msg{press("[")}},
		{"band-first", sampleRequests(), 120, 40, []tea.Msg{press("]")}},
		{"timeline", sampleRequests(), 120, 40, []tea.Msg{press("enter")}},
		{"timeline-shared", sampleRequests(), 120, 40, []tea.Msg{press("["), press("["), press("enter")}},
		{"no-timeline", sampleRequests(), 120, 40, []tea.Msg{press("]"), press("down"), press("enter")}},
		{"classes", sampleClasses(), 120, 40, nil},
		{"classes-second", sampleClasses(), 120, 40, []tea.Msg{press("down")}},
		{"none", nil, 120, 40, nil},
		{"small", sampleRequests(), 60, 15, nil},
		{"small-timeline", sampleRequests(), 60, 15, []tea.Msg{press("enter")}},
		{"small-chatty", sampleRequests(), 60, 15, []tea.Msg{press("["), press("["), press("enter")}},
		{"small-classes", sampleClasses(), 60, 15, nil},
	}
	for _, s := range screens {
		t.Run(s.name, func(t *testing.T) {
			b, _ := bstep(t, requestsBrowser(t, s.rr, s.w, s.h), s.msgs...)
			screen := ansi.Strip(b.View().Content)
			checkFits(t, screen, s.w, s.h)
			golden.RequireEqual(t, screen)
		})
	}
}

// TestBrowserRequestsFits renders every requests screen at sizes down to
// the smallest the browser draws: nothing panics, nothing overflows.
func TestBrowserRequestsFits(t *testing.T) {
	paths := [][]tea.Msg{
		nil, {press("[")}, {press("]")}, {press("enter")}, {press("["), press("["), press("enter")},
		{press("]"), press("down"), press("enter")}, {press("enter"), press("?")}, {press("down")},
	}
	for _, rr := range []*analyze.RequestsReport{sampleRequests(), sampleClasses(), nil, {PerRequest: true, Open: 3}} {
		for _, size := range [][2]int{{120, 40}, {80, 24}, {60, 15}, {50, 12}, {40, 10}} {
			for _, msgs := range paths {
				b, _ := bstep(t, requestsBrowser(t, rr, size[0], size[1]), msgs...)
				screen := ansi.Strip(b.View().Content)
				checkFits(t, screen, size[0], size[1])
			}
		}
	}
}

func TestBrowserRequestsKeys(t *testing.T) {
	base := requestsBrowser(t, sampleRequests(), 120, 40)
	rr := base.rep.Requests

	t.Run("tab order", func(t *testing.T) {
		if browserTabNames[0] != "requests" || base.tab != btabRequests {
			t.Fatalf("first tab %q, browser opens on %d: the requests tab comes first", browserTabNames[0], base.tab)
		}
		b, _ := bstep(t, base, press("tab"))
		if b.tab != btabSched {
			t.Errorf("tab from requests -> %d, want sched latency", b.tab)
		}
		b, _ = bstep(t, b, press("shift+tab"), press("shift+tab"))
		if b.tab != btabBlocking {
			t.Errorf("shift+tab twice from sched -> %d, want the last tab", b.tab)
		}
		b, _ = bstep(t, b, press("1"))
		if b.tab != btabRequests {
			t.Errorf("1 -> %d", b.tab)
		}
	})
	t.Run("bands", func(t *testing.T) {
		if base.band != 3 {
			t.Fatalf("opens on band %d, want the slowest (>=p99)", base.band)
		}
		for _, c := range []struct {
			keys []tea.Msg
			band int
		}{
			{[]tea.Msg{press("[")}, 2},
			{[]tea.Msg{press("["), press("["), press("[")}, 0},
			{[]tea.Msg{press("]")}, 0},
			{[]tea.Msg{press("]"), press("]")}, 1},
			{[]tea.Msg{press("2"), press("["), press("1")}, 3}, // [ on another tab does nothing
		} {
			b, _ := bstep(t, base, c.keys...)
			if b.band != c.band {
				t.Errorf("%v: band %d, want %d", c.keys, b.band, c.band)
			}
			want, _ := bandRequests(rr, c.band)
			if n := len(b.tables[btabRequests].rows); n != len(want) {
				t.Errorf("%v: %d rows, want the band's %d", c.keys, n, len(want))
			}
		}
		b, _ := bstep(t, base, press("["))
		if list, overall := bandRequests(rr, b.band); !overall || len(list) != len(rr.Slowest) {
			t.Error("p90-p99 lists no requests: the table must be the overall slowest")
		}
	})
	t.Run("enter opens a timeline, esc closes it", func(t *testing.T) {
		b, _ := bstep(t, base, press("down"), press("enter"))
		if !b.reqOpen || b.req.Task != 12 || len(b.segments.rows) != 2 {
			t.Fatalf("enter on the second row: open %v task %d with %d segments, want task 12 with 2", b.reqOpen, b.req.Task, len(b.segments.rows))
		}
		b, _ = bstep(t, b, press("down"), press("tab"), press("["))
		if b.tab != btabRequests || b.band != 3 || !b.reqOpen || b.segments.cursor != 1 {
			t.Errorf("inside a timeline: tab %d band %d open %v cursor %d; tab and [ must not act, down scrolls", b.tab, b.band, b.reqOpen, b.segments.cursor)
		}
		b, _ = bstep(t, b, press("esc"))
		if b.reqOpen {
			t.Fatal("esc must close the timeline")
		}
		if row, _ := b.tables[btabRequests].selected(); row.ref != 1 {
			t.Errorf("back on row %d, want the one opened", row.ref)
		}
	})
	t.Run("the overall slowest lend a band's request its timeline", func(t *testing.T) {
		b, _ := bstep(t, base, press("]"), press("]"), press("enter"))
		if b.req.Task != 31 || len(b.req.Timeline) != 120 {
			t.Errorf("task %d with %d segments, want task 31 with its 120", b.req.Task, len(b.req.Timeline))
		}
		b, _ = bstep(t, base, press("]"), press("enter"))
		if !b.reqOpen || len(b.req.Timeline) != 0 {
			t.Fatalf("a request without a timeline: open %v, %d segments", b.reqOpen, len(b.req.Timeline))
		}
		if s := ansi.Strip(b.Render()); !strings.Contains(s, "no timeline kept for this request (only the 3 slowest have one)") {
			t.Errorf("no-timeline screen:\n%s", s)
		}
	})
	t.Run("classes: down selects, enter opens nothing", func(t *testing.T) {
		b := requestsBrowser(t, sampleClasses(), 120, 40)
		b, _ = bstep(t, b, press("down"), press("enter"), press("]"))
		if b.reqOpen || b.band != 0 {
			t.Errorf("per-class tab: open %v band %d", b.reqOpen, b.band)
		}
		s := ansi.Strip(b.Render())
		if !strings.Contains(s, "main.worker · 8 goroutines") || !strings.Contains(s, "▐ cgo 75.0%") {
			t.Errorf("the second class's split is not shown:\n%s", s)
		}
	})
	t.Run("help line", func(t *testing.T) {
		s := ansi.Strip(base.Render())
		if !strings.Contains(s, "[ ] band") || !strings.Contains(s, "enter timeline") {
			t.Errorf("footer lacks the band and enter keys:\n%s", lastLine(s))
		}
		b, _ := bstep(t, base, press("2"))
		if s := ansi.Strip(b.Render()); strings.Contains(lastLine(s), "band") || strings.Contains(lastLine(s), "enter") {
			t.Errorf("sched tab footer offers keys that do nothing there: %s", lastLine(s))
		}
	})
}

func lastLine(s string) string { return s[strings.LastIndexByte(s, '\n')+1:] }

func TestCellWidths(t *testing.T) {
	for _, c := range []struct {
		ns   []int64
		w    int
		want []int
	}{
		{[]int64{50, 30, 20}, 10, []int{5, 3, 2}},
		{[]int64{994, 3, 3}, 10, []int{8, 1, 1}}, // slivers get a cell
		{[]int64{1, 1, 1}, 2, []int{1, 1, 0}},    // more parts than cells
		{[]int64{0, 7, 0}, 4, []int{0, 4, 0}},
		{[]int64{0, 0}, 4, []int{0, 0}},
		{[]int64{2, 1}, 0, []int{0, 0}},
	} {
		got := cellWidths(c.ns, c.w)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("cellWidths(%v, %d) = %v, want %v", c.ns, c.w, got, c.want)
		}
	}
}

// TestBarCells: a bar is exactly w cells, every part shows when it can,
// and a timeline longer than the bar keeps each cell's main state.
func TestBarCells(t *testing.T) {
	rq := sampleRequests().Slowest[2]
	parts := timelineParts(rq)
	for _, w := range []int{1, 7, 56, 360, 400} {
		cells := barCells(parts, w)
		if len(cells) != w {
			t.Errorf("width %d: %d cells", w, len(cells))
		}
		if w >= len(parts) {
			for _, p := range parts {
				if !containsKey(cells, p.key) {
					t.Errorf("width %d: %s has no cell", w, p.key.label())
				}
			}
		}
	}
	// 360 cells over 120 segments of 1, 1.2 and 0.8 ms: 3, 4 and 2 cells each.
	cells := barCells(parts, 360)
	if got := string(stateRunes(cells[:9])); got != "███▄▄▄▄▓▓" {
		t.Errorf("first period %q", got)
	}
	// Stretches before and after the handler are on the bar.
	parts = timelineParts(sampleRequests().Slowest[0])
	if parts[0].key.state != analyze.StateBefore || parts[len(parts)-1].key.state != analyze.StateAfter {
		t.Errorf("timeline parts %+v: want before first and after last", parts)
	}
	// A cut timeline: what it did not keep is on the bar, as such.
	parts = timelineParts(sampleRequests().Slowest[1])
	if last := parts[len(parts)-1]; last.key.state != "" || last.ns != 60*ms {
		t.Errorf("cut timeline ends with %+v, want 60 ms not kept", last)
	}
}

func containsKey(cells []shareKey, k shareKey) bool {
	for _, c := range cells {
		if c == k {
			return true
		}
	}
	return false
}

func stateRunes(cells []shareKey) []rune {
	var out []rune
	for _, c := range cells {
		g, _ := stateLook(c.state)
		out = append(out, []rune(g)...)
	}
	return out
}

// TestBrowserRequestsOnLiveTrace traces requests annotated the way the
// agent's middleware does (a task, its log, the handler region), analyses
// the trace and browses it: bands, and a timeline behind enter.
func TestBrowserRequestsOnLiveTrace(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("tracer busy: %v", err)
	}
	for i := range 12 {
		ctx, task := trace.NewTask(context.Background(), analyze.RequestTaskType)
		trace.Log(ctx, analyze.RequestLogCategory, fmt.Sprint(time.Now().UnixNano()))
		trace.WithRegion(ctx, analyze.HandlerRegionType, func() { time.Sleep(time.Duration(1+i%3) * time.Millisecond) })
		task.End()
	}
	trace.Stop()
	rep, err := analyze.Trace(t.Context(), &buf, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := sized(NewBrowserReport(t.Context(), "live", rep), 100, 30)
	if !b.byRequest() || b.band != len(rep.Requests.Bands)-1 {
		t.Fatalf("requests %+v: want bands, the slowest selected", rep.Requests)
	}
	b, _ = bstep(t, b, press("enter"))
	if !b.reqOpen || len(b.req.Timeline) == 0 {
		t.Fatalf("enter on the slowest band's first request: open %v, %d segments", b.reqOpen, len(b.req.Timeline))
	}
	screen := ansi.Strip(b.Render())
	checkFits(t, screen, 100, 30)
	if !strings.Contains(screen, "░ sleep") || !strings.Contains(screen, "segments (at: since it began)") {
		t.Errorf("timeline of a sleeping handler:\n%s", screen)
	}
}
