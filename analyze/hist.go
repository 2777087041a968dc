package analyze

import "math/bits"

// histSub is the number of linear sub-buckets per power of two: quantiles
// carry at most 1/histSub relative error.
const (
	histSubBits = 5
	histSub     = 1 << histSubBits
	histBuckets = (64 - histSubBits + 1) * histSub
)

// hist is a log-linear histogram of non-negative durations in nanoseconds,
// with exact count, sum, min and max. Its zero value is empty and ready; the
// counts slice is allocated on the first Add. Not safe for concurrent use.
type hist struct {
	counts []uint32 // histBuckets entries once used
	n      int64
	sum    int64
	min    int64 // valid when n > 0
	max    int64
}

func histIndex(v int64) int {
	if v < histSub {
		return int(v)
	}
	u := uint64(v)
	e := bits.Len64(u) - 1 // >= histSubBits
	shift := e - histSubBits
	sub := int(u>>uint(shift)) & (histSub - 1)
	return (shift+1)*histSub + sub
}

// histLower is the smallest value that falls in bucket i.
func histLower(i int) int64 {
	if i < histSub {
		return int64(i)
	}
	shift := i/histSub - 1
	sub := i % histSub
	return int64(histSub+sub) << uint(shift)
}

// Add records one duration; negative durations count as zero.
func (h *hist) Add(v int64) {
	if v < 0 {
		v = 0
	}
	if h.counts == nil {
		h.counts = make([]uint32, histBuckets)
	}
	h.counts[histIndex(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	h.n++
	h.sum += v
	if v > h.max {
		h.max = v
	}
}

// Merge adds o's samples to h.
func (h *hist) Merge(o *hist) {
	if o.n == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]uint32, histBuckets)
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// Quantile returns the q-quantile (0 < q <= 1): the middle of the bucket
// that holds it, clamped to the exact min and max. A bucket is up to 1/histSub
// of its value wide, so without the clamp samples all in one bucket read as
// its middle: 50 ms sleeps that lasted 50.05 ms read 49.8 ms (issue 15).
func (h *hist) Quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen int64
	for i, c := range h.counts {
		seen += int64(c)
		if seen >= rank {
			lo := histLower(i)
			hi := histLower(i + 1)
			if hi <= lo { // the top bucket: its bound overflows
				return h.max
			}
			return min(max(lo+(hi-lo-1)/2, h.min), h.max)
		}
	}
	return h.max
}

// Percentiles returns the standard quantiles.
func (h *hist) Percentiles() Percentiles {
	return Percentiles{
		P50:  h.Quantile(0.50),
		P90:  h.Quantile(0.90),
		P95:  h.Quantile(0.95),
		P99:  h.Quantile(0.99),
		P999: h.Quantile(0.999),
		Max:  h.max,
	}
}

// Distribution returns count, total and percentiles.
func (h *hist) Distribution() Distribution {
	return Distribution{Count: h.n, TotalNs: h.sum, PercentilesNs: h.Percentiles()}
}

// Pow2Buckets folds the histogram into power-of-two buckets starting at
// 1 µs (the first bucket holds everything below 1024 ns), omitting empty
// ones.
func (h *hist) Pow2Buckets() []Bucket {
	out := []Bucket{}
	if h.n == 0 {
		return out
	}
	const first = 10 // 2^10 ns ~ 1 µs
	var acc int64
	for e := first; e <= 63; e++ {
		le := int64(1) << uint(e)
		if e == 63 {
			le = 1<<63 - 1
		}
		acc = 0
		lo := int64(0)
		if e > first {
			lo = int64(1) << uint(e-1)
		}
		for i := histIndex(lo); i < histBuckets && histLower(i) < le && histLower(i) >= lo; i++ {
			acc += int64(h.counts[i])
		}
		if acc > 0 {
			out = append(out, Bucket{LeNs: le, Count: acc})
		}
		if le > h.max {
			break
		}
	}
	return out
}
