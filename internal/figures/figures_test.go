package figures_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/figures"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/rundir/rundirtest"
)

// A run's phase figures come from its HDR log exactly: the percentiles of
// the latencies recorded, under the condition language's names, with the
// errors and not-sent counts and their shares.
func TestReadRun(t *testing.T) {
	lat := make([]time.Duration, 1000)
	for i := range lat {
		lat[i] = time.Duration(i+1) * time.Millisecond // 1..1000 ms
	}
	dir := rundirtest.Write(t, filepath.Join(t.TempDir(), "run"), rundirtest.Run{
		Command: "schedscope fixture --model pool --workers 20",
		Phases: []rundirtest.Phase{
			{Rate: 100, Latencies: lat, Errors: 10, NotSent: 90},
			{Rate: 200, Latencies: rundirtest.Spread(5*time.Millisecond, 100)},
		},
	})
	s, err := figures.ReadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Label != "pool" || s.Kind != figures.KindRun || len(s.Warnings) != 0 {
		t.Errorf("label %q kind %v warnings %q", s.Label, s.Kind, s.Warnings)
	}
	g := s.Group(figures.PhaseKey(0))
	if g == nil || !g.Gate || !strings.Contains(g.Title, "100 req/s") {
		t.Fatalf("phase 1 group: %+v", g)
	}
	ms := float64(time.Millisecond)
	for _, tc := range []struct {
		key   string
		want  float64
		share float64
	}{
		{"p50", 500 * ms, -1}, {"p90", 900 * ms, -1}, {"p99", 990 * ms, -1}, {"max", 1000 * ms, -1},
		{"ok_per_s", 100, -1}, {"errors", 10, 1000.0 / 1010}, {"not_sent", 90, 100 * 90.0 / 1100},
	} {
		f := g.Find(tc.key)
		if f == nil {
			t.Errorf("%s: missing", tc.key)
			continue
		}
		// HDR keeps 3 significant digits: within 0.1 %.
		if d := f.Value - tc.want; d > tc.want/1000+1 || d < -tc.want/1000-1 {
			t.Errorf("%s = %g, want %g", tc.key, f.Value, tc.want)
		}
		if tc.share >= 0 && (!f.HasShare || f.Share < tc.share-0.01 || f.Share > tc.share+0.01) {
			t.Errorf("%s share = %g (%v), want %g", tc.key, f.Share, f.HasShare, tc.share)
		}
	}
	if g2 := s.Group(figures.PhaseKey(1)); g2 == nil || g2.Find("p50").Value < 4.9*ms || g2.Find("p50").Value > 5.1*ms {
		t.Errorf("phase 2: %+v", g2)
	}
	if h := s.Latency[figures.PhaseKey(0)]; h == nil || h.TotalCount() != 1000 {
		t.Errorf("phase 1 histogram: %v", h)
	}
	if s.Identity.Request != "/sleep?ms=50" || s.Identity.Host != "127.0.0.1:8080" || len(s.Identity.Phases) != 2 {
		t.Errorf("identity %+v", s.Identity)
	}
}

// Conditions hold per phase, each breach naming its phase and figure; a
// condition no phase can read is reported as unread, not passed in silence.
func TestCheck(t *testing.T) {
	dir := rundirtest.Write(t, filepath.Join(t.TempDir(), "run"), rundirtest.Run{Phases: []rundirtest.Phase{
		{Rate: 100, Latencies: rundirtest.Spread(100*time.Millisecond, 100), Errors: 5},
		{Rate: 200, Latencies: rundirtest.Spread(300*time.Millisecond, 100)},
	}})
	s, err := figures.ReadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	conds, err := cond.ParseList("p99>250ms, errors>1%, errors>10, pool.saturated>50%", cond.Run)
	if err != nil {
		t.Fatal(err)
	}
	got := figures.Check(s, conds)
	if len(got) != 2 {
		t.Fatalf("breaches %+v, want p99 in phase 2 and errors' share in phase 1", got)
	}
	if !strings.HasPrefix(got[0].Line, "p99 = 3") || !strings.Contains(got[0].Line, "phase 2: step 2/2, 200 req/s") {
		t.Errorf("p99 breach: %q", got[0].Line)
	}
	if !strings.HasPrefix(got[1].Line, "errors = 4.76% of completed > 1% (phase 1") {
		t.Errorf("errors breach: %q", got[1].Line)
	}
	if unread := figures.Unread(s, conds); len(unread) != 1 || unread[0] != "pool.saturated>50%" {
		t.Errorf("unread %q, want the pool figure this run has not", unread)
	}
}

// A run cut short is read up to what it holds, with a warning; a killed
// run's last HDR line, cut mid-write, is dropped; a directory that is none
// of schedscope's is refused in one line saying what it holds.
func TestReadDamaged(t *testing.T) {
	tmp := t.TempDir()
	dir := rundirtest.Write(t, filepath.Join(tmp, "cut"), rundirtest.Run{Status: rundir.StatusInterrupted,
		Phases: []rundirtest.Phase{{Rate: 100, Latencies: rundirtest.Spread(time.Millisecond, 50)}}})
	hlog := filepath.Join(dir, rundir.HLogFile)
	b, err := os.ReadFile(hlog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hlog, append(b, "1.000,1.000,2.0,HISTFAAAA"...), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := figures.ReadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 2 || !strings.Contains(s.Warnings[0], "interrupted") || !strings.Contains(s.Warnings[1], "phase 1: steady, 100 req/s was cut after 10.0 s") || !s.Identity.Partial {
		t.Errorf("warnings %q partial %v", s.Warnings, s.Identity.Partial)
	}
	if f := s.Group(figures.PhaseKey(0)).Find("p50"); f == nil || f.Value < 0.99e6 || f.Value > 1.01e6 {
		t.Errorf("p50 %+v", f)
	}
	other := filepath.Join(tmp, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{other, "neither a run directory (manifest.json), a sweep directory (sweep.json) nor a repeat directory (repeat.json); it holds notes.txt"},
		{filepath.Join(tmp, "absent"), "no such file or directory"},
		{tmp + "/cut/results.json", "not a Go execution trace"},
	} {
		_, err := figures.Read(context.Background(), tc.path, analyze.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Read(%s) = %v, want one line with %q", tc.path, err, tc.want)
		}
	}
}

// A run directory whose load.hlog is a named pipe is read at once, with a
// warning, its latency percentiles taken from results.json: the HDR log is
// read through the run directory's checked reader, not opened bare (which
// would wait for a writer forever).
func TestReadRunHLogFIFO(t *testing.T) {
	dir := rundirtest.Write(t, filepath.Join(t.TempDir(), "run"), rundirtest.Run{
		Phases: []rundirtest.Phase{{Rate: 100, Latencies: rundirtest.Spread(time.Millisecond, 50)}}})
	hlog := filepath.Join(dir, rundir.HLogFile)
	if err := os.Remove(hlog); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(hlog, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	type result struct {
		s   *figures.Set
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := figures.ReadRun(context.Background(), dir)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		if len(r.s.Warnings) != 1 || !strings.Contains(r.s.Warnings[0], "named pipe") {
			t.Errorf("warnings %q, want one naming the named pipe", r.s.Warnings)
		}
		if f := r.s.Group(figures.PhaseKey(0)).Find("p50"); f == nil || f.Value < 0.99e6 || f.Value > 1.01e6 {
			t.Errorf("p50 %+v, want results.json's 1 ms", f)
		}
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(hlog, os.O_WRONLY, 0); err == nil {
			f.Close() // let the blocked reader go
		}
		t.Fatal("ReadRun blocked on a load.hlog that is a named pipe")
	}
}

// A load.hlog cut short in a run marked complete disagrees with
// results.json: the Set says which phase and both counts, as data.
func TestReadRunHLogMismatch(t *testing.T) {
	dir := rundirtest.Write(t, filepath.Join(t.TempDir(), "run"), rundirtest.Run{Phases: []rundirtest.Phase{
		{Rate: 100, Latencies: rundirtest.Spread(10*time.Millisecond, 10)},
		{Rate: 200, Latencies: rundirtest.Spread(20*time.Millisecond, 20)},
	}})
	s, err := figures.ReadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.HLogMismatches) != 0 {
		t.Fatalf("whole log: mismatches %+v, want none", s.HLogMismatches)
	}
	// Cut the log before the second phase, as a truncated copy would.
	rundirtest.CutHLog(t, dir, "#phase 1")
	s, err = figures.ReadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []rundir.HLogMismatch{{Phase: 1, Name: "step 2/2", HLog: 0, Results: 20}}
	if !slices.Equal(s.HLogMismatches, want) {
		t.Errorf("mismatches %+v, want %+v", s.HLogMismatches, want)
	}
	if len(s.Warnings) != 1 {
		t.Errorf("warnings %q, want the mismatch's", s.Warnings)
	}
}
