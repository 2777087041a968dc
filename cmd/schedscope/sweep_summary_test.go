package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/capacity"
	"github.com/schedscope/schedscope/internal/report"
	"github.com/schedscope/schedscope/internal/rundir"
)

// The sweep, synthetic: 700 req/s under a 1-CPU limit answered in
// the end but at 480 2xx/s while it ran. The printed summary names no knee,
// no low-load latency and no GOMAXPROCS: it says to offer lower rates.
func TestSweepSummaryOffersLowerRates(t *testing.T) {
	cell := func(gmp int) capacity.Sample {
		return capacity.Sample{GOMAXPROCS: gmp, CPULimit: 1, OfferedRate: 700, OKPerSec: 480, Answered: 700,
			P50: 433 * time.Millisecond, P99: 900 * time.Millisecond, ServiceP50: 433 * time.Millisecond, CPUPerRequest: 2 * time.Millisecond}
	}
	a, err := capacity.Analyze([]capacity.Sample{cell(1), cell(2)}, capacity.Options{CPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printSweepSummary(&stdio{out: &out, errOut: &out}, &report.SweepReport{
		Sweep:    &rundir.Sweep{Plan: rundir.SweepPlan{CPULimits: []float64{1}, Machine: rundir.Machine{CPUs: 2}}},
		Analysis: a,
	})
	got := out.String()
	for _, want := range []string{
		"limit 1 CPU, GOMAXPROCS 1  offer lower rates          480.0             -             -",
		"no recommendation: every line was over capacity already at its lowest rate: offer lower rates",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"433", "recommended", "served up to"} {
		if strings.Contains(got, bad) {
			t.Errorf("summary says %q:\n%s", bad, got)
		}
	}
}
