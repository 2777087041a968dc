package collect

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/fixtures"
	"github.com/schedscope/schedscope/internal/rundir"
)

// The request anatomy's ground truth: fixture scenarios whose composition
// is known, over real loopback HTTP, each a `schedscope run` with a trace
// window, derived as the command derives it.

// bandSplit returns the named band of a run's anatomy.
func bandSplit(t *testing.T, an *rundir.Analysis, name string) analyze.Band {
	t.Helper()
	if an.Trace == nil || an.Trace.Requests == nil {
		t.Fatalf("no request anatomy (trace error %q)", an.TraceError)
	}
	rq := an.Trace.Requests
	if !rq.PerRequest {
		t.Fatalf("no per-request anatomy: %s", rq.Note)
	}
	for _, b := range rq.Bands {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("no band %s in %+v", name, rq.Bands)
	return analyze.Band{}
}

// sharePct sums the split's shares in states (a pool named "pool NAME").
func sharePct(split []analyze.Share, states ...string) float64 {
	var p float64
	for _, s := range split {
		name := string(s.State)
		if s.Pool != "" {
			name += " " + s.Pool
		}
		for _, st := range states {
			if name == st {
				p += s.Pct
			}
		}
	}
	return p
}

func splitString(split []analyze.Share) string {
	var b strings.Builder
	for _, s := range split {
		fmt.Fprintf(&b, "%.1f%% %s%s, ", s.Pct, s.State, map[bool]string{true: " " + s.Pool}[s.Pool != ""])
	}
	return b.String()
}

// firstCause checks the diagnosis' first cause.
func firstCause(t *testing.T, an *rundir.Analysis, kind rundir.Kind, pool string) {
	t.Helper()
	d := an.Diagnosis
	if d == nil || len(d.Causes) == 0 {
		t.Fatalf("no diagnosis: %+v", d)
	}
	c := d.Causes[0]
	if c.Kind != kind || c.Pool != pool {
		t.Errorf("first cause %s %q (%.0f %%), want %s %q; all: %+v", c.Kind, c.Pool, 100*c.Share, kind, pool, d.Causes)
	}
	for _, c := range d.Causes {
		if c.Kind == rundir.KindGenerator {
			t.Errorf("the generator is blamed (%.0f %%): %+v", 100*c.Share, c)
		}
	}
}

func TestAnatomySleepLowLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3 s loopback run")
	}
	srv := startFixture(t, fixtures.DefaultConfig(), true)
	out := runOnce(t, context.Background(), Config{
		Load:        load.Config{URL: srv.URL() + "/sleep?ms=50", Rate: 20, Duration: 3 * time.Second},
		TraceWindow: 2 * time.Second,
		PollEvery:   250 * time.Millisecond,
	})
	b := bandSplit(t, out.Analysis, "<=p50")
	if p := sharePct(b.Split, "sleep"); p < 90 {
		t.Errorf("sleep is %.1f%% of the p50 band, want >= 90: %s", p, splitString(b.Split))
	}
	firstCause(t, out.Analysis, rundir.KindSleep, "")
	if rq := out.Analysis.Trace.Requests; rq.Joined == 0 || rq.Joined != rq.Requests {
		t.Errorf("%d of %d requests joined with the generator's ids, want all", rq.Joined, rq.Requests)
	}
}

func TestAnatomyCPUBeyondCPUs(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3 s loopback run beyond the CPUs")
	}
	srv := startFixture(t, fixtures.DefaultConfig(), true)
	// 2 ms of CPU per request: 1,000 req/s would fill two CPUs alone.
	out := runOnce(t, context.Background(), Config{
		Load:        load.Config{URL: srv.URL() + "/cpu?us=2000", Rate: 1500, Duration: 3 * time.Second, Timeout: 10 * time.Second},
		TraceWindow: time.Second,
		PollEvery:   250 * time.Millisecond,
	})
	b := bandSplit(t, out.Analysis, ">=p99")
	if p := sharePct(b.Split, "running", "runnable"); p < 80 {
		t.Errorf("running + runnable is %.1f%% of the p99 band, want >= 80: %s", p, splitString(b.Split))
	}
	firstCause(t, out.Analysis, rundir.KindCPU, "")
}

func TestAnatomyDBPool(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3 s loopback run beyond a database pool")
	}
	fc := fixtures.DefaultConfig()
	fc.DBPool, fc.DBDelay = 2, 50*time.Millisecond
	srv := startFixture(t, fc, true)
	// 2 connections x 50 ms = 40 req/s; 80 offered.
	out := runOnce(t, context.Background(), Config{
		Load:        load.Config{URL: srv.URL() + "/db", Rate: 80, Duration: 3 * time.Second, Timeout: 10 * time.Second},
		TraceWindow: time.Second,
		PollEvery:   250 * time.Millisecond,
	})
	b := bandSplit(t, out.Analysis, ">=p99")
	if p := sharePct(b.Split, "pool db"); p < 70 {
		t.Errorf("pool db is %.1f%% of the p99 band, want >= 70: %s", p, splitString(b.Split))
	}
	firstCause(t, out.Analysis, rundir.KindPool, "db")
}

func TestAnatomyWorkerPool(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3 s loopback run beyond a worker pool")
	}
	fc := fixtures.DefaultConfig()
	fc.Model, fc.Workers, fc.QueueSize = fixtures.ModelPool, 2, 10_000
	srv := startFixture(t, fc, true)
	// 2 workers x 50 ms = 40 req/s; 80 offered.
	out := runOnce(t, context.Background(), Config{
		Load:        load.Config{URL: srv.URL() + "/sleep?ms=50", Rate: 80, Duration: 3 * time.Second, Timeout: 10 * time.Second},
		TraceWindow: time.Second,
		PollEvery:   250 * time.Millisecond,
	})
	b := bandSplit(t, out.Analysis, ">=p99")
	if p := sharePct(b.Split, "pool workers"); p < 70 {
		t.Errorf("the worker queue is %.1f%% of the p99 band, want >= 70: %s", p, splitString(b.Split))
	}
	firstCause(t, out.Analysis, rundir.KindPool, "workers")
}

func TestAnatomyFanoutSlowDownstream(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3 s loopback run of /fanout")
	}
	fc := fixtures.DefaultConfig()
	fc.DownstreamDelay = 50 * time.Millisecond
	srv := startFixture(t, fc, true)
	out := runOnce(t, context.Background(), Config{
		Load:        load.Config{URL: srv.URL() + "/fanout", Rate: 20, Duration: 3 * time.Second, Timeout: 10 * time.Second},
		TraceWindow: 2 * time.Second,
		PollEvery:   250 * time.Millisecond,
	})
	b := bandSplit(t, out.Analysis, "<=p50")
	if p := sharePct(b.Split, "fan-out"); p < 70 {
		t.Errorf("the fan-out wait is %.1f%% of the p50 band, want >= 70: %s", p, splitString(b.Split))
	}
	if p := sharePct(b.Children, "network", "http client"); p < 70 {
		t.Errorf("the fan-out goroutines' network wait is %.1f%% of their time, want >= 70: %s", p, splitString(b.Children))
	}
	firstCause(t, out.Analysis, rundir.KindDownstream, "")
}
