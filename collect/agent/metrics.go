package agent

import (
	"math"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"
)

// Snapshot is the JSON document served by /metrics: one reading of the
// runtime/metrics the scheduler questions need, plus the registered pools.
//
// Metric names are runtime/metrics names (for example
// "/sched/goroutines/runnable:goroutines"). Which names are present depends on
// the target's Go release: a metric the running runtime does not describe is
// absent, never zero. Cumulative values (counters, histograms) are totals since
// the process started: subtract two snapshots to get a rate or the
// distribution of one interval.
type Snapshot struct {
	Time       time.Time `json:"time"`       // when the metrics were read, target's clock
	GoVersion  string    `json:"go_version"` // runtime.Version()
	GOMAXPROCS int       `json:"gomaxprocs"` // runtime.GOMAXPROCS(0)
	NumCPU     int       `json:"num_cpu"`    // runtime.NumCPU()
	// Values holds every scalar metric read: all of /sched/, /gc/, /cpu/classes/,
	// /memory/classes/, /sync/ and /cgo/. uint64 metrics are converted to float64.
	Values map[string]float64 `json:"values"`
	// Histograms holds the histogram metrics of /sched/ (among them
	// /sched/latencies:seconds, which the runtime samples 1 in 8 transitions)
	// and /gc/pauses:seconds.
	Histograms map[string]Histogram `json:"histograms"`
	// Pools is the registry's usage, by pool name.
	Pools map[string]PoolStats `json:"pools,omitempty"`
	// FlightRecorder is whether the agent's flight recorder is on.
	FlightRecorder bool `json:"flight_recorder"`
}

// Histogram is a runtime/metrics Float64Histogram with only its non-empty
// buckets, so it stays small on the wire. Bucket i counts values in
// [Lower[i], Upper[i]). The runtime's infinite outer bounds are written as
// ±math.MaxFloat64, since JSON has no infinity. Counts are cumulative.
type Histogram struct {
	Lower  []float64 `json:"lower"`
	Upper  []float64 `json:"upper"`
	Counts []uint64  `json:"counts"`
}

// Total is the number of samples in h.
func (h Histogram) Total() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Sub returns the distribution of the samples h has and prev had not: the
// histogram of the interval between two cumulative readings. Buckets are
// matched by lower bound; a bucket whose count went down (a restarted
// target) counts as zero.
func (h Histogram) Sub(prev Histogram) Histogram {
	before := make(map[float64]uint64, len(prev.Lower))
	for i, lo := range prev.Lower {
		before[lo] = prev.Counts[i]
	}
	var d Histogram
	for i, lo := range h.Lower {
		c := h.Counts[i]
		if p := before[lo]; p < c {
			d.Lower = append(d.Lower, lo)
			d.Upper = append(d.Upper, h.Upper[i])
			d.Counts = append(d.Counts, c-p)
		}
	}
	return d
}

// Quantile returns an estimate of the q-quantile (0 <= q <= 1): the upper
// bound of the bucket holding it, clamped to that bucket's lower bound when
// the upper bound is infinite. It returns 0 for an empty histogram.
func (h Histogram) Quantile(q float64) float64 {
	total := h.Total()
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	if rank == 0 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank {
			if h.Upper[i] >= math.MaxFloat64 {
				return h.Lower[i]
			}
			return h.Upper[i]
		}
	}
	return h.Upper[len(h.Upper)-1]
}

// snapshotPrefixes selects the scalar metrics a Snapshot carries.
var snapshotPrefixes = [...]string{"/sched/", "/gc/", "/cpu/classes/", "/memory/classes/", "/sync/", "/cgo/"}

func wantScalar(name string) bool {
	for _, p := range snapshotPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func wantHistogram(name string) bool {
	return strings.HasPrefix(name, "/sched/") || strings.HasPrefix(name, "/gc/pauses:")
}

// ReadSnapshot reads the runtime's metrics now. It selects metrics from
// runtime/metrics.All, so it reads exactly what the running Go release
// offers. Pools and FlightRecorder are left empty: the Agent fills them.
func ReadSnapshot() Snapshot {
	var samples []metrics.Sample
	for _, d := range metrics.All() {
		switch d.Kind {
		case metrics.KindUint64, metrics.KindFloat64:
			if wantScalar(d.Name) {
				samples = append(samples, metrics.Sample{Name: d.Name})
			}
		case metrics.KindFloat64Histogram:
			if wantHistogram(d.Name) {
				samples = append(samples, metrics.Sample{Name: d.Name})
			}
		}
	}
	metrics.Read(samples)
	snap := Snapshot{
		Time:       time.Now(),
		GoVersion:  runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU:     runtime.NumCPU(),
		Values:     make(map[string]float64, len(samples)),
		Histograms: make(map[string]Histogram),
	}
	for _, s := range samples {
		switch s.Value.Kind() {
		case metrics.KindUint64:
			snap.Values[s.Name] = float64(s.Value.Uint64())
		case metrics.KindFloat64:
			snap.Values[s.Name] = s.Value.Float64()
		case metrics.KindFloat64Histogram:
			snap.Histograms[s.Name] = sparse(s.Value.Float64Histogram())
		}
	}
	return snap
}

func sparse(h *metrics.Float64Histogram) Histogram {
	var out Histogram
	for i, c := range h.Counts {
		if c == 0 {
			continue
		}
		out.Lower = append(out.Lower, finite(h.Buckets[i]))
		out.Upper = append(out.Upper, finite(h.Buckets[i+1]))
		out.Counts = append(out.Counts, c)
	}
	return out
}

func finite(f float64) float64 {
	switch {
	case math.IsInf(f, 1):
		return math.MaxFloat64
	case math.IsInf(f, -1):
		return -math.MaxFloat64
	}
	return f
}
