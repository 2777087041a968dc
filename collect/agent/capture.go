package agent

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"

	"github.com/felixge/fgprof"
)

// DefaultTraceWindow is the trace window when /trace has no seconds parameter.
const DefaultTraceWindow = 5 * time.Second

// DefaultFgprofWindow is fgprof's window when /fgprof has no seconds parameter.
const DefaultFgprofWindow = 10 * time.Second

// serveTrace streams an execution trace of the next seconds. It stops early
// when the client goes away.
func (a *Agent) serveTrace(w http.ResponseWriter, r *http.Request) {
	d, err := durationParam(r, "seconds", DefaultTraceWindow, a.opts.MaxCapture)
	if err != nil {
		httpError(w, http.StatusBadRequest, "schedscope agent: trace: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="trace.out"`)
	if err := trace.Start(w); err != nil {
		// Another tracer (net/http/pprof's /debug/pprof/trace, a test) is running.
		httpError(w, http.StatusServiceUnavailable, "schedscope agent: trace: %v", err)
		return
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
	}
	trace.Stop()
}

// serveFlightRecorder writes the flight recorder's window. The snapshot is
// buffered first so that a failure is reported as an HTTP error, not as a
// truncated trace.
func (a *Agent) serveFlightRecorder(w http.ResponseWriter, r *http.Request) {
	a.frMu.Lock()
	fr, frErr := a.fr, a.frErr
	a.frMu.Unlock()
	if fr == nil {
		switch {
		case frErr != nil:
		case a.opts.FlightRecorder.onDemand():
			frErr = fmt.Errorf("flight recorder on demand and not armed: POST /flightrecorder/arm?for=D first")
		default:
			frErr = fmt.Errorf("flight recorder disabled in the agent's options")
		}
		httpError(w, http.StatusServiceUnavailable, "schedscope agent: %v", frErr)
		return
	}
	if !a.snapshotting.TryLock() {
		w.Header().Set("Retry-After", "1")
		httpError(w, http.StatusTooManyRequests, "schedscope agent: another flight-recorder snapshot is being written; one at a time")
		return
	}
	defer a.snapshotting.Unlock()
	var buf bytes.Buffer
	if _, err := fr.WriteTo(&buf); err != nil {
		httpError(w, http.StatusServiceUnavailable, "schedscope agent: flight recorder snapshot: %v", err)
		return
	}
	a.snapshots.Add(1)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="flightrecorder.out"`)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	_, _ = buf.WriteTo(w) // the client went away: nothing to report to
}

// profileNames are the runtime/pprof profiles /profile/ serves.
var profileNames = map[string]bool{"goroutine": true, "block": true, "mutex": true, "threadcreate": true}

// serveProfile writes a runtime/pprof profile now: a proto by default, a text
// form with ?debug=1 or 2. Deltas over an interval are the caller's business
// (take two and subtract), which keeps the agent free of proto parsing.
func (a *Agent) serveProfile(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(strings.TrimSuffix(r.URL.Path, "/"), "/profile/")
	if !profileNames[name] {
		httpError(w, http.StatusNotFound, "schedscope agent: no profile %q (want goroutine, block, mutex or threadcreate)", name)
		return
	}
	debug := 0
	if arg := r.URL.Query().Get("debug"); arg != "" {
		var err error
		if debug, err = strconv.Atoi(arg); err != nil || debug < 0 || debug > 2 {
			httpError(w, http.StatusBadRequest, "schedscope agent: debug=%q: want 0, 1 or 2", arg)
			return
		}
	}
	var buf bytes.Buffer
	if err := pprof.Lookup(name).WriteTo(&buf, debug); err != nil {
		httpError(w, http.StatusInternalServerError, "schedscope agent: profile %s: %v", name, err)
		return
	}
	if debug == 0 {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name+".pb.gz"))
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	_, _ = buf.WriteTo(w)
}

// serveFgprof samples every goroutine's stack at 99 Hz for seconds (fgprof's
// wall-clock profile) and writes it as a pprof proto. A client that goes away
// ends the sampling early.
func (a *Agent) serveFgprof(w http.ResponseWriter, r *http.Request) {
	d, err := durationParam(r, "seconds", DefaultFgprofWindow, a.opts.MaxCapture)
	if err != nil {
		httpError(w, http.StatusBadRequest, "schedscope agent: fgprof: %v", err)
		return
	}
	var buf bytes.Buffer
	stop := fgprof.Start(&buf, fgprof.FormatPprof)
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
	}
	if err := stopFgprof(stop, d); err != nil {
		httpError(w, http.StatusInternalServerError, "schedscope agent: fgprof: %v", err)
		return
	}
	if r.Context().Err() != nil {
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="fgprof.pb.gz"`)
	_, _ = buf.WriteTo(w)
}

// stopFgprof calls fgprof's stop function. fgprof v0.9.5 divides by zero when
// it took no sample (a window under its 10 ms period, or a client that left
// at once; https://github.com/felixge/fgprof/issues/30): that panic becomes
// an error. The sampler has stopped by the time it panics.
func stopFgprof(stop func() error, window time.Duration) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("no sample taken in %v (fgprof samples every 10 ms): %v", window, r)
		}
	}()
	return stop()
}
