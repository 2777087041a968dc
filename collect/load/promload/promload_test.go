package promload_test

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/collect/load/promload"
)

func gather(t *testing.T, m *promload.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
		for _, s := range f.GetMetric() {
			if l := s.GetLabel(); len(l) == 0 || l[len(l)-1].GetName() != "run_id" && l[0].GetName() != "run_id" {
				t.Errorf("%s: a series without run_id: %v", f.GetName(), l)
			}
		}
	}
	return out
}

func counter(t *testing.T, fams map[string]*dto.MetricFamily, name, outcome string) float64 {
	t.Helper()
	for _, s := range fams[name].GetMetric() {
		for _, l := range s.GetLabel() {
			if outcome == "" || l.GetName() == "outcome" && l.GetValue() == outcome {
				return s.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no %s{outcome=%q}", name, outcome)
	return 0
}

// quantile is histogram_quantile's estimate over classic buckets: linear
// interpolation inside the bucket holding the rank.
func quantile(q float64, h *dto.Histogram) float64 {
	rank := q * float64(h.GetSampleCount())
	lower, below := 0.0, 0.0
	for _, b := range h.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if c >= rank {
			return lower + (b.GetUpperBound()-lower)*(rank-below)/(c-below)
		}
		lower, below = b.GetUpperBound(), c
	}
	return math.Inf(1)
}

func TestMetrics(t *testing.T) {
	m := promload.New("run-1")
	fams := gather(t, m)
	if n := counter(t, fams, "schedscope_load_sent_total", ""); n != 0 {
		t.Errorf("before any progress: sent %g", n)
	}
	if _, ok := fams["schedscope_load_offered_rate"]; ok {
		t.Error("an offered rate before any progress")
	}

	// Two phases: counters add up over them; a phase's later snapshot
	// replaces its earlier one.
	m.Progress(load.Progress{Phase: 0, Kind: load.Warmup, Name: "warmup", OfferedRate: 100, Sent: 50, Planned: 50, OK: 40})
	m.Progress(load.Progress{Phase: 0, Kind: load.Warmup, Name: "warmup", OfferedRate: 100, Sent: 100, Planned: 100, OK: 98,
		Errors: load.ErrorCounts{Timeout: 2}, Done: true})
	m.Progress(load.Progress{Phase: 1, Kind: load.Pause, Name: "pause"})
	m.Progress(load.Progress{Phase: 2, Kind: load.Steady, Name: "200/s", OfferedRate: 200, Planned: 400, Sent: 390, NotSent: 10,
		OK: 380, Errors: load.ErrorCounts{Status: 3, Connection: 1}, InFlight: 6, OKPerS: 195})

	lat := hdrhistogram.New(1, int64(time.Hour), 3)
	for i := int64(1); i <= 1000; i++ {
		lat.RecordValue(i * int64(time.Millisecond)) // 1..1000 ms
	}
	m.Interval(load.Interval{Phase: 2, Latency: lat, SendLag: hdrhistogram.New(1, int64(time.Hour), 3)})

	fams = gather(t, m)
	for _, c := range []struct {
		name, outcome string
		want          float64
	}{
		{"schedscope_load_planned_total", "", 500},
		{"schedscope_load_sent_total", "", 490},
		{"schedscope_load_not_sent_total", "", 10},
		{"schedscope_load_completed_total", promload.Outcome2xx, 478},
		{"schedscope_load_completed_total", promload.OutcomeTimeout, 2},
		{"schedscope_load_completed_total", promload.OutcomeStatus, 3},
		{"schedscope_load_completed_total", promload.OutcomeConnection, 1},
		{"schedscope_load_completed_total", promload.OutcomeOther, 0},
	} {
		if got := counter(t, fams, c.name, c.outcome); got != c.want {
			t.Errorf("%s{outcome=%q} = %g, want %g", c.name, c.outcome, got, c.want)
		}
	}
	gauges := map[string]float64{"schedscope_load_offered_rate": 200, "schedscope_load_achieved_rate": 195, "schedscope_load_in_flight": 6}
	for name, want := range gauges {
		if got := fams[name].GetMetric()[0].GetGauge().GetValue(); got != want {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
	h := fams["schedscope_load_latency_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 1000 {
		t.Fatalf("latency histogram: %d samples, want 1000", h.GetSampleCount())
	}
	if got, want := h.GetSampleSum(), 500.5; math.Abs(got-want)/want > 0.001 {
		t.Errorf("latency sum %g s, want %g within HDR's 0.1 %%", got, want)
	}
	// The classic buckets hold Prometheus' p99 within one bucket (19 %)
	// of the HDR histogram's.
	own := float64(lat.ValueAtQuantile(99)) / 1e9
	if got := quantile(0.99, h); got < own/promload.BucketFactor || got > own*promload.BucketFactor {
		t.Errorf("p99 from the classic buckets %g s, HDR's %g s: more than one bucket apart", got, own)
	}
	if h.GetSchema() == 0 && len(h.GetPositiveSpan()) == 0 {
		t.Error("no native histogram beside the classic buckets")
	}
}

// TestLabelValue: whatever a user names a run, its label value is valid
// UTF-8, without control characters, bounded, and not empty; a plain one
// is kept as it is.
func TestLabelValue(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	for _, tc := range []struct{ in, want string }{
		{"nightly-42", "nightly-42"},
		{"bad\xffname", "bad\uFFFDname"},
		{"\xc3", "\uFFFD"},
		{"two\xff\xfebad", "two\uFFFDbad"},
		{"line\nbreak\ttab\x00nul", "line\uFFFDbreak\uFFFDtab\uFFFDnul"},
		{"", "-"},
		{"日本語 ok", "日本語 ok"},
		{long, strings.Repeat("é", 62) + "..."},
	} {
		got := promload.LabelValue(tc.in)
		if got != tc.want || !utf8.ValidString(got) || len(got) > promload.MaxLabelValue {
			t.Errorf("LabelValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestOddRunIDs: a Metrics named by any of these registers and gathers
// without a panic (the Prometheus client panics on a label value that is
// not UTF-8: `run --prometheus ADDR --out $'bad\xffname'` did).
func TestOddRunIDs(t *testing.T) {
	for _, id := range []string{"bad\xffname", "", "new\nline", strings.Repeat("x", 1000), "\xed\xa0\x80"} {
		m := promload.New(id)
		m.Progress(load.Progress{Name: "step\xff 1/2", Kind: load.Steady})
		fams := gather(t, m)
		for _, f := range fams {
			for _, s := range f.GetMetric() {
				for _, l := range s.GetLabel() {
					if !utf8.ValidString(l.GetValue()) || l.GetValue() == "" {
						t.Errorf("New(%q): %s{%s=%q}", id, f.GetName(), l.GetName(), l.GetValue())
					}
				}
			}
		}
	}
}
