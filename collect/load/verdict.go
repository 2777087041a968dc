package load

import (
	"fmt"
	"math"
)

// VerdictKind names a kind of verdict.
type VerdictKind string

const (
	// GeneratorBound: the generator, not the target, limited the phase: a
	// send lag p99 over 1 ms and over a tenth of the latency p99, or the
	// generator near a full core.
	GeneratorBound VerdictKind = "generator-bound"
	// LittlesLaw checks mean in flight against throughput x mean latency
	// and says how far the in-flight cap (users or MaxInflight) is from
	// limiting throughput.
	LittlesLaw VerdictKind = "littles-law"
	// ClosedCeiling is carried by every closed-model phase: throughput cannot
	// exceed users / (latency + think).
	ClosedCeiling VerdictKind = "closed-model-ceiling"
	// BelowCapacity: 2xx/s tracked the offered rate (open model).
	BelowCapacity VerdictKind = "below-capacity"
	// OverCapacity: 2xx/s fell short of the offered rate (open model) while
	// the generator kept up: the target is saturated.
	OverCapacity VerdictKind = "over-capacity"
	// Unreachable: most completed requests failed to connect (refused,
	// reset, no route), so the phase says nothing about the target's
	// capacity.
	Unreachable VerdictKind = "unreachable"
	// Errors: more than 1 % of completed requests failed.
	Errors VerdictKind = "errors"
)

// Thresholds behind the verdicts.
const (
	// SendLagLimitMS is the send-lag p99 (ms) above which the generator is late.
	SendLagLimitMS = 1.0
	// LagShareLimit: a send lag counts against the generator only when its
	// p99 is also at least this share of the latency p99 (2.7 ms of lag
	// against 200 ms of latency changes no conclusion).
	LagShareLimit = 0.1
	// CPUCoreLimit is the generator CPU (cores) that counts as "near a full core".
	CPUCoreLimit = 0.9
	// TrackingRatio is how close 2xx/s must be to the offered rate to call
	// the phase below capacity.
	TrackingRatio = 0.95
	// CeilingRatio is how close throughput must be to a Little's-law ceiling
	// for the ceiling to be called the limit.
	CeilingRatio = 0.9
)

// Tracks reports whether an open-model phase's 2xx/s tracked its offered
// rate: okPerS at least TrackingRatio of offered. It is the one rule behind
// the below-capacity and over-capacity verdicts; a sweep uses it too, so
// that a step the target did not keep up with is never called served. It
// is false when offered is not positive.
func Tracks(okPerS, offered float64) bool {
	return offered > 0 && okPerS >= TrackingRatio*offered
}

// Verdict is one conclusion about a phase, with the numbers behind it.
type Verdict struct {
	Kind VerdictKind `json:"kind"`
	// Message is one sentence with the numbers, without the kind.
	Message string `json:"message"`
	// Numbers are the figures the verdict was drawn from, by name.
	Numbers map[string]float64 `json:"numbers"`
}

// String renders the verdict as "kind: message".
func (v Verdict) String() string { return string(v.Kind) + ": " + v.Message }

// judge draws the verdicts of one phase from its figures. think and cap are
// the closed model's think time (seconds) and the in-flight cap; cpuIsOurs is
// false when the CPU figures include an in-process target.
func judge(p *PhaseResult, model string, think float64, inflightCap int, cpuIsOurs bool) []Verdict {
	var vs []Verdict
	meanLatS := p.Latency.Mean / 1000
	thr := p.CompletedPerS

	// Generator-bound: only what the generator itself caused. A send lag
	// far below the latency is a footnote (the table shows it), and requests
	// not sent because the in-flight cap was full are the target's overload
	// (see over-capacity), not the generator's.
	var reasons []string
	nums := map[string]float64{
		"send_lag_p99_ms": p.SendLag.P99, "latency_p99_ms": p.Latency.P99,
		"generator_cpu_cores": p.GeneratorCPUCores,
	}
	if p.SendLag.P99 > SendLagLimitMS && p.SendLag.P99 >= LagShareLimit*p.Latency.P99 {
		reasons = append(reasons, fmt.Sprintf("send lag p99 %.2f ms > %.0f ms and %.0f %% of the latency p99 %.2f ms",
			p.SendLag.P99, SendLagLimitMS, 100*p.SendLag.P99/max(p.Latency.P99, 1e-9), p.Latency.P99))
	}
	if cpuIsOurs && p.GeneratorCPUCores >= CPUCoreLimit {
		reasons = append(reasons, fmt.Sprintf("generator used %.2f cores", p.GeneratorCPUCores))
	}
	if len(reasons) > 0 {
		vs = append(vs, Verdict{Kind: GeneratorBound, Numbers: nums,
			Message: joinReasons(reasons) + ": the figures describe the generator as much as the target"})
	}

	// Little's law.
	if p.Completed > 0 && meanLatS > 0 {
		predicted := thr * meanLatS
		ceiling := float64(inflightCap) / (meanLatS + think)
		n := map[string]float64{"mean_inflight": p.MeanInFlight, "throughput_per_s": thr,
			"mean_latency_ms": p.Latency.Mean, "predicted_inflight": predicted,
			"inflight_cap": float64(inflightCap), "ceiling_per_s": ceiling}
		msg := fmt.Sprintf("%.1f in flight on average vs %.0f req/s x %.1f ms = %.1f", p.MeanInFlight, thr, p.Latency.Mean, predicted)
		if model == "open" && ceiling < 2*max(p.OfferedRate, thr) {
			msg += fmt.Sprintf("; at this latency the cap of %d in flight allows at most %.0f req/s", inflightCap, ceiling)
			if thr >= CeilingRatio*ceiling {
				msg += ": the cap, not the target, limits throughput (raise --max-inflight)"
			}
		}
		vs = append(vs, Verdict{Kind: LittlesLaw, Numbers: n, Message: msg})
	}

	// Closed-model ceiling: on every closed phase.
	if model == "closed" {
		ceiling := math.Inf(1)
		if meanLatS+think > 0 {
			ceiling = float64(p.Users) / (meanLatS + think)
		}
		ratio := 0.0
		if ceiling > 0 && !math.IsInf(ceiling, 1) {
			ratio = thr / ceiling
		}
		// What one closed phase shows, and no more: its users got this much at
		// this latency. Whether the latency is the target's own work or a wait
		// at its ceiling (a pool at its size) needs the target's polls
		// (schedscope run names a full pool) or an open-model ladder.
		msg := fmt.Sprintf("throughput cannot exceed users / (latency + think) = %d / (%.2f ms + %.0f ms) = %.0f req/s; measured %.0f req/s (%.0f %% of it). "+
			"A closed model offers only what its users allow: this figure is what these users got at this latency. "+
			"One closed phase cannot tell whether that latency is the target's own work or a wait at its ceiling "+
			"(schedscope run polls the target's pools; --rate finds its capacity)",
			p.Users, p.Latency.Mean, think*1000, ceiling, thr, 100*ratio)
		vs = append(vs, Verdict{Kind: ClosedCeiling, Message: msg, Numbers: map[string]float64{
			"users": float64(p.Users), "mean_latency_ms": p.Latency.Mean, "think_ms": think * 1000,
			"ceiling_per_s": ceiling, "throughput_per_s": thr, "ratio": ratio}})
	}

	// Capacity (open model).
	if model == "open" && p.OfferedRate > 0 {
		ratio := p.OKPerS / p.OfferedRate
		n := map[string]float64{"ok_per_s": p.OKPerS, "offered_rate": p.OfferedRate, "ratio": ratio}
		switch {
		case Tracks(p.OKPerS, p.OfferedRate):
			vs = append(vs, Verdict{Kind: BelowCapacity, Numbers: n, Message: fmt.Sprintf(
				"2xx/s %.0f tracks the offered %.0f req/s (%.1f %%)", p.OKPerS, p.OfferedRate, 100*ratio)})
		case p.Completed > 0 && 2*p.Errors.Connection >= p.Completed:
			n["connection_errors"] = float64(p.Errors.Connection)
			vs = append(vs, Verdict{Kind: Unreachable, Numbers: n, Message: fmt.Sprintf(
				"%d of %d completed requests could not connect (refused, reset or unreachable): the target is not answering, so 2xx/s %.0f is no capacity figure",
				p.Errors.Connection, p.Completed, p.OKPerS)})
		case len(reasons) == 0:
			vs = append(vs, Verdict{Kind: OverCapacity, Numbers: n, Message: fmt.Sprintf(
				"2xx/s %.0f of the offered %.0f req/s (%.1f %%) while the generator kept up: the target is saturated%s",
				p.OKPerS, p.OfferedRate, 100*ratio, notSent(p, inflightCap, n))})
		default:
			vs = append(vs, Verdict{Kind: OverCapacity, Numbers: n, Message: fmt.Sprintf(
				"2xx/s %.0f of the offered %.0f req/s (%.1f %%): the target is saturated, though the generator was also late (see generator-bound)%s",
				p.OKPerS, p.OfferedRate, 100*ratio, notSent(p, inflightCap, n))})
		}
	}

	// Errors.
	if e := p.Errors.Total(); p.Completed > 0 && float64(e) > 0.01*float64(p.Completed) {
		vs = append(vs, Verdict{Kind: Errors, Message: fmt.Sprintf(
			"%d of %d completed requests failed (%.1f %%): %d non-2xx, %d timeouts, %d connection, %d other",
			e, p.Completed, 100*float64(e)/float64(p.Completed), p.Errors.Status, p.Errors.Timeout, p.Errors.Connection, p.Errors.Other),
			Numbers: map[string]float64{"errors": float64(e), "completed": float64(p.Completed),
				"status": float64(p.Errors.Status), "timeout": float64(p.Errors.Timeout),
				"connection": float64(p.Errors.Connection), "other": float64(p.Errors.Other)}})
	}
	return vs
}

// notSent says, for an over-capacity verdict, how many requests were not
// sent because the in-flight cap was full (adding the figures to n): the
// target's overload, since the cap fills when responses are late.
func notSent(p *PhaseResult, inflightCap int, n map[string]float64) string {
	if p.NotSent == 0 {
		return ""
	}
	n["not_sent"], n["planned"], n["max_inflight"] = float64(p.NotSent), float64(p.Planned), float64(inflightCap)
	return fmt.Sprintf("; %d of %d planned requests were not sent, the in-flight cap of %d being full of slow requests", p.NotSent, p.Planned, inflightCap)
}

func joinReasons(rs []string) string {
	s := rs[0]
	for i := 1; i < len(rs); i++ {
		if i == len(rs)-1 {
			s += " and " + rs[i]
		} else {
			s += ", " + rs[i]
		}
	}
	return s
}
