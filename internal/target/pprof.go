package target

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// Pprof talks to a target's net/http/pprof handlers (normally at
// /debug/pprof/), for targets without schedscope's agent. Its methods are
// safe for concurrent use.
type Pprof struct {
	c *conn
}

// NewPprof returns a client for net/http/pprof at base (such as
// "http://127.0.0.1:8080/debug/pprof/"); token, when not empty, is sent as
// a bearer token; opts bound its reads (the default Limits otherwise). It checks
// the URL's form only.
func NewPprof(base, token string, opts ...Option) (*Pprof, error) {
	c, err := newConn(base, token, "http://host:port/debug/pprof/", opts)
	if err != nil {
		return nil, fmt.Errorf("pprof %w", err)
	}
	return &Pprof{c: c}, nil
}

// Source returns rundir.SourcePprof.
func (p *Pprof) Source() rundir.Source { return rundir.SourcePprof }

// URL is the pprof base URL, ending with "/".
func (p *Pprof) URL() string { return p.c.base }

// Close releases the client's idle connections.
func (p *Pprof) Close() { p.c.close() }

// Counts reads the goroutine and threadcreate totals from the profiles'
// debug=1 text ("goroutine profile: total N").
func (p *Pprof) Counts(ctx context.Context) (goroutines, threads float64, err error) {
	if goroutines, err = p.total(ctx, "goroutine"); err != nil {
		return 0, 0, err
	}
	threads, err = p.total(ctx, "threadcreate")
	return goroutines, threads, err
}

// total reads the first line of a profile's debug=1 text, and nothing
// after it.
func (p *Pprof) total(ctx context.Context, name string) (float64, error) {
	first, err := p.c.readFirstLine(ctx, name+"?debug=1")
	if err != nil {
		return 0, err
	}
	_, total, ok := strings.Cut(string(first), "total ")
	if !ok {
		return 0, fmt.Errorf("%s%s?debug=1: no total in %q", p.c.base, name, first)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(total), 64)
	if err != nil {
		return 0, fmt.Errorf("%s%s?debug=1: total %q: %w", p.c.base, name, total, err)
	}
	return n, nil
}

// Profile fetches the instant profile name (goroutine, block, mutex,
// threadcreate) as a pprof proto, at most Limits.Profile.
func (p *Pprof) Profile(ctx context.Context, name string) ([]byte, error) {
	return p.c.readProfile(ctx, name)
}

// Trace streams an execution trace of the next window into w from
// /debug/pprof/trace, as Agent.Trace does.
func (p *Pprof) Trace(ctx context.Context, window time.Duration, w io.Writer) error {
	return p.c.traceWindow(ctx, window, w)
}
