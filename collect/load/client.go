package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// requester sends one request at a time over its own connection. It is
// owned by one goroutine.
type requester interface {
	// do sends request id and reads the whole response before deadline,
	// returning the HTTP status.
	do(ctx context.Context, deadline time.Time, id requestID) (status int, err error)
	close()
}

// requestID is what a tagged request's RequestHeader says of it.
type requestID struct {
	seq      uint64
	intended int64 // intended send time, Unix ns
}

// target is the parsed, immutable description of what every request sends.
type target struct {
	addr      string // host:port
	tls       *tls.Config
	head      bool   // HEAD: responses carry no body
	request   []byte // the whole request, pre-built
	url       string
	method    string
	header    http.Header
	body      []byte
	dialer    net.Dialer
	conns     *connSet
	netClient *http.Client

	// A tagged run (tag != "") inserts its RequestHeader line between
	// reqHead, the request up to the end of its last header line, and
	// reqTail, the empty line ending the head and the body.
	tag              string
	reqHead, reqTail []byte
}

func newTarget(cfg *Config, conns *connSet) (*target, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("target URL %q: %w", cfg.URL, err)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	t := &target{
		addr:   net.JoinHostPort(u.Hostname(), port),
		head:   cfg.Method == http.MethodHead,
		url:    cfg.URL,
		method: cfg.Method,
		header: http.Header{},
		body:   cfg.Body,
		dialer: net.Dialer{Timeout: cfg.Timeout, KeepAlive: -1},
		conns:  conns,
	}
	if u.Scheme == "https" {
		t.tls = &tls.Config{ServerName: u.Hostname(), NextProtos: []string{"http/1.1"}, InsecureSkipVerify: cfg.InsecureTLS}
	}
	host := u.Host
	for _, h := range cfg.Header {
		if http.CanonicalHeaderKey(h.Name) == "Host" {
			host = h.Value
		}
	}
	var b bytes.Buffer
	path := u.RequestURI()
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", cfg.Method, path, host)
	hasUA := false
	for _, h := range cfg.Header {
		switch http.CanonicalHeaderKey(h.Name) {
		case "Host", "Content-Length":
			continue
		case "User-Agent":
			hasUA = true
		}
		fmt.Fprintf(&b, "%s: %s\r\n", h.Name, h.Value)
		t.header.Add(h.Name, h.Value)
	}
	if !hasUA {
		b.WriteString("User-Agent: schedscope\r\n")
		t.header.Set("User-Agent", "schedscope")
	}
	if cfg.Body != nil || cfg.Method == http.MethodPost || cfg.Method == http.MethodPut || cfg.Method == http.MethodPatch {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(cfg.Body))
	}
	headLen := b.Len()
	b.WriteString("\r\n")
	b.Write(cfg.Body)
	t.request = b.Bytes()
	t.tag, t.reqHead, t.reqTail = cfg.RequestTag, t.request[:headLen], t.request[headLen:]
	if cfg.Client == NetHTTP {
		t.netClient = &http.Client{Transport: &http.Transport{
			DialContext:         t.dialer.DialContext,
			MaxIdleConns:        cfg.MaxInflight,
			MaxIdleConnsPerHost: cfg.MaxInflight,
			DisableCompression:  true,
			ForceAttemptHTTP2:   false,
			TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
			TLSClientConfig:     t.tls,
		}}
	}
	return t, nil
}

// maxInlineTail is the longest reqTail (the empty line and the body) a
// tagged request copies into its buffer; a larger body is written after it
// in a second write rather than copied for every request.
const maxInlineTail = maxPipelinedRequest

// tagLineLen is the longest RequestHeader line of a run tagged tag; 0 when
// tag is "".
func tagLineLen(tag string) int {
	if tag == "" {
		return 0
	}
	// "Name: tag-seq intended\r\n", with a uint64 and an int64 of 20 digits at most.
	return len(RequestHeader) + len(": ") + len(tag) + len("-") + 20 + len(" ") + 20 + len("\r\n")
}

// maxRequestLen is the longest request the target sends, tag line included.
func (t *target) maxRequestLen() int { return len(t.request) + tagLineLen(t.tag) }

// appendTagValue appends the RequestHeader value of request id.
func (t *target) appendTagValue(buf []byte, id requestID) []byte {
	buf = append(buf, t.tag...)
	buf = append(buf, '-')
	buf = strconv.AppendUint(buf, id.seq, 10)
	buf = append(buf, ' ')
	return strconv.AppendInt(buf, id.intended, 10)
}

// appendTagged appends request id of a tagged run to buf: the pre-built
// request with its RequestHeader line, and the body unless withBody is
// false (the head then ends with its empty line).
func (t *target) appendTagged(buf []byte, id requestID, withBody bool) []byte {
	buf = append(buf, t.reqHead...)
	buf = append(buf, RequestHeader+": "...)
	buf = t.appendTagValue(buf, id)
	buf = append(buf, "\r\n"...)
	if withBody {
		return append(buf, t.reqTail...)
	}
	return append(buf, "\r\n"...)
}

// write writes request id to w whole: the pre-built request when the run
// is untagged; otherwise the request with its tag line, assembled in *buf
// (the writer's own buffer, reused from one request to the next), with a
// body longer than maxInlineTail written after it rather than copied.
func (t *target) write(w io.Writer, buf *[]byte, id requestID) error {
	if t.tag == "" {
		_, err := w.Write(t.request)
		return err
	}
	inline := len(t.reqTail) <= maxInlineTail
	*buf = t.appendTagged((*buf)[:0], id, inline)
	_, err := w.Write(*buf)
	if err == nil && !inline {
		_, err = w.Write(t.body)
	}
	return err
}

func (t *target) newRequester() requester {
	if t.netClient != nil {
		return &netRequester{t: t}
	}
	return &leanConn{t: t}
}

// closeIdle releases the net/http client's idle connections.
func (t *target) closeIdle() {
	if t.netClient != nil {
		t.netClient.CloseIdleConnections()
	}
}

// connSet tracks open connections so a cancelled run can close them all at
// once, unblocking their readers.
type connSet struct {
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func newConnSet() *connSet { return &connSet{conns: map[net.Conn]struct{}{}} }

// add registers c, or closes it and returns false after closeAll.
func (s *connSet) add(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *connSet) remove(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
}

// closeAll closes every registered connection and every later one.
func (s *connSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	clear(s.conns)
}

// leanConn is the lean HTTP/1.1 client: one keep-alive connection, the
// pre-built request written in one call, a minimal response parser.
type leanConn struct {
	t    *target
	conn net.Conn
	br   *bufio.Reader
	// used is true once the connection carried a response: a failure on a
	// reused connection before any response byte is retried once on a fresh
	// one (the server may have closed an idle keep-alive connection).
	used bool
	// out holds the request being written in a tagged run; owned by the
	// goroutine that writes on the connection.
	out []byte
}

func (c *leanConn) close() {
	if c.conn != nil {
		c.t.conns.remove(c.conn)
		c.conn = nil
	}
}

func (c *leanConn) dial(ctx context.Context, deadline time.Time) error {
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	conn, err := c.t.dialer.DialContext(dctx, "tcp", c.t.addr)
	if err != nil {
		return err
	}
	if c.t.tls != nil {
		tc := tls.Client(conn, c.t.tls)
		if err := tc.HandshakeContext(dctx); err != nil {
			conn.Close()
			return err
		}
		conn = tc
	}
	if !c.t.conns.add(conn) {
		return context.Canceled
	}
	c.conn = conn
	c.used = false
	if c.br == nil {
		c.br = bufio.NewReaderSize(conn, 4096)
	} else {
		c.br.Reset(conn)
	}
	return nil
}

func (c *leanConn) do(ctx context.Context, deadline time.Time, id requestID) (int, error) {
	for attempt := 0; ; attempt++ {
		if c.conn == nil {
			if err := c.dial(ctx, deadline); err != nil {
				return 0, err
			}
		}
		reused := c.used
		if err := c.conn.SetDeadline(deadline); err != nil {
			c.close()
			return 0, err
		}
		var status int
		var keep, started bool
		err := c.t.write(c.conn, &c.out, id)
		if err == nil {
			status, keep, started, err = c.readResponse()
		}
		if err != nil {
			c.close()
			if reused && !started && attempt == 0 && !isTimeout(err) && ctx.Err() == nil {
				continue
			}
			return 0, err
		}
		c.used = true
		if !keep {
			c.close()
		}
		return status, nil
	}
}

// readResponse reads one response, discarding its body. started reports
// whether any byte of it arrived; keep whether the connection may be reused.
func (c *leanConn) readResponse() (status int, keep, started bool, err error) {
	for {
		line, err := c.readLine()
		if err != nil {
			return 0, false, started, err
		}
		started = true
		h, err := parseStatusLine(line)
		if err != nil {
			return 0, false, true, err
		}
		for {
			line, err := c.readLine()
			if err != nil {
				return 0, false, true, err
			}
			if len(line) == 0 {
				break
			}
			if err := h.header(line); err != nil {
				return 0, false, true, err
			}
		}
		if h.interim() {
			continue // an interim response: the real one follows
		}
		status, keep = h.status, h.keep
		switch {
		case c.t.head || status == 204 || status == 304:
		case h.chunked:
			if err := c.discardChunked(); err != nil {
				return 0, false, true, err
			}
		case h.contentLength >= 0:
			if _, err := c.br.Discard(int(h.contentLength)); err != nil {
				return 0, false, true, err
			}
		default:
			// No length: the body runs to the end of the connection.
			if _, err := io.Copy(io.Discard, c.br); err != nil {
				return 0, false, true, err
			}
			keep = false
		}
		return status, keep, true, nil
	}
}

// respHead is what a response's head says about its body and connection.
// Both parsers fill it: the blocking readResponse and the event loop's
// respParser.
type respHead struct {
	status        int
	keep          bool
	contentLength int64 // -1 when absent
	chunked       bool
}

// parseStatusLine reads "HTTP/1.x NNN reason" (without its line ending).
func parseStatusLine(line []byte) (respHead, error) {
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return respHead{}, fmt.Errorf("malformed status line %q", truncate(line))
	}
	status := 0
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return respHead{}, fmt.Errorf("malformed status line %q", truncate(line))
		}
		status = status*10 + int(d-'0')
	}
	if status < 100 {
		return respHead{}, fmt.Errorf("malformed status line %q", truncate(line))
	}
	return respHead{status: status, keep: line[7] == '1', contentLength: -1}, nil
}

// header applies one header line (without its line ending); lines without
// a colon are ignored.
func (h *respHead) header(line []byte) error {
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		return nil
	}
	value = bytes.TrimSpace(value)
	switch {
	case bytes.EqualFold(name, []byte("Content-Length")):
		n, err := strconv.ParseInt(string(value), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("malformed Content-Length %q", truncate(value))
		}
		h.contentLength = n
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		h.chunked = bytes.Contains(bytes.ToLower(value), []byte("chunked"))
	case bytes.EqualFold(name, []byte("Connection")):
		switch {
		case bytes.EqualFold(value, []byte("close")):
			h.keep = false
		case bytes.EqualFold(value, []byte("keep-alive")):
			h.keep = true
		}
	}
	return nil
}

// parseChunkSize reads a chunk-size line (without its line ending),
// ignoring chunk extensions.
func parseChunkSize(line []byte) (int64, error) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("malformed chunk size %q", truncate(line))
	}
	return n, nil
}

// interim reports a 1xx response other than 101: the real one follows.
func (h *respHead) interim() bool { return h.status >= 100 && h.status < 200 && h.status != 101 }

func (c *leanConn) discardChunked() error {
	for {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		n, err := parseChunkSize(line)
		if err != nil {
			return err
		}
		if n == 0 {
			for { // trailers, up to the empty line
				t, err := c.readLine()
				if err != nil {
					return err
				}
				if len(t) == 0 {
					return nil
				}
			}
		}
		if _, err := c.br.Discard(int(n)); err != nil {
			return err
		}
		if crlf, err := c.readLine(); err != nil {
			return err
		} else if len(crlf) != 0 {
			return errors.New("malformed chunk: no CRLF after data")
		}
	}
}

// readLine returns one line without its line ending. The slice is valid
// until the next read; a line longer than the buffer is cut to its start.
func (c *leanConn) readLine() ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		head := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			_, err = c.br.ReadSlice('\n')
		}
		line = head
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

func truncate(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// netRequester sends through net/http's client, tuned for load.
type netRequester struct{ t *target }

func (n *netRequester) close() {}

func (n *netRequester) do(ctx context.Context, deadline time.Time, id requestID) (int, error) {
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var body io.Reader
	if n.t.body != nil {
		body = bytes.NewReader(n.t.body)
	}
	req, err := http.NewRequestWithContext(rctx, n.t.method, n.t.url, body)
	if err != nil {
		return 0, err
	}
	req.Header = n.t.header
	if n.t.tag != "" {
		// A header of its own: the transport may still be writing a
		// timed-out request's when the next one is made.
		req.Header = make(http.Header, len(n.t.header)+1)
		maps.Copy(req.Header, n.t.header)
		req.Header[RequestHeader] = []string{string(n.t.appendTagValue(nil, id))}
	}
	resp, err := n.t.netClient.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// Outcome classifies a finished request as PhaseResult counts it: OK, or
// one of the classes of ErrorCounts. The order matters: the classes up to
// OutcomeTimeout have a latency, those up to OutcomeStatus a status.
type Outcome uint8

const (
	// OutcomeOK is a 2xx response (PhaseResult.OK).
	OutcomeOK Outcome = iota
	// OutcomeStatus is a response of another status (ErrorCounts.Status).
	OutcomeStatus
	// OutcomeTimeout is a request that hit Config.Timeout (ErrorCounts.Timeout).
	OutcomeTimeout
	// OutcomeConnection is a refused or reset connection, or one closed
	// before a response (ErrorCounts.Connection).
	OutcomeConnection
	// OutcomeOther is anything else: a malformed response, ... (ErrorCounts.Other).
	OutcomeOther
)

// String names the outcome: "ok", "status", "timeout", "connection" or
// "other" (ParseOutcome reads them back).
func (o Outcome) String() string {
	switch o {
	case OutcomeOK:
		return "ok"
	case OutcomeStatus:
		return "status"
	case OutcomeTimeout:
		return "timeout"
	case OutcomeConnection:
		return "connection"
	case OutcomeOther:
		return "other"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// ParseOutcome reads an outcome's name (Outcome.String).
func ParseOutcome(s string) (Outcome, error) {
	for o := OutcomeOK; o <= OutcomeOther; o++ {
		if s == o.String() {
			return o, nil
		}
	}
	if len(s) > 32 {
		s = s[:32] + "..."
	}
	return 0, fmt.Errorf("outcome %q: want ok, status, timeout, connection or other", s)
}

// MarshalText encodes the outcome as its name.
func (o Outcome) MarshalText() ([]byte, error) {
	if o > OutcomeOther {
		return nil, fmt.Errorf("outcome %d: no such outcome", int(o))
	}
	return []byte(o.String()), nil
}

// UnmarshalText decodes an outcome's name.
func (o *Outcome) UnmarshalText(b []byte) error {
	v, err := ParseOutcome(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

func classify(status int, err error) Outcome {
	switch {
	case err == nil && status >= 200 && status < 300:
		return OutcomeOK
	case err == nil:
		return OutcomeStatus
	case isTimeout(err):
		return OutcomeTimeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, syscall.EADDRNOTAVAIL), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return OutcomeConnection
	default:
		return OutcomeOther
	}
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
