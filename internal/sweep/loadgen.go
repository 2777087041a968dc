package sweep

import (
	"context"
	"fmt"
	"time"

	"github.com/schedscope/schedscope/collect/load"
)

// LoadGenerator returns a Loader that offers each phase with schedscope's
// open-model generator (load.Run). base supplies everything but the URL,
// rate, duration and progress (client, timeout, in-flight cap, arrivals);
// its rate, users, warm-up and pause fields are ignored, since the sweep
// drives the phases itself.
func LoadGenerator(base load.Config) Loader {
	return LoaderFunc(func(ctx context.Context, o Offer) (Measured, error) {
		cfg := base
		cfg.URL = o.URL
		cfg.Rate, cfg.Rates, cfg.Users, cfg.Think = o.Rate, nil, 0, 0
		cfg.Warmup, cfg.Pause = 0, 0
		cfg.Duration = o.Duration
		cfg.Progress, cfg.Interval = nil, nil
		if o.Progress != nil {
			progress := o.Progress
			cfg.Progress = func(p load.Progress) {
				if p.Kind != load.Steady {
					return
				}
				progress(PhaseProgress{
					Elapsed: p.Elapsed, Total: p.Total, Sent: p.Sent, OK: p.OK,
					Errors: p.Errors.Total(), NotSent: p.NotSent, OKPerSec: p.OKPerS, P99: p.PhaseP99,
				})
			}
		}
		res, err := load.Run(ctx, cfg)
		if err != nil {
			return Measured{}, err
		}
		m := Measured{Interrupted: res.Interrupted}
		if len(res.Phases) == 0 {
			m.Interrupted = true
			return m, nil
		}
		return measured(res.Phases[0], res.Interrupted), nil
	})
}

// measured converts one steady phase of the generator.
func measured(p load.PhaseResult, interrupted bool) Measured {
	m := Measured{
		Duration: time.Duration(p.DurationS * float64(time.Second)),
		Sent:     p.Sent, OK: p.OK, NotSent: p.NotSent,
		Errors: p.Errors.Total() + p.Unfinished, Timeouts: p.Errors.Timeout,
		OKPerSec: p.OKPerS,
		P50:      msDuration(p.Latency.P50), P99: msDuration(p.Latency.P99), Max: msDuration(p.Latency.Max),
		ServiceP50:        msDuration(p.Service.P50),
		Verdicts:          p.Verdicts,
		GeneratorCPUCores: p.GeneratorCPUCores,
		Interrupted:       interrupted,
	}
	if p.DurationS > 0 {
		m.AnsweredPerSec = float64(p.OK) / p.DurationS
	}
	for _, v := range p.VerdictDetails {
		if v.Kind == load.GeneratorBound {
			m.GeneratorVerdict = true
			m.GeneratorBound, m.GeneratorNote = MaterialGeneratorBound(
				v.Numbers["send_lag_p99_ms"], p.Latency.P50, v.Numbers["generator_cpu_cores"])
		}
	}
	return m
}

// MaterialGeneratorBound decides whether a generator-bound verdict changes
// what a step measured, and says why. The generator calls itself a limit
// when its send lag p99 exceeds 1 ms and a tenth of the latency p99, or when
// it used most of a core (requests not sent because the in-flight cap was
// full are the target's overload, and no generator verdict). On a small
// shared machine a 1-2 ms lag is common; it matters only against the
// latency it is part of, since latency is measured from the intended send
// time anyway. So the step is generator-bound (and left out of the knee)
// when the generator used 0.9 cores or more, or when the send lag p99
// exceeds both 1 ms and 20 % of the step's p50 latency.
func MaterialGeneratorBound(lagP99MS, p50MS, cpuCores float64) (bool, string) {
	switch {
	case cpuCores >= load.CPUCoreLimit:
		return true, fmt.Sprintf("generator used %.2f cores", cpuCores)
	case lagP99MS > load.SendLagLimitMS && lagP99MS > 0.2*p50MS:
		return true, fmt.Sprintf("send lag p99 %.2f ms, over 20 %% of the p50 latency %.2f ms", lagP99MS, p50MS)
	}
	return false, fmt.Sprintf("immaterial: send lag p99 %.2f ms against a p50 latency of %.2f ms, generator %.2f cores", lagP99MS, p50MS, cpuCores)
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
