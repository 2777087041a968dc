package capacity

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

const ms = time.Millisecond

// ladder builds one iteration's samples at gmp: served up to ceiling, then
// flat at ceiling with p99 growing.
func ladder(gmp, iter int, rates []float64, ceiling float64, p50 time.Duration, cpu time.Duration) []Sample {
	var out []Sample
	for _, r := range rates {
		s := Sample{GOMAXPROCS: gmp, Iteration: iter, OfferedRate: r, P50: p50, P99: p50 + p50/10, CPUPerRequest: cpu}
		if r <= ceiling {
			s.OKPerSec = r * 0.998
		} else {
			s.OKPerSec = ceiling
			s.P50 = 10 * p50
			s.P99 = 40 * p50
		}
		out = append(out, s)
	}
	return out
}

// busyMachine marks a sample set's steps as measured on a machine with idle
// CPUs, so the limit rules can tell serialization from starvation.
func busyMachine(samples []Sample, share float64) []Sample {
	for i := range samples {
		samples[i].MachineBusy = share
	}
	return samples
}

func TestAnalyzeShapes(t *testing.T) {
	rates := []float64{50, 100, 200, 400, 800}
	tests := []struct {
		name     string
		samples  []Sample
		opt      Options
		kind     ScalingKind
		knees    []float64 // per level
		ceilings []float64
		rec      int
		reason   string // substring of the recommendation's reason
	}{
		{
			name: "blocking pool of 8 with 50 ms sleeps is flat",
			samples: concat(
				ladder(1, 1, rates, 158, 50*ms, 60*time.Microsecond),
				ladder(2, 1, rates, 159, 50*ms, 60*time.Microsecond),
			),
			opt:      Options{ConcurrencyLimit: 8},
			kind:     BlockingBound,
			knees:    []float64{100, 100},
			ceilings: []float64{158, 159},
			rec:      1,
			reason:   "flat",
		},
		{
			name: "cpu work doubles",
			samples: concat(
				ladder(1, 1, rates, 190, 5*ms, 6*ms),
				ladder(2, 1, rates, 380, 5*ms, 6*ms),
				ladder(4, 1, rates, 760, 5*ms, 6*ms),
			),
			kind:     CPUBound,
			knees:    []float64{100, 200, 400},
			ceilings: []float64{190, 380, 760},
			rec:      4,
			reason:   "needs about 4.8 Ps",
		},
		{
			name: "partial scaling",
			samples: busyMachine(concat(
				ladder(1, 1, rates, 190, 5*ms, 5*ms),
				ladder(4, 1, rates, 300, 5*ms, 5*ms),
			), 0.5),
			kind:     Partial,
			knees:    []float64{100, 200},
			ceilings: []float64{190, 300},
			rec:      4,
		},
		{
			name: "ladder too low to find a ceiling",
			samples: concat(
				ladder(1, 1, rates, 1e9, 5*ms, time.Millisecond),
				ladder(2, 1, rates, 1e9, 5*ms, time.Millisecond),
			),
			kind:     ScalingUnknown,
			knees:    []float64{800, 800},
			ceilings: []float64{800 * 0.998, 800 * 0.998},
			rec:      1,
			reason:   "never reached a ceiling",
		},
		{
			name:    "one level",
			samples: ladder(2, 1, rates, 190, 5*ms, 5*ms),
			kind:    ScalingUnknown, knees: []float64{100}, ceilings: []float64{190}, rec: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(tt.samples, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if a.Scaling.Kind != tt.kind {
				t.Errorf("scaling = %s (%s), want %s", a.Scaling.Kind, a.Scaling.Reason, tt.kind)
			}
			if len(a.Levels) != len(tt.knees) {
				t.Fatalf("levels = %d, want %d", len(a.Levels), len(tt.knees))
			}
			for i, l := range a.Levels {
				if l.Knee != tt.knees[i] {
					t.Errorf("GOMAXPROCS %d knee = %v, want %v", l.GOMAXPROCS, l.Knee, tt.knees[i])
				}
				if math.Abs(l.Ceiling-tt.ceilings[i]) > 1e-9 {
					t.Errorf("GOMAXPROCS %d ceiling = %v, want %v", l.GOMAXPROCS, l.Ceiling, tt.ceilings[i])
				}
			}
			if a.Recommendation.GOMAXPROCS != tt.rec {
				t.Errorf("recommended %d (%s), want %d", a.Recommendation.GOMAXPROCS, a.Recommendation.Reason, tt.rec)
			}
			if !strings.Contains(a.Recommendation.Reason, tt.reason) {
				t.Errorf("reason %q does not contain %q", a.Recommendation.Reason, tt.reason)
			}
		})
	}
}

func TestLittlePredictionAndCarriers(t *testing.T) {
	rates := []float64{50, 100, 200, 400}
	a, err := Analyze(ladder(1, 1, rates, 158, 50*ms, 100*time.Microsecond), Options{ConcurrencyLimit: 8})
	if err != nil {
		t.Fatal(err)
	}
	l := a.Levels[0]
	if got, want := l.LittlePrediction, 8/0.05; math.Abs(got-want) > 1e-6 {
		t.Errorf("Little prediction = %v, want %v", got, want)
	}
	if got, want := l.InService, 158*0.05; math.Abs(got-want) > 1e-6 {
		t.Errorf("in service = %v, want %v", got, want)
	}
	// carriers = rate x latency x cpu/latency = 400 x 100 us = 0.04 Ps
	if got := a.Carriers.Needed; math.Abs(got-0.04) > 1e-9 {
		t.Errorf("carriers needed = %v, want 0.04", got)
	}
	if got := a.Carriers.Concurrency; math.Abs(got-20) > 1e-9 {
		t.Errorf("concurrency = %v, want 20", got)
	}
	if got := l.CPUPrediction; math.Abs(got-10000) > 1e-6 {
		t.Errorf("cpu prediction = %v, want 10000", got)
	}
}

func TestMediansAndGeneratorBound(t *testing.T) {
	s := []Sample{
		{GOMAXPROCS: 1, Iteration: 1, OfferedRate: 100, OKPerSec: 90, P99: 10 * ms},
		{GOMAXPROCS: 1, Iteration: 2, OfferedRate: 100, OKPerSec: 99.5, P99: 12 * ms},
		{GOMAXPROCS: 1, Iteration: 3, OfferedRate: 100, OKPerSec: 99.9, P99: 30 * ms},
		// a generator-bound step that did not send its requests must not
		// become the ceiling or break the knee
		{GOMAXPROCS: 1, Iteration: 1, OfferedRate: 200, OKPerSec: 150, P99: 12 * ms, GeneratorBound: true, NotSent: 50, Planned: 400},
		{GOMAXPROCS: 1, Iteration: 1, OfferedRate: 150, OKPerSec: 149, P99: 13 * ms},
	}
	a, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := a.Levels[0]
	if len(l.Cells) != 3 {
		t.Fatalf("cells = %d, want 3", len(l.Cells))
	}
	c := l.Cells[0]
	if c.Iterations != 3 || c.OKPerSec != 99.5 || c.P99 != 12*ms {
		t.Errorf("median cell = %+v, want 3 iterations, 99.5 req/s, p99 12ms", c)
	}
	if l.Knee != 150 || l.Ceiling != 149 {
		t.Errorf("knee %v ceiling %v, want 150 and 149", l.Knee, l.Ceiling)
	}
	if l.Cells[2].Served || !l.Cells[2].GeneratorBound {
		t.Errorf("generator-bound cell judged served: %+v", l.Cells[2])
	}
	if len(a.Notes) == 0 || !strings.Contains(strings.Join(a.Notes, "\n"), "generator was a material limit") {
		t.Errorf("notes do not mention the generator-bound step: %q", a.Notes)
	}
}

func TestMediansSkipGeneratorBoundIterations(t *testing.T) {
	s := []Sample{
		{GOMAXPROCS: 1, Iteration: 1, OfferedRate: 100, OKPerSec: 100, P99: 90 * ms, GeneratorBound: true},
		{GOMAXPROCS: 1, Iteration: 2, OfferedRate: 100, OKPerSec: 100, P99: 10 * ms},
		{GOMAXPROCS: 1, Iteration: 3, OfferedRate: 100, OKPerSec: 100, P99: 12 * ms},
		{GOMAXPROCS: 1, Iteration: 1, OfferedRate: 200, OKPerSec: 200, P99: 80 * ms, GeneratorBound: true},
	}
	cells := Cells(s)
	if c := cells[0]; c.Iterations != 2 || c.P99 != 11*ms || c.GeneratorBound {
		t.Errorf("cell %+v: want the median of the 2 iterations where the generator kept up (11ms), not generator-bound", c)
	}
	if c := cells[1]; c.Iterations != 1 || !c.GeneratorBound {
		t.Errorf("cell %+v: want generator-bound (its only iteration was)", c)
	}
}

func TestKneeStopsAtFirstUnservedRate(t *testing.T) {
	s := []Sample{
		{GOMAXPROCS: 2, OfferedRate: 100, OKPerSec: 100, P99: 10 * ms},
		{GOMAXPROCS: 2, OfferedRate: 200, OKPerSec: 200, P99: 25 * ms}, // p99 over 2x
		{GOMAXPROCS: 2, OfferedRate: 300, OKPerSec: 300, P99: 12 * ms},
	}
	a, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Levels[0].Knee; got != 100 {
		t.Errorf("knee = %v, want 100 (200 req/s broke the p99 rule)", got)
	}
	if !a.Levels[0].Saturated {
		t.Error("level not marked saturated")
	}
}

func TestAnalyzeEmpty(t *testing.T) {
	if _, err := Analyze(nil, Options{}); err == nil {
		t.Fatal("no error for empty samples")
	}
}

func concat(parts ...[]Sample) []Sample {
	var out []Sample
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestServedUsesAnswersCeilingUsesWindow(t *testing.T) {
	// 2xx/s a little under the offered rate (98 of 100) while every request
	// was answered (Answered 100): the rate is served. Overloaded, the
	// target's 2xx/s (158) is the ceiling, not the answers per second of the
	// phase (237, the queue drained after it).
	s := []Sample{
		{GOMAXPROCS: 1, OfferedRate: 100, OKPerSec: 98, Answered: 100, P99: 55 * ms},
		{GOMAXPROCS: 1, OfferedRate: 400, OKPerSec: 158, Answered: 237, P99: 3000 * ms},
	}
	a, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := a.Levels[0]
	if l.Ceiling != 158 || l.Knee != 100 || !l.Cells[0].Served || l.Cells[1].Served {
		t.Errorf("ceiling %v knee %v served %v/%v; want 158, 100, true/false", l.Ceiling, l.Knee, l.Cells[0].Served, l.Cells[1].Served)
	}
}

func TestLowLoadReferenceIgnoresGeneratorFlag(t *testing.T) {
	// The generator lagged at the two low rates; the overloaded 200 req/s
	// step must still be judged against the low-load p99, not against itself.
	// The lagging low rates were served all the same (the lag is inside
	// their latency), so they count for the knee.
	s := []Sample{
		{GOMAXPROCS: 1, OfferedRate: 50, OKPerSec: 50, P50: 51 * ms, P99: 103 * ms, GeneratorBound: true},
		{GOMAXPROCS: 1, OfferedRate: 100, OKPerSec: 100, P50: 52 * ms, P99: 63 * ms, GeneratorBound: true},
		{GOMAXPROCS: 1, OfferedRate: 200, OKPerSec: 151, Answered: 200, P50: 490 * ms, P99: 950 * ms},
	}
	a, err := Analyze(s, Options{ConcurrencyLimit: 8})
	if err != nil {
		t.Fatal(err)
	}
	l := a.Levels[0]
	if l.LowLoadP99 != 103*ms || l.Knee != 100 || l.Ceiling != 151 || !l.Saturated {
		t.Errorf("low p99 %v knee %v ceiling %v saturated %v; want 103ms, 100, 151, true", l.LowLoadP99, l.Knee, l.Ceiling, l.Saturated)
	}
	// A late generator that still sent every request offers the load: its
	// overloaded step sets the ceiling, though it is no knee and, being
	// ambiguous, no break in the ladder either.
	s[2].GeneratorBound, s[2].Planned = true, 400
	a, err = Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l := a.Levels[0]; l.Ceiling != 151 || !l.Saturated || l.Knee != 100 || l.Cells[2].Served || !l.Cells[2].Ambiguous() {
		t.Errorf("generator-bound but fully offered: ceiling %v saturated %v knee %v; want 151, true, 100, the top cell ambiguous", l.Ceiling, l.Saturated, l.Knee)
	}
}

func TestLimitKinds(t *testing.T) {
	base := func(gmp int, cpu, p50 time.Duration, busy float64) []Sample {
		return []Sample{
			{GOMAXPROCS: gmp, OfferedRate: 50, OKPerSec: 50, P50: p50, P99: p50, CPUPerRequest: cpu},
			{GOMAXPROCS: gmp, OfferedRate: 400, OKPerSec: 158, P50: 10 * p50, P99: 40 * p50, CPUPerRequest: cpu, CPUCores: busy},
		}
	}
	tests := []struct {
		name    string
		samples []Sample
		limit   int
		want    rundir.Kind
	}{
		{"pool of 8 at 50 ms", base(2, 600*time.Microsecond, 50*ms, 0.1), 8, rundir.KindLimitConcurrency},
		{"Ps busy", base(2, 5*ms, 6*ms, 1.9), 0, rundir.KindLimitPs},
		{"CPU work on a busy machine", busyMachine(base(2, 5*ms, 6*ms, 0.9), 0.97), 0, rundir.KindLimitCPUStarved},
		{"CPU work serialized by a lock", busyMachine(base(2, 5*ms, 6*ms, 0.9), 0.5), 0, rundir.KindLimitSerialized},
		{"blocking, unknown limit", busyMachine(base(2, 600*time.Microsecond, 50*ms, 0.1), 0.3), 0, rundir.KindLimitElsewhere},
		{"blocking on a saturated machine", busyMachine(base(2, 600*time.Microsecond, 50*ms, 0.1), 1), 0, rundir.KindLimitCPUStarved},
		{"not saturated", base(2, 5*ms, 6*ms, 1.9)[:1], 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(tt.samples, Options{ConcurrencyLimit: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			if l := a.Levels[0]; l.Limit != tt.want {
				t.Errorf("limit = %q (%s), want %q", l.Limit, l.LimitReason, tt.want)
			}
		})
	}
}

func TestStarvedMachineHidesScaling(t *testing.T) {
	// CPU requests (6 ms of CPU, 7 ms service at GOMAXPROCS 1); at
	// GOMAXPROCS 2 other processes left the target one core, so the ceiling
	// stayed flat and the low-load service time doubled. The sweep must not
	// call this blocking-bound.
	s := []Sample{
		{GOMAXPROCS: 1, OfferedRate: 25, OKPerSec: 25, P50: 7 * ms, P99: 20 * ms, ServiceP50: 7 * ms, CPUPerRequest: 6 * ms},
		{GOMAXPROCS: 1, OfferedRate: 300, OKPerSec: 150, P50: 300 * ms, P99: 900 * ms, CPUPerRequest: 6 * ms, CPUCores: 0.9},
		{GOMAXPROCS: 2, OfferedRate: 25, OKPerSec: 25, P50: 20 * ms, P99: 30 * ms, ServiceP50: 20 * ms, CPUPerRequest: 6 * ms},
		{GOMAXPROCS: 2, OfferedRate: 300, OKPerSec: 151, P50: 300 * ms, P99: 900 * ms, CPUPerRequest: 6 * ms, CPUCores: 1.0},
	}
	a, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l := a.Levels[1]; l.Limit != rundir.KindLimitCPUStarved {
		t.Errorf("GOMAXPROCS 2 limit = %q (%s), want cpu-starved", l.Limit, l.LimitReason)
	}
	if a.Levels[0].Limit != rundir.KindLimitPs {
		t.Errorf("GOMAXPROCS 1 limit = %q, want ps", a.Levels[0].Limit)
	}
	if a.Scaling.Kind != ScalingUnknown || !strings.Contains(a.Scaling.Reason, "starved") {
		t.Errorf("scaling = %s (%s), want unknown because starved", a.Scaling.Kind, a.Scaling.Reason)
	}
	// 300 req/s x 6 ms = 1.8 Ps -> GOMAXPROCS 2
	if r := a.Recommendation; r.GOMAXPROCS != 2 || !strings.Contains(r.Reason, "needs about 1.8 Ps of CPU") {
		t.Errorf("recommendation %d (%s), want 2 from the CPU needed", r.GOMAXPROCS, r.Reason)
	}
}

func TestMarginalCPUPerRequest(t *testing.T) {
	// 0.05 cores of idle work plus 5 ms per request: CPU per request is
	// 7 ms at 25 req/s but 5.3 ms at 150; the fit finds the 5 ms.
	var s []Sample
	for _, r := range []float64{25, 50, 100, 150} {
		cores := 0.05 + r*0.005
		s = append(s, Sample{GOMAXPROCS: 1, OfferedRate: r, OKPerSec: r, P99: 10 * ms,
			CPUCores: cores, CPUPerRequest: time.Duration(cores / r * float64(time.Second))})
	}
	// overloaded, with rejections: excluded from the fit
	s = append(s, Sample{GOMAXPROCS: 1, OfferedRate: 400, OKPerSec: 180, Answered: 180, P99: 900 * ms, CPUCores: 1, CPUPerRequest: 5500 * time.Microsecond})
	a, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Levels[0].CPUPerRequest; got < 4990*time.Microsecond || got > 5010*time.Microsecond {
		t.Errorf("CPU per request = %v, want 5ms (the slope)", got)
	}
}

// A line run under a CPU quota that used it up at its ceiling is held by
// the quota, whatever its Ps did; a GOMAXPROCS above ceil(limit) is named;
// the scaling across such lines measures the quota, not the Ps.
func TestQuotaLimit(t *testing.T) {
	line := func(gmp int, limit, busy float64) []Sample {
		return []Sample{
			{GOMAXPROCS: gmp, CPULimit: limit, OfferedRate: 50, OKPerSec: 50, P50: 6 * ms, P99: 6 * ms, CPUPerRequest: 2 * ms},
			{GOMAXPROCS: gmp, CPULimit: limit, OfferedRate: 600, OKPerSec: 480, P50: 60 * ms, P99: 600 * ms, CPUPerRequest: 2 * ms, CPUCores: busy},
		}
	}
	a, err := Analyze(append(line(1, 1, 0.98), line(2, 1, 0.99)...), Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range a.Levels {
		if l.Limit != rundir.KindLimitQuota || !strings.Contains(l.LimitReason, "cores of its limit 1 CPU quota") {
			t.Errorf("%s: limit %q (%s), want the quota", l.Label, l.Limit, l.LimitReason)
		}
		if above := strings.Contains(l.LimitReason, "is above ceil(1) = 1"); above != (l.GOMAXPROCS == 2) {
			t.Errorf("%s: %q: the GOMAXPROCS above the quota is named only when it is", l.Label, l.LimitReason)
		}
	}
	if a.Scaling.Kind != ScalingUnknown || !strings.Contains(a.Scaling.Reason, "measure the quota, not the Ps") {
		t.Errorf("scaling %s: %s", a.Scaling.Kind, a.Scaling.Reason)
	}
	// A quota the target did not use up is not the limit.
	a, err = Analyze(line(2, 2, 1.9*0.8), Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if l := a.Levels[0]; l.Limit == rundir.KindLimitQuota {
		t.Errorf("a quota used at 76 %%: limit %q (%s)", l.Limit, l.LimitReason)
	}
}

// The sweep: one rate, 700 req/s, already beyond the target's
// capacity under a 1-CPU limit. Every request was answered in the end
// (Answered 700: the queue drained after the phase), but 2xx/s was 480 while
// the phase ran, so load's own rule (load.Tracks) says the target did not
// keep up: the step is not served, there is no knee, no low-load service
// time, and no GOMAXPROCS is recommended from it; the line says to offer
// lower rates.
func TestLadderStartingOverCapacityOffersLowerRates(t *testing.T) {
	line := func(gmp int) Sample {
		return Sample{GOMAXPROCS: gmp, CPULimit: 1, OfferedRate: 700, OKPerSec: 480, Answered: 700,
			P50: 433 * ms, P99: 900 * ms, ServiceP50: 433 * ms, CPUPerRequest: 2 * ms, CPUCores: 0.96, Quota: true, QuotaUse: 0.96}
	}
	a, err := Analyze([]Sample{line(1), line(2)}, Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range a.Levels {
		if l.Cells[0].Served || l.Knee != 0 || !l.StartsOver {
			t.Errorf("%s: served %v, knee %v, starts over %v; want not served, no knee, starts over", l.Label, l.Cells[0].Served, l.Knee, l.StartsOver)
		}
		if l.LowLoadService != 0 || l.CPUFraction != 0 || l.InService != 0 {
			t.Errorf("%s: low-load service %v, CPU fraction %v, in service %v; want none (the 433 ms is a queue's)", l.Label, l.LowLoadService, l.CPUFraction, l.InService)
		}
		if o := l.OfferLower(); !strings.HasPrefix(o, "offer lower rates") || !strings.Contains(o, "700 req/s") {
			t.Errorf("%s: OfferLower() = %q", l.Label, o)
		}
		if l.Ceiling != 480 {
			t.Errorf("%s: ceiling %v, want the 480 2xx/s measured", l.Label, l.Ceiling)
		}
	}
	if r := a.Recommendation; r.GOMAXPROCS != 0 || !strings.Contains(r.Reason, "offer lower rates") || strings.Contains(r.Reason, "served up to") {
		t.Errorf("recommendation %d: %q; want none, saying offer lower rates", r.GOMAXPROCS, r.Reason)
	}
	if !a.Families[0].StartsOver {
		t.Error("family not marked as starting over capacity")
	}
	if a.Carriers.Latency != 0 {
		t.Errorf("carriers drawn from a queue's latency: %v", a.Carriers.Latency)
	}
	notes := strings.Join(a.Notes, "\n")
	if !strings.Contains(notes, "offer lower rates") {
		t.Errorf("notes do not say to offer lower rates:\n%s", notes)
	}
	// A ladder that starts within capacity is unchanged: a knee, a low-load
	// service time, no offer-lower note.
	ok := line(1)
	ok.OfferedRate, ok.OKPerSec, ok.Answered, ok.P50, ok.P99, ok.ServiceP50 = 300, 299, 300, 3*ms, 5*ms, 3*ms
	a, err = Analyze([]Sample{ok, line(1)}, Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if l := a.Levels[0]; l.StartsOver || l.Knee != 300 || l.LowLoadService != 3*ms || l.OfferLower() != "" {
		t.Errorf("a ladder within capacity at its lowest rate: starts over %v, knee %v, service %v, %q", l.StartsOver, l.Knee, l.LowLoadService, l.OfferLower())
	}
}
