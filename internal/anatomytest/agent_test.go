package anatomytest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime/trace"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"go.uber.org/goleak"
	exptrace "golang.org/x/exp/trace"
)

// These tests check collect/agent against the request-anatomy contract
// the trace analyzer reads, on real traces. None is parallel: runtime/trace
// is process-wide.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startTrace starts an execution trace into a buffer; stop ends it and
// returns the trace's annotations.
func startTrace(t *testing.T) (stop func() *Annotations) {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatalf("trace.Start: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			trace.Stop()
		}
	})
	return func() *Annotations {
		t.Helper()
		trace.Stop()
		stopped = true
		a, err := Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

func TestMiddlewareTrace(t *testing.T) {
	// The handler waits for a "db" pool and hands its work to another
	// goroutine, as a worker pool would.
	handler := func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		end := agent.Wait(ctx, "db")
		time.Sleep(time.Millisecond)
		end()
		done := make(chan struct{})
		go trace.WithRegion(ctx, agent.WorkRegionType, func() {
			defer close(done)
			io.WriteString(w, "ok")
		})
		<-done
	}
	srv := httptest.NewServer(agent.Middleware(http.HandlerFunc(handler)))
	defer srv.Close()
	client := srv.Client()

	const valid = "run_1.a-42 1700000000000000000"
	requests := []struct {
		name   string
		values []string // RequestHeader values sent
		logged string   // the header value in the log; "" for none
	}{
		{"valid header", []string{valid}, valid},
		{"negative intended", []string{"t-18446744073709551615 -1"}, "t-18446744073709551615 -1"},
		{"no header", nil, ""},
		{"malformed header", []string{"run1-42"}, ""},
		{"bad tag", []string{"run/1-42 1700000000000000000"}, ""},
		{"two headers", []string{valid, valid}, ""},
		{"overlong header", []string{"t-1 " + strings.Repeat("1", 200)}, ""},
	}
	type sent struct{ before, after int64 }
	var times []sent
	stop := startTrace(t)
	for _, rq := range requests {
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range rq.values {
			req.Header.Add(agent.RequestHeader, v)
		}
		before := time.Now().UnixNano()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", rq.name, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(body) != "ok" {
			t.Fatalf("%s: body %q, %v", rq.name, body, err)
		}
		times = append(times, sent{before, time.Now().UnixNano()})
	}
	a := stop()

	tasks := a.TasksOfType(agent.RequestTaskType)
	if len(tasks) != len(requests) {
		t.Fatalf("%d tasks of type %q for %d requests", len(tasks), agent.RequestTaskType, len(requests))
	}
	// The requests went one at a time, so the tasks began in their order.
	for i, task := range tasks {
		rq := requests[i]
		if !task.Ended {
			t.Errorf("%s: the task did not end", rq.name)
		}
		logs := a.LogsOf(task.ID, agent.RequestLogCategory)
		if len(logs) != 1 {
			t.Errorf("%s: %d logs of category %q, want 1", rq.name, len(logs), agent.RequestLogCategory)
			continue
		}
		l := logs[0]
		if l.Goroutine != task.Goroutine {
			t.Errorf("%s: logged on goroutine %d, the task began on %d", rq.name, l.Goroutine, task.Goroutine)
		}
		startText, header, _ := strings.Cut(l.Message, " ")
		if header != rq.logged {
			t.Errorf("%s: log message %q, want the start time then %q", rq.name, l.Message, rq.logged)
		}
		start, err := strconv.ParseInt(startText, 10, 64)
		if err != nil || start < times[i].before || start > times[i].after {
			t.Errorf("%s: start %q not a unix ns time within the request [%d, %d]", rq.name, startText, times[i].before, times[i].after)
		}

		waits := a.RegionsOf(task.ID, agent.WaitRegionPrefix+"db")
		if len(waits) != 1 || !waits[0].Ended || waits[0].Goroutine != task.Goroutine {
			t.Errorf("%s: want one ended %q region on the handler's goroutine %d, got %+v", rq.name, agent.WaitRegionPrefix+"db", task.Goroutine, waits)
		}
		work := a.RegionsOf(task.ID, agent.WorkRegionType)
		if len(work) != 1 || !work[0].Ended || work[0].Goroutine == task.Goroutine {
			t.Errorf("%s: want one ended %q region on a goroutine other than the handler's %d, got %+v", rq.name, agent.WorkRegionType, task.Goroutine, work)
		}
	}
}

func TestWaitUntracedLeavesNoRegion(t *testing.T) {
	end := agent.Wait(context.Background(), "db") // before the trace: a no-op
	stop := startTrace(t)
	end()
	a := stop()
	if len(a.Regions) != 0 {
		t.Errorf("regions from a Wait begun before the trace: %+v", a.Regions)
	}
}

// TestTransportPoolWaitRegion: a TransportPool's round trip marks its wait
// for a connection, under the pool's name, as a region that begins and ends
// on the goroutine that called RoundTrip, and ends before the server sees the
// request (GotConn), for HTTP/1.1 and HTTP/2 alike; when no connection comes,
// it ends when the round trip fails.
func TestTransportPoolWaitRegion(t *testing.T) {
	served := func(w http.ResponseWriter, r *http.Request) {
		trace.Log(r.Context(), "test.served", r.Proto)
	}
	for _, tc := range []struct {
		name  string
		h2    bool
		named string // "" leaves the default name
		pool  string // the region's pool name
	}{
		{name: "http1", pool: "http"},
		{name: "http1 named", named: "payments", pool: "payments"},
		{name: "http2", h2: true, named: "payments", pool: "payments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(served))
			var tr *http.Transport
			if tc.h2 {
				srv.EnableHTTP2 = true
				srv.StartTLS()
				tr = srv.Client().Transport.(*http.Transport)
			} else {
				srv.Start()
				tr = &http.Transport{}
				defer tr.CloseIdleConnections()
			}
			defer srv.Close()
			tp := agent.NewTransportPool(tr)
			if tc.named != "" {
				tp = tp.Named(tc.named)
			}
			client := &http.Client{Transport: tp}

			stop := startTrace(t)
			ctx, task := trace.NewTask(context.Background(), "test.client")
			for range 2 { // a new connection, then a reused one
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if want := map[bool]int{false: 1, true: 2}[tc.h2]; resp.ProtoMajor != want {
					t.Fatalf("HTTP/%d, want %d", resp.ProtoMajor, want)
				}
			}
			task.End()
			a := stop()

			tasks := a.TasksOfType("test.client")
			if len(tasks) != 1 {
				t.Fatalf("%d client tasks", len(tasks))
			}
			waits := a.RegionsOf(tasks[0].ID, agent.WaitRegionPrefix+tc.pool)
			if len(waits) != 2 {
				t.Fatalf("%d %q regions, want 2: %+v (all: %+v)", len(waits), agent.WaitRegionPrefix+tc.pool, waits, a.Regions)
			}
			var servedAt []exptrace.Time
			for _, l := range a.Logs {
				if l.Category == "test.served" {
					servedAt = append(servedAt, l.Time)
				}
			}
			if len(servedAt) != 2 {
				t.Fatalf("the server logged %d requests", len(servedAt))
			}
			for i, w := range waits {
				if !w.Ended || w.Goroutine != tasks[0].Goroutine {
					t.Errorf("wait region %+v: want it ended, on the client's goroutine %d", w, tasks[0].Goroutine)
				}
				if w.End > servedAt[i] {
					t.Errorf("request %d: the wait for a connection ended after the server served the request", i)
				}
			}
		})
	}
}

// TestTransportPoolWaitRegionNoConnection: the dial fails, GotConn never
// fires, and the region ends as the round trip returns its error.
func TestTransportPoolWaitRegionNoConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: agent.NewTransportPool(tr)}

	stop := startTrace(t)
	ctx, task := trace.NewTask(context.Background(), "test.client")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/", addr), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("a server answered on %s", addr)
	}
	task.End()
	a := stop()

	tasks := a.TasksOfType("test.client")
	if len(tasks) != 1 {
		t.Fatalf("%d client tasks", len(tasks))
	}
	waits := a.RegionsOf(tasks[0].ID, agent.WaitRegionPrefix+"http")
	if len(waits) != 1 || !waits[0].Ended || waits[0].Goroutine != tasks[0].Goroutine {
		t.Errorf("want one ended %q region on the client's goroutine %d, got %+v", agent.WaitRegionPrefix+"http", tasks[0].Goroutine, waits)
	}
}

// TestReadRegionEndedElsewhere: Read refuses a trace whose region ended on
// another goroutine than the one that began it, which is how the tests above
// would see such a mistake.
func TestReadRegionEndedElsewhere(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatalf("trace.Start: %v", err)
	}
	r := trace.StartRegion(context.Background(), "test.region")
	done := make(chan struct{})
	go func() { r.End(); close(done) }()
	<-done
	trace.Stop()
	if _, err := Read(&buf); err == nil || !strings.Contains(err.Error(), `region "test.region"`) {
		t.Errorf("Read: %v, want an error naming the region", err)
	}
}
