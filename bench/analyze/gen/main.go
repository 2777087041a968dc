// Command gen writes a busy execution trace for the analyze benchmark
// (bench/analyze.sh): goroutines doing channel ping-pong, mutex contention,
// sleeps, short syscalls and goroutine churn on GOMAXPROCS 2, until the
// trace reaches -size bytes.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"runtime"
	rtrace "runtime/trace"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func main() {
	out := flag.String("o", "bench/out/busy.trace", "trace file to write")
	size := flag.Int64("size", 32<<20, "stop once the trace is this many bytes")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *out, *size); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out string, size int64) error {
	runtime.GOMAXPROCS(2)
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("create %s: %w", out, err)
	}
	if err := rtrace.Start(f); err != nil {
		return fmt.Errorf("start trace: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	work(ctx, &wg)
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		if fi, err := f.Stat(); err == nil && fi.Size() >= size {
			break
		}
	}
	cancel()
	wg.Wait()
	rtrace.Stop()
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", out, err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d bytes\n", out, fi.Size())
	return nil
}

func work(ctx context.Context, wg *sync.WaitGroup) {
	spawn := func(n int, f func()) {
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					f()
				}
			}()
		}
	}
	// Channel ping-pong pairs.
	for i := 0; i < 8; i++ {
		ping, pong := make(chan int), make(chan int)
		wg.Add(2)
		go func() {
			defer wg.Done()
			defer close(ping)
			for j := 0; ctx.Err() == nil; j++ {
				ping <- j
				<-pong
			}
		}()
		go func() {
			defer wg.Done()
			for v := range ping {
				pong <- v
			}
		}()
	}
	// Mutex contention.
	var mu sync.Mutex
	n := 0
	spawn(4, func() {
		mu.Lock()
		for i := 0; i < 1000; i++ {
			n++
		}
		mu.Unlock()
		runtime.Gosched()
	})
	// Annotated sleepers.
	spawn(50, func() {
		d := time.Millisecond
		rtrace.Log(ctx, "schedscope.sleep", strconv.FormatInt(d.Nanoseconds(), 10))
		time.Sleep(d)
	})
	// Short syscalls.
	spawn(2, func() {
		syscall.Getppid()
		f, err := os.Open("/dev/null")
		if err == nil {
			f.Close()
		}
	})
	// Goroutine churn.
	spawn(1, func() {
		var cw sync.WaitGroup
		for i := 0; i < 100; i++ {
			cw.Add(1)
			go func() { defer cw.Done(); runtime.Gosched() }()
		}
		cw.Wait()
	})
}
