package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestHistQuantilesWithinRelativeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h hist
	var vals []int64
	for i := 0; i < 20000; i++ {
		v := int64(math.Exp(rng.Float64() * 25)) // 1 ns .. ~72 s, log-uniform
		vals = append(vals, v)
		h.Add(v)
	}
	slices.Sort(vals)
	p := h.Percentiles()
	for _, c := range []struct {
		q   float64
		got int64
	}{{0.5, p.P50}, {0.9, p.P90}, {0.95, p.P95}, {0.99, p.P99}, {0.999, p.P999}} {
		q, got := c.q, c.got
		exact := vals[int(math.Ceil(q*float64(len(vals))))-1]
		if d := math.Abs(float64(got-exact)) / float64(max(exact, 1)); d > 1.0/histSub+1e-9 && got-exact > 1 {
			t.Errorf("q%.3f: got %d, exact %d (relative error %.3f > 1/%d)", q, got, exact, d, histSub)
		}
	}
	if h.max != vals[len(vals)-1] || h.n != int64(len(vals)) {
		t.Errorf("max %d n %d, want %d %d", h.max, h.n, vals[len(vals)-1], len(vals))
	}
	var sum int64
	for _, b := range h.Pow2Buckets() {
		sum += b.Count
	}
	if sum != h.n {
		t.Errorf("power-of-two buckets hold %d samples, want %d", sum, h.n)
	}
	var empty hist
	if empty.Quantile(0.5) != 0 || len(empty.Pow2Buckets()) != 0 {
		t.Errorf("empty histogram not empty")
	}
	h.Add(math.MaxInt64) // the top bucket must not overflow
	if h.Quantile(1) != math.MaxInt64 {
		t.Errorf("max sample quantile %d", h.Quantile(1))
	}
}

func TestTimelineCoarsensAndKeepsMaxima(t *testing.T) {
	var tl timeline
	tl.init(time.Millisecond)
	ms := int64(time.Millisecond)
	for i := int64(0); i < 5000; i++ {
		tl.observe(i*ms, i%3, 0, 1, 0)
	}
	tl.observe(5000*ms+1, 100, 3, 2, 1)
	r := tl.result()
	if len(r.Points) > timelineMaxPoints || r.StepNs <= ms {
		t.Fatalf("%d points at step %d: want coarsened below %d", len(r.Points), r.StepNs, timelineMaxPoints)
	}
	last := r.Points[len(r.Points)-1]
	if last.Goroutines != 100 || last.Threads != 3 {
		t.Errorf("last point %+v, want the final maxima", last)
	}
	for i, p := range r.Points {
		if p.TNs != int64(i)*r.StepNs {
			t.Fatalf("point %d at %d, want %d", i, p.TNs, int64(i)*r.StepNs)
		}
		if i < len(r.Points)-2 && p.Goroutines != 2 {
			t.Fatalf("point %d: goroutines %d, want the maximum 2", i, p.Goroutines)
		}
	}
}
