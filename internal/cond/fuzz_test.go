package cond

import (
	"math"
	"testing"
)

// FuzzParse: Parse never panics, every condition it accepts has a finite
// value and re-parses from its String to the same Condition, and every
// refusal is one line.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"sched.p99>5ms", " p99 >= 500ms ", "lost.pct>1%", "lost.pct>=0.5", "pinned!=0", "cpu<1.5",
		"not-sent>0", "pinned=>1", "p99>NaN", "p99>1e999", "sched.p50<200µs", "ok_per_s<0x1p4",
		"gc.stw.max>1h2m3s", "p99>5", "goroutines>-1e3", "lost.pct>%", "in_flight==1_0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s, Live|Trace)
		if err != nil {
			for _, r := range err.Error() {
				if r == '\n' {
					t.Fatalf("Parse(%q): error of several lines: %q", s, err)
				}
			}
			return
		}
		if math.IsNaN(c.Value) || math.IsInf(c.Value, 0) {
			t.Fatalf("Parse(%q) accepted the value %g", s, c.Value)
		}
		again, err := Parse(c.String(), Live|Trace)
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", s, c, err)
		}
		if again != c {
			t.Fatalf("Parse(%q) = %+v, its String %q parses to %+v", s, c, c, again)
		}
	})
}
