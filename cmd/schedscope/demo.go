package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/fixtures"
)

const demoSynopsis = "demo [flags]"

func runDemo(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags("demo", demoSynopsis, s.out)
	workers := fs.Int("workers", 200, "worker goroutines of the pool model")
	sleep := fs.Duration("sleep", 200*time.Millisecond, "blocking wait per request (/sleep), whole milliseconds")
	ratesFlag := fs.String("rates", "", "offered rates, e.g. 500,1000,1500 (default: 0.5x, 1x and 1.5x the pool's ceiling)")
	duration := fs.Duration("duration", 4*time.Second, "length of each measured step")
	pause := fs.Duration("pause", time.Second, "pause between steps")
	warmup := fs.Duration("warmup", time.Second, "warm-up before the steps (excluded)")
	progress := fs.String("progress", "auto", "live one-line progress on stderr: auto, on, off")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q (usage: schedscope %s)", fs.Arg(0), demoSynopsis)
	}
	if *workers < 1 {
		return usageErr("--workers %d: must be at least 1", *workers)
	}
	if *sleep < time.Millisecond || *sleep%time.Millisecond != 0 {
		return usageErr("--sleep %v: must be a whole number of milliseconds, at least 1ms", *sleep)
	}
	if *duration <= 0 {
		return usageErr("--duration %v: must be > 0", *duration)
	}
	ceiling := float64(*workers) / sleep.Seconds()
	rates := []float64{ceiling / 2, ceiling, ceiling * 3 / 2}
	if *ratesFlag != "" {
		rates = nil
		for _, f := range strings.Split(*ratesFlag, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !(r > 0) {
				return usageErr("--rates %q: want positive rates separated by commas", *ratesFlag)
			}
			rates = append(rates, r)
		}
	}
	var status *statusLine
	if *progress == "on" || (*progress == "auto" && isTerminal(s.errOut)) {
		status = &statusLine{w: s.errOut}
	}

	fmt.Fprintf(s.out, `schedscope demo: the seeds' first lesson, live on this machine.

The fixture server runs in this process on a loopback port. Every request to
/sleep?ms=%d blocks for %v, standing in for a call to a slow downstream.
  pool:      %d worker goroutines fed by a queue. Little's law caps it at
             workers / latency = %d / %.3f s = %.0f req/s.
  goroutine: a goroutine per request (net/http's default): no such cap.
Both get the same open-model ladder (%s req/s, %v each, latency measured from
each request's intended send time), crossing the pool's ceiling.
(The seeds used 200 workers x 50 ms = 4,000 req/s; %v keeps every step within
what a 2-core machine can generate and serve. Change it with --sleep, --workers.)

`, sleep.Milliseconds(), *sleep, *workers, *workers, sleep.Seconds(), ceiling, fmtRates(rates), *duration, *sleep)

	models := []fixtures.Model{fixtures.ModelPool, fixtures.ModelGoroutine}
	var results []*load.Result
	var labels []string
	for _, model := range models {
		res, err := demoModel(ctx, model, *workers, load.Config{
			Rates: rates, Duration: *duration, Pause: *pause, Warmup: *warmup,
			CPUIncludesTarget: true,
		}, *sleep, status)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.out, "== model %s", model)
		if model == fixtures.ModelPool {
			fmt.Fprintf(s.out, " (%d workers, ceiling %.0f req/s)", *workers, ceiling)
		}
		fmt.Fprintln(s.out, " ==")
		if err := load.Table(s.out, res); err != nil {
			return err
		}
		fmt.Fprintln(s.out)
		results = append(results, res)
		labels = append(labels, string(model))
		if res.Interrupted {
			return withCode(130, errors.New("interrupted: the figures above cover what was measured until then"))
		}
	}

	fmt.Fprintln(s.out, "== side by side ==")
	if err := load.Compare(s.out, labels, results); err != nil {
		return err
	}
	fmt.Fprintln(s.out)
	fmt.Fprintln(s.out, demoLesson(results[0], results[1], *workers, *sleep, ceiling))
	return nil
}

// demoModel starts the fixture in model on a free loopback port, runs the
// ladder at its /sleep scenario and shuts it down.
func demoModel(ctx context.Context, model fixtures.Model, workers int, cfg load.Config, sleep time.Duration, status *statusLine) (*load.Result, error) {
	fcfg := fixtures.DefaultConfig()
	fcfg.Addr = "127.0.0.1:0"
	fcfg.Model = model
	fcfg.Workers = workers
	srv, err := fixtures.Start(ctx, fcfg)
	if err != nil {
		return nil, fmt.Errorf("starting the %s fixture: %w", model, err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // the demo's figures are already measured
	}()
	cfg.URL = fmt.Sprintf("%s/sleep?ms=%d", srv.URL(), sleep.Milliseconds())
	if status != nil {
		cfg.Progress = func(p load.Progress) {
			if !p.Done {
				fmt.Fprintf(status.w, "\r%s: %s\x1b[K", model, load.FormatProgress(p))
			}
		}
	}
	res, err := load.Run(ctx, cfg)
	status.clear()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", model, err)
	}
	return res, nil
}

// demoLesson states what the two results show, with their numbers.
func demoLesson(pool, gor *load.Result, workers int, sleep time.Duration, ceiling float64) string {
	if len(pool.Phases) == 0 || len(gor.Phases) == 0 {
		return "No complete phase to compare."
	}
	lo, hi := 0, len(pool.Phases)-1
	if hi >= len(gor.Phases) {
		hi = len(gor.Phases) - 1
	}
	pl, gl, ph, gh := pool.Phases[lo], gor.Phases[lo], pool.Phases[hi], gor.Phases[hi]
	var b strings.Builder
	fmt.Fprintf(&b, "What this shows:\n")
	fmt.Fprintf(&b, "- At %.0f req/s offered, pool served %.0f req/s (p99 %.0f ms) and goroutine %.0f (p99 %.0f ms):\n"+
		"  below a limit, the concurrency model makes little difference.\n",
		pl.OfferedRate, pl.OKPerS, pl.Latency.P99, gl.OKPerS, gl.Latency.P99)
	fmt.Fprintf(&b, "- At %.0f req/s offered, pool served %.0f req/s (p99 %.0f ms) and goroutine %.0f (p99 %.0f ms).\n",
		ph.OfferedRate, ph.OKPerS, ph.Latency.P99, gh.OKPerS, gh.Latency.P99)
	if ph.OfferedRate > ceiling {
		fmt.Fprintf(&b, "  The pool stops at its ceiling, %d workers / %v = %.0f req/s, and the rest waits in its queue:\n"+
			"  latency grows for as long as the overload lasts. The goroutine model has no such ceiling here.\n",
			workers, sleep, ceiling)
	}
	fmt.Fprintf(&b, "- A closed-model client (N users, each waiting for its response) could never show this: it\n"+
		"  reports users / latency whatever the server can do. That is why schedscope load defaults to\n"+
		"  the open model and measures latency from the intended send time.")
	return b.String()
}

func fmtRates(rs []float64) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strings.Join(s, ", ")
}
