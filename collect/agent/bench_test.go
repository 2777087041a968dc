package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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
