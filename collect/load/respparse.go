package load

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// respParser reads HTTP/1.1 responses pushed to it in pieces, as a
// non-blocking connection delivers them: the event loop's counterpart of
// leanConn.readResponse, with the same rules (interim 1xx responses
// skipped; a body by Content-Length, chunked, or up to the connection's
// end; no body for HEAD, 204 and 304). It keeps only an incomplete head or
// chunk-size line; body bytes are counted and dropped.
type respParser struct {
	head bool // the request is HEAD: responses carry no body

	st      parseState
	buf     []byte // an incomplete head or line
	remain  int64  // body or chunk bytes still to come
	status  int
	keep    bool
	started bool // a byte of this response has arrived
}

type parseState uint8

const (
	psHead       parseState = iota // status line and headers, up to the blank line
	psBody                         // remain bytes of body
	psChunkSize                    // a chunk-size line
	psChunkData                    // remain bytes of chunk data
	psChunkCRLF                    // the CRLF after a chunk's data
	psTrailer                      // trailer lines, up to the blank line
	psUntilClose                   // a body without a length: up to EOF
)

// maxHead bounds a response head (and a chunk-size or trailer line).
const maxHead = 64 << 10

var errNoCRLF = errors.New("malformed chunk: no CRLF after data")

// reset prepares p for the next response on the connection.
func (p *respParser) reset() {
	p.st, p.buf, p.remain, p.status, p.keep, p.started = psHead, p.buf[:0], 0, 0, false, false
}

// feed consumes b. It reports done with the response's status and whether
// the connection stays open once a whole response has arrived; rest is what
// b held after it (bytes a well-behaved server never sends before the next
// request). An error means the response is malformed.
func (p *respParser) feed(b []byte) (done bool, rest []byte, err error) {
	if len(b) > 0 {
		p.started = true
	}
	for len(b) > 0 {
		switch p.st {
		case psHead:
			var head []byte
			head, b, err = p.takeHead(b)
			if err != nil || head == nil {
				return false, nil, err
			}
			if done, err = p.parseHead(head); err != nil || done {
				return done, b, err
			}
		case psBody, psChunkData:
			n := min(p.remain, int64(len(b)))
			p.remain -= n
			b = b[n:]
			if p.remain > 0 {
				return false, nil, nil
			}
			if p.st == psBody {
				return true, b, nil
			}
			p.st = psChunkCRLF
		case psChunkCRLF:
			var line []byte
			line, b, err = p.takeUntil(b, []byte("\n"))
			if err != nil || line == nil {
				return false, nil, err
			}
			if len(bytes.TrimSuffix(line, []byte("\r"))) != 0 {
				return false, nil, errNoCRLF
			}
			p.st = psChunkSize
		case psChunkSize:
			var line []byte
			line, b, err = p.takeUntil(b, []byte("\n"))
			if err != nil || line == nil {
				return false, nil, err
			}
			line = bytes.TrimSuffix(line, []byte("\r"))
			if i := bytes.IndexByte(line, ';'); i >= 0 {
				line = line[:i]
			}
			n, perr := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
			if perr != nil || n < 0 {
				return false, nil, fmt.Errorf("malformed chunk size %q", truncate(line))
			}
			if n == 0 {
				p.st = psTrailer
			} else {
				p.st, p.remain = psChunkData, n
			}
		case psTrailer:
			var line []byte
			line, b, err = p.takeUntil(b, []byte("\n"))
			if err != nil || line == nil {
				return false, nil, err
			}
			if len(bytes.TrimSuffix(line, []byte("\r"))) == 0 {
				return true, b, nil
			}
		case psUntilClose:
			return false, nil, nil
		}
	}
	return false, nil, nil
}

// eof is the connection's end: it completes a body that runs to the end of
// the connection, and is an error anywhere else.
func (p *respParser) eof() (done bool) {
	return p.st == psUntilClose
}

// takeUntil returns the bytes before sep (joined with what earlier calls
// kept) and the bytes after it; nil when sep has not arrived yet, in which
// case b is kept.
func (p *respParser) takeUntil(b, sep []byte) (before, after []byte, err error) {
	if len(p.buf) == 0 {
		if i := bytes.Index(b, sep); i >= 0 {
			return b[:i], b[i+len(sep):], nil
		}
	} else {
		// sep may straddle the boundary: search from len(sep)-1 bytes back.
		from := max(len(p.buf)-len(sep)+1, 0)
		p.buf = append(p.buf, b...)
		if i := bytes.Index(p.buf[from:], sep); i >= 0 {
			i += from
			consumed := i + len(sep) - (len(p.buf) - len(b))
			before = p.buf[:i]
			p.buf = p.buf[:0] // before stays valid until the next append
			return before, b[consumed:], nil
		}
		if len(p.buf) > maxHead {
			return nil, nil, fmt.Errorf("response head over %d bytes", maxHead)
		}
		return nil, nil, nil
	}
	if len(b) > maxHead {
		return nil, nil, fmt.Errorf("response head over %d bytes", maxHead)
	}
	p.buf = append(p.buf, b...)
	return nil, nil, nil
}

// takeHead returns a response head up to its blank line (joined with what
// earlier calls kept; lines may end in CRLF or a bare LF, as the blocking
// parser allows) and the bytes after it; nil while the blank line has not
// arrived.
func (p *respParser) takeHead(b []byte) (head, after []byte, err error) {
	from := max(len(p.buf)-2, 0) // a blank line may straddle the boundary
	kept := len(p.buf)
	p.buf = append(p.buf, b...)
	for i := from; ; {
		j := bytes.IndexByte(p.buf[i:], '\n')
		if j < 0 {
			break
		}
		j += i
		end := -1
		switch {
		case j+1 < len(p.buf) && p.buf[j+1] == '\n':
			end = j + 2
		case j+2 < len(p.buf) && p.buf[j+1] == '\r' && p.buf[j+2] == '\n':
			end = j + 3
		}
		if end >= 0 {
			head = p.buf[:j]
			p.buf = p.buf[:0] // head stays valid until the next append
			return head, b[end-kept:], nil
		}
		i = j + 1
	}
	if len(p.buf) > maxHead {
		return nil, nil, fmt.Errorf("response head over %d bytes", maxHead)
	}
	return nil, nil, nil
}

// parseHead reads a status line and headers (without the blank line) and
// moves to the body's state; done when the response has no body.
func (p *respParser) parseHead(head []byte) (done bool, err error) {
	line, headers, _ := bytes.Cut(head, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return false, fmt.Errorf("malformed status line %q", truncate(line))
	}
	status := 0
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return false, fmt.Errorf("malformed status line %q", truncate(line))
		}
		status = status*10 + int(d-'0')
	}
	if status < 100 {
		return false, fmt.Errorf("malformed status line %q", truncate(line))
	}
	keep := line[7] == '1'
	contentLength := int64(-1)
	chunked := false
	for len(headers) > 0 {
		var h []byte
		h, headers, _ = bytes.Cut(headers, []byte("\n"))
		name, value, ok := bytes.Cut(bytes.TrimSuffix(h, []byte("\r")), []byte(":"))
		if !ok {
			continue
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 {
				return false, fmt.Errorf("malformed Content-Length %q", truncate(value))
			}
			contentLength = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.Contains(bytes.ToLower(value), []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			switch {
			case bytes.EqualFold(value, []byte("close")):
				keep = false
			case bytes.EqualFold(value, []byte("keep-alive")):
				keep = true
			}
		}
	}
	if status >= 100 && status < 200 && status != 101 {
		return false, nil // an interim response: the real one follows (psHead)
	}
	p.status, p.keep = status, keep
	switch {
	case p.head || status == 204 || status == 304:
		return true, nil
	case chunked:
		p.st = psChunkSize
	case contentLength == 0:
		return true, nil
	case contentLength > 0:
		p.st, p.remain = psBody, contentLength
	default:
		p.st, p.keep = psUntilClose, false
	}
	return false, nil
}
