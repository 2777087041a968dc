package load

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawServer answers each request on a connection with the next canned
// response, verbatim, then closes the connection after the last one, or
// after each one when closeEach is set. Connections are served at once,
// each by its own goroutine.
func rawServer(t *testing.T, closeEach bool, responses ...string) string {
	t.Helper()
	return connServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for _, resp := range responses {
			if !readRequest(br) {
				break
			}
			if _, err := io.WriteString(c, resp); err != nil || closeEach {
				break
			}
		}
	})
}

// connServer serves each connection with serve on its own goroutine and
// closes it afterwards; the test's cleanup closes the listener and every
// open connection and waits for the goroutines.
func connServer(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				serve(c)
				c.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String() + "/x?y=1"
}

// readRequest reads a request head and its Content-Length body.
func readRequest(br *bufio.Reader) bool {
	n := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return false
		}
		if line == "\r\n" {
			break
		}
		if v, ok := strings.CutPrefix(strings.ToLower(line), "content-length: "); ok {
			for _, d := range strings.TrimSpace(v) {
				n = n*10 + int(d-'0')
			}
		}
	}
	_, err := br.Discard(n)
	return err == nil
}

func leanFor(t *testing.T, url, method string) *leanConn {
	t.Helper()
	return leanWith(t, Config{URL: url, Method: method, Rate: 1})
}

// leanWith is a lean client for cfg, outside any run.
func leanWith(t testing.TB, cfg Config) *leanConn {
	t.Helper()
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	tg, err := newTarget(&cfg, newConnSet())
	if err != nil {
		t.Fatal(err)
	}
	return &leanConn{t: tg}
}

func TestLeanClientResponses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		resp   string
		status int
		keep   bool
		eof    bool // the server closes after the response
	}{
		{"content-length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, true, false},
		{"chunked", "GET", "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n", 201, true, false},
		{"connection close", "GET", "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", 503, false, false},
		{"until EOF", "GET", "HTTP/1.1 200 OK\r\n\r\nbody without length", 200, false, true},
		{"HTTP/1.0", "GET", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, false, false},
		{"HTTP/1.0 keep-alive", "GET", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", 200, true, false},
		{"100 continue", "POST", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", 204, true, false},
		{"HEAD with length", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", 200, true, false},
		{"long header", "GET", "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 10000) + "\r\nContent-Length: 2\r\n\r\nok", 200, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Two responses per connection: the second shows whether the
			// first left the connection at the next response.
			url := rawServer(t, tc.eof, tc.resp, tc.resp)
			c := leanFor(t, url, tc.method)
			defer c.close()
			for i := range 2 {
				status, err := c.do(context.Background(), time.Now().Add(2*time.Second), requestID{})
				if err != nil || status != tc.status {
					t.Fatalf("request %d: status %d err %v, want %d", i, status, err, tc.status)
				}
				if kept := c.conn != nil; kept != tc.keep {
					t.Fatalf("request %d: connection kept = %v, want %v", i, kept, tc.keep)
				}
			}
		})
	}
}

// A keep-alive connection the server closed while idle is retried once on
// a fresh connection, not counted as an error.
func TestLeanClientRetriesStaleConnection(t *testing.T) {
	url := rawServer(t, false, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") // one response per connection, then close
	c := leanFor(t, url, "GET")
	defer c.close()
	for i := range 3 {
		if status, err := c.do(context.Background(), time.Now().Add(2*time.Second), requestID{}); err != nil || status != 200 {
			t.Fatalf("request %d: status %d err %v", i, status, err)
		}
		time.Sleep(20 * time.Millisecond) // let the server's close arrive
	}
}

func TestLeanClientRequestBytes(t *testing.T) {
	cfg, err := Config{URL: "http://example.test:8080/p?q=1", Method: "POST", Rate: 1, Body: []byte("abc"),
		Header: []Header{{"X-A", "1"}, {"Host", "virtual"}, {"Content-Length", "99"}}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	tg, err := newTarget(&cfg, newConnSet())
	if err != nil {
		t.Fatal(err)
	}
	want := "POST /p?q=1 HTTP/1.1\r\nHost: virtual\r\nX-A: 1\r\nUser-Agent: schedscope\r\nContent-Length: 3\r\n\r\nabc"
	if string(tg.request) != want {
		t.Errorf("request\n%q\nwant\n%q", tg.request, want)
	}
	if tg.addr != "example.test:8080" {
		t.Errorf("addr %q", tg.addr)
	}
}

// FuzzReadResponse feeds arbitrary bytes to the response parser: it must
// return a status or an error, never panic or loop.
func FuzzReadResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 x\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n"))
	f.Add([]byte("HTTP/1.0 2x0\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &leanConn{t: &target{}, br: bufio.NewReaderSize(bytes.NewReader(data), 4096)}
		status, _, _, err := c.readResponse()
		if err == nil && (status < 100 || status > 999) {
			t.Fatalf("status %d accepted from %q", status, data)
		}
	})
}

// The open model's pipelined connections survive a target that closes
// every connection after one response without saying so: each request is
// answered, on a fresh connection when needed, and none is counted failed.
func TestOpenModelSurvivesClosingTarget(t *testing.T) {
	engines(t, func(t *testing.T, goroutines bool) {
		url := rawServer(t, false, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		res, err := Run(context.Background(), Config{URL: url, Rate: 200, Duration: 500 * time.Millisecond, Goroutines: goroutines})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Phases[0]
		if p.OK != 100 || p.Errors.Total() != 0 {
			t.Errorf("ok %d errors %+v, want 100 answered and no error", p.OK, p.Errors)
		}
	})
}

// The net/http client (kept for comparison) works in both models.
func TestNetHTTPClient(t *testing.T) {
	srv, _ := serve(t, sleepHandler(0))
	url := srv.URL
	for _, cfg := range []Config{
		{URL: url, Rate: 200, Duration: 300 * time.Millisecond, Client: NetHTTP},
		{URL: url, Users: 2, Duration: 300 * time.Millisecond, Client: NetHTTP},
	} {
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		p := res.Phases[0]
		if p.OK == 0 || p.OK != p.Sent || p.Errors.Total() != 0 {
			t.Errorf("%s model: sent %d ok %d errors %+v", res.Model, p.Sent, p.OK, p.Errors)
		}
	}
}

// A request too large for the driver to write without blocking goes
// through worker goroutines, and arrives whole.
func TestOpenModelLargeBody(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 100<<10)
	srv, c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil || len(b) != len(body) {
			http.Error(w, "short body", 400)
			return
		}
		w.Write([]byte("ok"))
	}))
	res, err := Run(context.Background(), Config{URL: srv.URL, Method: "POST", Body: body, Rate: 50, Duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Phases[0]; p.OK != 10 || c.total.Load() != 10 {
		t.Errorf("ok %d of 10, target got %d: %+v", p.OK, c.total.Load(), p.Errors)
	}
}

// https targets work in both models and with both clients; an unverified
// certificate is an error unless InsecureTLS.
func TestHTTPS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the rejected handshakes below
	srv.StartTLS()
	defer srv.Close()
	for _, cfg := range []Config{
		{Rate: 50, Client: Lean},
		{Users: 2, Client: Lean},
		{Rate: 50, Client: NetHTTP},
	} {
		cfg.URL, cfg.Duration, cfg.InsecureTLS = srv.URL, 200*time.Millisecond, true
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if p := res.Phases[0]; p.OK == 0 || p.OK != p.Sent {
			t.Errorf("%s model, %s: sent %d ok %d errors %+v", res.Model, cfg.Client, p.Sent, p.OK, p.Errors)
		}
	}
	res, err := Run(context.Background(), Config{URL: srv.URL, Rate: 50, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Phases[0]; p.OK != 0 || p.Errors.Other != p.Sent {
		t.Errorf("self-signed certificate verified: ok %d errors %+v", p.OK, p.Errors)
	}
}
