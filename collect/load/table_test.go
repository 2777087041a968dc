package load

import (
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TestPercentilesFromHistogram checks every percentile comes from the
// histogram, p95 included: 1..1000 ms, one value each.
func TestPercentilesFromHistogram(t *testing.T) {
	h := hdrhistogram.New(1, int64(time.Minute), 3)
	for ms := int64(1); ms <= 1000; ms++ {
		if err := h.RecordValue(ms * int64(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	p := percentiles(h)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", p.P50, 500}, {"p90", p.P90, 900}, {"p95", p.P95, 950}, {"p99", p.P99, 990}, {"p999", p.P999, 999}, {"max", p.Max, 1000}} {
		if c.got < c.want*0.999 || c.got > c.want*1.001 {
			t.Errorf("%s = %.3f ms, want %.0f ms (within the histogram's 3 digits)", c.name, c.got, c.want)
		}
	}
	if p.Count != 1000 {
		t.Errorf("count = %d, want 1000", p.Count)
	}
}

// TestTableColumns checks the table's latency columns, p95 between p90 and
// p99, and the progress line's.
func TestTableColumns(t *testing.T) {
	res := &Result{Method: "GET", Target: "http://127.0.0.1:1/", Arrivals: Uniform, MaxInflight: 10, Client: "net/http", Engine: "goroutines",
		Phases: []PhaseResult{{Name: "steady", Kind: Steady, OfferedRate: 100, Planned: 100, Sent: 100, OK: 100, OKPerS: 100,
			Latency: Percentiles{P50: 5, P90: 9, P95: 9.5, P99: 12, P999: 40, Max: 41, Count: 100}}}}
	var b strings.Builder
	if err := Table(&b, res); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	var head, row []string
	for i, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "phase" {
			head, row = f, strings.Fields(lines[i+1])
			break
		}
	}
	// "not sent" and "svc p50" are two words each in the header; the row's
	// offered rate is one.
	wantHead := "phase offered planned sent not sent 2xx errors 2xx/s p50 p90 p95 p99 p99.9 max svc p50 svc p99 lag p99 cpu/req"
	if got := strings.Join(head, " "); got != wantHead {
		t.Fatalf("header = %q, want %q\n%s", got, wantHead, b.String())
	}
	if got, want := strings.Join(row[8:13], " "), "5.00 9.00 9.50 12.0 40.0"; got != want {
		t.Errorf("p50..p99.9 cells = %q, want %q\n%s", got, want, b.String())
	}

	line := FormatProgress(Progress{Phases: 1, Name: "steady", Kind: Steady, OfferedRate: 100, Total: time.Second,
		IntervalP50: 5 * time.Millisecond, IntervalP95: 9500 * time.Microsecond, IntervalP99: 12 * time.Millisecond})
	if !strings.Contains(line, "| p50 5.00 p95 9.50 p99 12.0 ms |") {
		t.Errorf("progress line %q lacks p50, p95 and p99", line)
	}
}
