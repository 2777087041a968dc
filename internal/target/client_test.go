package target_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// serve starts an httptest server for mux, closed when the test ends.
func serve(t *testing.T, mux *http.ServeMux) string {
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
