// Package promload exposes a running load's live figures to Prometheus, so
// that a dashboard shows the load beside the server it loads: offered and
// achieved rate, requests in flight, not sent, completions by outcome,
// latency (from the intended send time) and send lag as histograms, every
// series labelled with the run's id.
//
// A Metrics is fed by load.Config's Progress and Interval callbacks and is
// a prometheus.Collector:
//
//	m := promload.New("nightly-42")
//	cfg.Progress, cfg.Interval = m.Progress, m.Interval
//	reg.MustRegister(m)
//	res, err := load.Run(ctx, cfg)
//
// `schedscope load --prometheus ADDR` and `schedscope run --prometheus ADDR`
// serve one at http://ADDR/metrics.
package promload

import (
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedscope/schedscope/collect/load"
)

// Histogram buckets of the latency and send-lag histograms. The classic
// buckets grow by 2^(1/4) (19 %) from 50 µs to about 60 s, so that a
// quantile Prometheus estimates from them (histogram_quantile) lies within
// one bucket, 19 %, of the generator's own HDR figure; the native
// histogram (for a Prometheus that ingests them) grows by at most 10 %.
const (
	BucketStart  = 50e-6
	BucketFactor = 1.189207115002721 // 2^(1/4)
	BucketCount  = 82
	NativeFactor = 1.1
)

// Outcomes, the values of schedscope_load_completed_total's label outcome:
// a 2xx response, or one of load.ErrorCounts' classes.
const (
	Outcome2xx        = "2xx"
	OutcomeStatus     = "status"
	OutcomeTimeout    = "timeout"
	OutcomeConnection = "connection"
	OutcomeOther      = "other"
)

// Metrics holds one load run's live figures. Progress and Interval may be
// called from one goroutine while Collect runs on others: it is safe for
// concurrent use.
type Metrics struct {
	mu     sync.Mutex
	phases map[int]load.Progress // the latest snapshot of each load phase
	last   load.Progress         // the latest snapshot of any phase
	seen   bool

	latency, sendLag prometheus.Histogram

	offered, users, achieved, inFlight          *prometheus.Desc
	planned, sent, notSent, completed, phaseInf *prometheus.Desc
}

var _ prometheus.Collector = (*Metrics)(nil)

// New returns an empty Metrics whose series carry the label run_id=runID,
// as LabelValue makes it valid.
func New(runID string) *Metrics {
	labels := prometheus.Labels{"run_id": LabelValue(runID)}
	hist := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "schedscope_load_" + name, Help: help, ConstLabels: labels,
			Buckets:                        prometheus.ExponentialBuckets(BucketStart, BucketFactor, BucketCount),
			NativeHistogramBucketFactor:    NativeFactor,
			NativeHistogramMaxBucketNumber: 200,
		})
	}
	d := func(name, help string, vars ...string) *prometheus.Desc {
		return prometheus.NewDesc("schedscope_load_"+name, help, vars, labels)
	}
	return &Metrics{
		phases:   map[int]load.Progress{},
		latency:  hist("latency_seconds", "Request latency from the intended send time (coordinated omission corrected), of completed requests."),
		sendLag:  hist("send_lag_seconds", "How late requests were sent after their intended time (open model)."),
		offered:  d("offered_rate", "The current phase's offered rate, requests per second (0 in the closed model and in pauses)."),
		users:    d("users", "The current phase's closed-model users (0 in the open model)."),
		achieved: d("achieved_rate", "2xx responses per second over the generator's last progress period (about 250 ms)."),
		inFlight: d("in_flight", "Requests in flight now."),
		planned:  d("planned_total", "Requests the plan called for so far."),
		sent:     d("sent_total", "Requests sent."),
		notSent:  d("not_sent_total", "Requests due but not sent: the in-flight cap was reached (open model)."),
		completed: d("completed_total", "Completed requests by outcome: 2xx, or the error class (status: a non-2xx response; timeout; connection; other).",
			"outcome"),
		phaseInf: d("phase", "1 for the phase being driven, named and of its kind (warmup, steady, pause).", "phase", "kind"),
	}
}

// Progress takes a load progress snapshot; it fits load.Config.Progress.
func (m *Metrics) Progress(p load.Progress) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.Kind != load.Pause {
		m.phases[p.Phase] = p
	}
	if !p.Done {
		m.last, m.seen = p, true
	}
}

// Interval adds an interval's latency and send-lag histograms; it fits
// load.Config.Interval. It only reads them.
func (m *Metrics) Interval(iv load.Interval) {
	observe(m.latency, iv.Latency)
	observe(m.sendLag, iv.SendLag)
}

// observe adds every value h holds (ns) to o, in seconds: each HDR bucket's
// count at its highest equivalent value, as the generator's own quantiles
// report them.
func observe(o prometheus.Histogram, h *hdrhistogram.Histogram) {
	if h == nil || h.TotalCount() == 0 {
		return
	}
	for _, b := range h.Distribution() {
		v := float64(b.To) / 1e9
		for range b.Count {
			o.Observe(v)
		}
	}
}

// Describe sends the collector's descriptors.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.offered, m.users, m.achieved, m.inFlight, m.planned, m.sent, m.notSent, m.completed, m.phaseInf} {
		ch <- d
	}
	m.latency.Describe(ch)
	m.sendLag.Describe(ch)
}

// Collect sends the latest figures: counters summed over the load's
// phases, gauges of the latest snapshot. Before the first snapshot it
// sends the counters at zero.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	var t load.Progress
	for _, p := range m.phases {
		t.Planned += p.Planned
		t.Sent += p.Sent
		t.NotSent += p.NotSent
		t.OK += p.OK
		t.Errors = t.Errors.Plus(p.Errors)
	}
	last, seen := m.last, m.seen
	m.mu.Unlock()

	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(m.planned, t.Planned)
	counter(m.sent, t.Sent)
	counter(m.notSent, t.NotSent)
	counter(m.completed, t.OK, Outcome2xx)
	counter(m.completed, t.Errors.Status, OutcomeStatus)
	counter(m.completed, t.Errors.Timeout, OutcomeTimeout)
	counter(m.completed, t.Errors.Connection, OutcomeConnection)
	counter(m.completed, t.Errors.Other, OutcomeOther)
	if seen {
		gauge(m.offered, last.OfferedRate)
		gauge(m.users, float64(last.Users))
		if !math.IsNaN(last.OKPerS) {
			gauge(m.achieved, last.OKPerS)
		}
		gauge(m.inFlight, float64(last.InFlight))
		gauge(m.phaseInf, 1, LabelValue(last.Name), LabelValue(string(last.Kind)))
	}
	m.latency.Collect(ch)
	m.sendLag.Collect(ch)
}

// MaxLabelValue bounds a label value LabelValue returns, in bytes.
const MaxLabelValue = 128

// LabelValue returns s as a valid label value that reads the same where it
// can: every label value that comes from a user (a run's id, taken from
// --out; a phase's name) goes through it, since the Prometheus client
// panics on a value that is not UTF-8. Each run of bytes that is not valid
// UTF-8 and each control character becomes U+FFFD, a value longer than
// MaxLabelValue bytes is cut at a character's boundary and ends in "...",
// and an empty value becomes "-" (Prometheus takes an empty value for a
// missing label).
func LabelValue(s string) string {
	if s == "" {
		return "-"
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
	if len(s) <= MaxLabelValue {
		return s
	}
	cut := MaxLabelValue - len("...")
	for !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
