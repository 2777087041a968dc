package collect

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/derive"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// endlessBody answers 200 with a chunked body that never ends, until the
// client goes away.
func endlessBody(w http.ResponseWriter, r *http.Request) {
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// noAnswer accepts the request and never answers, until the client goes away.
func noAnswer(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// TestRunBoundedByLimits: a run against a target that answers without end
// or not at all ends on time: within its plan, the stragglers' timeout and
// a few seconds, with its captures cut at their limits and each failure
// recorded in the manifest naming the limit.
func TestRunBoundedByLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("five runs against hostile targets, up to 14 s")
	}
	a, err := agent.New(agent.Options{FlightRecorder: agent.FlightRecorderOptions{AlwaysOn: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// agentWith is a target whose load path answers at once and whose agent
	// answers its index and polls, while its captures are served by capture.
	agentWith := func(capture http.HandlerFunc) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("/load", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
		a.Mount(mux, "/debug/schedscope/")
		for _, p := range []string{"trace", "fgprof", "flightrecorder", "profile/"} {
			mux.HandleFunc("/debug/schedscope/"+p, capture)
		}
		return mux
	}
	small := target.Limits{Profile: 1 << 20, Capture: 2 << 20}
	quick := target.Limits{Read: 500 * time.Millisecond, Margin: 500 * time.Millisecond}
	tests := []struct {
		name     string
		handler  http.Handler
		limits   target.Limits
		snapshot string
		source   rundir.Source
		missing  map[string]string // what -> a phrase of why
		traceMax int64             // trace.out's size at most; -1: none
	}{
		{"endless captures", agentWith(endlessBody), small, "", rundir.SourceAgent, map[string]string{
			"execution trace trace.out":  "trace window is larger than its 2 MiB limit",
			"part of the fgprof profile": "fgprof profile is larger than its 1 MiB limit",
			"block profile":              "profile is larger than its 1 MiB limit",
		}, 2 << 20},
		{"endless snapshot", agentWith(endlessBody), small, "end", rundir.SourceAgent, map[string]string{
			"flight-recorder snapshot": "flight-recorder snapshot is larger than its 2 MiB limit",
		}, 2 << 20},
		{"silent captures", agentWith(noAnswer), quick, "", rundir.SourceAgent, map[string]string{
			"execution trace trace.out": "trace window was not complete within its 1.5s limit",
			"block profile":             "profile was not complete within its 500ms limit",
			"goroutine profile":         "not asked: block got no answer in time",
		}, -1},
		{"endless host", http.HandlerFunc(endlessBody), target.Limits{}, "", rundir.SourceNone, nil, -1},
		{"silent host", http.HandlerFunc(noAnswer), quick, "", rundir.SourceNone, nil, -1},
	}
	const plan, timeout = 2 * time.Second, time.Second
	// run is one run against h and how long it took.
	run := func(t *testing.T, h http.Handler, limits target.Limits, snapshot string) (*Outcome, time.Duration) {
		t.Helper()
		srv := httptest.NewServer(h)
		defer srv.Close()
		defer srv.CloseClientConnections()
		r, err := NewRunner(Config{
			Load:         load.Config{URL: srv.URL + "/load", Rate: 20, Duration: plan, Timeout: timeout},
			Out:          filepath.Join(t.TempDir(), "run"),
			TraceWindow:  time.Second,
			SnapshotWhen: snapshot,
			PollEvery:    250 * time.Millisecond,
			Limits:       limits,
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out, err := r.Run(context.Background())
		took := time.Since(start)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		return out, took
	}
	// The control: the same run against a target that answers everything
	// (the real agent serving its captures, no limit reached). Its time is
	// what this machine takes now for the plan, the trace window and the
	// end's captures; a busy machine stretches it (7.3 s for a hostile run
	// at load average 20, where a quiet one takes under 5).
	// It runs at the start, and again right after a run that breached its
	// bound (noise comes in bursts), and the slower of the two counts.
	mux := http.NewServeMux()
	mux.HandleFunc("/load", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	a.Mount(mux, "/debug/schedscope/")
	measureControl := func(t *testing.T) time.Duration {
		_, took := run(t, mux, target.Limits{}, "end")
		t.Logf("control: a run against a target that answers everything took %v", took.Round(time.Millisecond))
		return took
	}
	control := measureControl(t)
	// boundAfter is the bound for a hostile run given the control.
	boundAfter := func(control time.Duration) time.Duration {
		return max(plan+timeout+4*time.Second, control+timeout+3*time.Second)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, took := run(t, tt.handler, tt.limits, tt.snapshot)
			// The plan, the stragglers' timeout, one read limit for discovery,
			// and the end's captures: on a quiet machine within 4 s past the
			// plan and the timeout. A hostile target adds at most its limits
			// (the stragglers' timeout and 3 s of captures cut short) to what
			// the control took, so a busy machine's bound follows the control;
			// a limit that did not hold leaves the run hanging far past both.
			bound := boundAfter(control)
			t.Logf("the run took %v (bound %v, control %v)", took.Round(time.Millisecond), bound.Round(time.Millisecond), control.Round(time.Millisecond))
			if took > bound {
				again := measureControl(t)
				if took <= boundAfter(again) {
					t.Logf("the run took %v, within %v of the control measured again (%v): the machine was slow", took, boundAfter(again), again)
				} else {
					t.Errorf("the run took %v, want at most %v (the control took %v and %v)", took, bound, control, again)
				}
			}
			m := out.Manifest
			if m.Target.Source != tt.source || m.Status != rundir.StatusComplete {
				t.Errorf("source %q status %q (%s), want %q complete", m.Target.Source, m.Status, m.Reason, tt.source)
			}
			for what, phrase := range tt.missing {
				found := false
				for _, x := range m.Missing {
					found = found || (x.What == what && strings.Contains(x.Why, phrase))
				}
				if !found {
					t.Errorf("missing %q saying %q not recorded: %+v", what, phrase, m.Missing)
				}
			}
			fi, err := os.Stat(filepath.Join(out.Dir, rundir.TraceFile))
			switch {
			case tt.traceMax < 0 && err == nil:
				t.Errorf("trace.out of %d bytes from a target that sent none", fi.Size())
			case tt.traceMax >= 0 && err != nil:
				t.Errorf("no trace.out: %v", err)
			case tt.traceMax >= 0 && fi.Size() > tt.traceMax:
				t.Errorf("trace.out has %d bytes, over the %d limit", fi.Size(), tt.traceMax)
			}
			// What was kept derives (the trace that was cut is no trace).
			if _, err := derive.Dir(context.Background(), out.Dir); err != nil {
				t.Errorf("derive: %v", err)
			}
		})
	}
}
