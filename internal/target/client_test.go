package target_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// serve starts an httptest server for mux, closed when the test ends.
func serve(t *testing.T, mux http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// withAgent is a mux with schedscope's agent at /debug/schedscope/.
func withAgent(t *testing.T, opts agent.Options) *http.ServeMux {
	t.Helper()
	a, err := agent.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	mux := http.NewServeMux()
	a.Mount(mux, "/debug/schedscope/")
	return mux
}

// withPprof is a mux with net/http/pprof at /debug/pprof/.
func withPprof() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

func TestDiscover(t *testing.T) {
	ctx := context.Background()
	agentURL := serve(t, withAgent(t, agent.Options{}))
	pprofURL := serve(t, withPprof())
	plainURL := serve(t, http.NewServeMux())
	tests := []struct {
		name                 string
		target, agent, pprof string
		want                 rundir.Source
		wantURL              string
		err                  string
	}{
		{"agent found", agentURL + "/x", "", "", rundir.SourceAgent, agentURL + "/debug/schedscope/", ""},
		{"pprof found", pprofURL + "/x", "", "", rundir.SourcePprof, pprofURL + "/debug/pprof/", ""},
		{"neither", plainURL + "/x", "", "", rundir.SourceNone, "", ""},
		{"agent given", "", agentURL + "/debug/schedscope", "", rundir.SourceAgent, agentURL + "/debug/schedscope/", ""},
		{"pprof given", "", "", pprofURL + "/debug/pprof", rundir.SourcePprof, pprofURL + "/debug/pprof/", ""},
		{"agent given, pprof there", "", pprofURL + "/debug/pprof/", "", "", "", "does not answer as a schedscope agent"},
		{"pprof given, nothing there", "", "", plainURL + "/debug/pprof/", "", "", "HTTP 404"},
		{"agent URL not a URL", "", "127.0.0.1:1", "", "", "", "agent URL"},
		{"relative target", "/x", "", "", "", "", "not an absolute URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := target.Discover(ctx, tt.target, tt.agent, tt.pprof, "")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Source() != tt.want || c.URL() != tt.wantURL {
				t.Errorf("found %s at %q, want %s at %q", c.Source(), c.URL(), tt.want, tt.wantURL)
			}
		})
	}
}

// TestDiscoverWantsToken: a target whose agent (and pprof, behind the
// agent's guard) wants a token is found with the token, and without it is
// an error that says so, not a silent "neither answers".
func TestDiscoverWantsToken(t *testing.T) {
	ctx := context.Background()
	opts := agent.Options{Token: "s3cret"}
	mux := withAgent(t, opts)
	mux.Handle("/debug/pprof/", agent.Guard(opts, http.HandlerFunc(pprof.Index)))
	base := serve(t, mux)
	for _, token := range []string{"", "wrong"} {
		if c, err := target.Discover(ctx, base+"/x", "", "", token); err == nil || !strings.Contains(err.Error(), "needs a bearer token") {
			t.Errorf("token %q: %v, %v; want an error saying a token is needed", token, c, err)
		}
	}
	c, err := target.Discover(ctx, base+"/x", "", "", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Source() != rundir.SourceAgent {
		t.Errorf("found %s with the token, want the agent", c.Source())
	}
	p, err := target.Discover(ctx, "", "", base+"/debug/pprof/", "s3cret")
	if err != nil {
		t.Fatalf("pprof behind the guard, with the token: %v", err)
	}
	p.Close()
}

func TestAgent(t *testing.T) {
	ctx := context.Background()
	base := serve(t, withAgent(t, agent.Options{Token: "secret", AllowSetGOMAXPROCS: true}))
	wrong, err := target.NewAgent(base+"/debug/schedscope/", "wrong")
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	if _, err := wrong.Profile(ctx, "goroutine"); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("wrong token: err = %v, want a 401", err)
	}
	c, err := target.Discover(ctx, "", base+"/debug/schedscope/", "", "secret")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := c.(*target.Agent)
	if idx := a.Index(); idx == nil || idx.GoVersion != runtime.Version() {
		t.Errorf("index %+v: want the one Discover read", idx)
	}
	snap, err := a.Snapshot(ctx)
	if err != nil || snap.Values[rundir.MetricGoroutines] < 1 {
		t.Fatalf("snapshot: %v; goroutines %v", err, snap)
	}
	was := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(was)
	if err := a.SetGOMAXPROCS(ctx, 1); err != nil {
		t.Fatal(err)
	}
	fig, err := a.Figures(ctx)
	if err != nil || fig.GOMAXPROCS != 1 || fig.Goroutines < 1 || fig.Threads < 1 || fig.GoroutinesCreated < 1 {
		t.Errorf("figures %+v, %v: want GOMAXPROCS 1 and counts", fig, err)
	}
	if b, err := a.Profile(ctx, "goroutine"); err != nil || len(b) == 0 {
		t.Errorf("goroutine profile: %d bytes, %v", len(b), err)
	}
	var trace bytes.Buffer
	if err := a.Trace(ctx, 100*time.Millisecond, &trace); err != nil || trace.Len() == 0 {
		t.Errorf("trace window: %d bytes, %v", trace.Len(), err)
	}
}

func TestSetGOMAXPROCSRefused(t *testing.T) {
	base := serve(t, withAgent(t, agent.Options{}))
	a, err := target.NewAgent(base+"/debug/schedscope/", "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.SetGOMAXPROCS(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("err = %v, want the agent's 403", err)
	}
}

// TestCaptureRetriesBusy: a trace refused with 429 (the agent busy) is
// retried until it is served; an fgprof piece is not.
func TestCaptureRetriesBusy(t *testing.T) {
	var refusals atomic.Int64
	mux := http.NewServeMux()
	busyTwice := func(w http.ResponseWriter, r *http.Request) {
		if refusals.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusTooManyRequests)
			return
		}
		w.Write([]byte("served " + r.URL.RawQuery))
	}
	mux.HandleFunc("/a/trace", busyTwice)
	mux.HandleFunc("/a/fgprof", busyTwice)
	a, err := target.NewAgent(serve(t, mux)+"/a", "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var buf bytes.Buffer
	if err := a.Trace(context.Background(), 1500*time.Millisecond, &buf); err != nil || buf.String() != "served seconds=1.500" {
		t.Errorf("trace: %q, %v; want it served after two 429s", buf.String(), err)
	}
	refusals.Store(0)
	buf.Reset()
	if err := a.Fgprof(context.Background(), time.Second, &buf); err == nil || !strings.Contains(err.Error(), "429") || buf.Len() != 0 {
		t.Errorf("fgprof: %q, %v; want the 429 and nothing written", buf.String(), err)
	}
}

func TestPprof(t *testing.T) {
	ctx := context.Background()
	p, err := target.NewPprof(serve(t, withPprof())+"/debug/pprof/", "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g, th, err := p.Counts(ctx)
	if err != nil || g < 1 || th < 1 {
		t.Errorf("counts: %v goroutines, %v threads, %v", g, th, err)
	}
	if b, err := p.Profile(ctx, "goroutine"); err != nil || len(b) == 0 {
		t.Errorf("goroutine profile: %d bytes, %v", len(b), err)
	}
	var trace bytes.Buffer
	if err := p.Trace(ctx, 100*time.Millisecond, &trace); err != nil || trace.Len() == 0 {
		t.Errorf("trace window: %d bytes, %v", trace.Len(), err)
	}
	if _, err := (target.None{}).Profile(ctx, "goroutine"); err != target.ErrNoEndpoint {
		t.Errorf("None's profile: %v, want ErrNoEndpoint", err)
	}
}

// endless answers 200 with a chunked body that never ends, until the
// client goes away.
func endless(w http.ResponseWriter, r *http.Request) {
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// silent accepts the request and never answers, until the client goes away.
func silent(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// agentIndexThen is a mux whose agent index answers as an agent (flight
// recorder on) while every other path is served by rest.
func agentIndexThen(rest http.HandlerFunc) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/a/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"agent":"schedscope","flight_recorder":"on"}`))
	})
	mux.HandleFunc("/a/", rest)
	return mux
}

// TestLimitsEndless: against answers that never end, every read stops at
// its size limit with an error naming it, streamed captures keep exactly
// the limit, and an answer of exactly the limit is whole.
func TestLimitsEndless(t *testing.T) {
	ctx := context.Background()
	lim := target.Limits{JSON: 1 << 20, Profile: 2 << 20, Capture: 3 << 20, Read: 10 * time.Second, Margin: 10 * time.Second}
	a, err := target.NewAgent(serve(t, agentIndexThen(endless))+"/a/", "", target.WithLimits(lim))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.ReadIndex(ctx); err != nil {
		t.Fatalf("index: %v", err)
	}
	wantLimit := func(what string, err error, phrase string) {
		t.Helper()
		var le *target.LimitError
		if !errors.As(err, &le) || le.Size == 0 || !strings.Contains(err.Error(), phrase) {
			t.Errorf("%s: err = %v, want a size limit error saying %q", what, err, phrase)
		}
	}
	_, err = a.Snapshot(ctx)
	wantLimit("snapshot", err, "the JSON answer is larger than its 1 MiB limit")
	b, err := a.Profile(ctx, "goroutine")
	wantLimit("profile", err, "the profile is larger than its 2 MiB limit")
	if b != nil {
		t.Errorf("profile: %d bytes kept past the limit", len(b))
	}
	wantLimit("arm", a.ArmFlightRecorder(ctx, time.Minute), "1 MiB")
	for _, c := range []struct {
		name   string
		take   func(w *bytes.Buffer) error
		phrase string
		keep   int
	}{
		{"trace window", func(w *bytes.Buffer) error { return a.Trace(ctx, time.Second, w) }, "trace window is larger than its 3 MiB limit", 3 << 20},
		{"flight recorder", func(w *bytes.Buffer) error { return a.FlightRecorder(ctx, w) }, "flight-recorder snapshot is larger than its 3 MiB limit", 3 << 20},
		{"fgprof", func(w *bytes.Buffer) error { return a.Fgprof(ctx, time.Second, w) }, "fgprof profile is larger than its 2 MiB limit", 2 << 20},
	} {
		var buf bytes.Buffer
		wantLimit(c.name, c.take(&buf), c.phrase)
		if buf.Len() != c.keep {
			t.Errorf("%s: %d bytes kept, want the %d before the limit", c.name, buf.Len(), c.keep)
		}
	}

	// The pprof probe reads the first line only, and that line is bounded.
	p, err := target.NewPprof(serve(t, agentIndexThen(endless))+"/a/", "", target.WithLimits(lim))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, _, err = p.Counts(ctx)
	wantLimit("pprof counts", err, "the first line is larger than its 64 KiB limit")

	// A long text with a declared length: its first line is all that is read.
	long := http.NewServeMux()
	long.HandleFunc("/p/", func(w http.ResponseWriter, r *http.Request) {
		body := "goroutine profile: total 7\n" + strings.Repeat("stack\n", 100<<10)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(w, body)
	})
	lp, err := target.NewPprof(serve(t, long)+"/p/", "", target.WithLimits(lim))
	if err != nil {
		t.Fatal(err)
	}
	defer lp.Close()
	if g, th, err := lp.Counts(ctx); err != nil || g != 7 || th != 7 {
		t.Errorf("counts from a 600 KiB text: %v, %v, %v; want 7, 7 from its first line", g, th, err)
	}

	// The default limits: the agent given by URL fails naming 16 MiB, and
	// discovery finds neither endpoint, at once.
	endlessURL := serve(t, http.HandlerFunc(endless))
	_, err = target.Discover(ctx, "", endlessURL+"/debug/schedscope/", "", "")
	wantLimit("discover --agent", err, "larger than its 16 MiB limit")
	start := time.Now()
	c, err := target.Discover(ctx, endlessURL+"/x", "", "", "")
	if err != nil || c.Source() != rundir.SourceNone {
		t.Errorf("discover: %v, %v; want None", c, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("discovery took %v against an endless body", d)
	}

	// An answer of exactly the limit is whole.
	exact := http.NewServeMux()
	exact.HandleFunc("/a/profile/goroutine", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("p"), 2<<20))
	})
	e, err := target.NewAgent(serve(t, exact)+"/a/", "", target.WithLimits(lim))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if b, err := e.Profile(ctx, "goroutine"); err != nil || len(b) != 2<<20 {
		t.Errorf("a profile of exactly the limit: %d bytes, %v", len(b), err)
	}
}

// TestLimitsSilent: against a target that never answers, every read ends
// at its time limit (a whole read at Limits.Read, a capture at its window
// plus Limits.Margin) with an error naming it, and discovery gives up
// after one probe's limit.
func TestLimitsSilent(t *testing.T) {
	ctx := context.Background()
	lim := target.Limits{Read: 300 * time.Millisecond, Margin: 400 * time.Millisecond}
	a, err := target.NewAgent(serve(t, agentIndexThen(silent))+"/a/", "", target.WithLimits(lim))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.ReadIndex(ctx); err != nil {
		t.Fatalf("index: %v", err)
	}
	for _, c := range []struct {
		name   string
		take   func() error
		phrase string
		want   time.Duration
	}{
		{"snapshot", func() error { _, err := a.Snapshot(ctx); return err }, "the JSON answer was not complete within its 300ms limit", 300 * time.Millisecond},
		{"profile", func() error { _, err := a.Profile(ctx, "block"); return err }, "the profile was not complete within its 300ms limit", 300 * time.Millisecond},
		{"trace window", func() error { return a.Trace(ctx, 200*time.Millisecond, io.Discard) }, "the trace window was not complete within its 600ms limit", 600 * time.Millisecond},
		{"flight recorder", func() error { return a.FlightRecorder(ctx, io.Discard) }, "within its 400ms limit", 400 * time.Millisecond},
		{"fgprof", func() error { return a.Fgprof(ctx, 100*time.Millisecond, io.Discard) }, "the fgprof profile was not complete within its 500ms limit", 500 * time.Millisecond},
	} {
		start := time.Now()
		err := c.take()
		took := time.Since(start)
		if !target.NoAnswer(err) || !strings.Contains(err.Error(), c.phrase) {
			t.Errorf("%s: err = %v, want a time limit error saying %q", c.name, err, c.phrase)
		}
		// Noise cannot end a capture before its limit; it can delay the end,
		// but a limit that did not hold would leave the silent target's
		// capture hanging for good, so 2 s past a 0.3-0.6 s limit is a margin
		// only a stalled machine breaches (the end is one timer and a close).
		if took < c.want || took > c.want+2*time.Second {
			t.Errorf("%s: ended after %v, want its limit %v", c.name, took, c.want)
		}
	}
	// A context that ends first is the context's error, not a limit's.
	cut, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := a.Trace(cut, 200*time.Millisecond, io.Discard); target.NoAnswer(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("trace cut by its context: err = %v, want the context's deadline", err)
	}

	start := time.Now()
	c, err := target.Discover(ctx, serve(t, http.HandlerFunc(silent))+"/x", "", "", "", target.WithLimits(lim))
	if err != nil || c.Source() != rundir.SourceNone {
		t.Errorf("discover: %v, %v; want None", c, err)
	}
	if d := time.Since(start); d > lim.Read+time.Second {
		t.Errorf("discovery took %v against a silent host, want one probe's %v", d, lim.Read)
	}
}
