package capacity

import (
	"strings"
	"testing"
	"time"
)

// quotaSample is one open-model phase under a CPU limit: served when
// answered equals rate, else answered is the quota's ceiling.
func quotaSample(gmp, runtime int, limit, rate, answered float64, p99 time.Duration, throttled float64, cpu time.Duration) Sample {
	return Sample{
		GOMAXPROCS: gmp, RuntimeGOMAXPROCS: runtime, CPULimit: limit, Iteration: 1, OfferedRate: rate,
		OKPerSec: answered, Answered: answered, P50: p99 / 4, P95: p99 / 2, P99: p99, ServiceP50: 3 * time.Millisecond,
		Planned: int64(10 * rate), CPUPerRequest: cpu, CPUCores: answered * cpu.Seconds(),
		Quota: true, Throttled: throttled, ThrottledS: throttled * 5, QuotaUse: answered * cpu.Seconds() / limit,
	}
}

// cpuShape is the first shape: /cpu?us=2000 under a 1-CPU limit,
// GOMAXPROCS 1, 2 and auto (the runtime's 2); GOMAXPROCS 2 throttled in
// most periods with a p99 of whole 100 ms periods, GOMAXPROCS 1 hardly.
func cpuShape() []Sample {
	ms := time.Millisecond
	cpu := 2 * ms
	var s []Sample
	for _, gmp := range []int{0, 1, 2} {
		rt := 0
		if gmp == 0 {
			rt = 2
		}
		for _, r := range []struct {
			rate, answered float64
			p99One, p99Two time.Duration
			thOne, thTwo   float64
		}{
			{150, 150, 4 * ms, 6 * ms, 0, 0.05},
			{300, 300, 5 * ms, 110 * ms, 0, 0.35},
			{450, 450, 9 * ms, 190 * ms, 0.02, 0.72},
			{600, 495, 900 * ms, 1100 * ms, 0.3, 0.95},
			{750, 490, 1500 * ms, 1700 * ms, 0.4, 0.97},
		} {
			if gmp == 1 {
				s = append(s, quotaSample(gmp, rt, 1, r.rate, r.answered, r.p99One, r.thOne, cpu))
			} else {
				s = append(s, quotaSample(gmp, rt, 1, r.rate, r.answered, r.p99Two, r.thTwo, cpu))
			}
		}
	}
	return s
}

func findings(q Quotas, k QuotaKind) []QuotaFinding {
	var out []QuotaFinding
	for _, f := range q.Findings {
		if f.Kind == k {
			out = append(out, f)
		}
	}
	return out
}

func TestQuotaCPUShape(t *testing.T) {
	a, err := Analyze(cpuShape(), Options{CPUs: 2, TargetP99: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	q := a.Quota
	for _, f := range q.Findings {
		t.Logf("%s: %s", f.Kind, f.Detail)
	}
	if len(q.Findings) == 0 || q.Findings[0].Kind != QuotaTooTight {
		t.Fatalf("first finding %+v, want the limit too tight for 750 req/s", q.Findings)
	}
	tight := q.Findings[0]
	if tight.Load != 750 || tight.Needed < 1.49 || tight.Needed > 1.51 || !strings.Contains(tight.Detail, "at most about 500 req/s fit") {
		t.Errorf("too tight: %+v", tight)
	}
	th := findings(q, QuotaThrottled)
	if len(th) != 2 {
		t.Fatalf("throttled findings %+v, want GOMAXPROCS 2 and auto", th)
	}
	for _, f := range th {
		// The highest rate the quota carries on average: 450 x 2 ms = 0.9 CPU.
		if f.Load != 450 || f.Throttled != 0.72 || f.P99 != 190*time.Millisecond || f.BaseP99 != 9*time.Millisecond || f.Base != "limit 1 CPU, GOMAXPROCS 1" {
			t.Errorf("throttled: %+v", f)
		}
		if !strings.Contains(f.Detail, "throttling cost 181 ms of p99, 1.8 periods of 100 ms") {
			t.Errorf("detail %q", f.Detail)
		}
	}
	above := findings(q, QuotaAboveLimit)
	if len(above) != 2 {
		t.Fatalf("above-limit findings %+v, want GOMAXPROCS 2 and auto (2)", above)
	}
	for _, f := range above {
		if f.GOMAXPROCS != 2 {
			t.Errorf("above: %+v", f)
		}
		if f.Line.GOMAXPROCS == 0 && !strings.Contains(f.Detail, "the runtime's own choice: max(2, ceil(1))") {
			t.Errorf("auto's detail %q lacks the runtime's rounding", f.Detail)
		}
	}
	if n := len(findings(q, QuotaBlockingLoss)); n != 0 {
		t.Errorf("%d blocking-loss findings for CPU-bound work", n)
	}
	if len(q.Advice) != 1 || q.Advice[0].GOMAXPROCS != 1 || q.Advice[0].Auto != 2 || !strings.Contains(q.Advice[0].Reason, "the runtime's default here is 2") {
		t.Errorf("advice %+v, want GOMAXPROCS 1 against the runtime's 2", q.Advice)
	}
	want := map[float64]float64{150: 1, 300: 1, 450: 1, 600: 0, 750: 0}
	if len(q.Sizing) != len(want) {
		t.Fatalf("sizing %+v", q.Sizing)
	}
	for _, s := range q.Sizing {
		if s.Limit != want[s.Load] {
			t.Errorf("sizing at %v req/s: limit %v, want %v (%+v)", s.Load, s.Limit, want[s.Load], s)
		}
		if s.Limit > 0 && s.GOMAXPROCS != 1 {
			t.Errorf("sizing at %v req/s: GOMAXPROCS %d, want 1 (the only line within 50 ms)", s.Load, s.GOMAXPROCS)
		}
	}
}

// TestQuotaBlocking: /sleep?ms=20 under a 0.5-CPU limit. With GOMAXPROCS
// 1 and 2 reaching the same ceiling there is no loss; when GOMAXPROCS 1
// serves far less (threads held while blocked), the loss is named.
func TestQuotaBlocking(t *testing.T) {
	ms := time.Millisecond
	cpu := 100 * time.Microsecond
	mk := func(ceilingOne float64) []Sample {
		var s []Sample
		for _, gmp := range []int{1, 2} {
			for _, rate := range []float64{1000, 2000, 4000, 6000} {
				served, p99 := rate, 22*ms
				top := 4500.0
				if gmp == 1 {
					top = ceilingOne
				}
				if rate > top {
					served, p99 = top, 800*ms
				}
				x := quotaSample(gmp, 0, 0.5, rate, served, p99, 0, cpu)
				x.ServiceP50 = 20 * ms
				s = append(s, x)
			}
		}
		return s
	}
	a, err := Analyze(mk(4500), Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if f := findings(a.Quota, QuotaBlockingLoss); len(f) != 0 {
		t.Errorf("same ceilings: %+v", f)
	}
	if f := findings(a.Quota, QuotaTooTight); len(f) != 1 || f[0].Needed < 0.59 || f[0].Needed > 0.61 {
		t.Errorf("6000 req/s x 0.1 ms = 0.6 CPU over 0.5: %+v", f)
	}
	a, err = Analyze(mk(1500), Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	f := findings(a.Quota, QuotaBlockingLoss)
	if len(f) != 1 || f[0].GOMAXPROCS != 1 || f[0].Ceiling != 1500 || f[0].BaseCeiling != 4500 || !strings.Contains(f[0].Detail, "cost 67 % of throughput") {
		t.Errorf("blocking loss: %+v", f)
	}
}

// TestQuotaBlindSpot: a parent-only limit names the runtime's blind spot
// for the auto line instead of only "above the limit".
func TestQuotaBlindSpot(t *testing.T) {
	a, err := Analyze(cpuShape(), Options{CPUs: 2, LimitOnParent: true})
	if err != nil {
		t.Fatal(err)
	}
	b := findings(a.Quota, QuotaBlindSpot)
	if len(b) != 1 || b[0].Line.GOMAXPROCS != 0 || b[0].GOMAXPROCS != 2 {
		t.Fatalf("blind spot: %+v", b)
	}
	for _, s := range []string{"golang/go#81180", "chose GOMAXPROCS 2 from the CPUs", "would have chosen 2", "never goes below 2", "throttled in up to 97 %"} {
		if !strings.Contains(b[0].Detail, s) {
			t.Errorf("detail %q lacks %q", b[0].Detail, s)
		}
	}
	for _, f := range findings(a.Quota, QuotaAboveLimit) {
		if f.Line.GOMAXPROCS == 0 {
			t.Errorf("the auto line is named twice: %+v", f)
		}
	}
	if a.Quota.Sizing != nil {
		t.Errorf("sizing without a target p99: %+v", a.Quota.Sizing)
	}
}

// TestQuotaNone: a sweep without CPU limits has no quota section.
func TestQuotaNone(t *testing.T) {
	s := cpuShape()
	for i := range s {
		s[i].CPULimit, s[i].Quota = 0, false
	}
	a, err := Analyze(s, Options{CPUs: 2, TargetP99: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Quota.Findings)+len(a.Quota.Advice)+len(a.Quota.Sizing) != 0 {
		t.Errorf("quota without limits: %+v", a.Quota)
	}
}
