package pintest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	rtrace "runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/schedscope/schedscope/analyze/pintest"
	"github.com/schedscope/schedscope/internal/fixtures"
)

// The tests here trace the whole process, so none is parallel.

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// recorder is a testing.TB that records failures instead of failing the
// real test, so the helper's failing cases can be checked. Logs go to the
// real test's log. Fatalf ends the calling goroutine, as the real one does:
// call NoPinning through noPinning, on a goroutine of its own.
type recorder struct {
	testing.TB // the real test

	mu     sync.Mutex
	errors []string
	fatal  string
}

func (r *recorder) Helper() {}

func (r *recorder) Logf(format string, args ...any) {
	r.TB.Helper()
	r.TB.Logf(format, args...)
}

func (r *recorder) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.errors = append(r.errors, msg)
	r.mu.Unlock()
	r.TB.Logf("(recorded Errorf) %s", msg)
}

func (r *recorder) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.fatal = msg
	r.mu.Unlock()
	r.TB.Logf("(recorded Fatalf) %s", msg)
	runtime.Goexit()
}

// failures returns every recorded Errorf and Fatalf message.
func (r *recorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string{}, r.errors...)
	if r.fatal != "" {
		out = append(out, r.fatal)
	}
	return out
}

// noPinning calls pintest.NoPinning with a recorder on a goroutine of its
// own (where the recorder's Fatalf may call runtime.Goexit) and returns the
// recorder and the result (nil after Fatalf).
func noPinning(t *testing.T, f func(), opts ...pintest.Option) (*recorder, *pintest.Result) {
	t.Helper()
	rec := &recorder{TB: t}
	var res *pintest.Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		res = pintest.NoPinning(rec, f, opts...)
	}()
	<-done
	return rec, res
}

// startFixture starts schedscope's fixture server in this process, on a free
// loopback port, and shuts it down when the test ends.
func startFixture(t *testing.T, model fixtures.Model) *fixtures.Server {
	t.Helper()
	cfg := fixtures.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Model = model
	cfg.Workers = 4
	s, err := fixtures.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("fixtures.Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("fixture Shutdown: %v", err)
		}
	})
	return s
}

// getter returns a function that GETs url with a client of its own, and
// reports a failed request on t (from any goroutine).
func getter(t *testing.T, url string) func() {
	tr := &http.Transport{Proxy: nil}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	return func() {
		resp, err := c.Get(url)
		if err != nil {
			t.Errorf("GET %s: %v", url, err)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %s", url, resp.StatusCode, body)
		}
	}
}

// pinCase is a fixture path that pins a thread, the kind of pin it makes and
// the function that makes it.
type pinCase struct {
	how   string // /pinned?how=
	kind  string // the analyzer's kind
	frame string // the function holding the thread
}

// pinCases are the fixture's ways of pinning a thread.
var pinCases = []pinCase{
	{"locked", "locked", "fixtures.lockedWait"},
	{"syscall", "syscall", "fixtures.syscallSleep"},
	{"cgo", "cgo", "fixtures.cgoSleep"},
}

// TestNoPinningCatchesFixturePins: a request to /pinned, in the goroutine
// model, holds a thread on the server's handler goroutine (not f's
// descendant) for 100 ms; NoPinning must fail, naming the kind and the call
// site, and must have seen the handler run.
func TestNoPinningCatchesFixturePins(t *testing.T) {
	s := startFixture(t, fixtures.ModelGoroutine)
	for _, tc := range pinCases {
		t.Run(tc.how, func(t *testing.T) {
			if tc.how == "syscall" && runtime.GOOS != "linux" {
				t.Skip("the fixture's syscall pin is Linux's nanosleep")
			}
			if tc.how == "cgo" && !cgoBuilt {
				t.Skip("built without cgo (CGO_ENABLED=0): the fixture cannot call C")
			}
			const hold = 100 * time.Millisecond
			rec, res := noPinning(t, getter(t, fmt.Sprintf("%s/pinned?how=%s&ms=%d", s.URL(), tc.how, hold.Milliseconds())),
				pintest.Expect(tc.frame))
			if res == nil {
				t.Fatalf("NoPinning stopped: %v", rec.failures())
			}
			var caught *pintest.Pin
			for i, p := range res.Pins {
				if p.Kind == tc.kind && strings.Contains(p.Site.Func, tc.frame) {
					caught = &res.Pins[i]
				}
			}
			if caught == nil {
				t.Fatalf("no %s pin at %s among %d pins: %v", tc.kind, tc.frame, len(res.Pins), res.Pins)
			}
			if caught.Duration < hold*9/10 {
				t.Errorf("the %s pin lasted %v, want about %v", tc.kind, caught.Duration, hold)
			}
			if caught.Goroutine == res.Ran.Goroutine {
				t.Errorf("the pin is on f's goroutine %d; the fixture's handler goroutine held the thread", caught.Goroutine)
			}
			var reported bool
			for _, msg := range rec.failures() {
				if strings.Contains(msg, "held an OS thread") && strings.Contains(msg, "("+tc.kind) && strings.Contains(msg, tc.frame) && strings.Contains(msg, ".go:") {
					reported = true
				}
			}
			if !reported {
				t.Errorf("no failure names the %s pin and its call site %s file:line: %q", tc.kind, tc.frame, rec.failures())
			}
			if rec.fatal != "" {
				t.Errorf("Fatalf %q: the control must have been caught", rec.fatal)
			}
			if x := res.Ran.Expected; len(x) != 1 || !x[0].Seen {
				t.Errorf("Expect(%q) not seen: %+v", tc.frame, x)
			}
			if err := res.Err(); err == nil || !strings.Contains(err.Error(), tc.frame) {
				t.Errorf("Result.Err() = %v, want the pin at %s", err, tc.frame)
			}
		})
	}
}

// TestNoPinningPassesSleep is the negative control, on the real t: the
// goroutine model's /sleep parks its handler goroutine in time.Sleep, which
// holds no thread; the handler must be seen running.
//
// Its threshold is 50 ms, half the sleep: a sleep that pinned its thread
// would still be a pin, while a short system call whose thread the kernel
// ran late (a busy machine can take 20 ms, the default threshold, to run it
// again after it returns) would need to be more than twice as late.
func TestNoPinningPassesSleep(t *testing.T) {
	s := startFixture(t, fixtures.ModelGoroutine)
	const sleep = 100 * time.Millisecond
	res := pintest.NoPinning(t, getter(t, fmt.Sprintf("%s/sleep?ms=%d", s.URL(), sleep.Milliseconds())),
		pintest.Expect("fixtures.(*Server).parseSleep"), pintest.Threshold(sleep/2))
	if res == nil {
		return
	}
	if len(res.Pins) != 0 || res.Err() != nil {
		t.Errorf("pins %v, verdict %v; want none", res.Pins, res.Err())
	}
	if !res.Ran.Returned || res.Ran.Wall < sleep || res.Ran.End-res.Ran.Start < sleep {
		t.Errorf("f's run: %+v; want it returned after at least %v", res.Ran, sleep)
	}
	if x := res.Ran.Expected; len(x) != 1 || !x[0].Seen || !strings.Contains(x[0].Frame.Func, "parseSleep") || x[0].Goroutine == res.Ran.Goroutine {
		t.Errorf("Expect: %+v; want parseSleep seen on the handler's goroutine", x)
	}
}

// TestControl: every check runs the control, catches it, reports it, and
// never blames it on f, even when f pins the same way itself.
func TestControl(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
		pins int // f's own
	}{
		{"f does nothing", func() {}, 0},
		{"f sleeps in nanosleep", func() { nanosleep(60 * time.Millisecond) }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.pins > 0 && runtime.GOOS != "linux" {
				t.Skip("nanosleep is Linux's")
			}
			res, err := pintest.Check(tc.f)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			c := res.Control
			want := []string{"locked"}
			if runtime.GOOS == "linux" {
				want = append(want, "syscall")
			}
			if !c.OK() || fmt.Sprint(c.Kinds) != fmt.Sprint(want) || len(c.Missed) != 0 {
				t.Fatalf("control %+v: want %v caught", c, want)
			}
			if c.Hold != 2*pintest.DefaultThreshold {
				t.Errorf("control held %v, want twice the threshold", c.Hold)
			}
			for _, k := range want {
				var found bool
				for _, p := range c.Caught {
					if p.Kind == k && p.Duration >= c.Hold && strings.Contains(p.Site.Func, "pintest.") {
						found = true
					}
				}
				if !found {
					t.Errorf("no %s pin of at least %v at the control's call site among %+v", k, c.Hold, c.Caught)
				}
			}
			for _, p := range res.Pins {
				if p.Start < res.Ran.Start-p.Duration {
					t.Errorf("pin %v ended before f began at %v", p, res.Ran.Start)
				}
				for _, cp := range c.Caught {
					if cp.Goroutine == p.Goroutine {
						t.Errorf("the control's pin was blamed on f: %v", p)
					}
				}
			}
			if len(res.Pins) != tc.pins {
				t.Errorf("%d pins in f's run, want %d: %v", len(res.Pins), tc.pins, res.Pins)
			}
			if tc.pins > 0 && (res.Pins[0].Goroutine != res.Ran.Goroutine || !strings.Contains(res.Pins[0].Site.Func, "pintest_test.nanosleep")) {
				t.Errorf("f's pin %v: want it on f's goroutine %d at pintest_test.nanosleep", res.Pins[0], res.Ran.Goroutine)
			}
		})
	}
	t.Run("logged", func(t *testing.T) {
		var logs []string
		rec := &logRecorder{TB: t, logs: &logs}
		pintest.NoPinning(rec, func() {})
		joined := strings.Join(logs, "\n")
		for _, want := range []string{"positive control (locked", "caught", "f returned", "no pin of 20ms or longer"} {
			if !strings.Contains(joined, want) {
				t.Errorf("the log lacks %q:\n%s", want, joined)
			}
		}
	})
}

// logRecorder keeps the helper's log lines; failures go to the real test.
type logRecorder struct {
	testing.TB
	logs *[]string
}

func (r *logRecorder) Logf(format string, args ...any) {
	*r.logs = append(*r.logs, fmt.Sprintf(format, args...))
}

// TestBlindControl: when the detector misses the control, NoPinning stops
// the test, whatever f did.
func TestBlindControl(t *testing.T) {
	rec, res := noPinning(t, func() {}, pintest.WithBlindControl("locked", "syscall"))
	if res != nil || !strings.Contains(rec.fatal, "the detector did not catch a known pin on this machine") ||
		!strings.Contains(rec.fatal, "locked, syscall") || !strings.Contains(rec.fatal, "a pass would mean nothing") {
		t.Errorf("Fatalf %q, result %v: want the control's failure", rec.fatal, res)
	}
	res, err := pintest.Check(func() {}, pintest.WithBlindControl("locked"))
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if res.Control.OK() || res.Err() == nil || !strings.Contains(res.Err().Error(), "did not catch a known pin") {
		t.Errorf("control %+v, verdict %v: want missed", res.Control, res.Err())
	}
	res, err = pintest.Check(func() {}, pintest.WithBlindControl())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if res.Control.OK() || res.Err() == nil {
		t.Errorf("a control that ran nothing passed: %+v", res.Control)
	}
}

// TestFDidNotRun: a check of code that did not run, or did not run to the
// end, fails.
func TestFDidNotRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     func()
		opts  []pintest.Option
		fatal bool
		want  string
	}{
		{"nil f", nil, nil, true, "f is nil"},
		{"empty Expect", func() {}, []pintest.Option{pintest.Expect("")}, true, `Expect("") matches every function`},
		{"Goexit", func() { runtime.Goexit() }, nil, false, "runtime.Goexit"},
		{"panic", func() { panic("boom") }, nil, false, "f panicked, so it did not run to the end: boom"},
		{"panic(nil)", func() { panic(nil) }, nil, false, "f panicked"},
		{"Expect a function that never ran", func() { time.Sleep(time.Millisecond) },
			[]pintest.Option{pintest.Expect("fixtures.(*Server).parseSleep")}, false, `Expect("fixtures.(*Server).parseSleep"): no stack recorded during f's run`},
		{"one Expect of two seen", func() { time.Sleep(time.Millisecond) },
			[]pintest.Option{pintest.Expect("pintest_test.TestFDidNotRun"), pintest.Expect("nosuch.Function")}, false, `Expect("nosuch.Function")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, res := noPinning(t, tc.f, tc.opts...)
			if tc.fatal {
				if !strings.Contains(rec.fatal, tc.want) {
					t.Errorf("Fatalf %q, want %q", rec.fatal, tc.want)
				}
				return
			}
			if rec.fatal != "" {
				t.Fatalf("Fatalf %q: only Errorf expected", rec.fatal)
			}
			var found bool
			for _, msg := range rec.errors {
				found = found || strings.Contains(msg, tc.want)
			}
			if !found {
				t.Errorf("errors %q, want one with %q", rec.errors, tc.want)
			}
			if res == nil || res.Err() == nil {
				t.Errorf("result %+v: want a failing verdict", res)
			}
		})
	}
}

// TestSeenExpect: Expect finds f's own functions and those of goroutines it
// reaches.
func TestSeenExpect(t *testing.T) {
	res, err := pintest.Check(func() {
		done := make(chan struct{})
		go worker(done)
		<-done
	}, pintest.Expect("pintest_test.worker"), pintest.Expect("pintest_test.TestSeenExpect"))
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if res.Err() != nil {
		t.Fatalf("verdict: %v", res.Err())
	}
	for _, x := range res.Ran.Expected {
		if !x.Seen || x.Frame.File == "" || x.Frame.Line == 0 || x.At < res.Ran.Start || x.At > res.Ran.End {
			t.Errorf("Expect(%q): %+v, want seen in f's run [%v, %v]", x.Want, x, res.Ran.Start, res.Ran.End)
		}
	}
}

// worker blocks once (so a stack of it is recorded) and says it is done.
func worker(done chan<- struct{}) {
	time.Sleep(time.Millisecond)
	close(done)
}

// TestTraceAlreadyRunning: with another execution trace running the check
// cannot measure, and says so.
func TestTraceAlreadyRunning(t *testing.T) {
	if err := rtrace.Start(io.Discard); err != nil {
		t.Skipf("cannot start a trace for the test: %v", err)
	}
	rec, res := noPinning(t, func() {})
	rtrace.Stop()
	if res != nil || !strings.Contains(rec.fatal, "cannot start an execution trace") {
		t.Errorf("Fatalf %q, result %v: want the trace's failure", rec.fatal, res)
	}
}

// TestThreshold: the threshold is the analyzer's; a syscall over it is a
// pin, one far under it is not (unless the machine held the thread past the
// threshold anyway, which a starved machine can: then the test skips with
// its figures); the control holds for twice it.
func TestThreshold(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("nanosleep is Linux's")
	}
	for _, tc := range []struct {
		threshold, hold time.Duration
		pins            int
	}{
		{10 * time.Millisecond, 30 * time.Millisecond, 1},
		{60 * time.Millisecond, time.Millisecond, 0},
	} {
		t.Run(fmt.Sprintf("%v syscall, threshold %v", tc.hold, tc.threshold), func(t *testing.T) {
			res, err := pintest.Check(func() { nanosleep(tc.hold) }, pintest.Threshold(tc.threshold))
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if res.Threshold != tc.threshold || res.Report.PinThreshNs != int64(tc.threshold) || res.Control.Hold != 2*tc.threshold || !res.Control.OK() {
				t.Errorf("threshold %v, analyzer's %v, control %+v", res.Threshold, time.Duration(res.Report.PinThreshNs), res.Control)
			}
			for _, p := range append(res.Pins, res.Control.Caught...) {
				if p.Duration < tc.threshold {
					t.Errorf("a pin under the threshold: %v", p)
				}
			}
			if len(res.Pins) > tc.pins && tc.pins == 0 {
				t.Skipf("a %v syscall held its thread for %v or more (the machine is starved): %v", tc.hold, tc.threshold, res.Pins)
			}
			if len(res.Pins) != tc.pins {
				t.Errorf("%d pins, want %d: %v", len(res.Pins), tc.pins, res.Pins)
			}
			if tc.pins > 0 && (len(res.Pins) == 0 || res.Pins[0].Duration < tc.hold) {
				t.Errorf("pins %v: want one of at least %v", res.Pins, tc.hold)
			}
		})
	}
}
