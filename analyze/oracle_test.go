package analyze

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
)

// goToolTraceTotals runs `go tool trace -pprof=kind file` and sums the
// profile's count and delay.
func goToolTraceTotals(t *testing.T, kind, file string) Totals {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command("go", "tool", "trace", "-pprof="+kind, file)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool trace -pprof=%s %s: %v\n%s", kind, file, err, errb.String())
	}
	p, err := profile.Parse(&out)
	if err != nil {
		t.Fatalf("parse -pprof=%s profile of %s: %v", kind, file, err)
	}
	if len(p.SampleType) != 2 || p.SampleType[0].Type != "contentions" || p.SampleType[1].Unit != "nanoseconds" {
		t.Fatalf("-pprof=%s: unexpected sample types %v", kind, p.SampleType)
	}
	var tot Totals
	for _, s := range p.Sample {
		tot.Count += s.Value[0]
		tot.TotalNs += s.Value[1]
	}
	return tot
}

// TestCompatTotalsEqualGoToolTrace is the oracle test: for every generated
// trace, the cmd/trace-compatible totals must equal `go tool trace
// -pprof=sched|syscall|sync|net` exactly.
func TestCompatTotalsEqualGoToolTrace(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	files, err := filepath.Glob("testdata/go1.*/*.trace")
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated traces under testdata (run go generate): %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			r, err := TraceFile(context.Background(), file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				kind string
				ours Totals
			}{
				{"sched", r.Sched.Compat},
				{"syscall", r.Syscall.Compat},
				{"sync", r.Sync.Compat},
				{"net", r.Net.Compat},
			} {
				want := goToolTraceTotals(t, c.kind, file)
				if c.ours != want {
					t.Errorf("%s: ours %+v, go tool trace -pprof=%s %+v", c.kind, c.ours, c.kind, want)
				} else {
					t.Logf("%s: count %d total %d ns (equal)", c.kind, want.Count, want.TotalNs)
				}
			}
		})
	}
}
