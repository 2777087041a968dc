package sweep

import (
	"context"
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
		Verdicts:          p.Verdicts,
		GeneratorCPUCores: p.GeneratorCPUCores,
		Interrupted:       interrupted,
	}
	for _, v := range p.VerdictDetails {
		if v.Kind == load.GeneratorBound {
			m.GeneratorBound = true
		}
	}
	return m
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
