package tui

import (
	"fmt"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// sampleFrames returns a deterministic run: the pool model crossing its
// ceiling (latency grows, the pool saturates), n frames 250 ms apart.
func sampleFrames(n int) []Frame {
	var out []Frame
	for i := 0; i < n; i++ {
		el := time.Duration(i) * 250 * time.Millisecond
		p50 := 54*time.Millisecond + time.Duration(i*i)*time.Millisecond/2
		f := Frame{
			Title: "sleep 50 ms · pool model (200 workers)",
			Phase: Phase{Name: "measure 4,500 req/s", Index: 2, Count: 3, Elapsed: el, Duration: 30 * time.Second, RunElapsed: el + 5*time.Second},
			Load: Load{
				OfferedPerSec: 4500, AchievedPerSec: 3702.4, Sent: int64(i) * 1125, OK: int64(i) * 925,
				InFlight: 200 + i*30, NotSent: 0,
				Errors: []ErrorCount{{"timeout", int64(i / 10)}},
				P50:    p50, P95: p50*7/4 + 2*time.Millisecond, P99: p50*2 + 3*time.Millisecond,
			},
			Runtime: &Runtime{GOMAXPROCS: 2, Goroutines: 230 + i*30, Running: 2, Runnable: 1, Waiting: 226 + i*30, Syscall: 1,
				Threads: 9, SchedLatencyP99: 420 * time.Microsecond, GCPauseP99: 95 * time.Microsecond, GCCycles: uint64(12 + i/4)},
			Pools:         []Pool{{Name: "workers", InUse: 200, Size: 200, Waiting: i * 30}},
			CPUPerRequest: 210 * time.Microsecond,
		}
		if i >= 8 {
			f.Verdicts = append(f.Verdicts, Verdict{Kind: rundir.KindPoolSaturated, Title: "pool workers is saturated",
				Detail: fmt.Sprintf("200/200 in use, %d waiting; predicted capacity 3,704 req/s (Little's law: 200 / 54 ms)", i*30)})
		}
		if i >= 16 {
			f.Verdicts = append(f.Verdicts, Verdict{Kind: rundir.KindQueueing, Title: "latency grows without throughput (queueing)",
				Detail: "p50 54 ms -> " + fmtDur(p50) + " while 2xx/s stayed at 3,702"})
		}
		out = append(out, f)
	}
	return out
}

// sampleSummary is the end screen of the sample run.
func sampleSummary() *Summary {
	return &Summary{
		Title: "run finished",
		Table: Table{
			Header: []string{"phase", "offered", "2xx/s", "p50", "p95", "p99", "not sent", "errors"},
			Rows: [][]string{
				{"warm-up", "1,000 req/s", "1,000", "54.1 ms", "56.0 ms", "57.9 ms", "0", "0"},
				{"measure 4,500 req/s", "4,500 req/s", "3,702", "1.27 s", "2.21 s", "2.48 s", "0", "12"},
			},
		},
		Verdicts: []Verdict{{Kind: rundir.KindPoolSaturated, Title: "pool workers is saturated",
			Detail: "200/200 in use; predicted capacity 3,704 req/s (Little's law: 200 / 54 ms), achieved 3,702"}},
		Notes:   []string{"A bounded pool caps throughput at size / latency, whatever the load."},
		RunDirs: []string{"runs/2026-11-30T01-55-00-sleep-pool"},
	}
}
