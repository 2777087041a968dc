// Package rundirtest writes small run directories for tests: a manifest, a
// results.json and an HDR interval log written by the load generator's own
// writer (load.HLog), with latencies the test chooses, so that what reads
// them back (figures, compare, the gates) is checked against known figures
// without running a load.
package rundirtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

// Phase is one steady phase of a fake run.
type Phase struct {
	// Rate is the offered rate; Duration the phase's length (default 10s).
	Rate     float64
	Duration time.Duration
	// Latencies are the requests' latencies from intended send, one per
	// 2xx response (Errors more requests failed, NotSent were not sent).
	Latencies []time.Duration
	Errors    int64
	NotSent   int64
}

// Run describes a fake run directory.
type Run struct {
	URL    string // default http://127.0.0.1:8080/sleep?ms=50
	Method string // default GET
	// Command is the target's command line (the label comes from its
	// --model).
	Command string
	Phases  []Phase
	// Status is rundir.StatusComplete unless set; an interrupted run's
	// results say so.
	Status string
}

// Write writes r as a run directory at dir (which must be new or empty)
// and returns dir. It fails the test on any error.
func Write(t testing.TB, dir string, r Run) string {
	t.Helper()
	if r.URL == "" {
		r.URL = "http://127.0.0.1:8080/sleep?ms=50"
	}
	if r.Method == "" {
		r.Method = "GET"
	}
	if r.Status == "" {
		r.Status = rundir.StatusComplete
	}
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	res := &load.Result{Target: r.URL, Method: r.Method, Model: "open", Start: start,
		Interrupted: r.Status == rundir.StatusInterrupted}
	hlogFile, err := w.CreateAppender(rundir.HLogFile)
	if err != nil {
		t.Fatal(err)
	}
	hl := load.NewHLog(hlogFile)
	at := 0.0
	for i, p := range r.Phases {
		if p.Duration == 0 {
			p.Duration = 10 * time.Second
		}
		lat := hdrhistogram.New(1, int64(time.Minute), 3)
		for _, d := range p.Latencies {
			if err := lat.RecordValue(int64(d)); err != nil {
				t.Fatal(err)
			}
		}
		lag := hdrhistogram.New(1, int64(time.Minute), 3)
		for range p.Latencies {
			_ = lag.RecordValue(int64(100 * time.Microsecond))
		}
		ok := int64(len(p.Latencies))
		ms := func(q float64) float64 { return float64(lat.ValueAtQuantile(q)) / 1e6 }
		ph := load.PhaseResult{Name: "steady", Kind: load.Steady, OfferedRate: p.Rate,
			StartS: at, EndS: at + p.Duration.Seconds(), DurationS: p.Duration.Seconds(),
			Planned: ok + p.Errors + p.NotSent, Sent: ok + p.Errors, NotSent: p.NotSent,
			Completed: ok + p.Errors, OK: ok, Errors: load.ErrorCounts{Status: p.Errors},
			OKPerS:  float64(ok) / p.Duration.Seconds(),
			Latency: load.Percentiles{P50: ms(50), P90: ms(90), P95: ms(95), P99: ms(99), P999: ms(99.9), Max: float64(lat.Max()) / 1e6, Count: ok},
		}
		if len(r.Phases) > 1 {
			ph.Name = fmt.Sprintf("step %d/%d", i+1, len(r.Phases))
		}
		res.Phases = append(res.Phases, ph)
		lat.SetStartTimeMs(start.UnixMilli() + int64(at*1000))
		lat.SetEndTimeMs(start.UnixMilli() + int64(ph.EndS*1000))
		if err := hl.Write(load.Interval{Phase: i, Kind: load.Steady, Name: ph.Name,
			Start: time.Duration(at * float64(time.Second)), End: time.Duration(ph.EndS * float64(time.Second)),
			Latency: lat, Service: lat, SendLag: lag}); err != nil {
			t.Fatal(err)
		}
		at = ph.EndS
	}
	res.ElapsedS = at
	if err := hl.Close(start); err != nil {
		t.Fatal(err)
	}
	if err := hlogFile.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteJSON(rundir.ResultsFile, res); err != nil {
		t.Fatal(err)
	}
	err = w.UpdateManifest(func(m *rundir.Manifest) {
		m.Schema, m.Tool, m.Status = rundir.ManifestSchema, "schedscope", r.Status
		m.Config.TargetURL, m.Config.Command = r.URL, r.Command
		m.Start, m.LoadStart, m.End = start, start, start.Add(time.Duration(at*float64(time.Second)))
		if r.Status == rundir.StatusInterrupted {
			m.Reason = "interrupted (Ctrl-C or SIGTERM)"
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Spread returns n latencies around center: center x (1 + k/1000) for k
// from -n/2, so that runs made with different n or centers differ.
func Spread(center time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = center + center*time.Duration(i-n/2)/1000
	}
	return out
}

// SmallDisk mounts a tmpfs of size (as mount's size=, e.g. "64k") on a new
// temporary directory and returns it, unmounted at the test's end: a disk
// that fills up, for the full-disk tests. It skips the test where mounting
// is not allowed (not root).
func SmallDisk(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to mount a small tmpfs")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// CutHLog truncates dir's load.hlog just before its first line starting
// with marker (e.g. "#phase 1"), as a copy cut short would be.
func CutHLog(t testing.TB, dir, marker string) {
	t.Helper()
	hlog := filepath.Join(dir, rundir.HLogFile)
	b, err := os.ReadFile(hlog)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), marker)
	if i < 0 {
		t.Fatalf("%s holds no %q", hlog, marker)
	}
	if err := os.WriteFile(hlog, b[:i], 0o644); err != nil {
		t.Fatal(err)
	}
}
