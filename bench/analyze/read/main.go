//go:build unix

// Command read times one pass over an execution trace, either a bare
// golang.org/x/exp/trace read (-mode bare) or every schedscope analyzer
// (-mode analyze), and prints one line: mode, seconds, events, peak RSS.
// bench/analyze.sh runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/schedscope/schedscope/analyze"
	"golang.org/x/exp/trace"
)

func main() {
	mode := flag.String("mode", "analyze", "bare or analyze")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile here")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if flag.NArg() != 1 {
		log.Fatal("usage: read -mode bare|analyze FILE")
	}
	start := time.Now()
	var events int64
	var err error
	switch *mode {
	case "bare":
		events, err = bare(flag.Arg(0))
	case "analyze":
		var r *analyze.Report
		r, err = analyze.AnalyzeFile(context.Background(), flag.Arg(0), analyze.Options{})
		if r != nil {
			events = r.Events
		}
	default:
		log.Fatalf("unknown mode %q", *mode)
	}
	if err != nil {
		log.Print(err)
	}
	elapsed := time.Since(start)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %.3f %d %d\n", *mode, elapsed.Seconds(), events, ru.Maxrss/1024)
}

// bare reads every event and looks at its kind, nothing more.
func bare(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return 0, err
	}
	var n int64
	var kinds [32]int64
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
		kinds[ev.Kind()&31]++
	}
}
