// Package pintest checks, in a Go test, that code does not pin an OS thread:
// that while it ran no goroutine held a thread without running Go code for
// the threshold or longer (a goroutine locked to its thread with
// runtime.LockOSThread that blocked, a cgo call, a blocking system call).
//
//	func TestHandlerDoesNotPin(t *testing.T) {
//		srv := startServer(t)
//		pintest.NoPinning(t, func() {
//			resp, err := http.Get(srv.URL + "/report")
//			...
//		}, pintest.Expect("myserver.(*Server).report"))
//	}
//
// A check that nothing pinned passes just as well when nothing ran, or when
// the detector is blind, so every call proves both:
//
//   - The positive control: before f, inside the same execution trace, the
//     helper pins a thread itself for twice the threshold, once with a
//     goroutine locked to its thread that blocks and once (on Linux) in the
//     nanosleep system call, and requires the analyzer to report both. When it
//     does not, NoPinning stops the test: a pass would mean nothing. The
//     control's pins are never counted against f: they end before f starts
//     and are recognised by their goroutines.
//   - f ran: it is called on a goroutine of the helper's own and must return.
//     A nil f, a panic in f (recovered and reported) or a runtime.Goexit in f
//     (t.FailNow, t.Fatal or t.SkipNow called inside it) fails the check.
//     With [Expect], a function that f's work must reach (a server handler
//     behind an HTTP call) has to appear in a stack the trace recorded while f
//     ran.
//
// Pins are found by schedscope's trace analyzer (package analyze, whose
// Report.Pinned this package reads): a cgo call or syscall is seen directly
// in the trace; a locked goroutine is inferred (LockOSThread leaves no trace
// event) from its resuming on one thread that runs nothing else, at least
// three times, or from the runtime handing its P to that thread. A goroutine
// that locks, blocks once and unlocks can escape the inference (one in three
// did at GOMAXPROCS 1, none at 2, in a measurement); one that writes
// analyze.LockLogCategory annotations cannot. Calls through
// syscall.RawSyscall leave no trace event and are not seen.
//
// The execution trace is process-wide, and so is the check:
//
//   - NoPinning and Check must not run while another execution trace does
//     (`go test -trace`, net/http/pprof's /debug/pprof/trace, a parallel test
//     that traces): the trace cannot start and the check fails. Do not call
//     them from parallel tests.
//   - Pins by any goroutine of the process during f's run count, not only f's
//     own: a handler goroutine that f's HTTP request reached is not f's
//     descendant, yet its pin is the point. Unrelated goroutines that pin
//     during f (a parallel test, a background worker) are counted too.
//   - A pin counts when its span overlaps f's run, from f's call to its
//     return: work f leaves running after it returns is not watched.
//
// The trace is held in memory until the check ends: 3.5 MB for a second of
// back-to-back loopback HTTP requests to an in-process server, measured; keep
// f short.
package pintest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/analyze"
)

// DefaultThreshold is the shortest hold of an OS thread that counts as a pin
// unless Threshold says otherwise: 20 ms, analyze.Options.PinThreshold's
// default (JFR's for jdk.VirtualThreadPinned).
const DefaultThreshold = 20 * time.Millisecond

// Option configures Check and NoPinning.
type Option func(*config)

type config struct {
	threshold time.Duration
	expect    []string
	// control pins threads for hold and returns the kinds it pinned:
	// runControl, or a blind stand-in in this package's tests.
	control func(hold time.Duration) []string
}

// Threshold sets the shortest hold of an OS thread that counts as a pin.
// d <= 0 means DefaultThreshold. The positive control holds two threads for
// 2d at the same time, so it adds about 2d to every check.
func Threshold(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.threshold = d
		}
	}
}

// Expect requires the function named frame to appear in a stack the trace
// recorded while f ran, on any goroutine but the control's: proof that the
// code of interest ran in this process (a handler reached through HTTP,
// say). frame matches any function name that contains it, such as
// "fixtures.(*Server).parseSleep". Give Expect several times to require
// several functions.
//
// The trace records a stack when a goroutine blocks, enters a system call,
// creates or wakes another goroutine, is preempted, or writes a
// runtime/trace log or region: a function that only computes and returns
// may leave no stack, and then Expect fails.
func Expect(frame string) Option {
	return func(c *config) { c.expect = append(c.expect, frame) }
}

// Result is what one check measured. All times are since the trace's first
// event, as in analyze.Report.
type Result struct {
	// Threshold is the shortest hold that counted.
	Threshold time.Duration
	// Pins are the pins whose span overlapped f's run, the control's
	// excepted, longest first.
	Pins []Pin
	// Control is the positive control's outcome.
	Control Control
	// Ran is the evidence that f ran.
	Ran Ran
	// Report is the analyzer's whole report on the trace, control included.
	Report *analyze.Report
}

// Pin is one span where a goroutine held an OS thread without running Go
// code, as the analyzer reported it (analyze.PinnedEvent).
type Pin struct {
	Kind      string        // "cgo", "syscall" or "locked"
	Duration  time.Duration // how long it held the thread (at least this when Truncated)
	Start     time.Duration // when it began
	Goroutine int64         // the goroutine that held the thread
	// Target is the cgo function, the system call's entry point, or what
	// the locked goroutine blocked on ("sleep", "chan", ...).
	Target string
	// Site is the call site: the first frame of the stack that is neither
	// the runtime nor the standard library's plumbing.
	Site analyze.Frame
	// Stack is the goroutine's stack when the pin began, leaf first.
	Stack []analyze.Frame
	// Truncated is set when the span was still open at the trace's end.
	Truncated bool
}

// Control is the positive control's outcome: the kinds of pin the helper
// made before f ran, and what the analyzer reported on the control's
// goroutines.
type Control struct {
	Kinds  []string      // the kinds pinned: "locked", and "syscall" on Linux
	Hold   time.Duration // how long each held its thread: twice the threshold
	Caught []Pin         // the analyzer's pins on the control's goroutines
	Missed []string      // kinds in Kinds with no pin in Caught
}

// OK reports whether the analyzer caught every kind of pin the control made.
func (c Control) OK() bool { return len(c.Kinds) > 0 && len(c.Missed) == 0 }

// Ran is the evidence that f ran.
type Ran struct {
	// Returned is set when f returned normally.
	Returned bool
	// Panic is f's panic value and stack when it panicked, else "".
	Panic string
	// Goexit is set when f called runtime.Goexit (t.FailNow, t.Fatal,
	// t.SkipNow inside f).
	Goexit bool
	// Goroutine is the goroutine f ran on; Start and End bound its run
	// (trace time), Wall is its wall-clock duration.
	Goroutine  int64
	Start, End time.Duration
	Wall       time.Duration
	// Events and Goroutines count the trace events in f's run and the
	// goroutines they were on (the control's excepted).
	Events     int64
	Goroutines int
	// Expected holds one entry per Expect option, in order.
	Expected []Sighting
}

// Sighting is where an expected function was seen, if it was.
type Sighting struct {
	Want      string        // the Expect argument
	Seen      bool          // a stack in f's run held a matching function
	Frame     analyze.Frame // the first matching frame
	Goroutine int64         // on this goroutine
	At        time.Duration // in this event's stack
}

// Check runs f under a runtime execution trace, after the positive control,
// and reports the pins that overlapped f's run, the control's outcome and
// the evidence that f ran. It returns an error only when it could not
// measure: f is nil, an Expect is empty, the trace could not start (another
// is running) or could not be analyzed. The verdict is Result.Err.
//
// Check blocks until f returns, and is not safe to call concurrently with
// itself or with anything else that traces the process.
func Check(f func(), opts ...Option) (*Result, error) {
	if f == nil {
		return nil, errors.New("pintest: f is nil: nothing would run, so a pass would mean nothing")
	}
	cfg := config{threshold: DefaultThreshold, control: runControl}
	for _, o := range opts {
		o(&cfg)
	}
	if slices.Contains(cfg.expect, "") {
		return nil, errors.New(`pintest: Expect("") matches every function, so it would prove nothing: name the function that must run`)
	}
	return measure(f, cfg)
}

// Err is the verdict: nil when the control was caught, f ran (returned, and
// every Expect was seen) and nothing pinned; otherwise an error with one line
// per reason, each pin with its call site.
func (r *Result) Err() error {
	var errs []error
	if msg := r.controlFailure(); msg != "" {
		errs = append(errs, errors.New(msg))
	}
	for _, msg := range r.ranFailures() {
		errs = append(errs, errors.New(msg))
	}
	for _, p := range r.Pins {
		errs = append(errs, errors.New(p.String()))
	}
	return errors.Join(errs...)
}

// controlFailure says why the control failed, or "".
func (r *Result) controlFailure() string {
	c := r.Control
	if c.OK() {
		return ""
	}
	if len(c.Kinds) == 0 {
		return "pintest: the positive control pinned nothing, so a pass would mean nothing"
	}
	return fmt.Sprintf("pintest: the detector did not catch a known pin on this machine (missed: %s, held %v each, threshold %v), so a pass would mean nothing",
		strings.Join(c.Missed, ", "), c.Hold, r.Threshold)
}

// ranFailures says why f does not count as having run.
func (r *Result) ranFailures() []string {
	var out []string
	switch {
	case r.Ran.Panic != "":
		out = append(out, "pintest: f panicked, so it did not run to the end: "+r.Ran.Panic)
	case r.Ran.Goexit:
		out = append(out, "pintest: f did not return: it called runtime.Goexit (t.FailNow, t.Fatal or t.SkipNow inside f?), so it did not run to the end")
	case !r.Ran.Returned:
		out = append(out, "pintest: f did not return")
	}
	for _, s := range r.Ran.Expected {
		if !s.Seen {
			out = append(out, fmt.Sprintf("pintest: Expect(%q): no stack recorded during f's run (%v, %d events on %d goroutines) holds that function, so the code of interest did not run here",
				s.Want, r.Ran.End-r.Ran.Start, r.Ran.Events, r.Ran.Goroutines))
		}
	}
	return out
}

// NoPinning runs f under a runtime execution trace and fails t (t.Errorf,
// per pin, with its kind, duration and call site) when, while f ran, any
// goroutine of the process held an OS thread without running Go code for at
// least the threshold: a blocked goroutine locked to its thread
// (runtime.LockOSThread), a cgo call, a blocking system call.
//
// It also fails t when f did not run to the end or an Expect was not seen
// (t.Errorf), and stops the test (t.Fatalf) when it cannot measure: f is nil
// or an Expect empty, another execution trace is running, or the positive
// control's pins were not caught. It logs (t.Logf) the control's outcome, the evidence that f ran
// and every pin, so that a pass can be audited. It returns the Result, or nil
// when it could not measure at all (when t.Fatalf returns, as a fake
// testing.TB's may).
//
// Call it from the test's goroutine, never from parallel tests (see the
// package documentation).
func NoPinning(t testing.TB, f func(), opts ...Option) *Result {
	t.Helper()
	r, err := Check(f, opts...)
	if err != nil {
		t.Fatalf("%v", err)
		return nil
	}
	t.Logf("pintest: %s", r.controlSummary())
	t.Logf("pintest: %s", r.ranSummary())
	if msg := r.controlFailure(); msg != "" {
		t.Fatalf("%s", msg)
		return r
	}
	for _, msg := range r.ranFailures() {
		t.Errorf("%s", msg)
	}
	for _, p := range r.Pins {
		t.Errorf("pintest: %s", p)
	}
	if len(r.Pins) == 0 {
		t.Logf("pintest: no pin of %v or longer during f's run", r.Threshold)
	}
	return r
}

// controlSummary is one line on the control, for the test log.
func (r *Result) controlSummary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "positive control (%s, held %v each, threshold %v): ", strings.Join(r.Control.Kinds, " and "), r.Control.Hold, r.Threshold)
	if r.Control.OK() {
		b.WriteString("caught")
	} else {
		fmt.Fprintf(&b, "MISSED %s", strings.Join(r.Control.Missed, ", "))
	}
	for _, p := range r.Control.Caught {
		fmt.Fprintf(&b, "; %s %v by goroutine %d at %s", p.Kind, p.Duration.Round(time.Millisecond/10), p.Goroutine, p.Site.Func)
		if r.Report == nil {
			continue
		}
		for _, lg := range r.Report.Pinned.LockedGoroutines {
			if p.Kind == "locked" && lg.GoID == p.Goroutine {
				fmt.Fprintf(&b, " (evidence: %s)", lg.Evidence)
			}
		}
	}
	return b.String()
}

// ranSummary is one line of evidence that f ran, for the test log.
func (r *Result) ranSummary() string {
	var b strings.Builder
	how := "returned"
	switch {
	case r.Ran.Panic != "":
		how = "panicked"
	case r.Ran.Goexit:
		how = "called runtime.Goexit"
	}
	fmt.Fprintf(&b, "f %s after %v on goroutine %d; its run: %d trace events on %d goroutines",
		how, r.Ran.Wall.Round(time.Millisecond/10), r.Ran.Goroutine, r.Ran.Events, r.Ran.Goroutines)
	for _, s := range r.Ran.Expected {
		if s.Seen {
			fmt.Fprintf(&b, "; Expect(%q) seen on goroutine %d: %s %s:%d", s.Want, s.Goroutine, s.Frame.Func, s.Frame.File, s.Frame.Line)
		} else {
			fmt.Fprintf(&b, "; Expect(%q) NOT seen", s.Want)
		}
	}
	return b.String()
}

// maxPinFrames is how many of a pin's innermost frames String prints.
const maxPinFrames = 6

// String describes the pin on one line, then its innermost frames, one per
// line: function file:line.
func (p Pin) String() string {
	var b strings.Builder
	open := ""
	if p.Truncated {
		open = " (still open when the trace ended)"
	}
	what := p.Kind
	if p.Target != "" {
		what += " " + p.Target
	}
	fmt.Fprintf(&b, "goroutine %d held an OS thread for %v%s (%s) at %s %s:%d",
		p.Goroutine, p.Duration.Round(time.Millisecond/10), open, what, p.Site.Func, p.Site.File, p.Site.Line)
	for i, f := range p.Stack {
		if i == maxPinFrames {
			fmt.Fprintf(&b, "\n\t... %d more frames", len(p.Stack)-i)
			break
		}
		fmt.Fprintf(&b, "\n\t%s %s:%d", f.Func, f.File, f.Line)
	}
	return b.String()
}
