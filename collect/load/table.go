package load

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Table writes res as a text table, one row per phase (the warm-up first,
// marked excluded), followed by each phase's verdicts. Latencies are in
// milliseconds; "lag" is the send lag; "cpu/req" is the generator's CPU
// microseconds per request sent.
func Table(w io.Writer, res *Result) error {
	var b strings.Builder
	model := fmt.Sprintf("open model, %s arrivals", res.Arrivals)
	if res.Arrivals == Poisson {
		model += fmt.Sprintf(" (seed %d)", res.Seed)
	}
	if res.Model == "closed" {
		model = fmt.Sprintf("closed model, %d users, think %s", res.Users, time.Duration(res.ThinkMS*1e6))
	}
	fmt.Fprintf(&b, "%s %s: %s, in-flight cap %d, timeout %s, client %s (%s), GOMAXPROCS %d\n",
		res.Method, res.Target, model, res.MaxInflight, time.Duration(res.TimeoutS*1e9), res.Client, res.Engine, res.GOMAXPROCS)
	if res.Interrupted {
		fmt.Fprintf(&b, "INTERRUPTED after %.1f s: figures cover what was measured until then\n", res.ElapsedS)
	}
	b.WriteString("\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\toffered\tplanned\tsent\tnot sent\t2xx\terrors\t2xx/s\tp50\tp90\tp95\tp99\tp99.9\tmax\tsvc p50\tsvc p99\tlag p99\tcpu/req\t")
	row := func(p *PhaseResult) {
		name := p.Name
		if p.Kind == Warmup {
			name = "warmup (excluded)"
		}
		offered := fmt.Sprintf("%.0f/s", p.OfferedRate)
		if p.Users > 0 {
			offered = fmt.Sprintf("%d users", p.Users)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f us\t\n",
			name, offered, p.Planned, p.Sent, p.NotSent, p.OK, p.Errors.Total(), p.OKPerS,
			fmtMS(p.Latency.P50), fmtMS(p.Latency.P90), fmtMS(p.Latency.P95), fmtMS(p.Latency.P99), fmtMS(p.Latency.P999), fmtMS(p.Latency.Max),
			fmtMS(p.Service.P50), fmtMS(p.Service.P99), fmtMS(p.SendLag.P99), p.GeneratorCPUUSPerReq)
	}
	if res.Warmup != nil {
		row(res.Warmup)
	}
	for i := range res.Phases {
		row(&res.Phases[i])
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing load table: %w", err)
	}
	end := ""
	if res.ResponseTime == "kernel" {
		end = " to the kernel's receipt of the response"
	}
	fmt.Fprintf(&b, "latencies in ms from the intended send time%s; svc = from the actual send; lag = actual - intended send\n", end)
	if res.CPUIncludesTarget {
		b.WriteString("cpu/req includes the in-process target's CPU\n")
	}

	for i := range res.Phases {
		p := &res.Phases[i]
		fmt.Fprintf(&b, "\n%s", p.Name)
		if p.OfferedRate > 0 {
			fmt.Fprintf(&b, " (%.0f req/s offered)", p.OfferedRate)
		}
		if e := p.Errors; e.Total() > 0 {
			fmt.Fprintf(&b, " errors: %d non-2xx, %d timeout, %d connection, %d other", e.Status, e.Timeout, e.Connection, e.Other)
		}
		if p.Unfinished > 0 {
			fmt.Fprintf(&b, ", %d unfinished", p.Unfinished)
		}
		b.WriteString("\n")
		for _, v := range p.Verdicts {
			fmt.Fprintf(&b, "  %s\n", v)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing load table: %w", err)
	}
	return nil
}

// fmtMS formats milliseconds with about three significant digits.
func fmtMS(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// FormatProgress renders p as one line, for a terminal status line.
func FormatProgress(p Progress) string {
	head := fmt.Sprintf("[%d/%d %s", p.Phase+1, p.Phases, p.Name)
	switch {
	case p.OfferedRate > 0:
		head += fmt.Sprintf(" %.0f/s", p.OfferedRate)
	case p.Users > 0:
		head += fmt.Sprintf(" %d users", p.Users)
	}
	head += fmt.Sprintf(" %.1f/%.0fs]", p.Elapsed.Seconds(), p.Total.Seconds())
	if p.Kind == Pause {
		return fmt.Sprintf("%s in flight %d", head, p.InFlight)
	}
	return fmt.Sprintf("%s sent %d not-sent %d 2xx %d err %d in-flight %d | p50 %s p95 %s p99 %s ms | 2xx/s %.0f",
		head, p.Sent, p.NotSent, p.OK, p.Errors.Total(), p.InFlight,
		fmtMS(nsMS(int64(p.IntervalP50))), fmtMS(nsMS(int64(p.IntervalP95))), fmtMS(nsMS(int64(p.IntervalP99))), p.OKPerS)
}

// Compare writes the steady phases of several results side by side, one
// row per offered rate (closed-model phases by users), one column group per
// result: 2xx/s, latency p50 and p99 (ms), and errors + not sent. labels
// name the results, in order.
func Compare(w io.Writer, labels []string, results []*Result) error {
	if len(labels) != len(results) {
		return fmt.Errorf("compare: %d labels for %d results", len(labels), len(results))
	}
	type key struct {
		rate  float64
		users int
	}
	var keys []key
	rows := map[key][]*PhaseResult{}
	for i, res := range results {
		for j := range res.Phases {
			p := &res.Phases[j]
			k := key{p.OfferedRate, p.Users}
			if rows[k] == nil {
				keys = append(keys, k)
				rows[k] = make([]*PhaseResult, len(results))
			}
			rows[k][i] = p
		}
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "offered\t"
	for _, l := range labels {
		head += fmt.Sprintf("%s 2xx/s\tp50\tp99\tfailed\t", l)
	}
	fmt.Fprintln(tw, head)
	for _, k := range keys {
		line := fmt.Sprintf("%.0f/s\t", k.rate)
		if k.users > 0 {
			line = fmt.Sprintf("%d users\t", k.users)
		}
		for _, p := range rows[k] {
			if p == nil {
				line += "-\t-\t-\t-\t"
				continue
			}
			line += fmt.Sprintf("%.0f\t%s\t%s\t%d\t", p.OKPerS, fmtMS(p.Latency.P50), fmtMS(p.Latency.P99), p.Errors.Total()+p.NotSent)
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing comparison: %w", err)
	}
	b.WriteString("latencies in ms from the intended send time; failed = errors + not sent\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing comparison: %w", err)
	}
	return nil
}
