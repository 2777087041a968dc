package compare

import (
	"context"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/figures"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/rundir/rundirtest"
)

// fakeRun describes a synthetic run: one steady phase per offered rate,
// each with 2xx/s, a p99 and errors, and a latency histogram of 1000
// values spread evenly up to about p99ms / 0.99.
type fakeRun struct {
	p99ms   float64   // the phases' p99; phase i adds i ms
	rates   []float64 // offered rates, one phase each
	ceiling float64   // the most 2xx/s the target serves
	errors  float64   // per phase, of 1000 completed
}

// set builds run i of a side labelled label from r, at path dir/label-i.
func (r fakeRun) set(t *testing.T, dir, label string, i int) *figures.Set {
	t.Helper()
	s := &figures.Set{
		Path:     filepath.Join(dir, fmt.Sprintf("%s-%d", label, i)),
		Kind:     figures.KindRun,
		Label:    label,
		Identity: figures.Identity{Method: "GET", Request: "/work", Model: "open", Target: "fixture --model " + label},
		Latency:  map[string]*hdrhistogram.Histogram{},
	}
	for ph, rate := range r.rates {
		key := figures.PhaseKey(ph)
		p99 := (r.p99ms + float64(ph)) * 1e6
		ok := min(rate, r.ceiling)
		s.Groups = append(s.Groups, figures.Group{
			Key: key, Title: fmt.Sprintf("%s: steady, %g req/s", key, rate), Gate: true,
			Figures: []figures.Figure{
				{Key: "ok_per_s", Metric: "ok_per_s", Label: "2xx/s", Unit: cond.PerSecond, Value: ok, Better: figures.Higher},
				{Key: "p99", Metric: "p99", Label: "latency p99", Unit: cond.Duration, Value: p99, Better: figures.Lower},
				{Key: "errors", Metric: "errors", Label: "errors", Unit: cond.Count, Value: r.errors, Share: r.errors / 10, HasShare: true, Better: figures.Lower},
			},
		})
		s.Identity.Phases = append(s.Identity.Phases, figures.PhaseLoad{OfferedRate: rate, DurationS: 10})
		h := hdrhistogram.New(1, 60e9, 3)
		for v := 1; v <= 1000; v++ {
			if err := h.RecordValue(int64(float64(v) * p99 / 990)); err != nil {
				t.Fatal(err)
			}
		}
		s.Latency[key] = h
		s.Throughput = append(s.Throughput, figures.Point{Offered: rate, OKPerS: ok})
	}
	return s
}

// side builds n runs of r, each run's p99 0.1 ms above the one before.
func side(t *testing.T, dir, label string, n int, r fakeRun) []*figures.Set {
	var sets []*figures.Set
	for i := range n {
		ri := r
		ri.p99ms += 0.1 * float64(i)
		sets = append(sets, ri.set(t, dir, label, i))
	}
	return sets
}

// compareRuns compares a with b (forced when force), failing the test on
// an error.
func compareRuns(t *testing.T, a, b []*figures.Set, force bool) *Comparison {
	t.Helper()
	c, err := Compare(a, b, Options{Force: force})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readReport runs WriteReport into a new directory and returns its files
// and report.md's text.
func readReport(t *testing.T, c *Comparison) (string, []string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "cmp")
	files, err := WriteReport(c, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 || files[0] != filepath.Join(out, ReportFile) {
		t.Fatalf("files = %v, want report.md first", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return out, files, string(b)
}

func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	ladder := []float64{1000, 2000}
	c := compareRuns(t,
		side(t, dir, "pool", 6, fakeRun{p99ms: 10, rates: ladder, ceiling: 1800}),
		side(t, dir, "mutex", 6, fakeRun{p99ms: 15, rates: ladder, ceiling: 1500}), false)
	out, files, md := readReport(t, c)

	if !strings.HasPrefix(md, "# Comparison: pool vs mutex\n") {
		t.Errorf("report starts %q, want a title naming both sides", md[:min(len(md), 60)])
	}
	for _, want := range []string{
		"| A | pool | 6 runs | `fixture --model pool` | `" + dir + "/`: `pool-0`, `pool-1`, ",
		"| B | mutex | 6 runs | `fixture --model mutex` | ",
		"## phase 1: steady, 1000 req/s\n\n| | pool | mutex | vs A |\n|---|---:|---:|---|\n",
		"## phase 2: steady, 2000 req/s\n",
		// p99: 10.25ms against 15.25ms, every B run above every A run.
		"| latency p99 | 10.3ms ± 2% | 15.3ms ± 2% | **+48.78% (p=0.002 n=6) worse** |",
		// 2xx/s: 1800 against 1500 at 2000 req/s offered, the same in every run.
		"| 2xx/s | 1800 ± 0% | 1500 ± 0% | **-16.67% (p=0.002 n=6) worse** |",
		"| errors | 0 (0%) ± 0% | 0 (0%) ± 0% | ~ (p=1.000 n=6) |",
		"![Latency percentile distribution in phase 1: ",
		"](latency-phase-1.png)",
		"](latency-phase-2.png)",
		"![2xx responses per second against the offered rate",
		"](throughput.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	// One row per figure in each group, in the text renderer's words.
	for _, g := range c.Groups {
		section := md[strings.Index(md, "## "+g.Title):]
		section, _, _ = strings.Cut(section[3:], "\n## ")
		for _, r := range g.Rows {
			if n := strings.Count(section, "\n| "+rowLabel(r)+" | "); n != 1 {
				t.Errorf("%s: %d rows for %q, want 1", g.Title, n, r.Label)
			}
			if !strings.Contains(section, cell(verdictText(r))) {
				t.Errorf("%s: no verdict %q for %q", g.Title, verdictText(r), r.Label)
			}
		}
	}
	if strings.Contains(md, "Different load") || strings.Contains(md, "±∞") {
		t.Errorf("report.md of a same-load 6-run comparison speaks of a different load or ±∞:\n%s", md)
	}

	wantFiles := []string{ReportFile, "latency-phase-1.png", "latency-phase-2.png", ThroughputPlot}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
	}
	if !slices.Equal(got, wantFiles) {
		t.Errorf("files = %v, want %v", got, wantFiles)
	}
	for _, f := range files[1:] {
		checkPNG(t, f)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != len(wantFiles) {
		t.Errorf("%s holds %d entries, want %d", out, len(entries), len(wantFiles))
	}
}

// checkPNG checks that path decodes as a PNG of about the project's plot
// size (480 x 298 at 96 dpi).
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dx() > 600 || b.Dy() < 250 || b.Dy() > 400 {
		t.Errorf("%s: %dx%d pixels, want about 480x298", filepath.Base(path), b.Dx(), b.Dy())
	}
}

// Forced over different loads, the differences come first, before the
// sides and any table; one offered rate a side draws no throughput plot.
func TestWriteReportForced(t *testing.T) {
	dir := t.TempDir()
	a := side(t, dir, "pool", 3, fakeRun{p99ms: 10, rates: []float64{1000}, ceiling: 5000})
	b := side(t, dir, "pool", 3, fakeRun{p99ms: 12, rates: []float64{1500}, ceiling: 5000, errors: 5})
	if _, err := Compare(a, b, Options{}); err == nil {
		t.Fatal("Compare of different offered loads without Force: no error")
	}
	c := compareRuns(t, a, b, true)
	_, files, md := readReport(t, c)

	diff := strings.Index(md, "> **Different load (compared with --force).**")
	sides, table := strings.Index(md, "| side |"), strings.Index(md, "\n## ")
	if diff < 0 || diff > sides || diff > table {
		t.Errorf("differences at %d, sides at %d, first table at %d: want the differences first:\n%s", diff, sides, table, md)
	}
	for _, want := range []string{
		"# Comparison: pool (A) vs pool (B)\n",
		"> - different offered loads: 1000 req/s for 10s (",
		// Three runs a side: no interval, no significance, the footnotes say why.
		"| latency p99 | 10.1ms ± ∞ | 12.1ms ± ∞ | ~ (p=0.100 n=3); ≈",
		"| errors | 0 (0%) ± ∞ | 5 (0.5%) ± ∞ | ~ (p=0.100 n=3) |",
		"\n---\n\n- ±∞: a 95% confidence interval of a median needs at least 6 runs a side",
		"\n- with fewer than 4 runs a side the U test cannot reach p <= 0.05",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "throughput.png") {
		t.Error("report.md embeds a throughput plot of one offered rate a side")
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if want := []string{ReportFile, "latency-phase-1.png"}; !slices.Equal(names, want) {
		t.Errorf("files = %v, want %v", names, want)
	}
}

// A side without histograms (a trace, a sweep) draws no latency plot.
func TestWriteReportWithoutHistograms(t *testing.T) {
	dir := t.TempDir()
	a := side(t, dir, "pool", 1, fakeRun{p99ms: 10, rates: []float64{1000}, ceiling: 5000})
	b := side(t, dir, "mutex", 1, fakeRun{p99ms: 11, rates: []float64{1000}, ceiling: 5000})
	b[0].Latency = nil
	_, files, md := readReport(t, compareRuns(t, a, b, false))
	if len(files) != 1 || strings.Contains(md, "![") {
		t.Errorf("files = %v, want report.md alone, without an image", files)
	}
	if !strings.Contains(md, "| latency p99 | 10ms | 11ms | +10.00% (n=1, untested) |") {
		t.Errorf("report.md lacks the untested change of one run a side:\n%s", md)
	}
}

// From run directories as the load generator writes them (its HDR log
// read back by figures): a latency plot per phase, the throughput plot of
// the two-rate ladder, a row per figure.
func TestWriteReportFromRunDirectories(t *testing.T) {
	dir := t.TempDir()
	read := func(model string, center time.Duration) []*figures.Set {
		var sets []*figures.Set
		for i := range 3 {
			c := center + time.Duration(i)*center/100
			path := rundirtest.Write(t, filepath.Join(dir, fmt.Sprintf("%s-%d", model, i)), rundirtest.Run{
				Command: "schedscope fixture --model " + model,
				Phases: []rundirtest.Phase{
					{Rate: 100, Latencies: rundirtest.Spread(c, 1000)},
					{Rate: 200, Latencies: rundirtest.Spread(2*c, 1500)},
				},
			})
			s, err := figures.Read(context.Background(), path, analyze.Options{})
			if err != nil {
				t.Fatal(err)
			}
			sets = append(sets, s...)
		}
		return sets
	}
	c := compareRuns(t, read("goroutine", 50*time.Millisecond), read("pool", 80*time.Millisecond), false)
	_, files, md := readReport(t, c)
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if want := []string{ReportFile, "latency-phase-1.png", "latency-phase-2.png", ThroughputPlot}; !slices.Equal(names, want) {
		t.Errorf("files = %v, want %v", names, want)
	}
	for _, want := range []string{"# Comparison: goroutine vs pool\n", "| latency p99 | ", "| 2xx/s | 100 ± ∞ | 100 ± ∞ | ~ (p=1.000 n=3) |", "](latency-phase-2.png)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}

func TestPercentileAxis(t *testing.T) {
	if x := percentileX(0.99); math.Abs(x-100) > 1e-9 {
		t.Errorf("percentileX(0.99) = %g, want 100", x)
	}
	if x := percentileX(0); x != 1 {
		t.Errorf("percentileX(0) = %g, want 1", x)
	}
	labels := map[float64]string{}
	for _, tk := range (percentileTicks{}).Ticks(1, 2e5) {
		if tk.Label != "" {
			labels[tk.Value] = tk.Label
		}
	}
	want := map[float64]string{1: "0%", 10: "90%", 100: "99%", 1e3: "99.9%", 1e4: "99.99%", 1e5: "99.999%"}
	for x, l := range want {
		if labels[x] != l {
			t.Errorf("tick at %g labelled %q, want %q", x, labels[x], l)
		}
	}
	if len(labels) != len(want) {
		t.Errorf("labelled ticks %v, want %v", labels, want)
	}

	// 1 ms .. 1000 ms evenly: p99 is 990 ms, at x = 100; the curve ends at
	// the maximum, at x = the count.
	h := hdrhistogram.New(1, 60e9, 3)
	for v := int64(1); v <= 1000; v++ {
		if err := h.RecordValue(v * 1e6); err != nil {
			t.Fatal(err)
		}
	}
	xy := percentileCurve(h, 40)
	at := func(x float64) float64 {
		for _, p := range xy {
			if math.Abs(p.X-x) < 1e-6*x {
				return p.Y
			}
		}
		t.Fatalf("no point at x = %g", x)
		return 0
	}
	for x, ms := range map[float64]float64{1: 1, 10: 900, 100: 990} {
		if y := at(x); math.Abs(y-ms) > ms*0.002 {
			t.Errorf("latency at x = %g: %g ms, want %g", x, y, ms)
		}
	}
	last := xy[len(xy)-1]
	if last.X != 1000 || math.Abs(last.Y-1000) > 1 {
		t.Errorf("curve ends at (%g, %g), want (1000, 1000 ms)", last.X, last.Y)
	}
	for i := 1; i < len(xy); i++ {
		if xy[i].X <= xy[i-1].X || xy[i].Y < xy[i-1].Y {
			t.Fatalf("curve not increasing at %d: %v then %v", i, xy[i-1], xy[i])
		}
	}
	if n := len(xy); n < 100 {
		t.Errorf("%d points over three decades, want dense sampling", n)
	}
}

// The report directory: never a run directory, one holding other files, or
// a compared path; refused before anything is written. One holding only an
// earlier comparison report is rewritten, its plots this report does not
// draw removed.
func TestWriteReportOutDir(t *testing.T) {
	dir := t.TempDir()
	compared := t.TempDir()
	ladder := []float64{1000, 2000}
	a := side(t, dir, "pool", 2, fakeRun{p99ms: 10, rates: ladder, ceiling: 5000})
	a[0].Path = compared
	c := compareRuns(t, a, side(t, dir, "mutex", 2, fakeRun{p99ms: 11, rates: ladder, ceiling: 5000}), false)

	runDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(runDir, rundir.ManifestFile), []byte(`{"status":"complete"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, out, want string }{
		{"run directory", runDir, "is a run directory"},
		{"other files", other, "holds other files (notes.txt)"},
		{"a compared path", compared, "is one of the compared paths"},
		{"inside a compared path", filepath.Join(compared, "cmp"), "lies inside the compared " + compared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := entryNames(t, filepath.Dir(tc.out))
			inside := entryNames(t, tc.out)
			_, err := WriteReport(c, tc.out)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line with %q", err, tc.want)
			}
			if after := entryNames(t, filepath.Dir(tc.out)); !slices.Equal(after, before) {
				t.Errorf("%s changed: %v, then %v", filepath.Dir(tc.out), before, after)
			}
			if after := entryNames(t, tc.out); !slices.Equal(after, inside) {
				t.Errorf("%s changed: %v, then %v", tc.out, inside, after)
			}
		})
	}

	// Rewritten: a two-phase report, then a one-phase one.
	out := filepath.Join(t.TempDir(), "new", "cmp")
	if _, err := WriteReport(c, out); err != nil {
		t.Fatal(err)
	}
	one := compareRuns(t,
		side(t, dir, "pool", 2, fakeRun{p99ms: 10, rates: []float64{1000}, ceiling: 5000}),
		side(t, dir, "mutex", 2, fakeRun{p99ms: 11, rates: []float64{1000}, ceiling: 5000}), false)
	if _, err := WriteReport(one, out); err != nil {
		t.Fatalf("rewriting an earlier comparison report: %v", err)
	}
	if got, want := entryNames(t, out), []string{"latency-phase-1.png", ReportFile}; !slices.Equal(got, want) {
		t.Errorf("after rewriting: %v, want %v", got, want)
	}
}

// entryNames lists dir's entries, sorted; none when it does not exist.
func entryNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestSlug(t *testing.T) {
	for key, want := range map[string]string{"phase 1": "phase-1", "gomaxprocs 4": "gomaxprocs-4", "Phase  2 / warm": "phase-2-warm", "": "group", "--": "group"} {
		if got := slug(key); got != want {
			t.Errorf("slug(%q) = %q, want %q", key, got, want)
		}
	}
}
