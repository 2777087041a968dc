package capacity

import (
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

func TestLinesAndFamilies(t *testing.T) {
	w4 := rundir.Settings{}.With("workers", "4")
	rates := []float64{50, 100, 200, 400}
	var s []Sample
	for _, gmp := range []int{1, 2} {
		// goroutine: unbounded, serves everything; pool of 4 with 20 ms
		// work: 200 req/s at most, whatever the Ps.
		for _, x := range ladder(gmp, 1, rates, 1000, 20*ms, 50*time.Microsecond) {
			x.Model, x.Set = "goroutine", w4
			s = append(s, x)
		}
		for _, x := range ladder(gmp, 1, rates, 190, 20*ms, 50*time.Microsecond) {
			x.Model, x.Set = "pool", w4
			s = append(s, x)
		}
	}
	limit := func(l rundir.Line) int {
		if l.Model == "pool" {
			return 4
		}
		return 0
	}
	a, err := Analyze(s, Options{LineConcurrencyLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Levels) != 4 || len(a.Families) != 2 {
		t.Fatalf("%d lines in %d families, want 4 in 2", len(a.Levels), len(a.Families))
	}
	want := []struct {
		label   string
		knee    float64
		ceiling float64
		little  float64
	}{
		{"goroutine, GOMAXPROCS 1, workers=4", 400, 399.2, 0},
		{"goroutine, GOMAXPROCS 2, workers=4", 400, 399.2, 0},
		{"pool, GOMAXPROCS 1, workers=4", 100, 190, 200},
		{"pool, GOMAXPROCS 2, workers=4", 100, 190, 200},
	}
	for i, w := range want {
		l := a.Levels[i]
		if l.Label != w.label || l.Knee != w.knee || l.Ceiling != w.ceiling || l.LittlePrediction != w.little {
			t.Errorf("line %d: %q knee %v ceiling %v Little %v; want %q %v %v %v", i, l.Label, l.Knee, l.Ceiling, l.LittlePrediction, w.label, w.knee, w.ceiling, w.little)
		}
	}
	if f := a.Families[1]; f.Label != "pool, workers=4" || f.Scaling.Kind != BlockingBound || f.Recommendation.GOMAXPROCS != 1 {
		t.Errorf("pool family: %q scaling %s rec %d", f.Label, f.Scaling.Kind, f.Recommendation.GOMAXPROCS)
	}
	// Across families nothing is judged: the lines differ in the model.
	if a.Scaling.Kind != ScalingUnknown || a.Recommendation.GOMAXPROCS != 0 || !strings.Contains(a.Scaling.Reason, "varies the model") {
		t.Errorf("sweep-wide scaling %s %q, recommendation %d", a.Scaling.Kind, a.Scaling.Reason, a.Recommendation.GOMAXPROCS)
	}
}

// closedLadder is one closed-model line: users with 20 ms latency and no
// think time, answered up to a ceiling of 200 req/s (a pool of 4), after
// which latency grows as Little's law says.
func closedLadder(model string, users []int, ceiling float64) []Sample {
	var out []Sample
	for _, u := range users {
		lat := 20 * ms
		thr := float64(u) / lat.Seconds()
		if thr > ceiling {
			thr = ceiling
			lat = time.Duration(float64(u) / ceiling * float64(time.Second))
		}
		out = append(out, Sample{GOMAXPROCS: 1, Model: model, Iteration: 1, Users: u, OK: int64(thr),
			OKPerSec: thr, Answered: thr, P50: lat, P99: lat + lat/10, Mean: lat})
	}
	return out
}

func TestClosedModelKneeAndCeiling(t *testing.T) {
	users := []int{1, 2, 4, 8, 16}
	a, err := Analyze(concat(closedLadder("goroutine", users, 1e9), closedLadder("pool", users, 200)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, p := a.Levels[0], a.Levels[1]
	if !g.Closed || g.Knee != 16 || g.Saturated || g.Ceiling != 800 {
		t.Errorf("goroutine: closed %v knee %v saturated %v ceiling %v; want the last user count 16, not saturated, 800 2xx/s", g.Closed, g.Knee, g.Saturated, g.Ceiling)
	}
	// 4 users give 200 req/s = 4 / 20 ms; 8 users would need 400: the
	// throughput stopped growing, so 4 is the knee and 200 the ceiling.
	if p.Knee != 4 || !p.Saturated || p.Ceiling != 200 {
		t.Errorf("pool: knee %v saturated %v ceiling %v; want 4 users, saturated, 200 2xx/s", p.Knee, p.Saturated, p.Ceiling)
	}
	for _, c := range p.Cells {
		if c.Served != (c.Users <= 4) {
			t.Errorf("pool at %d users: served %v", c.Users, c.Served)
		}
	}
	// Think time enters the rule: 8 users thinking 20 ms reach 200 req/s,
	// the users' own limit 8 / (20 + 20 ms), so 8 users are served.
	s := closedLadder("pool", []int{2, 8}, 200)
	s[0].OKPerSec, s[1].OKPerSec = 2/0.04, 8/0.04
	s[1].P50, s[1].Mean = 20*ms, 20*ms
	a, err = Analyze(s, Options{Think: 20 * ms})
	if err != nil {
		t.Fatal(err)
	}
	if l := a.Levels[0]; l.Knee != 8 {
		t.Errorf("with think time: knee %v, want 8", l.Knee)
	}
	// Errors above 1 % fail the rule even at full throughput.
	s = closedLadder("pool", []int{2, 4}, 200)
	s[1].Errors = 10
	if a, _ := Analyze(s, Options{}); a.Levels[0].Knee != 2 {
		t.Errorf("with 10 errors at 4 users: knee %v, want 2", a.Levels[0].Knee)
	}
}

func TestGOMAXPROCSAboveCPUs(t *testing.T) {
	rates := []float64{50, 100, 200, 400, 800}
	// CPU work on 2 CPUs: GOMAXPROCS 4 measures a little more (noise, or
	// the Ps queueing on the CPUs), with the machine's CPUs full.
	s := busyMachine(concat(
		ladder(1, 1, rates, 190, 5*ms, 5*ms),
		ladder(2, 1, rates, 370, 5*ms, 5*ms),
		ladder(4, 1, rates, 400, 5*ms, 5*ms),
	), 0.97)
	for i := range s {
		s[i].CPUCores = float64(min(s[i].GOMAXPROCS, 2)) * 0.95
	}
	a, err := Analyze(s, Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	top := a.Levels[2]
	if top.Label != "GOMAXPROCS 4 (> 2 CPUs)" || !top.OverCPUs {
		t.Errorf("label %q over %v; want GOMAXPROCS 4 (> 2 CPUs)", top.Label, top.OverCPUs)
	}
	if top.Limit != rundir.KindLimitCPUStarved || !strings.Contains(top.LimitReason, "exceeds the 2 CPUs") || strings.Contains(top.LimitReason, "other processes") {
		t.Errorf("limit %s: %q; want the CPU count, not other processes", top.Limit, top.LimitReason)
	}
	rec := a.Recommendation
	if rec.GOMAXPROCS != 2 || !strings.Contains(rec.Reason, "GOMAXPROCS 4 (> 2 CPUs) reached a higher ceiling") || !strings.Contains(rec.Reason, "oversubscribes the 2 CPUs") {
		t.Errorf("recommendation %d: %q; want 2, naming 4 as oversubscribing", rec.GOMAXPROCS, rec.Reason)
	}
	if a.Scaling.To != 2 || !strings.Contains(a.Scaling.Reason, "GOMAXPROCS 4 exceeds the 2 CPUs and is left out") {
		t.Errorf("scaling %d->%d: %q; want 1->2 with 4 left out", a.Scaling.From, a.Scaling.To, a.Scaling.Reason)
	}
	for _, n := range a.Notes {
		if strings.Contains(n, "GOMAXPROCS 4") && strings.Contains(n, "other processes") {
			t.Errorf("note blames other processes for GOMAXPROCS 4: %q", n)
		}
	}
	// With only values above the CPUs, one is recommended, saying so.
	a, err = Analyze(ladder(4, 1, rates, 400, 5*ms, 5*ms), Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if a.Recommendation.GOMAXPROCS != 4 || !strings.Contains(a.Recommendation.Reason, "oversubscribes") {
		t.Errorf("only 4 tried: %d %q", a.Recommendation.GOMAXPROCS, a.Recommendation.Reason)
	}
	// Unknown CPUs: no label.
	a, _ = Analyze(ladder(4, 1, rates, 400, 5*ms, 5*ms), Options{})
	if a.Levels[0].Label != "GOMAXPROCS 4" {
		t.Errorf("label without CPUs: %q", a.Levels[0].Label)
	}
}

// The defect behind the knee rule: steps that served every request (p99
// 17-34 ms) were dropped for 2-4 ms of send lag against a 10 ms p50. A
// served step counts, lag or not.
func TestServedGeneratorBoundStepIsTheKnee(t *testing.T) {
	s := []Sample{
		{GOMAXPROCS: 1, OfferedRate: 100, OKPerSec: 100, Answered: 100, P50: 10 * ms, P99: 17 * ms},
		{GOMAXPROCS: 1, OfferedRate: 200, OKPerSec: 200, Answered: 200, P50: 10 * ms, P99: 30 * ms, GeneratorBound: true},
		{GOMAXPROCS: 1, OfferedRate: 400, OKPerSec: 250, Answered: 260, P50: 400 * ms, P99: 900 * ms},
	}
	a, err := Analyze(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := a.Levels[0]
	if l.Knee != 200 || !l.Cells[1].Knee || l.Cells[1].Ambiguous() {
		t.Errorf("knee %v (cells %+v); want 200: the lagging step served every request", l.Knee, l.Cells[1])
	}
	// The same step failing the rule is ambiguous: no knee, no break.
	s[1].Answered, s[1].OKPerSec = 150, 150
	s[2].OKPerSec, s[2].Answered, s[2].P99 = 400, 400, 20*ms
	a, _ = Analyze(s, Options{})
	if l := a.Levels[0]; l.Knee != 400 || !l.Cells[1].Ambiguous() {
		t.Errorf("knee %v, cell 200 ambiguous %v; want 400 and true", l.Knee, l.Cells[1].Ambiguous())
	}
}
