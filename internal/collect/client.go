package collect

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

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/internal/rundir"
)

// targetClient reads from the agent or from net/http/pprof. Its methods are
// safe for concurrent use.
type targetClient struct {
	source rundir.Source
	base   string // ends with "/": the agent's mount point or /debug/pprof/
	token  string
	http   *http.Client // short requests (polls, instant profiles)
	long   *http.Client // captures: no client timeout, the context bounds them
	index  *agent.Index // the agent's index; nil for pprof
}

// errHTTPStatus is a non-2xx answer; the body's first line is in the error.
type errHTTPStatus struct {
	url  string
	code int
	msg  string
}

func (e *errHTTPStatus) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.url, e.code, e.msg)
}

func newTargetClient(source rundir.Source, base, token string) *targetClient {
	if base != "" && !strings.HasSuffix(base, "/") {
		base += "/"
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}
	return &targetClient{
		source: source, base: base, token: token,
		http: &http.Client{Transport: tr, Timeout: 5 * time.Second},
		long: &http.Client{Transport: tr},
	}
}

func (c *targetClient) close() {
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
}

// discover finds what the target offers. agentURL and pprofURL, when set,
// are taken as given (an agent URL that does not answer as an agent is an
// error); when both are empty, it tries targetURL's host at
// /debug/schedscope/ and then /debug/pprof/.
func discover(ctx context.Context, targetURL, agentURL, pprofURL, token string) (*targetClient, error) {
	if agentURL != "" {
		c := newTargetClient(rundir.SourceAgent, agentURL, token)
		if err := c.readIndex(ctx); err != nil {
			c.close()
			return nil, fmt.Errorf("agent %s: %w", agentURL, err)
		}
		return c, nil
	}
	if pprofURL != "" {
		c := newTargetClient(rundir.SourcePprof, pprofURL, token)
		if _, _, err := c.pprofCounts(ctx); err != nil {
			c.close()
			return nil, fmt.Errorf("pprof %s: %w", pprofURL, err)
		}
		return c, nil
	}
	u, err := url.Parse(targetURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("target URL %q: not an absolute URL", targetURL)
	}
	root := u.Scheme + "://" + u.Host
	c := newTargetClient(rundir.SourceAgent, root+"/debug/schedscope/", token)
	if err := c.readIndex(ctx); err == nil {
		return c, nil
	}
	c.close()
	c = newTargetClient(rundir.SourcePprof, root+"/debug/pprof/", token)
	if _, _, err := c.pprofCounts(ctx); err == nil {
		return c, nil
	}
	c.close()
	return &targetClient{source: rundir.SourceNone}, nil
}

func (c *targetClient) readIndex(ctx context.Context) error {
	b, err := c.get(ctx, c.http, "")
	if err != nil {
		return err
	}
	var idx agent.Index
	if err := json.Unmarshal(b, &idx); err != nil || idx.Agent != "schedscope" {
		return errors.New("does not answer as a schedscope agent (no index JSON)")
	}
	c.index = &idx
	return nil
}

// get fetches base+path into memory.
func (c *targetClient) get(ctx context.Context, hc *http.Client, path string) ([]byte, error) {
	var buf bytes.Buffer
	if err := c.fetch(ctx, hc, http.MethodGet, path, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fetch streams base+path into w. A non-2xx answer is an *errHTTPStatus.
// When the context ends mid-body, what arrived is in w and the error says so.
func (c *targetClient) fetch(ctx context.Context, hc *http.Client, method, path string, w io.Writer) error {
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
		return &errHTTPStatus{url: u, code: resp.StatusCode, msg: strings.TrimSpace(line)}
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("%s: reading the body: %w", u, err)
	}
	return nil
}

// snapshot reads the agent's /metrics.
func (c *targetClient) snapshot(ctx context.Context) (*agent.Snapshot, error) {
	b, err := c.get(ctx, c.http, "metrics")
	if err != nil {
		return nil, err
	}
	var s agent.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%smetrics: %w", c.base, err)
	}
	return &s, nil
}

// pprofCounts reads the goroutine and threadcreate totals from
// net/http/pprof's debug=1 text ("goroutine profile: total N").
func (c *targetClient) pprofCounts(ctx context.Context) (goroutines, threads float64, err error) {
	read := func(name string) (float64, error) {
		// debug=1 of threadcreate is short; of goroutine it groups stacks, so
		// the first line comes quickly whatever the goroutine count.
		b, err := c.get(ctx, c.http, name+"?debug=1")
		if err != nil {
			return 0, err
		}
		first, _, _ := bytes.Cut(b, []byte("\n"))
		_, total, ok := strings.Cut(string(first), "total ")
		if !ok {
			return 0, fmt.Errorf("%s%s?debug=1: no total in %q", c.base, name, first)
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(total), 64)
		if err != nil {
			return 0, fmt.Errorf("%s%s?debug=1: total %q: %w", c.base, name, total, err)
		}
		return n, nil
	}
	if goroutines, err = read("goroutine"); err != nil {
		return 0, 0, err
	}
	threads, err = read("threadcreate")
	return goroutines, threads, err
}

// profilePath is where the instant profile name lives for this source.
func (c *targetClient) profilePath(name string) string {
	if c.source == rundir.SourceAgent {
		return "profile/" + name
	}
	return name
}

// tracePath is the trace-window path for seconds.
func (c *targetClient) tracePath(window time.Duration) string {
	return "trace?seconds=" + strconv.FormatFloat(window.Seconds(), 'f', 3, 64)
}
