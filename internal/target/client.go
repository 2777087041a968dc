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
// answers (at once when the first probe got no answer within the read
// limit); an endpoint that answers 401 (it wants a token, or another one)
// is an error then, not a reason to look elsewhere. token, when not empty,
// is sent as a bearer token. Every read, the probes' included, is bounded
// by the Limits opts set (the defaults otherwise). The caller closes the
// client.
func Discover(ctx context.Context, targetURL, agentURL, pprofURL, token string, opts ...Option) (Client, error) {
	if agentURL != "" {
		a, err := NewAgent(agentURL, token, opts...)
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
		p, err := NewPprof(pprofURL, token, opts...)
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
	if a, err := NewAgent(root+"/debug/schedscope/", token, opts...); err == nil {
		_, err := a.ReadIndex(ctx)
		if err == nil {
			return a, nil
		}
		a.Close()
		if unauthorized(err) {
			return nil, fmt.Errorf("the agent needs a bearer token (and the right one): %w", err)
		}
		if NoAnswer(err) {
			return None{}, nil // pprof's probe would wait as long
		}
	}
	if p, err := NewPprof(root+"/debug/pprof/", token, opts...); err == nil {
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

// conn is the HTTP side of Agent and Pprof: one base URL, one token, one
// client, and the Limits every read is held to. Its methods are safe for
// concurrent use.
type conn struct {
	base  string // ends with "/"
	token string
	lim   Limits       // every field set
	hc    *http.Client // no client timeout: each read's context bounds it
}

// newConn checks that base is an http(s) URL with a host; example is the
// kind of URL wanted, for the error.
func newConn(base, token, example string, opts []Option) (*conn, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("URL %q: want %s", base, example)
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	var lim Limits
	for _, o := range opts {
		o(&lim)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true, MaxResponseHeaderBytes: maxHeaderBytes}
	return &conn{base: base, token: token, lim: lim.withDefaults(), hc: &http.Client{Transport: tr}}, nil
}

// close releases the client's idle connections.
func (c *conn) close() { c.hc.CloseIdleConnections() }

// statusError is a non-2xx answer; the body's first line is in the error.
type statusError struct {
	url  string
	code int
	msg  string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.url, e.code, e.msg)
}

// bound is what one fetch may take: at most size bytes of body, and time
// from the request to the last byte. what names the answer in errors.
// prefix says only the body's start is wanted (its writer stops the
// fetch), so a longer declared Content-Length is no error.
type bound struct {
	what   string
	size   int64
	time   time.Duration
	prefix bool
}

// fetch streams method base+path into w, within b. A non-2xx answer is a
// *statusError; an answer past b's size or time is a *LimitError, with the
// bytes that came before the limit in w. When ctx ends mid-body, what
// arrived is in w and the error says so.
func (c *conn) fetch(ctx context.Context, method, path string, w io.Writer, b bound) error {
	u := c.base + path
	over := &LimitError{URL: u, What: b.what, Time: b.time}
	ctx, cancel := context.WithTimeoutCause(ctx, b.time, over)
	defer cancel()
	err := c.do(ctx, method, u, w, b)
	if err != nil && context.Cause(ctx) == over {
		return over // the deadline, whatever error it surfaced as
	}
	return err
}

// do is fetch's request, under fetch's deadline.
func (c *conn) do(ctx context.Context, method, u string, w io.Writer, b bound) error {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		line, _ := bufio.NewReader(io.LimitReader(resp.Body, 512)).ReadString('\n')
		return &statusError{url: u, code: resp.StatusCode, msg: strings.TrimSpace(line)}
	}
	if resp.ContentLength > b.size && !b.prefix {
		return &LimitError{URL: u, What: b.what, Size: b.size}
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, b.size))
	if err != nil {
		return fmt.Errorf("%s: reading the body: %w", u, err)
	}
	if n == b.size {
		// The limit was reached: an answer of exactly size bytes ends here.
		var one [1]byte
		if k, _ := io.ReadFull(resp.Body, one[:]); k > 0 {
			return &LimitError{URL: u, What: b.what, Size: b.size}
		}
	}
	return nil
}

// read fetches method base+path into memory, at most size bytes within
// Limits.Read. It is the one place a target's answer is read whole.
func (c *conn) read(ctx context.Context, method, path, what string, size int64) ([]byte, error) {
	var buf appender
	if err := c.fetch(ctx, method, path, &buf, bound{what: what, size: size, time: c.lim.Read}); err != nil {
		return nil, err
	}
	return buf, nil
}

// appender collects what is written to it. It grows as append does (by a
// quarter once large), not by doubling as bytes.Buffer does: an answer near
// its size limit costs little more than the limit.
type appender []byte

func (a *appender) Write(p []byte) (int, error) {
	*a = append(*a, p...)
	return len(p), nil
}

// readJSON reads method base+path, a JSON answer of at most Limits.JSON,
// and decodes it into v.
func (c *conn) readJSON(ctx context.Context, method, path string, v any) error {
	b, err := c.read(ctx, method, path, "JSON answer", c.lim.JSON)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s%s: %w", c.base, path, err)
	}
	return nil
}

// readProfile reads an instant profile whole, at most Limits.Profile.
func (c *conn) readProfile(ctx context.Context, path string) ([]byte, error) {
	return c.read(ctx, http.MethodGet, path, "profile", c.lim.Profile)
}

// errGotLine stops a fetch whose firstLine has its line.
var errGotLine = errors.New("got the first line")

// firstLine keeps what is written up to the first line break, then
// refuses more with errGotLine.
type firstLine struct{ b []byte }

func (f *firstLine) Write(p []byte) (int, error) {
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		f.b = append(f.b, p[:i]...)
		return i, errGotLine
	}
	f.b = append(f.b, p...)
	return len(p), nil
}

// readFirstLine reads the first line of a text answer, at most
// maxFirstLine bytes within Limits.Read, and closes the connection after it.
func (c *conn) readFirstLine(ctx context.Context, path string) ([]byte, error) {
	var f firstLine
	err := c.fetch(ctx, http.MethodGet, path, &f, bound{what: "first line", size: maxFirstLine, time: c.lim.Read, prefix: true})
	if err != nil && !errors.Is(err, errGotLine) {
		return nil, err
	}
	return f.b, nil
}

// capture streams GET base+path into w: at most size bytes, within d (the
// window captured plus Limits.Margin). A 429 is retried for up to
// busyRetry, inside d; nothing was written to w then.
func (c *conn) capture(ctx context.Context, path, what string, size int64, d time.Duration, w io.Writer) error {
	deadline := time.Now().Add(d)
	for retryUntil := time.Now().Add(busyRetry); ; {
		err := c.fetch(ctx, http.MethodGet, path, w, bound{what: what, size: size, time: max(time.Until(deadline), time.Millisecond)})
		var le *LimitError
		if errors.As(err, &le) && le.Time > 0 {
			le.Time = d // the capture's limit, not what was left of it
			return le
		}
		var hs *statusError
		if !errors.As(err, &hs) || hs.code != http.StatusTooManyRequests || time.Now().After(retryUntil) {
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
// It is bounded by Limits.Capture and the window plus Limits.Margin.
func (c *conn) traceWindow(ctx context.Context, window time.Duration, w io.Writer) error {
	return c.capture(ctx, "trace?seconds="+seconds(window), "trace window", c.lim.Capture, window+c.lim.Margin, w)
}

// seconds writes d as a query parameter in seconds, to the millisecond.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
