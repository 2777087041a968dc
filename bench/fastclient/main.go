// Command fastclient is a closed-loop HTTP/1.1 load client built on
// valyala/fasthttp, used only by bench/loadbench to compare HTTP client
// implementations (schedscope's lean client, net/http, fasthttp) against the
// same target. It is its own module so that fasthttp stays out of
// schedscope's go.mod.
//
//	cd bench/fastclient && GOWORK=off go build -o /tmp/fastclient .
//	/tmp/fastclient -url http://127.0.0.1:8080/ -c 50 -d 5s
//
// It prints "requests N" (2xx responses) and "req/s R".
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	target := flag.String("url", "", "target URL (http)")
	conns := flag.Int("c", 50, "connections, one goroutine each")
	d := flag.Duration("d", 5*time.Second, "duration")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		fmt.Fprintf(os.Stderr, "fastclient: -url %q: want http://host:port/path\n", *target)
		os.Exit(2)
	}
	client := &fasthttp.HostClient{Addr: u.Host, MaxConns: *conns}
	var ok atomic.Int64
	start := time.Now()
	deadline := start.Add(*d)
	var wg sync.WaitGroup
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI(*target)
			var n int64
			for time.Now().Before(deadline) {
				if err := client.Do(req, resp); err == nil && resp.StatusCode() >= 200 && resp.StatusCode() < 300 {
					n++
				}
			}
			ok.Add(n)
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	fmt.Printf("requests %d\nreq/s %.1f\n", ok.Load(), float64(ok.Load())/el)
}
