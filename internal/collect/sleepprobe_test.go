package collect

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/fixtures"
	"github.com/schedscope/schedscope/internal/rundir"
)

// TestSleepProbe: --sleep-probe runs the agent's probe in the last steady
// phase, after the trace window, writes its answer to sleepprobe.json,
// records the file in the manifest and puts its headline in the summary.
func TestSleepProbe(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3 s loopback run")
	}
	srv := startFixture(t, fixtures.DefaultConfig(), true)
	out := runOnce(t, context.Background(), Config{
		Load:        load.Config{URL: srv.URL() + "/sleep?ms=5", Rate: 50, Duration: 3 * time.Second},
		TraceWindow: 500 * time.Millisecond,
		SleepProbe:  SleepProbe{Goroutines: 4, Sleep: time.Millisecond},
	})
	b, err := os.ReadFile(filepath.Join(out.Dir, rundir.SleepProbeFile))
	if err != nil {
		t.Fatalf("%v; missing: %+v", err, out.Manifest.Missing)
	}
	var res agent.ProbeResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	// The probe starts after the 0.5 s window at the phase's middle: about
	// 1.05 s to the end profiles, of which it takes its second.
	if res.Goroutines != 4 || res.Sleep != time.Millisecond || res.Samples < 100 || res.Duration < 500*time.Millisecond {
		t.Errorf("probe result %+v", res)
	}
	var entry *rundir.FileEntry
	for i, f := range out.Manifest.Files {
		if f.Name == rundir.SleepProbeFile {
			entry = &out.Manifest.Files[i]
		}
	}
	if entry == nil || entry.Bytes != int64(len(b)) || !strings.HasPrefix(entry.What, "sleep probe: 4 goroutines x time.Sleep(1ms)") {
		t.Errorf("manifest entry %+v", entry)
	}
	if !strings.Contains(out.Summary, "== sleep probe (sleepprobe.json)\nsleep probe: 4 goroutines x time.Sleep(1ms)") {
		t.Errorf("summary lacks the probe's headline:\n%s", out.Summary)
	}
}

func TestSleepProbeConfig(t *testing.T) {
	for _, sp := range []SleepProbe{{Goroutines: -1, Sleep: time.Millisecond}, {Goroutines: 1, Sleep: time.Nanosecond}, {Goroutines: 1}} {
		if _, err := NewRunner(Config{Load: load.Config{URL: "http://127.0.0.1:1/", Rate: 1, Duration: time.Second}, SleepProbe: sp}); err == nil {
			t.Errorf("%+v accepted", sp)
		}
	}
}
