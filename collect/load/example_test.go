package load_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/schedscope/schedscope/collect/load"
)

// An open-model run: 100 requests a second for 200 ms against a local
// server, whatever the server's latency. Each request is planned at its
// intended send time (20 of them here) and sent then, unless MaxInflight
// requests are already in flight: then it is counted as not sent.
func ExampleRun() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))
	defer srv.Close()

	res, err := load.Run(context.Background(), load.Config{
		URL:      srv.URL + "/hello",
		Rate:     100,
		Duration: 200 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	p := res.Phases[0]
	fmt.Printf("%s model, phase %q at %.0f req/s\n", res.Model, p.Name, p.OfferedRate)
	fmt.Printf("planned %d, sent %d, not sent %d\n", p.Planned, p.Sent, p.NotSent)
	fmt.Printf("2xx %d, errors %d\n", p.OK, p.Errors.Total())
	// Output:
	// open model, phase "steady" at 100 req/s
	// planned 20, sent 20, not sent 0
	// 2xx 20, errors 0
}

// A ladder of offered rates, one steady phase each, after a warm-up that is
// reported apart, with a pause between phases. load.Table(os.Stdout, res)
// would print the latencies and verdicts of each phase.
func ExampleRun_ladder() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()

	res, err := load.Run(context.Background(), load.Config{
		URL:      srv.URL,
		Rates:    []float64{50, 100},
		Duration: 200 * time.Millisecond,
		Warmup:   100 * time.Millisecond,
		Pause:    50 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: planned %d\n", res.Warmup.Name, res.Warmup.Planned)
	for _, p := range res.Phases {
		fmt.Printf("%s at %.0f req/s: planned %d, 2xx %d\n", p.Name, p.OfferedRate, p.Planned, p.OK)
	}
	// Output:
	// warmup: planned 5
	// step 1/2 at 50 req/s: planned 10, 2xx 10
	// step 2/2 at 100 req/s: planned 20, 2xx 20
}

// Validate reports what Run would refuse, wrapped in ErrConfig.
func ExampleConfig_Validate() {
	cfg := load.Config{URL: "http://127.0.0.1:8080/", Rate: 100, Users: 10}
	err := cfg.Validate()
	fmt.Println(errors.Is(err, load.ErrConfig))
	fmt.Println(err)
	// Output:
	// true
	// both a rate (open model) and users (closed model) given: choose one
}

// ParseHeader reads a header as curl's -H takes it.
func ExampleParseHeader() {
	h, err := load.ParseHeader("Authorization: Bearer s3cret")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q %q\n", h.Name, h.Value)
	// Output:
	// "Authorization" "Bearer s3cret"
}
