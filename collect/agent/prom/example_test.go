package prom_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/agent/prom"
)

// The agent's collector registered beside client_golang's Go collector in
// one registry, served by the agent at metrics?format=prometheus.
func Example() {
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{Exposition: prom.Handler(reg)})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	reg.MustRegister(
		prom.NewCollector(a, prom.Options{}),
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler)),
	)
	a.Pools().Register("workers", agent.PoolFunc(func() agent.PoolStats {
		return agent.PoolStats{Size: 8, InUse: 3}
	}))

	mux := http.NewServeMux()
	a.Mount(mux, "/debug/schedscope/")
	srv := httptest.NewServer(mux) // a loopback client, as the agent wants by default
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/debug/schedscope/metrics?format=prometheus")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "schedscope_pool_") && strings.Contains(line, `pool="workers"`) && !strings.Contains(line, "wait") {
			fmt.Print(line)
		}
	}
	// Output:
	// schedscope_pool_idle{kind="func",pool="workers"} 0
	// schedscope_pool_in_use{kind="func",pool="workers"} 3
	// schedscope_pool_size{kind="func",pool="workers"} 8
}
