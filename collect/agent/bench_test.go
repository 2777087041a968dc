package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/trace"
	"testing"
)

// BenchmarkReadSnapshot is the cost of reading the runtime metrics one poll
// returns (the agent's work per poll, before JSON).
func BenchmarkReadSnapshot(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ReadSnapshot()
	}
}

// BenchmarkMetricsEndpoint is one whole /metrics request served in-process
// (no network): snapshot, pools and JSON encoding.
func BenchmarkMetricsEndpoint(b *testing.B) {
	a, err := New(Options{FlightRecorder: FlightRecorderOptions{Disabled: true}})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	a.Pools().Register("w", PoolFunc(func() PoolStats { return PoolStats{Size: 8, InUse: 3} }))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.RemoteAddr = "127.0.0.1:40000"
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkSnapshotJSON is the size and cost of encoding one snapshot.
func BenchmarkSnapshotJSON(b *testing.B) {
	s := ReadSnapshot()
	b.ReportAllocs()
	for b.Loop() {
		if err := json.NewEncoder(io.Discard).Encode(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMiddleware is Middleware's cost with no trace being recorded:
// requests one at a time over a kept-alive loopback connection to a test
// server whose handler answers "ok", bare or wrapped in Middleware, each
// request carrying RequestHeader as the load generator sends it. cpu-ns/req
// is the process's CPU time (user and system, client and server together)
// per request, read with getrusage around the loop; where it cannot be read
// it is not reported. Compare the two as a ratio:
//
//	go test -run '^$' -bench Middleware -count 5
func BenchmarkMiddleware(b *testing.B) {
	if trace.IsEnabled() {
		b.Skip("a trace is being recorded; this measures Middleware without one")
	}
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", http.HandlerFunc(answerOK)},
		{"middleware", Middleware(http.HandlerFunc(answerOK))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := httptest.NewServer(bc.h)
			defer srv.Close()
			client := srv.Client()
			req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set(RequestHeader, "bench-1 1700000000000000000")
			get := func() {
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d, body: %v", resp.StatusCode, err)
				}
			}
			get() // connect before measuring
			b.ReportAllocs()
			cpu0, ok0 := processCPU()
			for b.Loop() {
				get()
			}
			if cpu1, ok1 := processCPU(); ok0 && ok1 {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/req")
			}
		})
	}
}
