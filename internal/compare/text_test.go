package compare

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// WriteText's columns and marks, checked by what each line holds rather
// than byte for byte (tabwriter's padding is its own business).
func TestWriteText(t *testing.T) {
	dir := t.TempDir()
	ladder := []float64{1000}
	for _, tc := range []struct {
		name   string
		c      *Comparison
		want   []string
		absent []string
	}{
		{
			name: "six runs a side",
			c: compareRuns(t,
				side(t, dir, "pool", 6, fakeRun{p99ms: 10, rates: ladder, ceiling: 5000}),
				side(t, dir, "mutex", 6, fakeRun{p99ms: 15, rates: ladder, ceiling: 5000}), false),
			want: []string{
				"A: pool, 6 runs; target: fixture --model pool\n",
				"B: mutex, 6 runs; target: fixture --model mutex\n",
				"medians ± 95% confidence interval; vs A:",
				"\nphase 1: steady, 1000 req/s\n",
				"pool", "mutex", "vs A\n",
				"latency p99", "10.3ms ± 2%", "15.3ms ± 2%", "+48.78% (p=0.002 n=6) worse\n",
				"errors", "0 (0%) ± 0%", "~ (p=1.000 n=6)\n",
			},
			absent: []string{"± ∞", "±∞", "DIFFERENT LOAD", "untested"},
		},
		{
			name: "three runs a side, forced",
			c: compareRuns(t,
				side(t, dir, "pool", 3, fakeRun{p99ms: 10, rates: ladder, ceiling: 5000}),
				side(t, dir, "pool", 3, fakeRun{p99ms: 12, rates: []float64{1500}, ceiling: 5000}), true),
			want: []string{
				"DIFFERENT LOAD (compared with --force): different offered loads: 1000 req/s for 10s",
				"A: pool (A), 3 runs", "B: pool (B), 3 runs",
				"10.1ms ± ∞", "12.1ms ± ∞", "~ (p=0.100 n=3); ≈",
				"\n±∞: a 95% confidence interval of a median needs at least 6 runs a side",
				"\nwith fewer than 4 runs a side the U test cannot reach p <= 0.05",
			},
			absent: []string{"worse", "better"},
		},
		{
			name: "one run a side",
			c: compareRuns(t,
				side(t, dir, "pool", 1, fakeRun{p99ms: 10, rates: ladder, ceiling: 5000}),
				side(t, dir, "mutex", 1, fakeRun{p99ms: 11, rates: ladder, ceiling: 5000, errors: 3}), false),
			want: []string{
				"A: pool, 1 run;",
				"10ms", "11ms", "+10.00% (n=1, untested)\n",
				"0 (0%)", "3 (0.3%)",
				"\nwith fewer than 4 runs a side the U test cannot reach p <= 0.05",
			},
			absent: []string{"ms ± ", "%) ± ", "±∞"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteText(&b, tc.c); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.absent {
				if strings.Contains(out, w) {
					t.Errorf("output holds %q:\n%s", w, out)
				}
			}
			// Every row is one line with its label and verdict.
			for _, g := range tc.c.Groups {
				for _, r := range g.Rows {
					found := false
					for _, line := range strings.Split(out, "\n") {
						if strings.HasPrefix(line, rowLabel(r)+" ") && strings.HasSuffix(line, verdictText(r)) {
							found = true
						}
					}
					if !found {
						t.Errorf("no line %q ... %q:\n%s", rowLabel(r), verdictText(r), out)
					}
				}
			}
		})
	}
}

// A failed write is WriteText's error.
func TestWriteTextError(t *testing.T) {
	dir := t.TempDir()
	c := compareRuns(t,
		side(t, dir, "pool", 1, fakeRun{p99ms: 10, rates: []float64{1000}, ceiling: 5000}),
		side(t, dir, "mutex", 1, fakeRun{p99ms: 11, rates: []float64{1000}, ceiling: 5000}), false)
	want := errors.New("disk full")
	if err := WriteText(failingWriter{want}, c); !errors.Is(err, want) {
		t.Errorf("err = %v, want %v", err, want)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }
