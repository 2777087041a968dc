package collect

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Condition is a --snapshot-when condition: METRIC OP VALUE, checked on
// every live update; the first time it holds, the run takes its
// flight-recorder snapshot.
type Condition struct {
	Metric string
	Op     string // ">", ">=", "<", "<="
	Value  float64
	text   string
}

// String returns the condition as written.
func (c Condition) String() string { return c.text }

// conditionMetrics maps each metric name to its reader and unit. Latencies
// and durations are compared in milliseconds.
var conditionMetrics = map[string]struct {
	doc  string
	read func(l *Live) (float64, bool)
}{
	"p99":        {"latency p99 over the last progress interval, ms", func(l *Live) (float64, bool) { return durMS(l.Load.IntervalP99), l.Load.Completed > 0 }},
	"p50":        {"latency p50 over the last progress interval, ms", func(l *Live) (float64, bool) { return durMS(l.Load.IntervalP50), l.Load.Completed > 0 }},
	"ok/s":       {"2xx responses per second", func(l *Live) (float64, bool) { return l.Load.OKPerS, l.Load.Elapsed > time.Second }},
	"inflight":   {"requests in flight", func(l *Live) (float64, bool) { return float64(l.Load.InFlight), true }},
	"not-sent":   {"requests not sent in this phase", func(l *Live) (float64, bool) { return float64(l.Load.NotSent), true }},
	"errors":     {"failed requests in this phase", func(l *Live) (float64, bool) { return float64(l.Load.Errors.Total()), true }},
	"goroutines": {"the target's goroutines", func(l *Live) (float64, bool) { return l.Target.Goroutines, l.Target.HasAgent }},
	"runnable":   {"the target's runnable goroutines", func(l *Live) (float64, bool) { return l.Target.Runnable, l.Target.HasAgent }},
	"threads":    {"the target's OS threads", func(l *Live) (float64, bool) { return l.Target.Threads, l.Target.HasAgent || l.Target.HasProc }},
	"sched-p99":  {"sampled scheduling latency p99 since the last poll, ms", func(l *Live) (float64, bool) { return l.Target.SchedLatencyP99MS, l.Target.HasAgent }},
	"cpu":        {"the target's CPU use, cores", func(l *Live) (float64, bool) { return l.Target.CPUCores, l.Target.HasAgent || l.Target.HasProc }},
}

// ConditionMetrics lists the metrics a Condition may name, with their
// meaning, sorted by name.
func ConditionMetrics() []string {
	var out []string
	for name, m := range conditionMetrics {
		out = append(out, name+": "+m.doc)
	}
	sort.Strings(out)
	return out
}

// ParseCondition parses "p99>500ms", "goroutines >= 10000", "ok/s<100".
// Durations take a unit (ns, us, ms, s) and compare in milliseconds; other
// values are plain numbers.
func ParseCondition(s string) (Condition, error) {
	text := strings.TrimSpace(s)
	var c Condition
	i := strings.IndexAny(text, "<>")
	if i <= 0 {
		return c, fmt.Errorf("condition %q: want METRIC OP VALUE, e.g. p99>500ms", s)
	}
	c.Metric = strings.TrimSpace(text[:i])
	rest := text[i:]
	c.Op = rest[:1]
	if strings.HasPrefix(rest[1:], "=") {
		c.Op += "="
	}
	arg := strings.TrimSpace(rest[len(c.Op):])
	if _, ok := conditionMetrics[c.Metric]; !ok {
		return c, fmt.Errorf("condition %q: unknown metric %q (known: %s)", s, c.Metric, strings.Join(conditionNames(), ", "))
	}
	if d, err := time.ParseDuration(arg); err == nil && strings.IndexFunc(arg, isUnitLetter) >= 0 {
		c.Value = durMS(d)
	} else if v, err := strconv.ParseFloat(arg, 64); err == nil && v == v {
		c.Value = v
	} else {
		return c, fmt.Errorf("condition %q: value %q is neither a number nor a duration", s, arg)
	}
	c.text = c.Metric + c.Op + arg
	return c, nil
}

func isUnitLetter(r rune) bool { return r >= 'a' && r <= 'z' || r == 'µ' }

func conditionNames() []string {
	var out []string
	for name := range conditionMetrics {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Holds reports whether the condition holds on l; a metric that cannot be
// read yet never holds.
func (c Condition) Holds(l *Live) bool {
	m, ok := conditionMetrics[c.Metric]
	if !ok {
		return false
	}
	v, ok := m.read(l)
	if !ok {
		return false
	}
	switch c.Op {
	case ">":
		return v > c.Value
	case ">=":
		return v >= c.Value
	case "<":
		return v < c.Value
	case "<=":
		return v <= c.Value
	}
	return false
}
