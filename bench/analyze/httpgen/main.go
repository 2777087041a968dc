// Command httpgen writes an execution trace of a busy HTTP server, for the
// analyze benchmark (bench/analyze.sh) beside bench/analyze/gen's synthetic
// one: schedscope's fixture server (internal/fixtures, goroutine model)
// traced with runtime/trace while a child process (this program again,
// with -load) drives it from collect/load on 127.0.0.1. The mix: 400
// closed-model users on /sleep?ms=5 (hundreds of goroutines parked in
// timers and in network reads), /cpu?us=100 at 1,000 req/s (preemption,
// GC), /fanout at 200 req/s (the server's own HTTP client waiting on the
// network for the in-process downstream) and /split at 100 req/s
// (goroutine fan-out per request). Tracing stops once the trace reaches
// -size bytes (or after -max).
//
//	go run ./bench/analyze/httpgen -o bench/out/http.trace -size 60000000
//
// The trace is not committed. On the 2-core machine this was written on,
// 60 MB took 32 s of tracing (about 14,000 requests a second, client and
// server sharing the cores) and held 10.9 M events; the trace of
// another generator covered about 10 s of a busier server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"runtime/trace"
	"sync"
	"syscall"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/fixtures"
)

func main() {
	out := flag.String("o", "bench/out/http.trace", "trace file to write")
	size := flag.Int64("size", 60_000_000, "stop tracing once the trace is this many bytes")
	maxFor := flag.Duration("max", 2*time.Minute, "stop tracing after this long in any case")
	warm := flag.Duration("warmup", 2*time.Second, "load before tracing starts")
	target := flag.String("load", "", "internal: drive load at this base URL until killed (the child process)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *target != "" {
		err = drive(ctx, *target)
	} else {
		err = run(ctx, *out, *size, *maxFor, *warm)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// run serves the fixture, starts the load child, and traces this process.
func run(ctx context.Context, out string, size int64, maxFor, warm time.Duration) error {
	cfg := fixtures.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DownstreamDelay = 5 * time.Millisecond
	srv, err := fixtures.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(self, "-load", srv.URL())
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		return fmt.Errorf("start the load child: %w", err)
	}
	childDone := make(chan error, 1)
	go func() { childDone <- child.Wait() }()
	defer func() {
		_ = child.Process.Signal(syscall.SIGTERM)
		<-childDone
	}()

	select {
	case <-time.After(warm):
	case err := <-childDone:
		childDone <- err
		return fmt.Errorf("the load child ended during the warm-up: %v", err)
	case <-ctx.Done():
		return ctx.Err()
	}

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := trace.Start(f); err != nil {
		return fmt.Errorf("start trace: %w", err)
	}
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Since(start) < maxFor && ctx.Err() == nil {
		<-tick.C
		if fi, err := f.Stat(); err == nil && fi.Size() >= size {
			break
		}
	}
	trace.Stop()
	traced := time.Since(start)
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", out, err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		return err
	}
	var requests int64
	for _, sc := range srv.Stats().Scenarios {
		requests += sc.Requests
	}
	fmt.Printf("wrote %s: %d bytes, %.1f s traced; the server had %d requests since its start\n", out, fi.Size(), traced.Seconds(), requests)
	return nil
}

// drive runs the load mix at base until ctx ends.
func drive(ctx context.Context, base string) error {
	mix := []load.Config{
		{URL: base + "/sleep?ms=5", Users: 400},
		{URL: base + "/cpu?us=100", Rate: 1000},
		{URL: base + "/fanout", Rate: 200},
		{URL: base + "/split?items=8&rounds=2000", Rate: 100},
	}
	var wg sync.WaitGroup
	errs := make([]error, len(mix))
	for i, cfg := range mix {
		cfg.Duration = time.Hour // until killed
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = load.Run(ctx, cfg)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
