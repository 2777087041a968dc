package promload_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/collect/load/promload"
)

// A load run whose live figures a registry serves while it runs (with
// promhttp, or `schedscope load --prometheus ADDR`); here the registry is
// read once the run has ended.
func Example() {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer target.Close()

	m := promload.New("example")
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	cfg := load.Config{URL: target.URL, Rate: 200, Duration: 500 * time.Millisecond}
	cfg.Progress, cfg.Interval = m.Progress, m.Interval
	res, err := load.Run(context.Background(), cfg)
	if err != nil {
		panic(err)
	}

	fams, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range fams {
		switch f.GetName() {
		case "schedscope_load_completed_total":
			for _, s := range f.GetMetric() {
				if s.GetLabel()[0].GetValue() == promload.Outcome2xx {
					fmt.Println("2xx exported as in the result:", s.GetCounter().GetValue() == float64(res.Phases[0].OK))
				}
			}
		case "schedscope_load_latency_seconds":
			h := f.GetMetric()[0].GetHistogram()
			fmt.Println("latencies exported as in the result:", int64(h.GetSampleCount()) == res.Phases[0].Latency.Count)
		}
	}
	// Output:
	// 2xx exported as in the result: true
	// latencies exported as in the result: true
}
