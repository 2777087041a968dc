package sweep

import (
	"context"
	"fmt"
	"time"

	"github.com/schedscope/schedscope/collect/load"
)

// LoadGenerator returns a Loader that offers each phase with schedscope's
// generator (load.Run): open model for an Offer with a Rate, closed model
// for one with Users. base supplies everything but the URL, load, duration
// and progress (client, timeout, in-flight cap, arrivals); its rate, users,
// think, warm-up and pause fields are ignored, since the sweep drives the
// phases itself.
func LoadGenerator(base load.Config) Loader {
	return LoaderFunc(func(ctx context.Context, o Offer) (Measured, error) {
		cfg := base
		cfg.URL = o.URL
		cfg.Rate, cfg.Rates, cfg.Users, cfg.Think = o.Rate, nil, 0, 0
		if o.Users > 0 {
			cfg.Rate, cfg.Users, cfg.Think, cfg.MaxInflight = 0, o.Users, o.Think, 0
		}
		cfg.Arrivals = load.Arrivals(o.Arrivals)
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
		P50:      msDuration(p.Latency.P50), P95: p95(p), P99: msDuration(p.Latency.P99), Max: msDuration(p.Latency.Max),
		Mean:              msDuration(p.Latency.Mean),
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
				v.Numbers["send_lag_p99_ms"], p.Latency.P99, v.Numbers["generator_cpu_cores"])
		}
	}
	return m
}

// MaterialGeneratorBound decides whether a generator-bound verdict could
// have changed what a step measured, and says why. It is the generator's
// own rule (collect/load's verdict): the generator counts as a limit when
// it used load.CPUCoreLimit (0.9) cores or more, or when its send lag p99
// exceeds load.SendLagLimitMS (1 ms) and is at least load.LagShareLimit
// (10 %) of the latency p99.
//
// Why the latency p99 and not the p50 (the rule before): latency is
// measured from the intended send time, so the lag is already inside it; a
// lag matters only when it is a visible part of the latency being judged,
// and the served rule judges the p99. Against the p50, 2-4 ms of lag on a
// 2-CPU machine dropped steps that served every request with a 17-34 ms
// p99. Even a material verdict does not discard a step that was served:
// package capacity uses generator-bound steps for the knee when they pass
// the served rule (a late generator can only make a step look worse), and
// leaves out only those that failed it.
func MaterialGeneratorBound(lagP99MS, latencyP99MS, cpuCores float64) (bool, string) {
	switch {
	case cpuCores >= load.CPUCoreLimit:
		return true, fmt.Sprintf("generator used %.2f cores", cpuCores)
	case lagP99MS > load.SendLagLimitMS && lagP99MS >= load.LagShareLimit*latencyP99MS:
		return true, fmt.Sprintf("send lag p99 %.2f ms, over %.0f ms and %.0f %% of the p99 latency %.2f ms",
			lagP99MS, load.SendLagLimitMS, 100*lagP99MS/max(latencyP99MS, 1e-9), latencyP99MS)
	}
	return false, fmt.Sprintf("immaterial: send lag p99 %.2f ms against a p99 latency of %.2f ms, generator %.2f cores", lagP99MS, latencyP99MS, cpuCores)
}

// p95 is the phase's latency p95: the generator's own figure
// (load.Percentiles.P95), else read from the phase's histogram
// (nanoseconds); 0 without either.
func p95(p load.PhaseResult) time.Duration {
	if p.Latency.P95 > 0 {
		return msDuration(p.Latency.P95)
	}
	if p.LatencyHist == nil || p.LatencyHist.TotalCount() == 0 {
		return 0
	}
	return time.Duration(p.LatencyHist.ValueAtQuantile(95))
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
