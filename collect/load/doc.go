// Package load is schedscope's load generator: an open-model HTTP/1.1
// generator (a fixed arrival rate, latency measured from each request's
// intended send time, a bounded number of requests in flight, requests that
// could not be sent counted as "not sent") and a closed model (N users, each
// waiting for its response), run in phases (warm-up, one steady phase per
// offered rate, pauses), with HdrHistogram latencies and verdicts that say
// whether the generator or the target was the limit.
//
// Run is the entry point: describe the load in a Config and read the Result.
//
//	res, err := load.Run(ctx, load.Config{
//		URL:      "http://127.0.0.1:8080/api",
//		Rate:     1000,             // open model: requests per second
//		Duration: 30 * time.Second, // one steady phase
//		Warmup:   5 * time.Second,  // reported apart, not in the steady figures
//	})
//	if err != nil { ... }            // a bad Config: nothing was sent
//	load.Table(os.Stdout, res)
//
// Set Rate for one open-model phase, Rates for a ladder of them, or Users for
// the closed model; every other field has a documented default. In the open
// model latency is measured from when each request should have been sent, so
// a target that falls behind cannot hide its queueing (coordinated
// omission); PhaseResult.SendLag says how late the generator itself was, and
// the verdicts (PhaseResult.VerdictDetails) say when the generator rather
// than the target was the limit. Failed requests are data, counted by class
// in PhaseResult.Errors, never an error from Run.
//
// Config.Progress receives live snapshots while the run goes on, and
// Config.Interval the latency histograms of each interval: NewHLog writes
// them as an HdrHistogram interval log. Table, Compare and WriteJSON render
// a Result. Cancelling the context stops the run; the Result then holds the
// phases measured so far, with Interrupted set.
//
// Config.RequestTag tags every request with a RequestHeader (the run's tag,
// the request's number and its intended send time), which a target's
// middleware reads; Config.RecordRequests keeps the generator's view of
// each request (RequestRecord) in Result.Requests, so the two can be
// joined.
//
// It is safe to call Run from several goroutines with different Configs; the
// package has no global state. On Linux, plain HTTP with the default (lean)
// client runs on an event loop owned by one goroutine; https, the net/http
// client (Config.Client) and other systems use a goroutine per connection.
package load
