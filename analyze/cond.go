package analyze

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Condition is a `metric op number` test on a Report, for CI gates such as
// `--fail-on 'pinned>0'`. Build one with ParseCondition.
type Condition struct {
	Metric string  // one of ConditionMetrics()
	Op     string  // one of > >= < <= == !=
	Value  float64 // in the metric's unit: nanoseconds for a duration
	text   string
}

// String returns the condition as written.
func (c Condition) String() string { return c.text }

// conditionMetrics maps metric names to their value in a Report. Durations
// are nanoseconds (a condition may write them as 5ms, 1.5s, 200us).
func conditionMetrics() map[string]func(r *Report) float64 {
	return map[string]func(r *Report) float64{
		"pinned":              func(r *Report) float64 { return float64(int64(len(r.Pinned.Events)) + r.Pinned.Dropped) },
		"pinned.cgo":          func(r *Report) float64 { return countPinned(r, "cgo") },
		"pinned.syscall":      func(r *Report) float64 { return countPinned(r, "syscall") },
		"pinned.locked":       func(r *Report) float64 { return countPinned(r, "locked") },
		"locked":              func(r *Report) float64 { return float64(len(r.Pinned.LockedGoroutines)) },
		"sched.p50":           func(r *Report) float64 { return float64(r.Sched.PercentilesNs.P50) },
		"sched.p90":           func(r *Report) float64 { return float64(r.Sched.PercentilesNs.P90) },
		"sched.p99":           func(r *Report) float64 { return float64(r.Sched.PercentilesNs.P99) },
		"sched.p999":          func(r *Report) float64 { return float64(r.Sched.PercentilesNs.P999) },
		"sched.max":           func(r *Report) float64 { return float64(r.Sched.PercentilesNs.Max) },
		"sched.total":         func(r *Report) float64 { return float64(r.Sched.TotalNs) },
		"sched.compat.total":  func(r *Report) float64 { return float64(r.Sched.Compat.TotalNs) },
		"creation.p99":        func(r *Report) float64 { return float64(r.Sched.Creation.PercentilesNs.P99) },
		"sleep.overshoot.p99": func(r *Report) float64 { return maxOvershoot(r, func(p Percentiles) int64 { return p.P99 }) },
		"sleep.overshoot.max": func(r *Report) float64 { return maxOvershoot(r, func(p Percentiles) int64 { return p.Max }) },
		"goroutines.peak":     func(r *Report) float64 { return float64(r.Goroutines.Peak) },
		"threads.peak":        func(r *Report) float64 { return float64(r.Threads.Peak) },
		"gc.stw.max":          func(r *Report) float64 { return float64(r.GC.STWMaxNs) },
		"lost.pct":            func(r *Report) float64 { return lostPct(r) },
	}
}

func countPinned(r *Report, kind string) float64 {
	n := 0
	for _, e := range r.Pinned.Events {
		if e.Kind == kind {
			n++
		}
	}
	return float64(n)
}

func maxOvershoot(r *Report, pick func(Percentiles) int64) float64 {
	var m int64
	for _, s := range r.Sleep.Sites {
		if s.Overshoot != nil {
			m = max(m, pick(s.Overshoot.PercentilesNs))
		}
	}
	return float64(m)
}

func lostPct(r *Report) float64 {
	if r.Loss == nil {
		return 0
	}
	return r.Loss.LostPct
}

// ConditionMetrics lists the metric names a Condition may use.
func ConditionMetrics() []string {
	names := make([]string, 0, 16)
	for n := range conditionMetrics() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ParseCondition parses `metric op number`, e.g. "pinned>0",
// "sched.p99 >= 5ms", "threads.peak>100". The number may carry a duration
// unit (ns, us, µs, ms, s), which converts it to nanoseconds.
func ParseCondition(s string) (Condition, error) {
	text := strings.TrimSpace(s)
	for _, op := range []string{">=", "<=", "==", "!=", ">", "<"} {
		i := strings.Index(text, op)
		if i < 0 {
			continue
		}
		metric := strings.TrimSpace(text[:i])
		num := strings.TrimSpace(text[i+len(op):])
		if _, ok := conditionMetrics()[metric]; !ok {
			return Condition{}, fmt.Errorf("condition %q: unknown metric %q (known: %s)", s, metric, strings.Join(ConditionMetrics(), ", "))
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			d, derr := time.ParseDuration(num)
			if derr != nil {
				return Condition{}, fmt.Errorf("condition %q: %q is neither a number nor a duration", s, num)
			}
			v = float64(d.Nanoseconds())
		}
		return Condition{Metric: metric, Op: op, Value: v, text: text}, nil
	}
	return Condition{}, fmt.Errorf("condition %q: want `metric op number` with op one of > >= < <= == !=", s)
}

// Eval reports whether the condition holds for r, and the metric's value.
func (c Condition) Eval(r *Report) (bool, float64) {
	f, ok := conditionMetrics()[c.Metric]
	if !ok {
		return false, 0
	}
	v := f(r)
	switch c.Op {
	case ">":
		return v > c.Value, v
	case ">=":
		return v >= c.Value, v
	case "<":
		return v < c.Value, v
	case "<=":
		return v <= c.Value, v
	case "==":
		return v == c.Value, v
	case "!=":
		return v != c.Value, v
	}
	return false, v
}
