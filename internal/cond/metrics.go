package cond

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Unit is what a metric's figures measure, and so how a condition writes
// its value and how Explain prints a figure.
type Unit int

// The units of metrics.
const (
	// Count is a number of things (goroutines, requests, spans); a plain
	// number, never a duration.
	Count Unit = iota + 1
	// Duration is a time in nanoseconds; a condition writes it with a unit
	// (5ms, 1.5s, 200us).
	Duration
	// PerSecond is a rate; a plain number.
	PerSecond
	// Cores is CPU use in cores (1.5: one and a half CPUs busy); a plain
	// number.
	Cores
	// Percent is a share in percent (0-100); written 1% or 1.
	Percent
)

// String names the unit as the metric lists show it.
func (u Unit) String() string {
	switch u {
	case Count:
		return "count"
	case Duration:
		return "duration"
	case PerSecond:
		return "per second"
	case Cores:
		return "cores"
	case Percent:
		return "percent"
	}
	return "Unit(" + strconv.Itoa(int(u)) + ")"
}

// MarshalText writes the unit's name, as String gives it.
func (u Unit) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads a unit's name.
func (u *Unit) UnmarshalText(text []byte) error {
	for x := Count; x <= Percent; x++ {
		if x.String() == string(text) {
			*u = x
			return nil
		}
	}
	return fmt.Errorf("unknown unit %q", text)
}

// article names the unit in a sentence: "goroutines is a count".
func (u Unit) article() string {
	switch u {
	case Count:
		return "a count"
	case Duration:
		return "a duration"
	case PerSecond:
		return "a rate per second"
	case Cores:
		return "a number of cores"
	case Percent:
		return "a percentage"
	}
	return u.String()
}

// Format prints v, a figure in u's base unit, for a message: durations to
// three significant digits with their unit (7.21ms), percentages with a %
// sign, other figures as numbers with at most two decimals.
func (u Unit) Format(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case u == Duration && math.Abs(v) < math.MaxInt64:
		d := time.Duration(v)
		return d.Round(roundTo(d)).String()
	case u == Duration:
		return formatNumber(v) + "ns"
	case u == Percent:
		return formatNumber(v) + "%"
	}
	return formatNumber(v)
}

// roundTo is the rounding that keeps three significant digits of d.
func roundTo(d time.Duration) time.Duration {
	r := time.Duration(1)
	for a := max(d, -d); a >= 1000; a /= 10 {
		r *= 10
	}
	return r
}

// formatNumber prints v with at most two decimals, fewer for large values,
// and no trailing zeros; beyond 1e15, in exponent form.
func formatNumber(v float64) string {
	if math.Abs(v) >= 1e15 {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	decimals := 2
	switch a := math.Abs(v); {
	case a >= 100:
		decimals = 0
	case a >= 10:
		decimals = 1
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Context is a set of places a condition is checked, each with its own
// Source: a live run, a trace report. Later contexts (a run directory, a
// comparison of two runs) are more bits.
type Context uint8

// The contexts.
const (
	// Live is a running load test, checked on each live update
	// (`schedscope run --snapshot-when`); its Source reads collect.Live.
	Live Context = 1 << iota
	// Trace is the report of one execution trace (`schedscope analyze
	// --fail-on`); its Source is ReportSource.
	Trace
	// Run is a run directory, checked phase by phase (`schedscope run
	// --fail-on`, `schedscope analyze --fail-on RUNDIR`): the load's
	// figures of each steady phase, the target's over it, the trace's.
	Run
	// Sweep is a sweep directory (`schedscope sweep --fail-on`,
	// `schedscope analyze --fail-on SWEEPDIR`): the knee, ceiling and
	// recommendation of its capacity analysis.
	Sweep
	// Changes marks a comparison (`schedscope compare --fail-on`): its
	// Source gives the new side's figures of Run or Sweep, and a value
	// such as +10% is a change against the old side. It adds no metric.
	Changes
)

// String names the context in a sentence: "a live run", "a trace", or
// several listed: "a trace, a run directory or a sweep directory".
func (c Context) String() string {
	var names []string
	if c&Live != 0 {
		names = append(names, "a live run")
	}
	if c&Trace != 0 {
		names = append(names, "a trace")
	}
	if c&Run != 0 {
		names = append(names, "a run directory")
	}
	if c&Sweep != 0 {
		names = append(names, "a sweep directory")
	}
	if c&Changes != 0 {
		names = append(names, "a comparison")
	}
	if rest := c &^ (Live | Trace | Run | Sweep | Changes); rest != 0 || len(names) == 0 {
		names = append(names, fmt.Sprintf("Context(%#x)", uint8(rest)))
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Metric is one name a condition may use.
type Metric struct {
	// Name is the metric's one spelling: dotted for namespaces,
	// underscores inside words (sched.p99, not_sent).
	Name string
	// Unit is what its figures measure.
	Unit Unit
	// Doc says in one line what the figure is, in the contexts of In.
	Doc string
	// In is the set of contexts whose Source provides it.
	In Context
	// Whole, for a count, names what a share of it is of ("completed
	// requests"): the count then also takes a percentage (errors>1%),
	// which a ShareSource provides. Empty: no share.
	Whole string
}

// metrics returns the registry: every metric in every context, in the
// order -h lists them. A name may appear once per context with a doc that
// says how that context measures it; its unit is the same everywhere (a
// test checks). It is built on each call, so nothing can change it.
func metrics() []Metric {
	return []Metric{
		// A live run: the load generator's latest progress and the latest
		// poll of the target.
		{"p50", Duration, "latency p50 from intended send, over the last progress interval", Live, ""},
		{"p95", Duration, "latency p95 from intended send, over the last progress interval", Live, ""},
		{"p99", Duration, "latency p99 from intended send, over the last progress interval", Live, ""},
		{"ok_per_s", PerSecond, "2xx responses per second over the last progress interval (readable after the phase's first second)", Live, ""},
		{"in_flight", Count, "requests in flight now", Live, ""},
		{"not_sent", Count, "requests not sent in this phase (--max-inflight already in flight)", Live, ""},
		{"errors", Count, "failed requests in this phase", Live, ""},
		{"goroutines", Count, "the target's goroutines (agent)", Live, ""},
		{"runnable", Count, "the target's runnable goroutines (agent)", Live, ""},
		{"threads", Count, "the target's OS threads (agent or /proc)", Live, ""},
		{"cpu", Cores, "the target's CPU use since the last poll (agent or /proc)", Live, ""},
		{"sched.p99", Duration, "scheduling latency p99 since the last poll: the runtime's sampled /sched/latencies histogram (agent; a trace gives the exact figure)", Live, ""},
		{"gc.stw.max", Duration, "longest GC stop-the-world pause since the last poll: a bucket bound of the runtime's /sched/pauses/total/gc histogram (agent)", Live, ""},

		// A trace report.
		{"pinned", Count, "spans where a goroutine held an OS thread without running Go code, at least --pin-threshold long", Trace, ""},
		{"pinned.cgo", Count, "pinned spans in cgo calls", Trace, ""},
		{"pinned.syscall", Count, "pinned spans in syscalls", Trace, ""},
		{"pinned.locked", Count, "pinned spans of blocked goroutines locked to their thread", Trace, ""},
		{"locked", Count, "goroutines inferred to be locked to their OS thread", Trace, ""},
		{"sched.p50", Duration, "scheduling latency p50 (Runnable -> Running), exact from the trace", Trace, ""},
		{"sched.p90", Duration, "scheduling latency p90, exact from the trace", Trace, ""},
		{"sched.p95", Duration, "scheduling latency p95, exact from the trace", Trace, ""},
		{"sched.p99", Duration, "scheduling latency p99, exact from the trace (a live run gives the runtime's sampled figure)", Trace, ""},
		{"sched.p999", Duration, "scheduling latency p99.9, exact from the trace", Trace, ""},
		{"sched.max", Duration, "longest scheduling latency", Trace, ""},
		{"sched.total", Duration, "total scheduling latency (creation to first run excluded)", Trace, ""},
		{"sched.compat.total", Duration, "total scheduling latency as `go tool trace -pprof=sched` counts it", Trace, ""},
		{"creation.p99", Duration, "creation-to-first-run latency p99", Trace, ""},
		{"sleep.overshoot.p99", Duration, "time.Sleep overshoot p99, the worst call site's", Trace, ""},
		{"sleep.overshoot.max", Duration, "longest time.Sleep overshoot, over all call sites", Trace, ""},
		{"goroutines.peak", Count, "most goroutines alive at once", Trace, ""},
		{"threads.peak", Count, "most OS threads busy at once (running Go code or in a syscall)", Trace, ""},
		{"gc.stw.max", Duration, "longest stop-the-world pause", Trace, ""},
		{"lost.pct", Percent, "share of a damaged trace after its last good point (0 when intact)", Trace, ""},

		// A run directory: each steady phase's figures (a condition holds
		// when it holds in any phase) and the trace's.
		{"ok_per_s", PerSecond, "2xx responses per second the target answered the phase's requests at (results.json)", Run, ""},
		{"p50", Duration, "latency p50 from intended send over the phase, exact from load.hlog", Run, ""},
		{"p90", Duration, "latency p90 from intended send over the phase, exact from load.hlog", Run, ""},
		{"p95", Duration, "latency p95 from intended send over the phase, exact from load.hlog", Run, ""},
		{"p99", Duration, "latency p99 from intended send over the phase, exact from load.hlog", Run, ""},
		{"p999", Duration, "latency p99.9 from intended send over the phase, exact from load.hlog", Run, ""},
		{"max", Duration, "longest latency from intended send in the phase", Run, ""},
		{"send_lag.p99", Duration, "send lag p99 (actual minus intended send time): the generator's own delay", Run, ""},
		{"not_sent", Count, "requests not sent in the phase (--max-inflight already in flight); as a percentage, of those planned", Run, "planned"},
		{"errors", Count, "failed requests in the phase (non-2xx, timeouts, connection errors); as a percentage, of those completed", Run, "completed"},
		{"cpu_per_req", Duration, "the target's CPU time per 2xx response over the phase (/proc, else the runtime's estimate)", Run, ""},
		{"goroutines.peak", Count, "most goroutines the target had at a poll during the phase", Run, ""},
		{"threads.peak", Count, "most OS threads the target had at a poll during the phase", Run, ""},
		{"sched.p99", Duration, "scheduling latency p99: exact from the trace in the phase it covers, else the largest sampled figure of the phase's polls", Run, ""},
		{"pool.saturated", Percent, "share of the phase's polls with the most saturated pool full (in use = size)", Run, ""},
		{"pinned", Count, "pinned spans in the run's trace (see a trace's pinned)", Run, ""},
		{"pinned.cgo", Count, "pinned spans in cgo calls in the run's trace", Run, ""},
		{"pinned.syscall", Count, "pinned spans in syscalls in the run's trace", Run, ""},
		{"pinned.locked", Count, "pinned spans of blocked locked goroutines in the run's trace", Run, ""},
		{"sleep.overshoot.p99", Duration, "time.Sleep overshoot p99 of the worst call site in the run's trace", Run, ""},
		{"gc.stw.max", Duration, "longest stop-the-world pause in the run's trace", Run, ""},

		// A sweep directory: its capacity analysis at the recommended
		// GOMAXPROCS.
		{"knee", PerSecond, "highest offered rate served with every lower rate served, at the recommended GOMAXPROCS", Sweep, ""},
		{"ceiling", PerSecond, "highest 2xx/s of any fully offered rate, at the recommended GOMAXPROCS", Sweep, ""},
		{"gomaxprocs", Count, "the recommended GOMAXPROCS", Sweep, ""},
		{"p99", Duration, "latency p99 at the knee, at the recommended GOMAXPROCS (median over iterations)", Sweep, ""},
		{"service.p50", Duration, "service time p50 (from actual send) at the lowest offered rate, at the recommended GOMAXPROCS", Sweep, ""},
	}
}

// renamed maps the spellings of the older condition languages to today's,
// so an old flag fails with the new name rather than "unknown metric".
func renamed() map[string]string {
	return map[string]string{
		"not-sent":  "not_sent",
		"notsent":   "not_sent",
		"sched-p99": "sched.p99",
		"ok/s":      "ok_per_s",
		"inflight":  "in_flight",
		"in-flight": "in_flight",
	}
}

// Metrics returns the metrics ctx provides, in the registry's order (live
// figures from the load generator first, then the target's; trace figures by
// namespace). A metric with one entry per context appears once per context
// in ctx, each with its own Doc.
func Metrics(ctx Context) []Metric {
	var out []Metric
	for _, m := range metrics() {
		if m.In&ctx != 0 {
			out = append(out, m)
		}
	}
	return out
}

// Provides reports whether ctx provides the metric name.
func Provides(ctx Context, name string) bool {
	for _, m := range metrics() {
		if m.Name == name && m.In&ctx != 0 {
			return true
		}
	}
	return false
}

// Names returns the names of the metrics ctx provides, sorted, without
// repeats.
func Names(ctx Context) []string {
	var names []string
	for _, m := range Metrics(ctx) {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Help lists the metrics ctx provides for a command's -h, one per line:
// name, unit and doc, aligned and indented by two spaces.
func Help(ctx Context) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, m := range Metrics(ctx) {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", m.Name, m.Unit, m.Doc)
	}
	tw.Flush() // a strings.Builder does not fail
	return b.String()
}

// lookup finds name among the metrics ctx provides. The error names the
// new spelling of an old name, the spelling of a near miss (pinned-cgo,
// Sched_P99), or the metrics ctx has.
func lookup(name string, ctx Context) (Metric, error) {
	all := metrics()
	for _, m := range all {
		if m.Name == name && m.In&ctx != 0 {
			return m, nil
		}
	}
	// in is the contexts that provide name, 0 for an unknown name.
	in := func(name string) Context {
		var c Context
		for _, m := range all {
			if m.Name == name {
				c |= m.In
			}
		}
		return c
	}
	available := func() string { return ctx.String() + " has: " + strings.Join(Names(ctx), ", ") }
	if to, ok := renamed()[strings.ToLower(name)]; ok {
		if in(to)&ctx == 0 {
			return Metric{}, fmt.Errorf("metric %q is now spelled %q, which %s cannot provide (%s)", name, to, ctx, available())
		}
		return Metric{}, fmt.Errorf("metric %q is now spelled %q", name, to)
	}
	if c := in(name); c != 0 {
		return Metric{}, fmt.Errorf("metric %q is not available in %s, only in %s (%s)", name, ctx, c, available())
	}
	for _, m := range all {
		if m.In&ctx != 0 && fold(m.Name) == fold(name) {
			return Metric{}, fmt.Errorf("metric %q is spelled %q", name, m.Name)
		}
	}
	return Metric{}, fmt.Errorf("unknown metric %q (%s)", name, available())
}

// fold maps a name to a form in which near misses of the same name meet:
// lower case, and every separator a dot.
func fold(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '/', ' ':
			return '.'
		}
		return r
	}, strings.ToLower(name))
}
