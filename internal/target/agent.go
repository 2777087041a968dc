package target

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/internal/rundir"
)

// Agent talks to schedscope's in-target agent (package collect/agent,
// normally mounted at /debug/schedscope/). Its methods are safe for
// concurrent use; the agent itself serves one capture (trace window, fgprof)
// at a time and answers 429 to a second.
type Agent struct {
	c     *conn
	index atomic.Pointer[agent.Index] // the last index read
}

// NewAgent returns a client for the agent at base (such as
// "http://127.0.0.1:8080/debug/schedscope/"); token, when not empty, is sent
// as a bearer token; opts bound its reads (the default Limits otherwise). It
// checks the URL's form only: nothing is sent until a method is called.
func NewAgent(base, token string, opts ...Option) (*Agent, error) {
	c, err := newConn(base, token, "http://host:port/debug/schedscope/", opts)
	if err != nil {
		return nil, fmt.Errorf("agent %w", err)
	}
	return &Agent{c: c}, nil
}

// Source returns rundir.SourceAgent.
func (a *Agent) Source() rundir.Source { return rundir.SourceAgent }

// URL is the agent's base URL, ending with "/".
func (a *Agent) URL() string { return a.c.base }

// Close releases the client's idle connections.
func (a *Agent) Close() { a.c.close() }

// ReadIndex reads the agent's index (its Go version, GOMAXPROCS, flight
// recorder state, pools) and keeps it for Index. It fails when the URL does
// not answer as a schedscope agent.
func (a *Agent) ReadIndex(ctx context.Context) (*agent.Index, error) {
	b, err := a.c.read(ctx, http.MethodGet, "", "JSON answer", a.c.lim.JSON)
	if err != nil {
		return nil, err
	}
	var idx agent.Index
	if err := json.Unmarshal(b, &idx); err != nil || idx.Agent != "schedscope" {
		return nil, errors.New("does not answer as a schedscope agent (no index JSON)")
	}
	a.index.Store(&idx)
	return &idx, nil
}

// Index is the index ReadIndex read last; nil before it succeeded once.
func (a *Agent) Index() *agent.Index { return a.index.Load() }

// Snapshot reads the agent's /metrics: the runtime metrics, histograms and
// pools at this instant.
func (a *Agent) Snapshot(ctx context.Context) (*agent.Snapshot, error) {
	var s agent.Snapshot
	if err := a.c.readJSON(ctx, http.MethodGet, "metrics", &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Figures reads the agent's /metrics and returns the scheduler figures a
// sweep step records. The created-goroutines count is cumulative since the
// target started.
func (a *Agent) Figures(ctx context.Context) (*rundir.AgentFigures, error) {
	s, err := a.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return &rundir.AgentFigures{
		GOMAXPROCS:        float64(s.GOMAXPROCS),
		Goroutines:        s.Values[rundir.MetricGoroutines],
		Threads:           s.Values[rundir.MetricThreads],
		GoroutinesCreated: s.Values[rundir.MetricGoroutinesCreated],
	}, nil
}

// SetGOMAXPROCS sets the target's GOMAXPROCS through POST /gomaxprocs and
// checks that the target reports the new value. The target must have enabled
// it (agent.Options.AllowSetGOMAXPROCS): otherwise the agent answers 403.
func (a *Agent) SetGOMAXPROCS(ctx context.Context, n int) error {
	var st struct {
		GOMAXPROCS int `json:"gomaxprocs"`
	}
	if err := a.c.readJSON(ctx, http.MethodPost, "gomaxprocs?n="+strconv.Itoa(n), &st); err != nil {
		return err
	}
	if st.GOMAXPROCS != n {
		return fmt.Errorf("agent %s: GOMAXPROCS is %d after setting %d", a.c.base, st.GOMAXPROCS, n)
	}
	return nil
}

// ArmFlightRecorder starts an on-demand flight recorder for d (at most
// agent.MaxArm). Index is not reread: call ReadIndex to see the new state.
func (a *Agent) ArmFlightRecorder(ctx context.Context, d time.Duration) error {
	var st agent.ArmState
	return a.c.readJSON(ctx, http.MethodPost, "flightrecorder/arm?for="+d.String(), &st)
}

// maxProbeAnswer bounds the sleep probe's answer: a few hundred histogram
// buckets at most.
const maxProbeAnswer = 1 << 20

// SleepProbe runs the agent's sleep probe (POST /sleepprobe): goroutines
// goroutines calling time.Sleep(sleep) over and over for dur. It returns the
// agent's JSON answer as sent, and decoded. The probe holds the agent's
// capture slot, so it fails with a 429 while another capture runs.
func (a *Agent) SleepProbe(ctx context.Context, goroutines int, sleep, dur time.Duration) ([]byte, *agent.ProbeResult, error) {
	path := fmt.Sprintf("sleepprobe?goroutines=%d&sleep=%s&seconds=%s", goroutines, sleep, seconds(dur))
	var b appender
	if err := a.c.fetch(ctx, http.MethodPost, path, &b, bound{what: "sleep probe", size: maxProbeAnswer, time: dur + a.c.lim.Margin}); err != nil {
		return nil, nil, err
	}
	var res agent.ProbeResult
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, nil, fmt.Errorf("sleep probe: %w", err)
	}
	return b, &res, nil
}

// Profile fetches the instant profile name (goroutine, block, mutex,
// threadcreate) from /profile/NAME, at most Limits.Profile.
func (a *Agent) Profile(ctx context.Context, name string) ([]byte, error) {
	return a.c.readProfile(ctx, "profile/"+name)
}

// Trace streams an execution trace of the next window into w as it
// arrives. A 429 (the agent busy with another capture) is retried for a few
// seconds. When ctx ends mid-trace, or the trace passes Limits.Capture or
// the window plus Limits.Margin, what arrived is in w and the error says so.
func (a *Agent) Trace(ctx context.Context, window time.Duration, w io.Writer) error {
	return a.c.traceWindow(ctx, window, w)
}

// FlightRecorder streams the flight recorder's snapshot (the last seconds
// of execution trace) into w, retrying a 429 as Trace does, within
// Limits.Capture and Limits.Margin.
func (a *Agent) FlightRecorder(ctx context.Context, w io.Writer) error {
	return a.c.capture(ctx, "flightrecorder", "flight-recorder snapshot", a.c.lim.Capture, a.c.lim.Margin, w)
}

// Fgprof streams an fgprof wall-clock profile of the next d into w, at
// most Limits.Profile (the caller keeps the pieces in memory) within d
// plus Limits.Margin. A 429 is not retried: the piece is lost.
func (a *Agent) Fgprof(ctx context.Context, d time.Duration, w io.Writer) error {
	return a.c.fetch(ctx, http.MethodGet, "fgprof?seconds="+seconds(d), w,
		bound{what: "fgprof profile", size: a.c.lim.Profile, time: d + a.c.lim.Margin})
}
