package target

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// Client is what answers HTTP inside a target: an *Agent, a *Pprof, or None.
// It holds what a run's captures need from either; what only the agent
// serves is on *Agent. Implementations are safe for concurrent use.
type Client interface {
	// Source says which one answered.
	Source() rundir.Source
	// URL is the base URL the client talks to, ending with "/"; "" for None.
	URL() string
	// Profile fetches the instant profile name (goroutine, block, mutex,
	// threadcreate) as a gzipped pprof proto.
	Profile(ctx context.Context, name string) ([]byte, error)
	// Trace streams an execution trace of the next window into w as it
	// arrives; see Agent.Trace.
	Trace(ctx context.Context, window time.Duration, w io.Writer) error
	// Close releases the client's idle connections.
	Close()
}

var (
	_ Client = (*Agent)(nil)
	_ Client = (*Pprof)(nil)
	_ Client = None{}
)

// Discover finds what the target offers. agentURL and pprofURL, when set,
// are taken as given (an agent URL that does not answer as an agent is an
// error); when both are empty, it tries targetURL's host at
// /debug/schedscope/ and then /debug/pprof/, and returns None when neither
// answers; an endpoint that answers 401 (it wants a token, or another
// one) is an error then, not a reason to look elsewhere. token, when not
// empty, is sent as a bearer token. The caller closes the client.
func Discover(ctx context.Context, targetURL, agentURL, pprofURL, token string) (Client, error) {
	if agentURL != "" {
		a, err := NewAgent(agentURL, token)
		if err != nil {
			return nil, err
		}
		if _, err := a.ReadIndex(ctx); err != nil {
			a.Close()
			return nil, fmt.Errorf("agent %s: %w", agentURL, err)
		}
		return a, nil
	}
	if pprofURL != "" {
		p, err := NewPprof(pprofURL, token)
		if err != nil {
			return nil, err
		}
		if _, _, err := p.Counts(ctx); err != nil {
			p.Close()
			return nil, fmt.Errorf("pprof %s: %w", pprofURL, err)
		}
		return p, nil
	}
	u, err := url.Parse(targetURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("target URL %q: not an absolute URL", targetURL)
	}
	root := u.Scheme + "://" + u.Host
	if a, err := NewAgent(root+"/debug/schedscope/", token); err == nil {
		_, err := a.ReadIndex(ctx)
		if err == nil {
			return a, nil
		}
		a.Close()
		if unauthorized(err) {
			return nil, fmt.Errorf("the agent needs a bearer token (and the right one): %w", err)
		}
	}
	if p, err := NewPprof(root+"/debug/pprof/", token); err == nil {
		_, _, err := p.Counts(ctx)
		if err == nil {
			return p, nil
		}
		p.Close()
		if unauthorized(err) {
			return nil, fmt.Errorf("pprof needs a bearer token (and the right one): %w", err)
		}
	}
	return None{}, nil
}

// unauthorized reports whether err is a 401 answer: the endpoint is there
// but wants a token, which discovery should say rather than look elsewhere.
func unauthorized(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.code == http.StatusUnauthorized
}

// None is the Client of a target where neither the agent nor
// net/http/pprof answered: its captures fail with ErrNoEndpoint.
type None struct{}

// ErrNoEndpoint is returned by None's captures.
var ErrNoEndpoint = errors.New("neither schedscope's agent nor net/http/pprof answers on the target")

// Source returns rundir.SourceNone.
func (None) Source() rundir.Source { return rundir.SourceNone }

// URL returns "".
func (None) URL() string { return "" }

// Profile returns ErrNoEndpoint.
func (None) Profile(context.Context, string) ([]byte, error) { return nil, ErrNoEndpoint }

// Trace returns ErrNoEndpoint.
func (None) Trace(context.Context, time.Duration, io.Writer) error { return ErrNoEndpoint }

// Close does nothing.
func (None) Close() {}

// busyRetry is how long a capture refused with 429 (the agent still
// finishing a capture that was cut, or another client's) is retried.
const busyRetry = 3 * time.Second

// conn is the HTTP side of Agent and Pprof: one base URL, one token, a
// short client for instant reads and a long one for captures. Its methods
// are safe for concurrent use.
type conn struct {
	base  string // ends with "/"
	token string
	short *http.Client // polls and instant profiles: 5 s per request
	long  *http.Client // captures: no client timeout, the context bounds them
}

// newConn checks that base is an http(s) URL with a host; example is the
// kind of URL wanted, for the error.
func newConn(base, token, example string) (*conn, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("URL %q: want %s", base, example)
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}
	return &conn{
		base: base, token: token,
		short: &http.Client{Transport: tr, Timeout: 5 * time.Second},
		long:  &http.Client{Transport: tr},
	}, nil
}

// close releases the idle connections of both clients (they share a transport).
func (c *conn) close() { c.short.CloseIdleConnections() }

// statusError is a non-2xx answer; the body's first line is in the error.
type statusError struct {
	url  string
	code int
	msg  string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.url, e.code, e.msg)
}

// fetch streams method base+path into w. A non-2xx answer is a
// *statusError. When the context ends mid-body, what arrived is in w and
// the error says so.
func (c *conn) fetch(ctx context.Context, hc *http.Client, method, path string, w io.Writer) error {
	u := c.base + path
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		line, _ := bufio.NewReader(io.LimitReader(resp.Body, 512)).ReadString('\n')
		return &statusError{url: u, code: resp.StatusCode, msg: strings.TrimSpace(line)}
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("%s: reading the body: %w", u, err)
	}
	return nil
}

// read fetches method base+path into memory with the short client. It is
// the one place a target's answer is read whole.
func (c *conn) read(ctx context.Context, method, path string) ([]byte, error) {
	var buf bytes.Buffer
	if err := c.fetch(ctx, c.short, method, path, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readJSON reads method base+path and decodes the JSON answer into v.
func (c *conn) readJSON(ctx context.Context, method, path string, v any) error {
	b, err := c.read(ctx, method, path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s%s: %w", c.base, path, err)
	}
	return nil
}

// capture streams GET base+path into w with the long client. A 429 is
// retried for up to busyRetry; nothing was written to w then.
func (c *conn) capture(ctx context.Context, path string, w io.Writer) error {
	for deadline := time.Now().Add(busyRetry); ; {
		err := c.fetch(ctx, c.long, http.MethodGet, path, w)
		var hs *statusError
		if !errors.As(err, &hs) || hs.code != http.StatusTooManyRequests || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// traceWindow streams an execution trace of the next window into w; the
// agent and net/http/pprof serve it at the same path.
func (c *conn) traceWindow(ctx context.Context, window time.Duration, w io.Writer) error {
	return c.capture(ctx, "trace?seconds="+seconds(window), w)
}

// seconds writes d as a query parameter in seconds, to the millisecond.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
