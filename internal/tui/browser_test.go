package tui

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/schedscope/schedscope/analyze"
)

// loadReport reads a report saved with `schedscope analyze --json` (the
// schema is stable, so these goldens do not move when the analyzer's code
// does).
func loadReport(t *testing.T, name string) *analyze.Report {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name + ".report.json")
	if err != nil {
		t.Fatal(err)
	}
	var r analyze.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &r
}

func bstep(t *testing.T, b Browser, msgs ...tea.Msg) (Browser, tea.Cmd) {
	t.Helper()
	var cmd tea.Cmd
	for _, msg := range msgs {
		var m tea.Model
		m, cmd = b.Update(msg)
		b = m.(Browser)
	}
	return b, cmd
}

func typed(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

// TestBrowserAnalysisRunsInCmd: Update never runs the analysis; progress and
// the result arrive as messages from the Cmds Init returns.
func TestBrowserAnalysisRunsInCmd(t *testing.T) {
	release := make(chan struct{})
	progressed := make(chan struct{})
	calls := 0
	rep := loadReport(t, "locked")
	b := NewBrowser(t.Context(), BrowserConfig{Source: "x.trace", Analyze: func(ctx context.Context, progress func(read, total int64)) (*analyze.Report, error) {
		calls++
		progress(300<<10, 1<<20)
		close(progressed)
		<-release
		return rep, nil
	}})
	b = sized(b, 120, 40)
	batch, ok := b.Init()().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("Init: want a batch of the analysis and the progress reader")
	}
	if calls != 0 {
		t.Fatal("the analysis ran before its Cmd did")
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- batch[0]() }()
	<-progressed
	b, next := bstep(t, b, batch[1]())
	screen := ansi.Strip(b.Render())
	if !strings.Contains(screen, " 29%  300.0 KB of 1.0 MB") {
		t.Errorf("progress screen:\n%s", screen)
	}
	close(release)
	b, _ = bstep(t, b, <-done)
	if msg := next(); msg != (progressClosedMsg{}) {
		t.Errorf("progress reader after the analysis returned %T, want progressClosedMsg", msg)
	}
	if b.Report() != rep || len(b.tables[btabPinned].rows) != len(rep.Pinned.Events) {
		t.Fatalf("report not taken in: %d pinned rows", len(b.tables[btabPinned].rows))
	}
}

func TestBrowserAnalysisError(t *testing.T) {
	b := NewBrowser(t.Context(), BrowserConfig{Source: "bad.trace"})
	b, _ = bstep(t, b, analyzeDoneMsg{nil, errors.New("trace bad.trace: not a Go execution trace")})
	if s := ansi.Strip(b.Render()); !strings.Contains(s, "analysis failed: trace bad.trace: not a Go execution trace") {
		t.Errorf("error screen:\n%s", s)
	}
	if _, cmd := bstep(t, b, press("q")); !isQuit(cmd) {
		t.Error("q must leave the error screen")
	}
}

func TestBrowserKeys(t *testing.T) {
	rep := loadReport(t, "mixed")
	base, _ := bstep(t, sized(NewBrowserReport(t.Context(), "mixed.trace", rep), 120, 40), press("2"))

	t.Run("sort groups by goroutines", func(t *testing.T) {
		b, _ := bstep(t, base, press("s"), press("s"))
		row, _ := b.tables[btabSched].selected()
		var most int64
		for _, g := range rep.Sched.ByGroup {
			most = max(most, g.Goroutines)
		}
		if got := rep.Sched.ByGroup[row.ref].Goroutines; got != most {
			t.Errorf("first row has %d goroutines, want the most (%d)", got, most)
		}
		b, _ = bstep(t, b, press("S"))
		row, _ = b.tables[btabSched].selected()
		if got := rep.Sched.ByGroup[row.ref].Goroutines; got == most {
			t.Error("S did not reverse the order")
		}
	})
	t.Run("search filters and esc clears", func(t *testing.T) {
		msgs := append([]tea.Msg{press("/")}, typed("hogs")...)
		b, _ := bstep(t, base, append(msgs, press("enter"))...)
		if n := len(b.tables[btabSched].visible()); n != 1 {
			t.Fatalf("search hogs: %d rows, want 1", n)
		}
		if s := ansi.Strip(b.Render()); !strings.Contains(s, "search: hogs") {
			t.Error("footer does not show the search")
		}
		b, _ = bstep(t, b, press("esc"))
		if n := len(b.tables[btabSched].visible()); n != len(rep.Sched.ByGroup) {
			t.Errorf("after esc: %d rows, want all %d", n, len(rep.Sched.ByGroup))
		}
	})
	t.Run("q quits but typed q searches", func(t *testing.T) {
		b, cmd := bstep(t, base, press("/"), press("q"))
		if isQuit(cmd) || b.tables[btabSched].filter != "q" {
			t.Error("q inside the search box must be text")
		}
		if _, cmd := bstep(t, base, press("q")); !isQuit(cmd) {
			t.Error("q must quit")
		}
	})
	t.Run("sort and search on the goroutines & threads tab", func(t *testing.T) {
		// Its chart has no table: s once divided by its zero columns.
		b, _ := bstep(t, base, press("5"), press("s"), press("s"), press("S"), press("/"), press("x"))
		if b.tab != btabTimeline || b.searching {
			t.Errorf("tab %d, searching %v: want the timeline tab, no search box", b.tab, b.searching)
		}
		s := ansi.Strip(b.Render())
		if !strings.Contains(s, "[5 goroutines & threads]") || strings.Contains(s, "sort by next column") || strings.Contains(s, "search") {
			t.Errorf("timeline tab after s, S and /: want its chart, without sort or search keys offered:\n%s", s)
		}
		if b, _ = bstep(t, b, press("tab")); b.tab != btabBlocking {
			t.Errorf("tab after the timeline -> %d, want the blocking tab", b.tab)
		}
	})
	t.Run("tabs by number and tab", func(t *testing.T) {
		b, _ := bstep(t, base, press("4"))
		if b.tab != btabPinned {
			t.Errorf("4 -> tab %d", b.tab)
		}
		b, _ = bstep(t, b, press("tab"), press("tab"), press("tab"))
		if b.tab != btabRequests {
			t.Errorf("tab wraps to %d, want the first (requests)", b.tab)
		}
	})
}

func TestBrowserPinnedStack(t *testing.T) {
	rep := loadReport(t, "locked")
	b := sized(NewBrowserReport(t.Context(), "locked.trace", rep), 120, 40)
	b, _ = bstep(t, b, press("4"), press("down"), press("enter"))
	if !b.detail {
		t.Fatal("enter on a pinned event must open its stack")
	}
	e := rep.Pinned.Events[1]
	s := ansi.Strip(b.Render())
	for _, f := range e.Stack {
		if !strings.Contains(s, f.Func) {
			t.Errorf("stack view lacks frame %s:\n%s", f.Func, s)
		}
	}
	b, _ = bstep(t, b, press("esc"))
	if b.detail {
		t.Error("esc must go back to the list")
	}
}

// TestBrowserGolden renders each tab at 120x40 and compares the text with
// testdata/TestBrowserGolden/*.golden (-update rewrites them).
func TestBrowserGolden(t *testing.T) {
	mixed := sized(NewBrowserReport(t.Context(), "mixed.trace", loadReport(t, "mixed")), 120, 40)
	locked := sized(NewBrowserReport(t.Context(), "locked.trace", loadReport(t, "locked")), 120, 40)
	screens := []struct {
		name string
		b    Browser
		msgs []tea.Msg
	}{
		{"sched", mixed, []tea.Msg{press("2")}},
		{"sleep", mixed, []tea.Msg{press("3")}},
		{"pinned", locked, []tea.Msg{press("4")}},
		{"pinned-stack", locked, []tea.Msg{press("4"), press("enter")}},
		{"timeline", mixed, []tea.Msg{press("5")}},
		{"blocking", mixed, []tea.Msg{press("6"), press("down")}},
		{"help", mixed, []tea.Msg{press("?")}},
	}
	for _, s := range screens {
		t.Run(s.name, func(t *testing.T) {
			b, _ := bstep(t, s.b, s.msgs...)
			screen := ansi.Strip(b.View().Content)
			checkFits(t, screen, 120, 40)
			golden.RequireEqual(t, screen)
		})
	}
}

// TestBrowserOnRealTrace analyses a trace from the analyzer's test data
// through RunBrowser's analysis path and checks the structure (not figures).
func TestBrowserOnRealTrace(t *testing.T) {
	const path = "../../analyze/testdata/go1.26/locked.trace"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("analyzer test trace not present: %v", err)
	}
	b := NewBrowser(t.Context(), BrowserConfig{Source: path, Analyze: func(ctx context.Context, progress func(read, total int64)) (*analyze.Report, error) {
		return analyze.TraceFile(ctx, path, analyze.Options{Progress: progress})
	}})
	batch := b.Init()().(tea.BatchMsg)
	b, _ = bstep(t, b, batch[0]())
	for batch[1]() != (progressClosedMsg{}) {
	}
	if b.Err() != nil || b.Report() == nil {
		t.Fatalf("analysis: %v", b.Err())
	}
	if n := len(b.tables[btabPinned].rows); n == 0 || n != len(b.Report().Pinned.Events) {
		t.Errorf("pinned rows %d, events %d: the locked trace must list its pinned spans", n, len(b.Report().Pinned.Events))
	}
	// No request tasks in it: the requests tab lists the goroutine classes.
	rr := b.Report().Requests
	if rr == nil || rr.PerRequest || len(rr.Classes) == 0 {
		t.Fatalf("requests report %+v: want a per-class split", rr)
	}
	if n := len(b.tables[btabRequests].rows); n != len(rr.Classes) {
		t.Errorf("requests tab: %d rows, want the %d classes", n, len(rr.Classes))
	}
	if s := ansi.Strip(sized(b, 100, 30).Render()); !strings.Contains(s, "[1 requests]") || !strings.Contains(s, rr.Classes[0].Class+" · ") {
		t.Errorf("requests tab does not show the busiest class's split:\n%s", s)
	}
}

// TestBrowserSchedP95: the sched tab's head line has p95 between p90 and
// p99 (the saved reports behind the goldens predate p95 and show "-").
func TestBrowserSchedP95(t *testing.T) {
	rep := loadReport(t, "mixed")
	rep.Sched.PercentilesNs.P95 = 9_870_000
	b := sized(NewBrowserReport(t.Context(), "mixed.trace", rep), 120, 40)
	b, _ = bstep(t, b, press("2"))
	if s := ansi.Strip(b.Render()); !strings.Contains(s, "p90 141 µs  p95 9.87 ms  p99 40.4 ms") {
		t.Errorf("sched tab lacks p95:\n%s", s)
	}
}
