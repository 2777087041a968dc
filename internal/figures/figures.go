// Package figures reads the figures of a run directory, a sweep directory
// or an execution trace into one shape, named as the condition language
// names them (package cond): the rows `schedscope compare` puts side by
// side and the figures `--fail-on` checks.
//
// A Set is one measured thing (a run, a sweep, a trace). Its figures come
// in Groups: a run's steady phases, its trace, its diagnosis; a sweep's
// GOMAXPROCS levels and its recommendation. Groups match across Sets by
// Key, figures within a group by Figure.Key. Every figure is re-derived from
// the directory's files; nothing is taken from a summary's prose.
package figures

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/rundir"
)

// Better says which way a figure improves, for a comparison's reader.
type Better int

// The directions.
const (
	// Neutral: neither way is better in itself (goroutines, a cause's share).
	Neutral Better = iota
	// Lower is better: latencies, errors, CPU per request.
	Lower
	// Higher is better: throughput, the knee.
	Higher
)

// String names the direction as JSON and tables write it.
func (b Better) String() string {
	switch b {
	case Lower:
		return "lower"
	case Higher:
		return "higher"
	}
	return "neutral"
}

// MarshalText writes the direction's name.
func (b Better) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText reads a direction's name.
func (b *Better) UnmarshalText(text []byte) error {
	for _, d := range []Better{Neutral, Lower, Higher} {
		if d.String() == string(text) {
			*b = d
			return nil
		}
	}
	return fmt.Errorf("unknown direction %q (lower, higher or neutral)", text)
}

// Figure is one figure of a group.
type Figure struct {
	// Key identifies the figure within its group across Sets: the metric's
	// name, with the pool for a per-pool figure ("pool.saturated:db"), or
	// "cause:KIND[:POOL]" for a diagnosis' cause.
	Key string `json:"key"`
	// Metric is the condition language's name for it; empty for a figure
	// no condition reads (a cause's share).
	Metric string `json:"metric,omitempty"`
	// Label names it for people: "latency p99", "pool db saturated".
	Label string    `json:"label"`
	Unit  cond.Unit `json:"unit"`
	// Value is in Unit's base: nanoseconds for a Duration, percent for a
	// Percent.
	Value float64 `json:"value"`
	// Share is Value as a share of its whole in percent (Whole names it),
	// when HasShare: errors of the completed requests.
	Share    float64 `json:"share,omitempty"`
	HasShare bool    `json:"has_share,omitempty"`
	Better   Better  `json:"better"`
	// Note says how it was measured where that varies: "exact (trace)",
	// "sampled (polls)".
	Note string `json:"note,omitempty"`
}

// Group is a set of figures measured over one span: a phase, a trace, a
// GOMAXPROCS level.
type Group struct {
	// Key matches groups across Sets: "phase 1", "trace", "diagnosis",
	// "gomaxprocs 4", "recommended".
	Key string `json:"key"`
	// Title describes the span: "phase 1: steady, 1500 req/s offered".
	Title string `json:"title"`
	// Gate: conditions are checked on this group (its figures carry
	// metrics of the Set's context).
	Gate    bool     `json:"gate"`
	Figures []Figure `json:"figures"`
}

// Find returns the figure with key, or nil.
func (g *Group) Find(key string) *Figure {
	for i := range g.Figures {
		if g.Figures[i].Key == key {
			return &g.Figures[i]
		}
	}
	return nil
}

// Source is the group's figures as a condition Source: a metric reads the
// figure of that name, and for a metric several figures carry (one pool
// each), the largest.
func (g *Group) Source() cond.ShareSource { return groupSource{g} }

type groupSource struct{ g *Group }

func (s groupSource) pick(metric string, share bool) (float64, bool) {
	v, ok := math.Inf(-1), false
	for _, f := range s.g.Figures {
		if f.Metric != metric || (share && !f.HasShare) {
			continue
		}
		x := f.Value
		if share {
			x = f.Share
		}
		v, ok = max(v, x), true
	}
	return v, ok
}

func (s groupSource) Value(metric string) (float64, bool) { return s.pick(metric, false) }
func (s groupSource) Share(metric string) (float64, bool) { return s.pick(metric, true) }

// Kind is what a Set was read from.
type Kind string

// The kinds of Set.
const (
	KindRun   Kind = "run"
	KindSweep Kind = "sweep"
	KindTrace Kind = "trace"
)

// Context is the condition context of the kind's figures.
func (k Kind) Context() cond.Context {
	switch k {
	case KindRun:
		return cond.Run
	case KindSweep:
		return cond.Sweep
	}
	return cond.Trace
}

// Set is the figures of one run directory, sweep directory or trace.
type Set struct {
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// Label names it in a comparison: the fixture's model, the directory's
	// name.
	Label  string  `json:"label"`
	Groups []Group `json:"groups"`
	// Identity is what must agree for two Sets to be compared.
	Identity Identity `json:"identity"`
	// Warnings say what a reader must know about the figures: an
	// interrupted run, skipped metrics lines, a phase cut short.
	Warnings []string `json:"warnings,omitempty"`
	// HLogMismatches are the steady phases whose counts in load.hlog and
	// results.json disagree (each has its line in Warnings too): the
	// typed form, for code to select on.
	HLogMismatches []rundir.HLogMismatch `json:"hlog_mismatches,omitempty"`
	// Latency holds each phase group's latency histogram (ns, from intended
	// send), for percentile plots; Throughput the offered rate against
	// 2xx/s of each phase or sweep cell (at the recommended GOMAXPROCS).
	Latency    map[string]*hdrhistogram.Histogram `json:"-"`
	Throughput []Point                            `json:"-"`
}

// Point is one offered rate and the 2xx/s the target answered it with.
type Point struct{ Offered, OKPerS float64 }

// Group returns the group with key, or nil.
func (s *Set) Group(key string) *Group {
	for i := range s.Groups {
		if s.Groups[i].Key == key {
			return &s.Groups[i]
		}
	}
	return nil
}

// Identity is what makes two Sets comparable: the same request at the same
// offered load. What may differ (the target's address, its command, its
// GOMAXPROCS) is the change being measured.
type Identity struct {
	// Method and Request (the URL's path and query) must match; Host is
	// only stated when it differs.
	Method  string `json:"method,omitempty"`
	Request string `json:"request,omitempty"`
	Host    string `json:"host,omitempty"`
	// Model is "open" or "closed".
	Model string `json:"model,omitempty"`
	// Phases are the steady phases' offered load: "1500 req/s, 10s".
	Phases []PhaseLoad `json:"phases,omitempty"`
	// Partial: the run was cut short, so Phases may lack its last phases
	// (they are compared as far as both go).
	Partial bool `json:"partial,omitempty"`
	// MachineCPUs is how many CPUs the measuring machine had.
	MachineCPUs int `json:"machine_cpus,omitempty"`
	// Target describes what served it (the command, a fixture's model), for
	// labels and the differences stated.
	Target string `json:"target,omitempty"`
}

// PhaseLoad is one steady phase's offered load.
type PhaseLoad struct {
	OfferedRate float64 `json:"offered_rate,omitempty"`
	Users       int     `json:"users,omitempty"`
	DurationS   float64 `json:"duration_s"`
}

// String says the load: "1500 req/s for 10s", "200 users for 10s".
func (p PhaseLoad) String() string {
	if p.Users > 0 {
		return fmt.Sprintf("%d users for %.3gs", p.Users, p.DurationS)
	}
	return fmt.Sprintf("%g req/s for %.3gs", p.OfferedRate, p.DurationS)
}
