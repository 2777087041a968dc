//go:build ignore

// gen_cgo writes an execution trace with cgo calls of known length for the
// analyze tests (it needs cgo and a C compiler).
//
// Known answers: main.callSlow makes 3 cgo calls to C.slow_sleep of ~40 ms
// each (pinned events of kind "cgo", target main._Cfunc_slow_sleep); main.callFast makes 100
// calls of ~50 µs (no pinned events).
package main

/*
#include <unistd.h>
static void slow_sleep(int us) { usleep(us); }
*/
import "C"

import (
	"flag"
	"log"
	"os"
	"runtime"
	rtrace "runtime/trace"
	"sync"
)

func main() {
	out := flag.String("o", "", "trace file to write")
	flag.Parse()
	if *out == "" {
		log.Fatal("usage: gen_cgo -o FILE")
	}
	runtime.GOMAXPROCS(2)
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := rtrace.Start(f); err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go callSlow(&wg)
	go callFast(&wg)
	wg.Wait()
	rtrace.Stop()
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func callSlow(wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < 3; i++ {
		C.slow_sleep(40000)
	}
}

func callFast(wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < 100; i++ {
		C.slow_sleep(50)
	}
}
