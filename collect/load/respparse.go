package load

import (
	"bytes"
	"errors"
	"fmt"
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
		case psChunkCRLF, psChunkSize, psTrailer:
			var line []byte
			line, b, err = p.takeLine(b)
			if err != nil || line == nil {
				return false, nil, err
			}
			switch p.st {
			case psChunkCRLF:
				if len(line) != 0 {
					return false, nil, errNoCRLF
				}
				p.st = psChunkSize
			case psChunkSize:
				n, err := parseChunkSize(line)
				if err != nil {
					return false, nil, err
				}
				if n == 0 {
					p.st = psTrailer
				} else {
					p.st, p.remain = psChunkData, n
				}
			case psTrailer:
				if len(line) == 0 {
					return true, b, nil
				}
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

// takeLine returns a line without its LF or CRLF (joined with what earlier
// calls kept) and the bytes after it; nil when the line's end has not
// arrived yet, in which case b is kept.
func (p *respParser) takeLine(b []byte) (line, after []byte, err error) {
	if len(p.buf) == 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return bytes.TrimSuffix(b[:i], []byte("\r")), b[i+1:], nil
		}
	} else {
		kept := len(p.buf)
		p.buf = append(p.buf, b...)
		if i := bytes.IndexByte(p.buf[kept:], '\n'); i >= 0 {
			line = bytes.TrimSuffix(p.buf[:kept+i], []byte("\r"))
			p.buf = p.buf[:0] // line stays valid until the next append
			return line, b[i+1:], nil
		}
		if len(p.buf) > maxHead {
			return nil, nil, fmt.Errorf("response line over %d bytes", maxHead)
		}
		return nil, nil, nil
	}
	if len(b) > maxHead {
		return nil, nil, fmt.Errorf("response line over %d bytes", maxHead)
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
	h, err := parseStatusLine(line)
	if err != nil {
		return false, err
	}
	for len(headers) > 0 {
		var l []byte
		l, headers, _ = bytes.Cut(headers, []byte("\n"))
		if err := h.header(bytes.TrimSuffix(l, []byte("\r"))); err != nil {
			return false, err
		}
	}
	if h.interim() {
		return false, nil // an interim response: the real one follows (psHead)
	}
	p.status, p.keep = h.status, h.keep
	switch {
	case p.head || h.status == 204 || h.status == 304:
		return true, nil
	case h.chunked:
		p.st = psChunkSize
	case h.contentLength == 0:
		return true, nil
	case h.contentLength > 0:
		p.st, p.remain = psBody, h.contentLength
	default:
		p.st, p.keep = psUntilClose, false
	}
	return false, nil
}
