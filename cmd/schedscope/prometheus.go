package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/schedscope/schedscope/collect/agent/prom"
	"github.com/schedscope/schedscope/collect/load/promload"
)

// finalScrapeWait bounds how long `--prometheus` keeps serving after the
// load, for a scraper to read its final figures: Prometheus' default
// scrape interval.
const finalScrapeWait = 15 * time.Second

// promServer serves a load's figures at http://ADDR/metrics for
// `--prometheus ADDR`.
type promServer struct {
	srv    *http.Server
	served chan struct{}

	mu         sync.Mutex
	lastScrape time.Time     // when the latest scrape began
	scraped    chan struct{} // closed and replaced at the end of every scrape
}

// startPrometheus listens on addr, before anything is sent, so a bad
// address or a port in use is a usage error, and serves m beside the
// generator's own Go runtime metrics. It says where on w (port 0 picks
// one).
func startPrometheus(addr string, m *promload.Metrics, w io.Writer) (*promServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageErr("--prometheus %s: %v", addr, err)
	}
	fmt.Fprintf(w, "prometheus: the load's figures at http://%s/metrics\n", ln.Addr())
	reg := prometheus.NewRegistry()
	reg.MustRegister(m, collectors.NewGoCollector())
	p := &promServer{served: make(chan struct{}), scraped: make(chan struct{})}
	h := prom.Handler(reg)
	mux := http.NewServeMux()
	mux.Handle("/metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now() // the figures served are those of this moment
		h.ServeHTTP(w, r)
		p.mu.Lock()
		if began.After(p.lastScrape) {
			p.lastScrape = began
		}
		close(p.scraped)
		p.scraped = make(chan struct{})
		p.mu.Unlock()
	}))
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(ln) // ends with ErrServerClosed at stop; nothing else to report it to
	}()
	return p, nil
}

// stop waits, when the figures have been scraped at all, for one scrape
// that began after the load ended (at most finalScrapeWait, less when ctx ends), so
// Prometheus holds the final figures; then it closes the server. A nil p
// does nothing.
func (p *promServer) stop(ctx context.Context, loadEnded time.Time) {
	if p == nil {
		return
	}
	t := time.NewTimer(finalScrapeWait)
	defer t.Stop()
	for {
		p.mu.Lock()
		last, next := p.lastScrape, p.scraped
		p.mu.Unlock()
		if last.IsZero() || !last.Before(loadEnded) {
			break // never scraped, or scraped since the load ended
		}
		select {
		case <-next:
			continue
		case <-t.C:
		case <-ctx.Done():
		}
		break
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := p.srv.Shutdown(sctx); err != nil {
		p.srv.Close() // a scrape still running past the second: cut it
	}
	<-p.served
}

// chain chains a load's Progress or Interval callbacks: first, then
// second when set.
func chain[T any](first, second func(T)) func(T) {
	if first == nil {
		return second
	}
	if second == nil {
		return first
	}
	return func(v T) { first(v); second(v) }
}
