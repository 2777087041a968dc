//go:build unix

// Command read times one pass over an execution trace, either a bare
// golang.org/x/exp/trace read (-mode bare) or every schedscope analyzer
// (-mode analyze), and prints one line: mode, seconds, events, peak RSS in
// MB. -mode compat prints the cmd/trace-compatible totals of the trace,
// -mode pprofsum sums a profile written by `go tool trace -pprof=KIND`, so
// bench/analyze.sh can set them side by side, and -mode json prints the whole
// Report, to compare two versions of the analyzers figure by figure.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/google/pprof/profile"
	"github.com/schedscope/schedscope/analyze"
	"golang.org/x/exp/trace"
)

func main() {
	mode := flag.String("mode", "analyze", "bare, analyze, compat, json or pprofsum")
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
		r, err = analyze.TraceFile(context.Background(), flag.Arg(0), analyze.Options{})
		if r != nil {
			events = r.Events
		}
	case "json":
		r, err := analyze.TraceFile(context.Background(), flag.Arg(0), analyze.Options{})
		if err != nil {
			log.Fatal(err)
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", " ")
		if err := enc.Encode(r); err != nil {
			log.Fatal(err)
		}
		return
	case "compat":
		r, err := analyze.TraceFile(context.Background(), flag.Arg(0), analyze.Options{})
		if err != nil {
			log.Fatal(err)
		}
		for _, c := range []struct {
			kind string
			t    analyze.Totals
		}{{"sched", r.Sched.Compat}, {"syscall", r.Syscall.Compat}, {"sync", r.Sync.Compat}, {"net", r.Net.Compat}} {
			fmt.Printf("%s %d %d\n", c.kind, c.t.Count, c.t.TotalNs)
		}
		return
	case "pprofsum":
		f, err := os.Open(flag.Arg(0))
		if err != nil {
			log.Fatal(err)
		}
		p, err := profile.Parse(f)
		if err != nil {
			log.Fatal(err)
		}
		var n, total, emptyTotal int64
		for _, s := range p.Sample {
			n += s.Value[0]
			total += s.Value[1]
			if len(s.Location) == 0 {
				emptyTotal += s.Value[1]
			}
		}
		// count, total ns, and the share of the total with an empty stack
		fmt.Printf("%d %d %.3f\n", n, total, float64(emptyTotal)/float64(max(total, 1)))
		return
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
