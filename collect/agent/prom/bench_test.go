package prom_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/agent/prom"
)

// BenchmarkScrape is one scrape of metrics?format=prometheus as the
// fixture serves it (three pools, the real cgroup, the Go collector with
// the scheduler's and GC's runtime metrics): at 1 Hz, its time per op is
// the exposition's CPU cost per second of the server.
func BenchmarkScrape(b *testing.B) {
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{Exposition: prom.Handler(reg)})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	reg.MustRegister(prom.NewCollector(a, prom.Options{}),
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler, collectors.MetricsGC)))
	for _, name := range []string{"db", "http", "workers"} {
		a.Pools().Register(name, agent.PoolFunc(func() agent.PoolStats {
			return agent.PoolStats{Size: 50, InUse: 7, WaitCount: 3, WaitDuration: time.Second}
		}))
	}
	req := httptest.NewRequest("GET", "/metrics?format=prometheus", nil)
	req.RemoteAddr = "127.0.0.1:1234"
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		a.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("scrape: %d %s", w.Code, w.Body)
		}
	}
}
