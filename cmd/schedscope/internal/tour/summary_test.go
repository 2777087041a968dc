package tour

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/fixtures"
	"github.com/schedscope/schedscope/internal/tui"
)

// ladder is a fixed result of the default plan's three steps: served
// rates, then p50 and p99 in ms.
func ladder(served [3]float64, p50, p99 [3]float64) *load.Result {
	res := &load.Result{}
	for i, rate := range []float64{500, 1000, 1500} {
		ph := load.PhaseResult{Name: "step", OfferedRate: rate, OKPerS: served[i]}
		ph.Latency.P50, ph.Latency.P99 = p50[i], p99[i]
		res.Phases = append(res.Phases, ph)
	}
	return res
}

// TestCompareGolden prints the demo's closing comparison as plain text (what
// `schedscope demo` prints last on a non-terminal and leaves in the
// scrollback after the dashboard), from fixed results, and compares it with
// testdata/TestCompareGolden/*.golden (-update rewrites them): a tour that
// ran both models, and one stopped after the pool model.
func TestCompareGolden(t *testing.T) {
	cfg := Config{Name: "demo-20261204-182000", Command: "go run ./cmd/schedscope"}.withDefaults()
	pool := ladder([3]float64{500, 997, 1008}, [3]float64{200.7, 207.5, 1150}, [3]float64{203.4, 222.3, 2150})
	gor := ladder([3]float64{500, 1000, 1500}, [3]float64{200.7, 200.4, 200.4}, [3]float64{207.6, 202.5, 203.2})
	for _, c := range []struct {
		name string
		out  Outcome
	}{
		{"both", Outcome{Models: []fixtures.Model{fixtures.ModelPool, fixtures.ModelGoroutine}, Results: []*load.Result{pool, gor},
			RunDirs: []string{"demo-20261204-182000-pool", "demo-20261204-182000-goroutine"}}},
		{"stopped", Outcome{Models: []fixtures.Model{fixtures.ModelPool}, Results: []*load.Result{pool},
			RunDirs: []string{"runs/my demo/demo-20261204-182000-pool"}, Stopped: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			if err := tui.WriteSummary(&b, Compare(cfg, &c.out)); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if strings.Contains(out, "✗") {
				t.Errorf("a tour without an error shows a failure mark:\n%s", out)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			dirs := c.out.RunDirs
			first, last := shellWord(dirs[0]), shellWord(dirs[len(dirs)-1])
			if n := len(lines); n < 2 || !strings.HasPrefix(lines[n-2], "  go run ./cmd/schedscope analyze --tui "+first+" ") ||
				!strings.HasPrefix(lines[n-1], "  go run ./cmd/schedscope report "+last+" ") {
				t.Errorf("the last lines are not the two next commands on the run directories:\n%s", out)
			}
			golden.RequireEqual(t, out)
		})
	}
}

func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"demo-20261204-182000-pool": "demo-20261204-182000-pool",
		"/tmp/x/demo-1-pool":        "/tmp/x/demo-1-pool",
		"my runs/demo-1-pool":       "'my runs/demo-1-pool'",
		"it's/demo-1-pool":          `'it'\''s/demo-1-pool'`,
	} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestExpected: the default plan is 2 x 16 s of load, about 35 s with what
// saving each run adds; the intro's first line says so.
func TestExpected(t *testing.T) {
	if got := (Config{}).Expected(); got.Round(1e9).Seconds() != 35 {
		t.Errorf("Expected() = %v, want about 35 s", got)
	}
}
