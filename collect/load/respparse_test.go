package load

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// parseCases are responses both parsers must read alike; each is followed
// by a second response on the same connection, which must be left intact.
var parseCases = []struct {
	name, method, resp string
}{
	{"content-length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"},
	{"zero length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
	{"chunked", "GET", "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n"},
	{"chunked, bare LF", "GET", "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nok\n0\n\n"},
	{"connection close", "GET", "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno"},
	{"HTTP/1.0", "GET", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"},
	{"HTTP/1.0 keep-alive", "GET", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok"},
	{"100 continue", "POST", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"},
	{"304", "GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n"},
	{"HEAD with length", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"},
	{"long header", "GET", "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 10000) + "\r\nContent-Length: 2\r\n\r\nok"},
	{"big body", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + strings.Repeat("b", 100000)},
}

// The event loop's push parser reads every response as the blocking
// parser does, however the bytes are split.
func TestRespParserMatchesReadResponse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			two := []byte(tc.resp + tc.resp)
			want := blockingParse(t, tc.method, two)
			splits := []int{1, 2, 3, 7, 64, len(two)}
			for _, size := range splits {
				got := pushParse(t, tc.method, two, size)
				if got != want {
					t.Fatalf("fed %d bytes at a time: got %+v, want %+v", size, got, want)
				}
			}
		})
	}
}

// A body without a length runs to the end of the connection.
func TestRespParserUntilEOF(t *testing.T) {
	p := respParser{}
	p.reset()
	done, _, err := p.feed([]byte("HTTP/1.1 200 OK\r\n\r\nbody without length"))
	if done || err != nil {
		t.Fatalf("done %v err %v before EOF", done, err)
	}
	if !p.eof() || p.status != 200 || p.keep {
		t.Errorf("at EOF: done %v status %d keep %v, want done 200 and the connection closed", p.eof(), p.status, p.keep)
	}
	q := respParser{}
	q.reset()
	q.feed([]byte("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort"))
	if q.eof() {
		t.Errorf("EOF in the middle of a Content-Length body completed the response")
	}
}

func TestRespParserErrors(t *testing.T) {
	for _, resp := range []string{
		"HTTP/2 200 OK\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n",
		"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxHead+10),
	} {
		p := respParser{}
		p.reset()
		var err error
		for b := []byte(resp); len(b) > 0 && err == nil; b = b[min(len(b), 1000):] {
			_, _, err = p.feed(b[:min(len(b), 1000)])
		}
		if err == nil {
			t.Errorf("%.40q: no error", resp)
		}
	}
}

type parsed struct {
	status int
	keep   bool
	err    bool
	second int // the second response's status
}

func blockingParse(t *testing.T, method string, data []byte) parsed {
	t.Helper()
	c := &leanConn{t: &target{head: method == "HEAD"}, br: bufio.NewReaderSize(bytes.NewReader(data), 4096)}
	status, keep, _, err := c.readResponse()
	if err != nil {
		return parsed{err: true}
	}
	second, _, _, err := c.readResponse()
	if err != nil {
		t.Fatalf("blocking parser: second response: %v", err)
	}
	return parsed{status: status, keep: keep, second: second}
}

func pushParse(t *testing.T, method string, data []byte, size int) parsed {
	t.Helper()
	p := respParser{head: method == "HEAD"}
	p.reset()
	var got parsed
	for len(data) > 0 {
		n := min(size, len(data))
		done, rest, err := p.feed(data[:n])
		if err != nil {
			return parsed{err: true}
		}
		data = data[n:]
		if done {
			if got.status == 0 {
				got.status, got.keep = p.status, p.keep
				p.reset()
				data = append(append([]byte(nil), rest...), data...)
				continue
			}
			got.second = p.status
			return got
		}
	}
	t.Fatalf("push parser: second response never completed (first %+v)", got)
	return got
}

// FuzzRespParser: on any bytes, the push parser agrees with the blocking
// one on the first response's status, whole or byte by byte.
func FuzzRespParser(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.resp))
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &leanConn{t: &target{}, br: bufio.NewReaderSize(bytes.NewReader(data), 1<<17)}
		wantStatus, _, _, werr := c.readResponse()
		for _, size := range []int{len(data), 1} {
			p := respParser{}
			p.reset()
			done, status := false, 0
			var err error
			for b := data; len(b) > 0 && !done && err == nil; {
				n := max(min(size, len(b)), 1)
				done, _, err = p.feed(b[:n])
				b = b[n:]
			}
			if !done && err == nil && p.eof() {
				done = true
			}
			if done {
				status = p.status
			}
			if werr == nil && err == nil && done && status != wantStatus {
				t.Fatalf("size %d: status %d, blocking parser %d", size, status, wantStatus)
			}
			if done && werr != nil && status >= 100 && werr.Error() != "EOF" && !strings.Contains(werr.Error(), "EOF") {
				t.Fatalf("size %d: push parser accepted %d, blocking parser: %v", size, status, werr)
			}
		}
	})
}
