package analyze_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/schedscope/schedscope/analyze"
)

// Analyze a trace file: here one of the committed test traces, in which
// seven goroutines lock their OS threads (runtime.LockOSThread).
func ExampleTraceFile() {
	rep, err := analyze.TraceFile(context.Background(), "testdata/go1.26/locked.trace", analyze.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d events in %d generation\n", rep.Events, rep.Generations)
	fmt.Printf("goroutines: %d created, %d ended, peak %d alive\n",
		rep.Goroutines.Created, rep.Goroutines.Ended, rep.Goroutines.Peak)
	fmt.Printf("scheduling latency: %d waits after a wake-up, %d from creation to first run\n",
		rep.Sched.Count, rep.Sched.Creation.Count)
	for _, g := range rep.Pinned.LockedGoroutines {
		fmt.Printf("locked to its thread: %s (evidence: %s)\n", g.StartFunc, g.Evidence)
	}
	// Output:
	// 514 events in 1 generation
	// goroutines: 18 created, 15 ended, peak 19 alive
	// scheduling latency: 82 waits after a wake-up, 18 from creation to first run
	// locked to its thread: main.lockedWorker (evidence: wake-ups)
	// locked to its thread: main.lockedWorker (evidence: wake-ups)
	// locked to its thread: main.lockedWorker (evidence: wake-ups)
	// locked to its thread: main.lockedShort (evidence: wake-ups)
	// locked to its thread: main.lockedOnce (evidence: annotation)
	// locked to its thread: main.lockedOnce (evidence: annotation)
	// locked to its thread: main.lockedOnceBare (evidence: hand-off)
}

// Analyze any io.Reader (standard input, an HTTP body, a flight-recorder
// snapshot). The sleeps in this trace that logged their requested duration
// (SleepLogCategory, as schedscope's fixture and sleep probe do) get an
// overshoot distribution; the others only their blocked and post-wake times.
func ExampleTrace() {
	f, err := os.Open("testdata/go1.26/sleep.trace")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	rep, err := analyze.Trace(context.Background(), f, analyze.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d time.Sleep calls\n", rep.Sleep.Count)
	for _, s := range rep.Sleep.Sites {
		requested := "unknown"
		if s.RequestedNs > 0 {
			requested = time.Duration(s.RequestedNs).String()
		}
		fmt.Printf("%s: %d calls, requested %s, overshoot measured: %v\n", s.Func, s.Count, requested, s.Overshoot != nil)
	}
	// Output:
	// 60 time.Sleep calls
	// main.sleepAnnotated: 40 calls, requested 10ms, overshoot measured: true
	// main.sleeper3: 20 calls, requested unknown, overshoot measured: false
}
