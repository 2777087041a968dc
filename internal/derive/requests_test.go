package derive

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

// TestDirLeavesOutForeignIDs: a run directory's derivation joins only the
// request ids of its own run: its tag, intended within the run (the
// manifest's load start to its end), as requests.tsv recorded them. Any
// client can send a well-formed id, and three with an old intended time
// made the p99 band "16m40s or more", 100 % send lag.
func TestDirLeavesOutForeignIDs(t *testing.T) {
	start := time.Now().Add(-time.Second)
	end := start.Add(time.Minute)
	old := start.Add(-1000 * time.Second)
	var tr bytes.Buffer
	if err := trace.Start(&tr); err != nil {
		t.Skipf("tracer busy: %v", err)
	}
	for _, id := range []struct {
		id       string
		intended time.Time
	}{
		{"run1-1", start},
		{"run1-2", old},                         // recorded, with another intended time, and before the run
		{"run1-3", old},                         // not recorded, before the run
		{"run1-4", start.Add(time.Millisecond)}, // recorded with another intended time
		{"other-1", start},
	} {
		ctx, task := trace.NewTask(context.Background(), analyze.RequestTaskType)
		trace.Log(ctx, analyze.RequestLogCategory, fmt.Sprintf("%d %s %d", time.Now().UnixNano(), id.id, id.intended.UnixNano()))
		trace.WithRegion(ctx, analyze.HandlerRegionType, func() {})
		task.End()
	}
	trace.Stop()

	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(rundir.ManifestFile, fmt.Appendf(nil, `{"status": "complete", "request_tag": "run1", "load_start": %q, "end": %q, "config": {"target_url": "http://127.0.0.1:9/"}}`,
		start.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano)))
	write(rundir.TraceFile, tr.Bytes())
	var reqs bytes.Buffer
	rec := func(seq uint64, intended time.Time) load.RequestRecord {
		return load.RequestRecord{Seq: seq, IntendedUnixNs: intended.UnixNano(), SentUnixNs: intended.UnixNano(), LatencyNs: 1e6, Status: 200, Outcome: load.OutcomeOK}
	}
	if err := rundir.WriteRequests(&reqs, "run1", []load.RequestRecord{rec(1, start), rec(2, start), rec(4, start)}); err != nil {
		t.Fatal(err)
	}
	write(rundir.RequestsFile, reqs.Bytes())

	d, err := Dir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Analysis.Trace == nil || d.Analysis.Trace.Requests == nil {
		t.Fatalf("no request anatomy: %+v", d.Analysis.TraceError)
	}
	r := d.Analysis.Trace.Requests
	want := analyze.IDsLeftOut{ForeignTag: 1, OutsideWindow: 2, NotTheRecord: 1}
	if r.Requests != 5 || r.Joined != 1 || r.ClientJoined != 1 || r.IDsLeftOut != want {
		t.Errorf("requests %d joined %d client %d, left out %+v; want 5 1 1, %+v", r.Requests, r.Joined, r.ClientJoined, r.IDsLeftOut, want)
	}
	for _, b := range r.Bands {
		if b.ToNs >= int64(100*time.Second) {
			t.Errorf("band %s reaches %v: a left-out id's intended time was taken", b.Name, time.Duration(b.ToNs))
		}
	}
	if line := "4 ids left out of the join, counted with their handler's time: 1 without this run's tag, 2 intended outside the run, 1 not as the generator recorded them"; !strings.Contains(d.Summary, line) {
		t.Errorf("summary lacks %q:\n%s", line, d.Summary)
	}
}
