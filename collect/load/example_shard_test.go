package load_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/schedscope/schedscope/collect/load"
)

// Two shards of one schedule of 100 requests a second, started together
// and merged: each sends every other request of the schedule, and the
// merged result is the single generator's plan, its percentiles taken from
// the shards' merged histograms. Here the shards run in one process; in
// use each runs on a machine of its own and writes its Result and HLog
// into a results directory (schedscope load --shard i/N --out DIR).
func ExampleMerge() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()

	start := time.Now().Add(100 * time.Millisecond)
	parts := make([]load.ShardPart, 2)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Go(func() {
			var buf bytes.Buffer
			hl := load.NewHLog(&buf)
			res, err := load.Run(context.Background(), load.Config{
				URL: srv.URL, Rate: 100, Duration: 200 * time.Millisecond,
				Shard: load.Shard{Index: i, Count: 2}, StartAt: start,
				Interval: func(iv load.Interval) { _ = hl.Write(iv) },
			})
			if err != nil {
				log.Fatal(err)
			}
			if err := hl.Close(res.Start); err != nil {
				log.Fatal(err)
			}
			intervals, _, err := load.ReadHLog(&buf)
			if err != nil {
				log.Fatal(err)
			}
			parts[i] = load.ShardPart{Dir: fmt.Sprint("shard-", i), Result: res, Intervals: intervals}
		})
	}
	wg.Wait()
	for _, p := range parts {
		fmt.Printf("shard %s: %.0f req/s, planned %d\n", p.Result.Shard.Shard, p.Result.Phases[0].OfferedRate, p.Result.Phases[0].Planned)
	}
	merged, _, err := load.Merge(parts)
	if err != nil {
		log.Fatal(err)
	}
	p := merged.Phases[0]
	fmt.Printf("merged: %.0f req/s, planned %d, %d latencies\n", p.OfferedRate, p.Planned, p.Latency.Count)
	// Output:
	// shard 0/2: 50 req/s, planned 10
	// shard 1/2: 50 req/s, planned 10
	// merged: 100 req/s, planned 20, 20 latencies
}
