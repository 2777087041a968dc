package load

import (
	"strings"
	"testing"
)

func kinds(vs []Verdict) map[VerdictKind]Verdict {
	m := map[VerdictKind]Verdict{}
	for _, v := range vs {
		m[v.Kind] = v
	}
	return m
}

func TestJudge(t *testing.T) {
	base := func() PhaseResult {
		return PhaseResult{OfferedRate: 1000, Planned: 10000, Sent: 10000, Completed: 10000, OK: 10000,
			OKPerS: 1000, CompletedPerS: 1000, MeanInFlight: 50,
			Latency: Percentiles{Mean: 50}, SendLag: LagPercentiles{P99: 0.2}, GeneratorCPUCores: 0.2}
	}
	for _, tc := range []struct {
		name      string
		edit      func(p *PhaseResult)
		model     string
		cpuIsOurs bool
		want      []VerdictKind
		notWant   []VerdictKind
		contains  string
	}{
		{"healthy open", func(p *PhaseResult) {}, "open", true,
			[]VerdictKind{BelowCapacity, LittlesLaw}, []VerdictKind{GeneratorBound, OverCapacity, Errors}, "50.0 in flight"},
		{"late sends", func(p *PhaseResult) { p.SendLag.P99, p.Latency.P99 = 15, 60 }, "open", true,
			[]VerdictKind{GeneratorBound, BelowCapacity}, nil, "send lag p99 15.00 ms > 1 ms and 25 % of the latency p99 60.00 ms"},
		{"a lag far below the latency is a footnote", func(p *PhaseResult) { p.SendLag.P99, p.Latency.P99 = 2.71, 200 }, "open", true,
			[]VerdictKind{BelowCapacity}, []VerdictKind{GeneratorBound}, ""},
		{"not sent: the target's overload", func(p *PhaseResult) { p.NotSent, p.Sent, p.OKPerS, p.CompletedPerS = 4000, 6000, 600, 600 }, "open", true,
			[]VerdictKind{OverCapacity}, []VerdictKind{GeneratorBound}, "4000 of 10000 planned requests were not sent, the in-flight cap of 5000 being full"},
		{"busy generator", func(p *PhaseResult) { p.GeneratorCPUCores = 0.95 }, "open", true,
			[]VerdictKind{GeneratorBound}, nil, "0.95 cores"},
		{"busy process with the target in it", func(p *PhaseResult) { p.GeneratorCPUCores = 0.95 }, "open", false,
			nil, []VerdictKind{GeneratorBound}, ""},
		{"saturated target", func(p *PhaseResult) { p.OKPerS, p.CompletedPerS = 600, 600 }, "open", true,
			[]VerdictKind{OverCapacity}, []VerdictKind{BelowCapacity, GeneratorBound}, "the target is saturated"},
		{"unreachable target", func(p *PhaseResult) { p.OK, p.OKPerS, p.Errors = 0, 0, ErrorCounts{Connection: 10000} }, "open", true,
			[]VerdictKind{Unreachable, Errors}, []VerdictKind{OverCapacity, BelowCapacity}, "10000 of 10000 completed requests could not connect"},
		{"errors over 1 %", func(p *PhaseResult) { p.OK, p.Errors = 9800, ErrorCounts{Timeout: 150, Status: 50} }, "open", true,
			[]VerdictKind{Errors}, nil, "200 of 10000 completed requests failed (2.0 %): 50 non-2xx, 150 timeouts"},
		{"errors under 1 %", func(p *PhaseResult) { p.OK, p.Errors = 9950, ErrorCounts{Status: 50} }, "open", true,
			nil, []VerdictKind{Errors}, ""},
		{"cap within reach", func(p *PhaseResult) { p.Latency.Mean = 4800 }, "open", true,
			[]VerdictKind{LittlesLaw}, nil, "the cap, not the target, limits throughput"},
		{"closed model", func(p *PhaseResult) { p.OfferedRate, p.Users = 0, 50 }, "closed", true,
			[]VerdictKind{ClosedCeiling, LittlesLaw}, []VerdictKind{BelowCapacity, OverCapacity}, "50 / (50.00 ms + 0 ms) = 1000 req/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.edit(&p)
			vs := judge(&p, tc.model, 0, 5000, tc.cpuIsOurs)
			got := kinds(vs)
			for _, k := range tc.want {
				if _, ok := got[k]; !ok {
					t.Errorf("no %s verdict in %v", k, vs)
				}
			}
			for _, k := range tc.notWant {
				if _, ok := got[k]; ok {
					t.Errorf("unexpected %s verdict: %v", k, got[k])
				}
			}
			if tc.contains != "" {
				all := ""
				for _, v := range vs {
					all += v.String() + "\n"
				}
				if !strings.Contains(all, tc.contains) {
					t.Errorf("verdicts do not say %q:\n%s", tc.contains, all)
				}
			}
		})
	}
}

func TestClosedCeilingNumbers(t *testing.T) {
	p := PhaseResult{Users: 400, Completed: 19640, CompletedPerS: 1964, Latency: Percentiles{Mean: 203.7}}
	v := kinds(judge(&p, "closed", 0, 400, true))[ClosedCeiling]
	if c := v.Numbers["ceiling_per_s"]; c < 1963 || c > 1965 {
		t.Errorf("400 users / 203.7 ms: ceiling %.1f, want 1,964 (seed 000's first table)", c)
	}
	if r := v.Numbers["ratio"]; r < 0.99 || r > 1.01 {
		t.Errorf("ratio %.3f", r)
	}
	p.Users = 10
	v = kinds(judge(&p, "closed", 0.1, 10, true))[ClosedCeiling]
	if c := v.Numbers["ceiling_per_s"]; c < 32 || c > 33.5 {
		t.Errorf("10 users / (203.7 ms + 100 ms think): ceiling %.1f, want about 32.9", c)
	}
	// One closed phase cannot tell a latency that is the target's own work
	// from one that is a wait at its ceiling (issue 15: the verdict said "not
	// by the target's capacity" for a target held at its pool's size).
	if strings.Contains(v.Message, "not by the target's capacity") || !strings.Contains(v.Message, "cannot tell") {
		t.Errorf("closed-model verdict claims more than one closed phase shows: %s", v.Message)
	}
}

func TestTracks(t *testing.T) {
	for _, tc := range []struct {
		ok, offered float64
		want        bool
	}{
		{95, 100, true}, {94.9, 100, false}, {480, 700, false}, {700, 700, true}, {0, 0, false}, {10, -1, false},
	} {
		if got := Tracks(tc.ok, tc.offered); got != tc.want {
			t.Errorf("Tracks(%v, %v) = %v, want %v", tc.ok, tc.offered, got, tc.want)
		}
	}
}
