package rundir_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/rundir/rundirtest"
)

func metricsLine(t *testing.T, ts float64) []byte {
	t.Helper()
	b, err := json.Marshal(rundir.MetricsLine{T: ts, Load: rundir.LoadPoint{Phase: "steady", OK: int64(ts)}})
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func TestReadMetrics(t *testing.T) {
	good := func(ts ...float64) []byte {
		var b []byte
		for _, x := range ts {
			b = append(b, metricsLine(t, x)...)
		}
		return b
	}
	long := append(bytes.Repeat([]byte("x"), rundir.MaxMetricsLine+10), '\n')
	cut := metricsLine(t, 4)
	cut = cut[:len(cut)/2]
	for _, tc := range []struct {
		name      string
		data      []byte
		wantT     []float64
		wantLines []int
		wantCut   bool
		wantLost  bool
		reason    string
	}{
		{"whole", good(1, 2, 3), []float64{1, 2, 3}, nil, false, false, ""},
		{"corrupt middle line: the lines after it are kept", concat(good(1), []byte("{not json\n"), good(3, 4)),
			[]float64{1, 3, 4}, []int{2}, false, true, "not a metrics line"},
		{"line over 16 MB", concat(good(1), long, good(3)), []float64{1, 3}, []int{2}, false, true, "longer than 16 MB"},
		{"last line over 16 MB without newline", concat(good(1), long[:len(long)-1]), []float64{1}, []int{2}, false, true, "longer than 16 MB"},
		{"cut last line: a killed run", concat(good(1, 2, 3), cut), []float64{1, 2, 3}, []int{4}, true, false, "cut short"},
		{"garbage", []byte("\x00\x01garbage\nmore garbage\n"), nil, []int{1, 2}, false, true, "not a metrics line"},
		{"blank lines are no loss", concat(good(1), []byte("\n\n"), good(2)), []float64{1, 2}, nil, false, false, ""},
		{"empty", nil, nil, nil, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), rundir.MetricsFile)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			lines, problems, err := rundir.ReadMetrics(path)
			if err != nil {
				t.Fatal(err)
			}
			var gotT []float64
			for _, l := range lines {
				gotT = append(gotT, l.T)
			}
			if !slices.Equal(gotT, tc.wantT) {
				t.Errorf("lines at t = %v, want %v", gotT, tc.wantT)
			}
			var gotLines []int
			for _, p := range problems {
				gotLines = append(gotLines, p.Line)
				if !strings.Contains(p.Reason, tc.reason) || p.Cut != tc.wantCut {
					t.Errorf("problem %+v: want reason with %q, cut %v", p, tc.reason, tc.wantCut)
				}
				if s := p.String(); strings.Contains(s, "\n") || !strings.Contains(s, rundir.MetricsFile+" line ") {
					t.Errorf("problem line %q", s)
				}
			}
			if !slices.Equal(gotLines, tc.wantLines) {
				t.Errorf("problems at lines %v, want %v", gotLines, tc.wantLines)
			}
			if problems.Lost() != tc.wantLost {
				t.Errorf("Lost() = %v, want %v", problems.Lost(), tc.wantLost)
			}
		})
	}
}

// Many bad lines are described in max lines plus one that counts the rest.
func TestMetricsProblemsLines(t *testing.T) {
	var ps rundir.MetricsProblems
	for i := 1; i <= 25; i++ {
		ps = append(ps, rundir.MetricsProblem{Line: i, Reason: "not a metrics line"})
	}
	got := ps.Lines(10)
	if len(got) != 11 || got[10] != "metrics.jsonl: 15 more lines skipped (lines 11 to 25)" {
		t.Errorf("Lines(10) = %d lines, last %q", len(got), got[len(got)-1])
	}
}

func concat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// Every file a reader reads whole has a bound, checked before anything is
// read: a sparse file of gigabytes is refused at once, in one line naming
// the file, its size and the bound, without allocating its size.
func TestReadersBoundFiles(t *testing.T) {
	const huge = 2 << 30 // sparse: no disk, and no memory if never read
	sparse := func(t *testing.T, path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(huge); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	run := func(t *testing.T) string {
		return rundirtest.Write(t, filepath.Join(t.TempDir(), "run"), rundirtest.Run{
			Phases: []rundirtest.Phase{{Rate: 100, Latencies: rundirtest.Spread(time.Millisecond, 10)}}})
	}
	for _, tc := range []struct {
		file, bound string
		read        func(dir string) error
	}{
		{rundir.ResultsFile, "256 MiB", func(dir string) error { _, err := rundir.ReadRun(dir); return err }},
		{rundir.AnalysisFile, "256 MiB", func(dir string) error { _, err := rundir.ReadRun(dir); return err }},
		{rundir.ManifestFile, "16 MiB", func(dir string) error { _, err := rundir.ReadRun(dir); return err }},
		{rundir.ManifestFile, "16 MiB", func(dir string) error { _, err := rundir.ReadShardPart(dir); return err }},
		{rundir.SweepFile, "16 MiB", func(dir string) error { _, err := rundir.ReadSweep(dir); return err }},
		{filepath.Join(rundir.StepsDir, "step.json"), "16 MiB", func(dir string) error {
			if err := rundir.WriteSweepPlan(dir, rundir.SweepPlan{Version: rundir.SweepVersion}); err != nil {
				t.Fatal(err)
			}
			_, err := rundir.ReadSweep(dir)
			return err
		}},
		{rundir.RepeatFile, "16 MiB", func(dir string) error { _, err := rundir.ReadRepeat(dir); return err }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := run(t)
			path := filepath.Join(dir, tc.file)
			sparse(t, path)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := tc.read(dir)
			runtime.ReadMemStats(&after)
			want := path + ": 2 GiB is over the " + tc.bound + " bound for this file"
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v, want one line saying %q", err, want)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("refusing it allocated %d MiB", grew>>20)
			}
		})
	}
}
