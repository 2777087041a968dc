package load

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// phasePlan is one entry of a run's plan.
type phasePlan struct {
	index int
	kind  PhaseKind
	name  string
	step  int // index into Result.Phases; -1 for warm-up and pauses
	// rate is what this generator offers: its shard's share of schedRate,
	// the whole schedule's rate, which the pacer lays out.
	rate, schedRate float64
	users           int
	dur             time.Duration
	// offset is when the phase begins on the run's clock in a sharded run
	// (runner.phaseStart): the durations of the phases before it, so that
	// every shard's phases begin together.
	offset time.Duration
}

// makePlan lays out the phases of cfg (defaults applied): an optional
// warm-up, then one steady phase per rate (or one closed-model phase), with a
// pause between consecutive load phases when cfg.Pause > 0.
func makePlan(cfg *Config) []phasePlan {
	var loads []phasePlan
	if cfg.Warmup > 0 {
		p := phasePlan{kind: Warmup, name: "warmup", step: -1, dur: cfg.Warmup, users: cfg.Users}
		if cfg.Users == 0 {
			p.rate = cfg.Rates[0]
		}
		loads = append(loads, p)
	}
	if cfg.Users > 0 {
		loads = append(loads, phasePlan{kind: Steady, name: "steady", step: 0, users: cfg.Users, dur: cfg.Duration})
	} else {
		for i, r := range cfg.Rates {
			name := "steady"
			if len(cfg.Rates) > 1 {
				name = fmt.Sprintf("step %d/%d", i+1, len(cfg.Rates))
			}
			loads = append(loads, phasePlan{kind: Steady, name: name, step: i, rate: r, dur: cfg.Duration})
		}
	}
	var plan []phasePlan
	for i, p := range loads {
		if i > 0 && cfg.Pause > 0 {
			plan = append(plan, phasePlan{kind: Pause, name: "pause", step: -1, dur: cfg.Pause})
		}
		plan = append(plan, p)
	}
	var offset time.Duration
	for i := range plan {
		plan[i].index = i
		plan[i].offset = offset
		offset += plan[i].dur
		plan[i].schedRate = plan[i].rate
		plan[i].rate /= float64(max(cfg.Shard.Count, 1))
	}
	return plan
}

// pacer yields the intended send times of one open-model phase, in
// nanoseconds on the run's clock: the whole schedule's arrivals, of which
// it keeps those its shard owns.
type pacer struct {
	start   int64
	rate    float64 // the whole schedule's
	shard   Shard
	i       int64      // the schedule's next arrival, from 0
	rng     *rand.Rand // nil for uniform arrivals
	poisson float64    // Poisson: the offset of the next arrival, ns
}

// newPacer starts phase p's schedule at start (ns). Poisson arrivals draw
// from a PCG seeded with (seed, phase), so each phase of a seeded run is
// reproducible, and every shard draws the same schedule.
func newPacer(cfg *Config, p phasePlan, start int64) *pacer {
	pc := &pacer{start: start, rate: p.schedRate, shard: cfg.Shard}
	if cfg.Arrivals == Poisson {
		pc.rng = rand.New(rand.NewPCG(cfg.Seed, uint64(p.index)))
		pc.poisson = pc.rng.ExpFloat64() * 1e9 / pc.rate
	}
	return pc
}

// next returns this shard's next intended send time and advances.
func (p *pacer) next() int64 {
	for {
		k := p.i
		p.i++
		var t int64
		if p.rng != nil {
			t = p.start + int64(p.poisson)
			p.poisson += p.rng.ExpFloat64() * 1e9 / p.rate
		} else {
			t = p.start + int64(float64(k)*1e9/p.rate)
		}
		if p.shard.owns(k) {
			return t
		}
	}
}

// PlannedDuration is how long c's phases last together (warm-up, pauses and
// measured phases), without the stragglers after the last one; zero for an
// invalid c.
func (c Config) PlannedDuration() time.Duration {
	d, err := c.withDefaults()
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, p := range makePlan(&d) {
		total += p.dur
	}
	return total
}
