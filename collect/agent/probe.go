package agent

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"net/http"
	"runtime/trace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// SleepLogCategory is the runtime/trace log category the sleep probe writes
// on the sleeping goroutine right before each time.Sleep(d); the message is
// d in nanoseconds, in decimal. The analyzers pair it with the goroutine's
// next wake-up to measure the overshoot inside a trace.
const SleepLogCategory = "schedscope.sleep"

// SleepProbeTask is the runtime/trace task the probe's goroutines run under.
const SleepProbeTask = "schedscope.sleepprobe"

// Bounds on the sleep probe's parameters.
const (
	MaxProbeGoroutines = 10000
	MinProbeSleep      = time.Microsecond
	MaxProbeSleep      = 10 * time.Second
)

// ProbeResult is the JSON document the sleep probe returns: how late
// time.Sleep(Sleep) woke up, over every sleep of every goroutine.
type ProbeResult struct {
	Goroutines int           `json:"goroutines"`  // sleeping goroutines
	Sleep      time.Duration `json:"sleep_ns"`    // the duration each asked for
	Duration   time.Duration `json:"duration_ns"` // how long the probe ran
	Samples    int64         `json:"samples"`     // sleeps measured
	// Unfinished counts the sleeps still in progress when the probe ended
	// (its client went away, or a wake-up came past the probe's end); they
	// are not in Samples or the statistics.
	Unfinished int64 `json:"unfinished"`
	// Overshoot statistics, in nanoseconds: time asleep minus Sleep. Min,
	// Max and Mean are exact; the quantiles come from a log-linear histogram
	// with 8 sub-buckets per power of two (at most 12.5 % high).
	Min  time.Duration `json:"min_ns"`
	Mean time.Duration `json:"mean_ns"`
	P50  time.Duration `json:"p50_ns"`
	P90  time.Duration `json:"p90_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"`
	Max  time.Duration `json:"max_ns"`
	// Histogram holds the non-empty buckets: Counts[i] overshoots in
	// [Lower[i], Upper[i]) nanoseconds.
	Histogram struct {
		Lower  []int64 `json:"lower_ns"`
		Upper  []int64 `json:"upper_ns"`
		Counts []int64 `json:"counts"`
	} `json:"histogram"`
}

func (a *Agent) serveSleepProbe(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		httpError(w, http.StatusMethodNotAllowed, "schedscope agent: /sleepprobe takes POST")
		return
	}
	q := r.URL.Query()
	k := 1
	if arg := q.Get("goroutines"); arg != "" {
		var err error
		if k, err = strconv.Atoi(arg); err != nil || k < 1 || k > MaxProbeGoroutines {
			httpError(w, http.StatusBadRequest, "schedscope agent: goroutines=%q: want an integer in [1, %d]", arg, MaxProbeGoroutines)
			return
		}
	}
	d, err := durationParam(r, "sleep", time.Millisecond, MaxProbeSleep)
	if err == nil && d < MinProbeSleep {
		err = fmt.Errorf("sleep=%q: below the bound of %v", q.Get("sleep"), MinProbeSleep)
	}
	if err != nil {
		httpError(w, http.StatusBadRequest, "schedscope agent: sleep probe: %v", err)
		return
	}
	s, err := durationParam(r, "seconds", time.Second, a.opts.MaxCapture)
	if err != nil {
		httpError(w, http.StatusBadRequest, "schedscope agent: sleep probe: %v", err)
		return
	}
	res := SleepProbe(r.Context(), k, d, s)
	if r.Context().Err() != nil {
		return
	}
	a.probeMu.Lock()
	a.lastProbe, a.lastProbeAt = &res, time.Now()
	a.probeMu.Unlock()
	writeJSON(w, res)
}

// SleepProbe runs k goroutines that each call time.Sleep(d) repeatedly for
// dur, and returns the overshoot distribution. Before each sleep the
// goroutine logs SleepLogCategory with d to the execution trace (a no-op when
// no trace is running). Callers bound k, d and dur.
//
// SleepProbe returns at the end of dur or when ctx is done, whichever comes
// first, never later. A goroutine starts no sleep that would end past dur, so
// with d > dur nothing is measured. A sleep still in progress when the probe
// returns (ctx ended, or the wake-up came late enough to run past dur) is
// counted in Unfinished, not measured: time.Sleep cannot be interrupted, so
// its goroutine is abandoned and exits when the sleep ends, at most d later,
// without touching the result.
func SleepProbe(ctx context.Context, k int, d, dur time.Duration) ProbeResult {
	ctx, task := trace.NewTask(ctx, SleepProbeTask)
	defer task.End()
	start := time.Now()
	deadline := start.Add(dur)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	requested := strconv.FormatInt(d.Nanoseconds(), 10)

	sleepers := make([]sleeper, k)
	var running atomic.Int64
	running.Store(int64(k))
	allStopped := make(chan struct{})
	for i := range sleepers {
		s := &sleepers[i]
		s.hist.min = math.MaxInt64
		go func() {
			defer func() {
				if running.Add(-1) == 0 {
					close(allStopped)
				}
			}()
			for ctx.Err() == nil && time.Until(deadline) >= d {
				t0 := time.Now()
				if !s.begin() {
					return
				}
				trace.Log(ctx, SleepLogCategory, requested)
				time.Sleep(d)
				if !s.end(int64(time.Since(t0) - d)) {
					return
				}
			}
		}()
	}
	select {
	case <-allStopped:
	case <-ctx.Done():
	}

	var all overshootHist
	all.min = math.MaxInt64
	var unfinished int64
	for i := range sleepers {
		if sleepers[i].close(&all) {
			unfinished++
		}
	}
	res := ProbeResult{Goroutines: k, Sleep: d, Duration: time.Since(start), Samples: all.n, Unfinished: unfinished}
	if all.n == 0 {
		return res
	}
	res.Min, res.Max = time.Duration(all.min), time.Duration(all.max)
	res.Mean = time.Duration(all.sum / all.n)
	res.P50 = time.Duration(all.quantile(0.50))
	res.P90 = time.Duration(all.quantile(0.90))
	res.P99 = time.Duration(all.quantile(0.99))
	res.P999 = time.Duration(all.quantile(0.999))
	for i, c := range all.counts {
		if c == 0 {
			continue
		}
		lo, hi := bucketBounds(i)
		res.Histogram.Lower = append(res.Histogram.Lower, lo)
		res.Histogram.Upper = append(res.Histogram.Upper, hi)
		res.Histogram.Counts = append(res.Histogram.Counts, c)
	}
	return res
}

// sleeper is one probe goroutine's record, shared with the probe that reads
// it once, at its end; the mutex is uncontended until then.
type sleeper struct {
	mu       sync.Mutex
	closed   bool // the probe has returned: record nothing more
	sleeping bool // a sleep is in progress
	hist     overshootHist
}

// begin marks a sleep as started; false when the probe has already returned.
func (s *sleeper) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sleeping = !s.closed
	return !s.closed
}

// end records a finished sleep's overshoot; false when the probe has
// already returned (the sleep was abandoned and counted as unfinished).
func (s *sleeper) end(overshoot int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.sleeping = false
	s.hist.add(overshoot)
	return true
}

// close ends the sleeper's record, merges its finished sleeps into all and
// reports whether a sleep was still in progress.
func (s *sleeper) close(all *overshootHist) (unfinished bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	all.merge(&s.hist)
	return s.sleeping
}

// subBits sub-buckets per power of two: 1 << subBits of them.
const subBits = 3

// overshootHist is a log-linear histogram of non-negative nanoseconds.
type overshootHist struct {
	counts   [64 << subBits]int64
	n, sum   int64
	min, max int64
}

func bucketOf(v int64) int {
	if v < 1<<subBits {
		return int(v) // exact below 8 ns
	}
	e := bits.Len64(uint64(v)) - 1 // v in [2^e, 2^(e+1))
	sub := int(v>>(e-subBits)) & (1<<subBits - 1)
	return (e-subBits+1)<<subBits + sub
}

func bucketBounds(i int) (lo, hi int64) {
	if i < 1<<subBits {
		return int64(i), int64(i) + 1
	}
	e := i>>subBits + subBits - 1
	sub := int64(i & (1<<subBits - 1))
	width := int64(1) << (e - subBits)
	lo = int64(1)<<e + sub*width
	return lo, lo + width
}

func (h *overshootHist) add(v int64) {
	if v < 0 {
		v = 0 // the monotonic clock cannot wake early; guard anyway
	}
	h.counts[bucketOf(v)]++
	h.n++
	h.sum += v
	h.min = min(h.min, v)
	h.max = max(h.max, v)
}

func (h *overshootHist) merge(o *overshootHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	if o.n > 0 {
		h.min = min(h.min, o.min)
		h.max = max(h.max, o.max)
	}
}

// quantile returns the upper bound of the bucket holding the q-quantile,
// clamped to the exact maximum.
func (h *overshootHist) quantile(q float64) int64 {
	rank := int64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			_, hi := bucketBounds(i)
			return min(hi-1, h.max)
		}
	}
	return h.max
}
