package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// seenRequest is what a test target saw of one request.
type seenRequest struct {
	value string // its RequestHeader; "" when absent
	at    int64  // when the handler began, Unix ns
}

// tagTarget serves every request after delay, recording its RequestHeader
// and when it arrived; a request with a body must carry it whole (else 400).
type tagTarget struct {
	delay time.Duration
	mu    sync.Mutex
	seen  []seenRequest
}

func (tt *tagTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := seenRequest{value: r.Header.Get(RequestHeader), at: time.Now().UnixNano()}
	if vs := r.Header.Values(RequestHeader); len(vs) > 1 {
		s.value = "more than one: " + strings.Join(vs, ", ")
	}
	tt.mu.Lock()
	tt.seen = append(tt.seen, s)
	tt.mu.Unlock()
	if b, err := io.ReadAll(r.Body); err != nil || int64(len(b)) != r.ContentLength && r.ContentLength >= 0 {
		http.Error(w, "short body", http.StatusBadRequest)
		return
	}
	time.Sleep(tt.delay)
	w.Write([]byte("ok\n"))
}

func (tt *tagTarget) requests() []seenRequest {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return slices.Clone(tt.seen)
}

// parseTag splits a RequestHeader value, "<tag>-<seq> <intended-unix-ns>",
// as the target's middleware does.
func parseTag(v string) (tag string, seq uint64, intended int64, err error) {
	id, ns, ok := strings.Cut(v, " ")
	tag, num, ok2 := strings.Cut(id, "-")
	if !ok || !ok2 {
		return "", 0, 0, fmt.Errorf("header %q: want <tag>-<seq> <intended-unix-ns>", v)
	}
	if err := CheckRequestTag(tag); err != nil {
		return "", 0, 0, err
	}
	if seq, err = strconv.ParseUint(num, 10, 64); err != nil || seq == 0 {
		return "", 0, 0, fmt.Errorf("header %q: seq %q", v, num)
	}
	if intended, err = strconv.ParseInt(ns, 10, 64); err != nil {
		return "", 0, 0, fmt.Errorf("header %q: intended time %q", v, ns)
	}
	return tag, seq, intended, nil
}

// Every engine, in both models and with both clients, over http and https,
// tags every request with RequestHeader: the run's tag, a number of its own
// and its intended send time, which is when the target got it within a few
// ms. RecordRequests keeps one record per request, matching what the
// target saw.
func TestRequestTagEveryEngine(t *testing.T) {
	const tag = "run_7.a"
	const delay = 3 * time.Millisecond
	body := bytes.Repeat([]byte("b"), 100<<10) // too large for the driver: the workers write it
	for _, tc := range []struct {
		name   string
		cfg    Config
		tls    bool
		engine string
	}{
		{"open/event-loop", Config{Rate: 200}, false, "event-loop"},
		{"open/goroutines", Config{Rate: 200, Goroutines: true}, false, "goroutines"},
		{"open/net-http", Config{Rate: 200, Client: NetHTTP}, false, "goroutines"},
		{"open/workers-large-body", Config{Rate: 100, Method: "POST", Body: body}, false, "goroutines"},
		{"open/https", Config{Rate: 100}, true, "goroutines"},
		{"closed/event-loop", Config{Users: 2, Think: 5 * time.Millisecond}, false, "event-loop"},
		{"closed/goroutines", Config{Users: 2, Think: 5 * time.Millisecond, Goroutines: true}, false, "goroutines"},
		{"closed/net-http", Config{Users: 2, Think: 5 * time.Millisecond, Client: NetHTTP}, false, "goroutines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := &tagTarget{delay: delay}
			var srv *httptest.Server
			if tc.tls {
				srv = httptest.NewTLSServer(tt)
			} else {
				srv = httptest.NewServer(tt)
			}
			defer srv.Close()
			cfg := tc.cfg
			cfg.URL, cfg.Duration, cfg.InsecureTLS = srv.URL, 200*time.Millisecond, true
			cfg.RequestTag, cfg.RecordRequests = tag, true
			res := mustRun(t, cfg)
			if tc.engine == "event-loop" && !hasEventLoop() {
				tc.engine = "goroutines"
			}
			if res.Engine != tc.engine {
				t.Errorf("engine %q, want %q", res.Engine, tc.engine)
			}
			p := one(t, res)
			if p.Sent == 0 || p.OK != p.Sent {
				t.Fatalf("sent %d ok %d errors %+v", p.Sent, p.OK, p.Errors)
			}
			seen := tt.requests()
			if int64(len(seen)) != p.Sent {
				t.Errorf("target saw %d requests, the generator sent %d", len(seen), p.Sent)
			}
			bySeq := map[uint64]seenRequest{}
			var early []time.Duration
			for _, s := range seen {
				gotTag, seq, intended, err := parseTag(s.value)
				if err != nil {
					t.Fatalf("target saw %v", err)
				}
				if gotTag != tag {
					t.Errorf("tag %q, want %q", gotTag, tag)
				}
				if _, dup := bySeq[seq]; dup {
					t.Errorf("seq %d seen twice", seq)
				}
				bySeq[seq] = s
				early = append(early, time.Duration(s.at-intended))
			}
			// The intended time is when the request should have left; the
			// target got it after (never before: the 1 ms is the two
			// clocks' readings), by the send lag and the loopback, which
			// noise stretches: the median is held within 1 s, against the
			// hours or years a wrong epoch or clock would put it off by
			// (the per-request orderings below are exact). A 5-ms bound on
			// the median was within reach of a busy machine's send lag.
			slices.Sort(early)
			if len(early) > 0 {
				if lo, med := early[0], early[len(early)/2]; lo < -time.Millisecond || med > time.Second {
					t.Errorf("target got requests from %v to %v after their intended time (median %v), want never before it, and not from another clock",
						lo, early[len(early)-1], med)
				}
				t.Logf("target got requests %v to %v after their intended time, median %v", early[0], early[len(early)-1], early[len(early)/2])
			}
			if res.RequestTag != tag || res.RequestsDropped != 0 || int64(len(res.Requests)) != p.Completed {
				t.Fatalf("result: tag %q, %d records (%d dropped) of %d completed", res.RequestTag, len(res.Requests), res.RequestsDropped, p.Completed)
			}
			for i, q := range res.Requests {
				if q.Seq != uint64(i+1) {
					t.Fatalf("record %d has seq %d: want the requests numbered 1 to %d, in order", i, q.Seq, len(res.Requests))
				}
				s, ok := bySeq[q.Seq]
				if !ok {
					t.Errorf("seq %d recorded, never seen by the target", q.Seq)
					continue
				}
				_, _, intended, _ := parseTag(s.value)
				if q.IntendedUnixNs != intended || q.Status != 200 || q.Outcome != OutcomeOK {
					t.Errorf("record %+v; the target saw intended %d", q, intended)
				}
				if q.LatencyNs < int64(delay) || q.SentUnixNs < q.IntendedUnixNs || q.SentUnixNs > s.at+int64(time.Millisecond) {
					t.Errorf("record %+v: want latency >= the target's %v, sent between intended and arrival (%d)", q, delay, s.at)
				}
			}
		})
	}
}

// A run without RequestTag sends no RequestHeader, and without
// RecordRequests keeps no records.
func TestRequestTagAbsent(t *testing.T) {
	engines(t, func(t *testing.T, goroutines bool) {
		tt := &tagTarget{}
		srv := httptest.NewServer(tt)
		defer srv.Close()
		for _, cfg := range []Config{
			{URL: srv.URL, Rate: 100, Duration: 100 * time.Millisecond, Goroutines: goroutines},
			{URL: srv.URL, Users: 1, Think: 10 * time.Millisecond, Duration: 100 * time.Millisecond, Goroutines: goroutines},
		} {
			res := mustRun(t, cfg)
			if res.Requests != nil || res.RequestTag != "" {
				t.Errorf("%s model: %d records, tag %q without RecordRequests or RequestTag", res.Model, len(res.Requests), res.RequestTag)
			}
		}
		seen := tt.requests()
		if len(seen) == 0 {
			t.Fatal("the target saw nothing")
		}
		for _, s := range seen {
			if s.value != "" {
				t.Fatalf("untagged run sent %s: %q", RequestHeader, s.value)
			}
		}
	})
}

// A bad tag is a one-line ErrConfig naming the problem; the bounds of a
// good one are accepted.
func TestRequestTagValidate(t *testing.T) {
	for _, tag := range []string{"a-b", "a b", "tag\nX-Evil: 1", "é", strings.Repeat("x", MaxRequestTag+1), "a/b", "a:b"} {
		err := Config{URL: "http://x/", Rate: 1, RequestTag: tag}.Validate()
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "request tag") || strings.Contains(err.Error(), "\n") {
			t.Errorf("tag %q: err %v, want a one-line ErrConfig about the request tag", tag, err)
		}
	}
	for _, tag := range []string{"", "a", "Run_1.2", strings.Repeat("Z", MaxRequestTag)} {
		if err := (Config{URL: "http://x/", Rate: 1, RequestTag: tag}).Validate(); err != nil {
			t.Errorf("tag %q: %v", tag, err)
		}
	}
	if err := CheckRequestTag(""); err == nil {
		t.Error("CheckRequestTag accepts an empty tag")
	}
}

// The tagged request is the pre-built one with RequestHeader's line added
// at the end of the head, whether its body is copied with it or written
// after it; building it allocates nothing.
func TestTaggedRequestBytes(t *testing.T) {
	for _, body := range [][]byte{[]byte("abc"), bytes.Repeat([]byte("y"), maxInlineTail+1)} {
		c := leanWith(t, Config{URL: "http://example.test:8080/p?q=1", Method: "POST", Rate: 1, Body: body,
			Header: []Header{{"X-A", "1"}}, RequestTag: "run.1"})
		want := "POST /p?q=1 HTTP/1.1\r\nHost: example.test:8080\r\nX-A: 1\r\nUser-Agent: schedscope\r\n" +
			fmt.Sprintf("Content-Length: %d\r\n", len(body)) +
			"Schedscope-Request: run.1-18446744073709551615 -1700000000000000001\r\n\r\n" + string(body)
		var w bytes.Buffer
		if err := c.t.write(&w, &c.out, requestID{seq: 1<<64 - 1, intended: -1700000000000000001}); err != nil {
			t.Fatal(err)
		}
		if w.String() != want {
			t.Errorf("%d-byte body: request\n%.300q\nwant\n%.300q", len(body), w.String(), want)
		}
		if len(c.out) > maxInlineTail+4096 {
			t.Errorf("%d-byte body copied into the request buffer (%d bytes)", len(body), len(c.out))
		}
		if got := testing.AllocsPerRun(100, func() {
			_ = c.t.write(io.Discard, &c.out, requestID{seq: 123456789, intended: time.Now().UnixNano()})
		}); got != 0 {
			t.Errorf("%d-byte body: %.1f allocations per tagged request, want 0", len(body), got)
		}
		if c.t.maxRequestLen() < len(want) {
			t.Errorf("maxRequestLen %d < a tagged request's %d bytes", c.t.maxRequestLen(), len(want))
		}
	}
}

// An interrupted run still returns the records of the requests that
// finished before it stopped.
func TestRecordRequestsInterrupted(t *testing.T) {
	engines(t, func(t *testing.T, goroutines bool) {
		srv, _ := serve(t, sleepHandler(time.Millisecond))
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		res, err := Run(ctx, Config{URL: srv.URL, Rate: 200, Duration: 5 * time.Second, Goroutines: goroutines,
			RequestTag: "cut", RecordRequests: true})
		if err != nil {
			t.Fatal(err)
		}
		p := one(t, res)
		if !res.Interrupted || p.Completed == 0 || int64(len(res.Requests)) != p.Completed {
			t.Errorf("interrupted %v: %d records of %d completed (%d sent)", res.Interrupted, len(res.Requests), p.Completed, p.Sent)
		}
	})
}

// Past MaxRecordedRequests the records of the latest requests are kept and
// the others counted as dropped.
func TestRecordRequestsBounded(t *testing.T) {
	engines(t, func(t *testing.T, goroutines bool) {
		srv, _ := serve(t, sleepHandler(0))
		cfg, err := Config{URL: srv.URL, Rate: 200, Duration: 250 * time.Millisecond, Goroutines: goroutines, RecordRequests: true}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		r, err := newRunner(context.Background(), &cfg)
		if err != nil {
			t.Fatal(err)
		}
		const keep = 10
		r.recordLeft.Store(keep) // as if MaxRecordedRequests were 10
		res := r.run()
		p := one(t, res)
		if len(res.Requests) != keep || res.RequestsDropped != p.Completed-keep {
			t.Fatalf("%d records, %d dropped, of %d completed: want %d kept", len(res.Requests), res.RequestsDropped, p.Completed, keep)
		}
		if !slices.IsSortedFunc(res.Requests, func(a, b RequestRecord) int { return int(a.Seq) - int(b.Seq) }) {
			t.Errorf("records not sorted by seq")
		}
		// With one shard (the event loop) the kept are the latest.
		if res.Engine == "event-loop" && res.Requests[0].Seq <= uint64(p.Completed)/2 {
			t.Errorf("kept seqs %d to %d of %d: want the latest", res.Requests[0].Seq, res.Requests[keep-1].Seq, p.Completed)
		}
	})
}

// The outcomes' names read back.
func TestOutcomeNames(t *testing.T) {
	for o := OutcomeOK; o <= OutcomeOther; o++ {
		b, err := o.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Outcome
		if err := back.UnmarshalText(b); err != nil || back != o {
			t.Errorf("%v: read back as %v, %v", o, back, err)
		}
	}
	if _, err := ParseOutcome("fine"); err == nil {
		t.Error(`ParseOutcome("fine") accepted`)
	}
	if _, err := Outcome(9).MarshalText(); err == nil {
		t.Error("Outcome(9) marshalled")
	}
}
