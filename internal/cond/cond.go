// Package cond is schedscope's one condition language, shared by
// `schedscope analyze --fail-on` (checked on a trace's report) and
// `schedscope run --snapshot-when` (checked on every live update of a run).
//
// A condition is METRIC OP VALUE:
//
//	sched.p99>5ms          scheduling latency p99 above 5 milliseconds
//	pinned.cgo >= 1        at least one cgo call pinned a thread
//	not_sent!=0            the load generator dropped a request
//	lost.pct > 0.5%        more than half a percent of the trace was lost
//	ok_per_s<100, p99>1s   either one (a comma-separated list)
//
// OP is one of > >= < <= == !=. Every metric has a Unit, and the VALUE is
// written in it: a duration metric takes a duration with its unit (5ms,
// 1.5s, 200us, 200µs, 1m; a bare 5 is refused: which unit was meant?), a
// percentage takes 1% or 1, counts, rates and cores take plain numbers. NaN,
// infinities and anything else are refused, each with a one-line error that
// says what to write instead.
//
// In a comparison of two runs or sweeps (`schedscope compare --fail-on`),
// a signed VALUE is a change from the old side (A) to the new (B), and an
// unsigned one is B's figure: p99>+10% holds when p99 grew by more than ten
// percent, p99>+1ms when it grew by more than a millisecond, p99<-5% when
// it fell by more than five percent (with repeated runs, only a
// significant change counts), and p99>250ms when B's p99 is above 250ms.
// Outside a comparison a signed value is refused: there is no old side. A
// count that has a whole (errors of the completed requests, not_sent of the
// planned ones) also takes a share: errors>1% holds when more than one
// percent of the completed requests failed.
//
// A condition that could never hold, or always would, is refused, as the
// mistake it is: every figure is at least 0 (p99<0s, not_sent>=0), a share
// or percentage is at most 100% (errors>150%), a relative change is at
// least -100% (p99<-100%).
//
// Metric names are the same everywhere: dotted for namespaces (sched.p99,
// pinned.cgo) and underscores inside words (not_sent, ok_per_s). Where a
// metric comes from is a Context: a live run or a trace report, each
// providing its own subset (Metrics lists them). Parse refuses a metric its
// context cannot provide, so `--snapshot-when pinned>0` fails when typed,
// not after a ten-minute run. A few metrics exist in several contexts under
// one name; sched.p99 is the runtime's sampled figure in a live run and the
// exact one in a trace, and each Metric's Doc says which.
//
// A context hands its figures over as a Source: Value(metric) returns the
// figure in the metric's base unit (nanoseconds for durations) and whether
// it can be read there yet. A condition on a metric that cannot be read
// never holds.
package cond

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Op is a comparison operator.
type Op string

// The operators a condition may use.
const (
	Greater      Op = ">"
	GreaterEqual Op = ">="
	Less         Op = "<"
	LessEqual    Op = "<="
	Equal        Op = "=="
	NotEqual     Op = "!="
)

// opChars are the characters operators are made of; a metric name never
// holds one.
const opChars = "<>=!"

// compare reports whether v OP x.
func (o Op) compare(v, x float64) bool {
	switch o {
	case Greater:
		return v > x
	case GreaterEqual:
		return v >= x
	case Less:
		return v < x
	case LessEqual:
		return v <= x
	case Equal:
		return v == x
	case NotEqual:
		return v != x
	}
	return false
}

// Source is where a condition reads its metric: a live run, a trace
// report. Value returns the metric's current figure in its Unit's base
// (nanoseconds for a Duration, percent for a Percent), and ok=false when
// the metric cannot be read from this source, or not yet (no poll of the
// target so far, nothing completed yet, a metric of another context).
type Source interface {
	Value(metric string) (v float64, ok bool)
}

// SourceFunc adapts a function to a Source.
type SourceFunc func(metric string) (float64, bool)

// ShareSource is a Source that can also give a count metric as a share of
// its whole, in percent (Metric.Whole): errors of the completed requests.
// A condition written as a share (errors>1%) reads Share; on a Source
// without it the condition never holds.
type ShareSource interface {
	Source
	Share(metric string) (pct float64, ok bool)
}

// ChangeSource is the Source of a comparison: Value reads the new side's
// figure, Change its change against the old side in percent (+12.5 for an
// eighth more), Delta the new figure minus the old in the metric's base
// unit (nanoseconds for a Duration). ok is false when there is no change to
// speak of: a figure either side lacks, for Change an old figure of 0, or,
// with repeated runs, a change that is not significant.
type ChangeSource interface {
	Source
	Change(metric string) (pct float64, ok bool)
	Delta(metric string) (diff float64, ok bool)
}

// Form is what figure of its metric a condition compares: the figure
// itself, its share of a whole, or its change against an old side.
type Form int

// The forms of a condition.
const (
	// Level compares the figure itself: p99>250ms.
	Level Form = iota
	// Share compares a count's share of its whole, in percent: errors>1%.
	Share
	// Change compares the relative change against the old side of a
	// comparison, in percent: p99>+10%.
	Change
	// Delta compares the new figure minus the old side's, in the metric's
	// base unit: p99>+1ms.
	Delta
)

// Value calls f(metric).
func (f SourceFunc) Value(metric string) (float64, bool) { return f(metric) }

var _ Source = SourceFunc(nil)

// Condition is one parsed METRIC OP VALUE. Build one with Parse or
// ParseList; the zero Condition never holds. A Condition is a value and
// safe for concurrent use.
type Condition struct {
	// Metric is the metric's name, as listed by Metrics.
	Metric string
	// Op is the comparison.
	Op Op
	// Value is the threshold in the metric's base unit: nanoseconds for a
	// Duration, percent (0-100) for a Percent, else the plain number.
	Value float64
	// Unit is the metric's unit.
	Unit Unit
	// Form says whether Value is the figure or a difference of figures (in
	// Unit's base), a share or a relative change (both in percent).
	Form Form
	// text is the value as written, for messages and String; whole names
	// what a Share is of.
	text  string
	whole string
}

// String returns the condition as written, without spaces: "sched.p99>5ms".
// Parse accepts it back and gives the same Condition.
func (c Condition) String() string { return c.Metric + string(c.Op) + c.text }

// Eval reads c's metric from src and compares it with c's value. ok is
// false when src cannot provide the figure (or gives NaN); held is then
// false too.
func (c Condition) Eval(src Source) (v float64, held, ok bool) {
	if c.Metric == "" {
		return 0, false, false
	}
	switch c.Form {
	case Share:
		if ss, is := src.(ShareSource); is {
			v, ok = ss.Share(c.Metric)
		}
	case Change:
		if cs, is := src.(ChangeSource); is {
			v, ok = cs.Change(c.Metric)
		}
	case Delta:
		if cs, is := src.(ChangeSource); is {
			v, ok = cs.Delta(c.Metric)
		}
	default:
		v, ok = src.Value(c.Metric)
	}
	if !ok || math.IsNaN(v) {
		return v, false, false
	}
	return v, c.Op.compare(v, c.Value), true
}

// Holds reports whether c holds on src; a metric src cannot read never
// holds.
func (c Condition) Holds(src Source) bool {
	_, held, _ := c.Eval(src)
	return held
}

// Explain states the figure v against c, in the metric's unit:
// "sched.p99 = 7.21ms > 5ms", "errors = 2.1% of completed > 1%",
// "p99 changed +14.2% > +10%", "p99 changed +3.1ms > +1ms".
func (c Condition) Explain(v float64) string {
	switch c.Form {
	case Share:
		return c.Metric + " = " + Percent.Format(v) + " of " + c.whole + " " + string(c.Op) + " " + c.text
	case Change:
		return c.Metric + " changed " + signed(Percent, v) + " " + string(c.Op) + " " + c.text
	case Delta:
		return c.Metric + " changed " + signed(c.Unit, v) + " " + string(c.Op) + " " + c.text
	}
	return c.Metric + " = " + c.Unit.Format(v) + " " + string(c.Op) + " " + c.text
}

// signed prints a change in unit u with its sign: +14.2%, -3%, +1.5ms.
func signed(u Unit, v float64) string {
	s := u.Format(v)
	if v >= 0 {
		s = "+" + s
	}
	return s
}

// ParseList parses a comma-separated list of conditions for ctx, such as
// "p99>500ms, not_sent>0". Empty items (a trailing comma) are skipped, but a
// list with no condition at all is an error.
func ParseList(s string, ctx Context) ([]Condition, error) {
	var out []Condition
	for part := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		c, err := Parse(part, ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no condition in %q: want METRIC OP VALUE, e.g. %s", strings.TrimSpace(s), example(ctx))
	}
	return out, nil
}

// Parse parses one METRIC OP VALUE for ctx. Spaces around the parts are
// ignored. The error is one line, starts with `condition "…":`, and says
// what to write instead: the new spelling of a renamed metric, the metrics
// ctx provides, the unit a bare duration needs.
func Parse(s string, ctx Context) (Condition, error) {
	text := strings.TrimSpace(s)
	fail := func(format string, args ...any) (Condition, error) {
		return Condition{}, fmt.Errorf("condition %q: %s", text, fmt.Sprintf(format, args...))
	}
	i := strings.IndexAny(text, opChars)
	if i < 0 {
		return fail("want METRIC OP VALUE with OP one of > >= < <= == !=, e.g. %s", example(ctx))
	}
	op, err := readOp(text[i:])
	if err != nil {
		return fail("%v", err)
	}
	name := strings.TrimSpace(text[:i])
	arg := strings.TrimSpace(text[i+len(op):])
	if name == "" {
		return fail("no metric before %q", op)
	}
	m, err := lookup(name, ctx)
	if err != nil {
		return fail("%v", err)
	}
	if arg == "" {
		return fail("no value after %q", op)
	}
	if strings.ContainsAny(arg, opChars) {
		return fail("more than one operator")
	}
	v, form, err := parseValue(arg, m, ctx)
	if err != nil {
		return fail("%v", err)
	}
	if why := vacuous(op, v, form, m); why != "" {
		return fail("%s", why)
	}
	return Condition{Metric: m.Name, Op: op, Value: v, Unit: m.Unit, Form: form, text: arg, whole: m.Whole}, nil
}

// readOp reads the operator at the start of s.
func readOp(s string) (Op, error) {
	for _, op := range []Op{GreaterEqual, LessEqual, Equal, NotEqual, Greater, Less} {
		if strings.HasPrefix(s, string(op)) {
			return op, nil
		}
	}
	switch {
	case strings.HasPrefix(s, "=>"):
		return "", errors.New(`"=>" is not an operator: write ">="`)
	case strings.HasPrefix(s, "=<"):
		return "", errors.New(`"=<" is not an operator: write "<="`)
	case strings.HasPrefix(s, "="):
		return "", errors.New(`"=" is not an operator: write "==" (OP is one of > >= < <= == !=)`)
	}
	return "", fmt.Errorf("%q is not an operator (OP is one of > >= < <= == !=)", s[:1])
}

// parseValue reads arg for m in ctx: the threshold (in m's unit's base, or
// in percent for a share or a relative change) and which form it takes. A
// signed value is a change, and only a comparison (ctx has Changes) has
// one.
func parseValue(arg string, m Metric, ctx Context) (float64, Form, error) {
	v, form, err := readValue(arg, m)
	if err == nil && (form == Change || form == Delta) && ctx&Changes == 0 {
		why := "write " + arg[1:]
		if arg[0] == '-' {
			why = m.Name + " is never negative"
		}
		return 0, Level, fmt.Errorf("a signed value (%s) is a change from A to B, only for comparisons (schedscope compare --fail-on): %s", arg, why)
	}
	return v, form, err
}

// readValue reads arg for m: a signed value is a change (Change with a
// percent sign, else Delta), an unsigned one a figure or a share.
func readValue(arg string, m Metric) (float64, Form, error) {
	sign := arg[0] == '+' || arg[0] == '-'
	if num, ok := strings.CutSuffix(arg, "%"); ok {
		v, err := parseNumber(num, arg)
		if err != nil {
			return 0, Level, err
		}
		switch {
		case sign:
			return v, Change, nil
		case m.Unit == Percent:
			return v, Level, nil
		case m.Whole != "":
			return v, Share, nil
		}
		return 0, Level, fmt.Errorf("%s is %s, not a percentage: write a plain number", m.Name, m.Unit.article())
	}
	form := Level
	if sign {
		form = Delta
	}
	if v, err := parseNumber(arg, arg); err == nil {
		if m.Unit == Duration {
			return 0, Level, fmt.Errorf("%s is a duration: write a unit: %sms", m.Name, arg)
		}
		return v, form, nil
	} else if !errors.Is(err, errNotNumber) {
		return 0, Level, err
	}
	d, err := time.ParseDuration(arg)
	if err != nil {
		return 0, Level, fmt.Errorf("value %q is neither a number nor a duration", arg)
	}
	if m.Unit != Duration {
		return 0, Level, fmt.Errorf("%s is %s, not a duration: write a plain number", m.Name, m.Unit.article())
	}
	return float64(d), form, nil
}

// vacuous says why OP x on m's figure in form would hold for every figure
// m can have, or for none ("" when it can go either way): every figure is
// at least 0, a share or percentage at most 100, a relative change at least
// -100 %; a difference of two figures can be anything.
func vacuous(op Op, x float64, form Form, m Metric) string {
	lo, hi := 0.0, math.Inf(1)
	what, format := m.Name, m.Unit.Format
	switch {
	case form == Delta:
		return ""
	case form == Change:
		lo, what, format = -100, "a change of "+m.Name, Percent.Format
	case form == Share:
		hi, what, format = 100, m.Name+" as a share of "+m.Whole, Percent.Format
	case m.Unit == Percent:
		hi = 100
	}
	atLeast := fmt.Sprintf("%s is never below %s", what, format(lo))
	atMost := fmt.Sprintf("%s is never above %s", what, format(hi))
	var never, always bool
	var because string
	switch op {
	case Greater:
		never, always = x >= hi, x < lo
	case GreaterEqual:
		never, always = x > hi, x <= lo
	case Less:
		never, always = x <= lo, x > hi
	case LessEqual:
		never, always = x < lo, x >= hi
	case Equal:
		never = x < lo || x > hi
	case NotEqual:
		always = x < lo || x > hi
	}
	// Which bound decides: x at or below lo, or at or above hi.
	because = atMost
	if x <= lo {
		because = atLeast
	}
	switch {
	case never:
		return "never holds: " + because
	case always:
		return "always holds: " + because
	}
	return ""
}

// errNotNumber: the text is not a number at all (it may be a duration).
var errNotNumber = errors.New("not a number")

// parseNumber parses a finite float; written is the value as the user
// wrote it, for messages.
func parseNumber(s, written string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("value %q is out of range", written)
	}
	if err != nil {
		if s != written { // "x%"
			return 0, fmt.Errorf("value %q is not a percentage", written)
		}
		return 0, errNotNumber
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("value %q is not a finite number", written)
	}
	return v, nil
}

// example is a condition ctx accepts, for messages.
func example(ctx Context) string {
	switch {
	case ctx&Changes != 0:
		return "p99>+10%"
	case ctx&(Live|Run) != 0:
		return "p99>500ms"
	case ctx&Sweep != 0:
		return "knee<1000"
	}
	return "sched.p99>5ms"
}
