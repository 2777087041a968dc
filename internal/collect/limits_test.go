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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			defer srv.CloseClientConnections()
			cfg := Config{
				Load:         load.Config{URL: srv.URL + "/load", Rate: 20, Duration: 2 * time.Second, Timeout: time.Second},
				Out:          filepath.Join(t.TempDir(), "run"),
				TraceWindow:  time.Second,
				SnapshotWhen: tt.snapshot,
				PollEvery:    250 * time.Millisecond,
				Limits:       tt.limits,
			}
			r, err := NewRunner(cfg)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, err := r.Run(context.Background())
			took := time.Since(start)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			// The plan, the stragglers' timeout, one read limit for discovery,
			// and the end's captures.
			if bound := cfg.Load.Duration + cfg.Load.Timeout + 4*time.Second; took > bound {
				t.Errorf("the run took %v, want at most %v", took, bound)
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
