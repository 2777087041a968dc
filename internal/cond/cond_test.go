package cond

import (
	"math"
	"strings"
	"testing"
	"time"
)

const both = Live | Trace

func TestParse(t *testing.T) {
	ms := float64(time.Millisecond)
	for _, tc := range []struct {
		in     string
		ctx    Context
		metric string
		op     Op
		value  float64
		str    string
	}{
		// Every operator.
		{"pinned>0", Trace, "pinned", Greater, 0, "pinned>0"},
		{"pinned>=1", Trace, "pinned", GreaterEqual, 1, "pinned>=1"},
		{"pinned<2", Trace, "pinned", Less, 2, "pinned<2"},
		{"pinned<=3", Trace, "pinned", LessEqual, 3, "pinned<=3"},
		{"pinned==4", Trace, "pinned", Equal, 4, "pinned==4"},
		{"pinned!=5", Trace, "pinned", NotEqual, 5, "pinned!=5"},
		// Whitespace around the parts, none inside String.
		{"  sched.p99 >= 5ms  ", Trace, "sched.p99", GreaterEqual, 5 * ms, "sched.p99>=5ms"},
		{"\tp99\t>\t500ms\n", Live, "p99", Greater, 500 * ms, "p99>500ms"},
		// Duration units.
		{"sched.max>1.5s", Trace, "sched.max", Greater, 1.5e9, "sched.max>1.5s"},
		{"sched.p50<200us", Trace, "sched.p50", Less, 200e3, "sched.p50<200us"},
		{"sched.p50<200µs", Trace, "sched.p50", Less, 200e3, "sched.p50<200µs"},
		{"sched.p90>=750ns", Trace, "sched.p90", GreaterEqual, 750, "sched.p90>=750ns"},
		{"sched.total>1m30s", Trace, "sched.total", Greater, 90e9, "sched.total>1m30s"},
		{"sched.p99>0s", Trace, "sched.p99", Greater, 0, "sched.p99>0s"},
		// The live figure and the trace figure share a name and a unit.
		{"sched.p99>2.5ms", Live, "sched.p99", Greater, 2.5 * ms, "sched.p99>2.5ms"},
		{"gc.stw.max>10ms", Live, "gc.stw.max", Greater, 10 * ms, "gc.stw.max>10ms"},
		// Percentages: with or without the sign.
		{"lost.pct>1%", Trace, "lost.pct", Greater, 1, "lost.pct>1%"},
		{"lost.pct > 0.5 %", Trace, "lost.pct", Greater, 0, ""}, // refused below: "0.5 " is not a number
		{"lost.pct>=2.5", Trace, "lost.pct", GreaterEqual, 2.5, "lost.pct>=2.5"},
		// Counts, rates, cores.
		{"goroutines >= 10000", Live, "goroutines", GreaterEqual, 10000, "goroutines>=10000"},
		{"ok_per_s<100", Live, "ok_per_s", Less, 100, "ok_per_s<100"},
		{"cpu>1.5", Live, "cpu", Greater, 1.5, "cpu>1.5"},
		{"not_sent!=0", Live, "not_sent", NotEqual, 0, "not_sent!=0"},
		{"in_flight>1e3", Live, "in_flight", Greater, 1000, "in_flight>1e3"},
		{"errors>-1", Live, "errors", Greater, -1, ""}, // refused: a signed value is a change
	} {
		c, err := Parse(tc.in, tc.ctx)
		if tc.str == "" {
			if err == nil {
				t.Errorf("Parse(%q) = %+v, want an error", tc.in, c)
			}
			continue
		}
		if err != nil || c.Metric != tc.metric || c.Op != tc.op || c.Value != tc.value || c.String() != tc.str {
			t.Errorf("Parse(%q) = %+v (%s), %v; want %s %s %g", tc.in, c, c, err, tc.metric, tc.op, tc.value)
		}
	}
}

// Every error is one line starting with the condition, and says what to
// write instead.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ctx  Context
		want string
	}{
		{"", Trace, `condition "": want METRIC OP VALUE with OP one of > >= < <= == !=, e.g. sched.p99>5ms`},
		{"pinned", Trace, `condition "pinned": want METRIC OP VALUE`},
		{"p99 500ms", Live, `e.g. p99>500ms`},
		{">5", Trace, `condition ">5": no metric before ">"`},
		{"pinned>", Trace, `condition "pinned>": no value after ">"`},
		{"pinned=1", Trace, `condition "pinned=1": "=" is not an operator: write "=="`},
		{"pinned=>1", Trace, `"=>" is not an operator: write ">="`},
		{"pinned=<1", Trace, `"=<" is not an operator: write "<="`},
		{"pinned!1", Trace, `condition "pinned!1": "!" is not an operator`},
		{"pinned>>0", Trace, `condition "pinned>>0": more than one operator`},
		{"pinned<>0", Trace, `more than one operator`},
		{"p99>5ms>1ms", Live, `more than one operator`},
		// Units.
		{"sched.p99>5", Trace, `condition "sched.p99>5": sched.p99 is a duration: write a unit: 5ms`},
		{"p99>0.5", Live, `p99 is a duration: write a unit: 0.5ms`},
		{"p99>1%", Live, `p99 is a duration, not a percentage: write a plain number`},
		{"pinned>5ms", Trace, `condition "pinned>5ms": pinned is a count, not a duration: write a plain number`},
		{"ok_per_s<1s", Live, `ok_per_s is a rate per second, not a duration`},
		{"cpu>150%", Live, `cpu is a number of cores, not a percentage`},
		{"lost.pct>1ms", Trace, `lost.pct is a percentage, not a duration`},
		// Values that are not numbers.
		{"p99>NaN", Live, `condition "p99>NaN": value "NaN" is not a finite number`},
		{"pinned>nan", Trace, `value "nan" is not a finite number`},
		{"pinned>Inf", Trace, `value "Inf" is not a finite number`},
		{"pinned>-infinity", Trace, `value "-infinity" is not a finite number`},
		{"lost.pct>NaN%", Trace, `value "NaN%" is not a finite number`},
		{"pinned>1e999", Trace, `value "1e999" is out of range`},
		{"p99>fast", Live, `condition "p99>fast": value "fast" is neither a number nor a duration`},
		{"p99>5 ms", Live, `value "5 ms" is neither a number nor a duration`},
		{"p99>5mss", Live, `value "5mss" is neither a number nor a duration`},
		{"lost.pct>x%", Trace, `value "x%" is not a percentage`},
		{"lost.pct>%", Trace, `value "%" is not a percentage`},
		// Metric names: the old spellings name the new one.
		{"not-sent>0", Live, `condition "not-sent>0": metric "not-sent" is now spelled "not_sent"`},
		{"sched-p99>5ms", Live, `metric "sched-p99" is now spelled "sched.p99"`},
		{"sched-p99>5ms", Trace, `metric "sched-p99" is now spelled "sched.p99"`},
		{"ok/s<100", Live, `metric "ok/s" is now spelled "ok_per_s"`},
		{"inflight>100", Live, `metric "inflight" is now spelled "in_flight"`},
		{"in-flight>100", Live, `metric "in-flight" is now spelled "in_flight"`},
		{"not-sent>0", Trace, `metric "not-sent" is now spelled "not_sent", which a trace cannot provide (a trace has: creation.p99, gc.stw.max, `},
		// Near misses of today's names.
		{"pinned-cgo>0", Trace, `metric "pinned-cgo" is spelled "pinned.cgo"`},
		{"Sched_P99>5ms", Trace, `metric "Sched_P99" is spelled "sched.p99"`},
		{"ok-per-s<1", Live, `metric "ok-per-s" is spelled "ok_per_s"`},
		// A metric of another context is refused when typed.
		{"pinned>0", Live, `condition "pinned>0": metric "pinned" is not available in a live run, only in a trace or a run directory (a live run has: cpu, errors, gc.stw.max, goroutines, in_flight, not_sent, ok_per_s, p50, p95, p99, runnable, sched.p99, threads)`},
		{"p99>5ms", Trace, `metric "p99" is not available in a trace, only in a live run, a run directory or a sweep directory (a trace has: `},
		{"latency>5ms", Live, `condition "latency>5ms": unknown metric "latency" (a live run has: cpu, `},
	} {
		_, err := Parse(tc.in, tc.ctx)
		if err == nil {
			t.Errorf("Parse(%q, %v) accepted, want %q", tc.in, tc.ctx, tc.want)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("Parse(%q, %v): %q\n want one line containing %q", tc.in, tc.ctx, msg, tc.want)
		}
	}
}

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // the conditions' Strings joined by commas
		err  string
	}{
		{"p99>500ms", "p99>500ms", ""},
		{"p99>500ms,not_sent>0", "p99>500ms,not_sent>0", ""},
		{" p99 > 500ms , not_sent > 0 ,", "p99>500ms,not_sent>0", ""},
		{"p99>1s,,errors>=1", "p99>1s,errors>=1", ""},
		{"p99>500ms,not-sent>0", "", `metric "not-sent" is now spelled "not_sent"`},
		{"p99>500ms,pinned>0", "", `metric "pinned" is not available in a live run`},
		{"", "", `no condition in "": want METRIC OP VALUE, e.g. p99>500ms`},
		{" , ", "", `no condition`},
	} {
		cs, err := ParseList(tc.in, Live)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseList(%q): %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		var got []string
		for _, c := range cs {
			got = append(got, c.String())
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("ParseList(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// fake is a Source with fixed figures; a name it lacks cannot be read.
type fake map[string]float64

func (f fake) Value(metric string) (float64, bool) {
	v, ok := f[metric]
	return v, ok
}

var _ Source = fake(nil)

func TestEval(t *testing.T) {
	src := fake{"p99": float64(7213456 * time.Nanosecond), "not_sent": 0, "cpu": math.NaN(), "errors": 3}
	for _, tc := range []struct {
		cond    string
		held    bool
		ok      bool
		explain string
	}{
		{"p99>5ms", true, true, "p99 = 7.21ms > 5ms"},
		{"p99>=7213456ns", true, true, "p99 = 7.21ms >= 7213456ns"},
		{"p99<5ms", false, true, "p99 = 7.21ms < 5ms"},
		{"p99<=10ms", true, true, ""},
		{"p99==7.213456ms", true, true, ""},
		{"p99!=7.213456ms", false, true, ""},
		{"not_sent==0", true, true, "not_sent = 0 == 0"},
		{"not_sent!=0", false, true, ""},
		{"errors>2", true, true, "errors = 3 > 2"},
		// Unreadable: absent, or NaN. Never holds, whatever the operator.
		{"goroutines<=0", false, false, ""},
		{"goroutines!=1", false, false, ""},
		{"cpu!=1", false, false, ""},
		{"cpu<1", false, false, ""},
	} {
		c, err := Parse(tc.cond, Live)
		if err != nil {
			t.Fatal(err)
		}
		v, held, ok := c.Eval(src)
		if held != tc.held || ok != tc.ok || c.Holds(src) != tc.held {
			t.Errorf("%s: held %v ok %v, want %v %v", tc.cond, held, ok, tc.held, tc.ok)
		}
		if tc.explain != "" && c.Explain(v) != tc.explain {
			t.Errorf("%s: Explain %q, want %q", tc.cond, c.Explain(v), tc.explain)
		}
	}
	var zero Condition
	if zero.Holds(SourceFunc(func(string) (float64, bool) { return 0, true })) {
		t.Error("the zero Condition held")
	}
}

func TestUnitFormat(t *testing.T) {
	for _, tc := range []struct {
		u    Unit
		v    float64
		want string
	}{
		{Duration, 0, "0s"},
		{Duration, 999, "999ns"},
		{Duration, 7213456, "7.21ms"},
		{Duration, 7.2e6, "7.2ms"},
		{Duration, 1.5e9, "1.5s"},
		{Duration, 123456789012, "2m3s"},
		{Duration, -2.5e6, "-2.5ms"},
		{Duration, 1e300, "1e+300ns"},
		{Count, 3, "3"},
		{Count, 12345, "12345"},
		{PerSecond, 95.123, "95.1"},
		{Cores, 1.234, "1.23"},
		{Cores, 2, "2"},
		{Percent, 0.5, "0.5%"},
		{Percent, 12.26, "12.3%"},
		{Count, 2e15, "2e+15"},
		{Count, math.NaN(), "NaN"},
	} {
		if got := tc.u.Format(tc.v); got != tc.want {
			t.Errorf("%v.Format(%g) = %q, want %q", tc.u, tc.v, got, tc.want)
		}
	}
}

// The registry's invariants: one spelling style, one unit per name, one
// entry per name and context, a doc for each.
func TestRegistry(t *testing.T) {
	units := map[string]Unit{}
	seen := map[string]Context{}
	for _, m := range metrics() {
		if m.Doc == "" || strings.Contains(m.Doc, "\n") || m.In == 0 || m.Unit < Count || m.Unit > Percent {
			t.Errorf("%+v: want a one-line doc, a context and a unit", m)
		}
		for _, r := range m.Name {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_') {
				t.Errorf("%q: names are lower case, dotted namespaces, underscores inside words", m.Name)
				break
			}
		}
		if u, ok := units[m.Name]; ok && u != m.Unit {
			t.Errorf("%s: unit %v in one context, %v in another", m.Name, u, m.Unit)
		}
		units[m.Name] = m.Unit
		if seen[m.Name]&m.In != 0 {
			t.Errorf("%s: listed twice for %v", m.Name, seen[m.Name]&m.In)
		}
		seen[m.Name] |= m.In
		if _, err := Parse(m.Name+">0"+map[Unit]string{Duration: "s"}[m.Unit], m.In); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
	}
	for old, to := range renamed() {
		if _, ok := units[old]; ok {
			t.Errorf("old spelling %q is a metric", old)
		}
		if _, ok := units[to]; !ok {
			t.Errorf("old spelling %q renamed to %q, which is no metric", old, to)
		}
	}
	for _, ctx := range []Context{Live, Trace} {
		help := Help(ctx)
		for _, m := range Metrics(ctx) {
			if !strings.Contains(help, "  "+m.Name+" ") || !strings.Contains(help, m.Doc) {
				t.Errorf("Help(%v) lacks %s: %s", ctx, m.Name, help)
			}
		}
		if n := strings.Count(help, "\n"); n != len(Metrics(ctx)) {
			t.Errorf("Help(%v): %d lines for %d metrics", ctx, n, len(Metrics(ctx)))
		}
	}
	if got := Context(0).String() + " / " + both.String(); got != "Context(0x0) / a live run or a trace" {
		t.Errorf("Context strings: %q", got)
	}
}

// fakeCompare is a comparison's Source: the new side's figures, their
// shares and changes.
type fakeCompare struct {
	values, shares, changes, deltas map[string]float64
}

func (f fakeCompare) Value(m string) (float64, bool)  { v, ok := f.values[m]; return v, ok }
func (f fakeCompare) Share(m string) (float64, bool)  { v, ok := f.shares[m]; return v, ok }
func (f fakeCompare) Change(m string) (float64, bool) { v, ok := f.changes[m]; return v, ok }
func (f fakeCompare) Delta(m string) (float64, bool)  { v, ok := f.deltas[m]; return v, ok }

// A share and a change are forms of a condition, each read from its own
// method, each explained in its own words.
func TestShareAndChange(t *testing.T) {
	src := fakeCompare{
		values:  map[string]float64{"p99": 250e6, "errors": 12},
		shares:  map[string]float64{"errors": 2.4},
		changes: map[string]float64{"p99": 14.2, "ok_per_s": -3},
		deltas:  map[string]float64{"p99": 31e6, "ok_per_s": -4, "errors": 2},
	}
	for _, tc := range []struct {
		cond    string
		ctx     Context
		form    Form
		held    bool
		explain string
	}{
		{"errors>1%", Run, Share, true, "errors = 2.4% of completed > 1%"},
		{"errors>5%", Run, Share, false, ""},
		{"errors>10", Run, Level, true, "errors = 12 > 10"},
		{"p99>+10%", Run | Changes, Change, true, "p99 changed +14.2% > +10%"},
		{"p99>+20%", Run | Changes, Change, false, ""},
		{"ok_per_s<-5%", Run | Changes, Change, false, ""},
		{"ok_per_s<-1%", Run | Changes, Change, true, "ok_per_s changed -3% < -1%"},
		{"p99>200ms", Run | Changes, Level, true, "p99 = 250ms > 200ms"},
		// One reading in a comparison: a signed value is a change from A
		// to B (a duration or number: the difference), an unsigned one is
		// B's figure.
		{"p99>+1ms", Run | Changes, Delta, true, "p99 changed +31ms > +1ms"},
		{"p99>+50ms", Run | Changes, Delta, false, ""},
		{"p99>-5ms", Run | Changes, Delta, true, "p99 changed +31ms > -5ms"},
		{"p99>1ms", Run | Changes, Level, true, "p99 = 250ms > 1ms"},
		{"p99>300ms", Run | Changes, Level, false, ""},
		{"ok_per_s<-2", Run | Changes, Delta, true, "ok_per_s changed -4 < -2"},
		{"errors>+1", Run | Changes, Delta, true, "errors changed +2 > +1"},
		{"errors>+5", Run | Changes, Delta, false, ""},
		// A change that is not significant (absent) never holds.
		{"p90>+1%", Run | Changes, Change, false, ""},
	} {
		c, err := Parse(tc.cond, tc.ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.cond, err)
		}
		if c.Form != tc.form {
			t.Errorf("%s: form %v, want %v", tc.cond, c.Form, tc.form)
		}
		v, held, _ := c.Eval(src)
		if held != tc.held {
			t.Errorf("%s: held %v, want %v", tc.cond, held, tc.held)
		}
		if tc.explain != "" && c.Explain(v) != tc.explain {
			t.Errorf("%s: Explain %q, want %q", tc.cond, c.Explain(v), tc.explain)
		}
		if back, err := Parse(c.String(), tc.ctx); err != nil || back != c {
			t.Errorf("%s: String %q parses back to %+v, %v", tc.cond, c.String(), back, err)
		}
	}
	// A share on a Source without shares, a change on one without changes:
	// unreadable, never held.
	plain := SourceFunc(func(string) (float64, bool) { return 1e9, true })
	for _, s := range []string{"errors>0%", "p99>+0%", "p99>+0ms"} {
		c, _ := Parse(s, Run|Changes)
		if _, held, ok := c.Eval(plain); held || ok {
			t.Errorf("%s on a plain Source: held %v ok %v", s, held, ok)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"p99>+10%", "a signed value (+10%) is a change from A to B, only for comparisons (schedscope compare --fail-on): write 10%"},
		{"p99>+1ms", "a signed value (+1ms) is a change from A to B, only for comparisons (schedscope compare --fail-on): write 1ms"},
		{"p99>-5ms", "a signed value (-5ms) is a change from A to B, only for comparisons (schedscope compare --fail-on): p99 is never negative"},
		{"p99>10%", "p99 is a duration, not a percentage"},
		{"ok_per_s>5%", "ok_per_s is a rate per second, not a percentage"},
	} {
		if _, err := Parse(tc.in, Run); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q, Run) = %v, want %q", tc.in, err, tc.want)
		}
	}
	if got := (Run | Sweep | Changes).String(); got != "a run directory, a sweep directory or a comparison" {
		t.Errorf("context string %q", got)
	}
}

// A condition that could never hold, or always would, is refused with the
// bound that makes it so, in every context; one that can go either way at
// a bound is accepted.
func TestParseVacuous(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ctx  Context
		want string // "" accepted
	}{
		{"p99>=0s", Live, `condition "p99>=0s": always holds: p99 is never below 0s`},
		{"p99<0s", Run, `never holds: p99 is never below 0s`},
		{"not_sent>=0", Run | Changes, `always holds: not_sent is never below 0`},
		{"pinned<0", Trace, `never holds: pinned is never below 0`},
		{"errors>150%", Run, `condition "errors>150%": never holds: errors as a share of completed is never above 100%`},
		{"not_sent>101%", Run | Changes, `never holds: not_sent as a share of planned is never above 100%`},
		{"errors<=100%", Run, `always holds: errors as a share of completed is never above 100%`},
		{"errors!=120%", Run, `always holds`},
		{"errors==120%", Run, `never holds`},
		{"lost.pct>100", Trace, `never holds: lost.pct is never above 100%`},
		{"pool.saturated>=0%", Run, `always holds: pool.saturated is never below 0%`},
		{"p99<-100%", Run | Changes, `never holds: a change of p99 is never below -100%`},
		{"p99>=-100%", Run | Changes, `always holds: a change of p99 is never below -100%`},
		// At a bound but able to go either way.
		{"p99>0s", Live, ""},
		{"p99<=0s", Live, ""},
		{"not_sent==0", Run, ""},
		{"errors>=100%", Run, ""},
		{"errors<100%", Run, ""},
		{"lost.pct<=0", Trace, ""},
		{"p99>-100%", Run | Changes, ""},
		{"p99<-99%", Run | Changes, ""},
		// A difference of two figures may be anything.
		{"p99>-1h", Run | Changes, ""},
		{"errors<+1e9", Run | Changes, ""},
	} {
		_, err := Parse(tc.in, tc.ctx)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Parse(%q, %v): %v, want it accepted", tc.in, tc.ctx, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Parse(%q, %v) = %v, want %q", tc.in, tc.ctx, err, tc.want)
		}
	}
}
