package compare

import (
	"math"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/schedscope/schedscope/internal/report"
)

// The plots' style is internal/report's (plot.go there): the same size
// (report.SavePlot), line widths, legend font and round ticks
// (report.NiceTicks), so a comparison's plots sit beside a run's or a
// sweep's without a change of look.

// sideLine is one side's line in a plot.
type sideLine struct {
	name string
	xy   plotter.XYs
}

// percentileX is where quantile q (0 <= q < 1) lies on a percentile
// distribution's x axis: 1/(1-q), so that 90%, 99% and 99.9% are a decade
// apart on a log scale, as HdrHistogram's plotter draws them.
func percentileX(q float64) float64 { return 1 / (1 - q) }

// percentileLabel names the quantile at x = 10^decades: "0%", "90%",
// "99%", "99.9%".
func percentileLabel(decades int) string {
	switch {
	case decades <= 0:
		return "0%"
	case decades == 1:
		return "90%"
	case decades == 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", decades-2) + "%"
}

// percentileTicks labels percentileX's axis: each decade with its
// percentile (10 is 90%, 100 is 99%), unlabelled minor ticks between.
type percentileTicks struct{}

// Ticks implements plot.Ticker.
func (percentileTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	var ts []plot.Tick
	for d := int(math.Floor(math.Log10(lo))); math.Pow10(d) <= hi; d++ {
		v := math.Pow10(d)
		ts = append(ts, plot.Tick{Value: v, Label: percentileLabel(d)})
		for m := 2; m < 10; m++ {
			ts = append(ts, plot.Tick{Value: float64(m) * v})
		}
	}
	return ts
}

var _ plot.Ticker = percentileTicks{}

// percentileCurve samples h's percentile distribution in ms against
// percentileX: stepsPerDecade points per decade from 0% up to the
// quantile of the count-th value (1-1/count), where the curve ends at the
// maximum. Empty for an empty histogram.
func percentileCurve(h *hdrhistogram.Histogram, stepsPerDecade int) plotter.XYs {
	n := h.TotalCount()
	if n == 0 {
		return nil
	}
	var xs, pcts []float64
	steps := int(math.Ceil(math.Log10(float64(n)) * float64(stepsPerDecade)))
	for i := range steps {
		q := 1 - math.Pow(10, -float64(i)/float64(stepsPerDecade))
		x := percentileX(q)
		if x >= float64(n) {
			break
		}
		xs = append(xs, x)
		pcts = append(pcts, 100*q) // hdrhistogram takes percentiles, 0-100
	}
	vals := h.ValueAtPercentilesSlice(pcts)
	xy := make(plotter.XYs, 0, len(xs)+1)
	for i, x := range xs {
		xy = append(xy, plotter.XY{X: x, Y: float64(vals[i]) / 1e6})
	}
	return append(xy, plotter.XY{X: max(float64(n), 1), Y: float64(h.Max()) / 1e6})
}

// latencyPlot draws the sides' latency percentile distributions in group
// key, one line per side, in HdrHistogram's manner: latency (ms, linear)
// against the percentile on a log scale of 1/(1-q).
func latencyPlot(key string, sides []*Side) *plot.Plot {
	p := plot.New()
	p.Title.Text = "latency by percentile (" + key + ")"
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (ms)"
	var lines []sideLine
	maxX, maxY := 10.0, 0.0 // x: at least 0% to 90%
	for _, s := range sides {
		var xy plotter.XYs // none: the side keeps its colour, without a line
		if h := s.latency[key]; h != nil {
			xy = percentileCurve(h, 40)
		}
		if len(xy) > 0 {
			maxX, maxY = max(maxX, xy[len(xy)-1].X), max(maxY, xy[len(xy)-1].Y)
		}
		lines = append(lines, sideLine{s.Label, xy})
	}
	addLines(p, lines, false)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks{}
	p.X.Min, p.X.Max = 1, maxX
	// Latency rises to the right: the top left is free for the legend,
	// and a band above the highest maximum keeps it free when a curve
	// reaches its maximum early (a narrow distribution).
	p.Y.Min = 0
	if maxY > 0 {
		p.Y.Max = 1.15 * maxY
	}
	return p
}

// throughputPoints is a side's median 2xx/s at each offered rate over its
// runs, by offered rate.
func throughputPoints(s *Side) plotter.XYs {
	byRate := map[float64][]float64{}
	for _, run := range s.through {
		for _, pt := range run {
			byRate[pt.Offered] = append(byRate[pt.Offered], pt.OKPerS)
		}
	}
	rates := make([]float64, 0, len(byRate))
	for r := range byRate {
		rates = append(rates, r)
	}
	slices.Sort(rates)
	xy := make(plotter.XYs, 0, len(rates))
	for _, r := range rates {
		xy = append(xy, plotter.XY{X: r, Y: median(byRate[r])})
	}
	return xy
}

// median is the middle of values (the mean of the middle two for an even
// count); values is not modified.
func median(values []float64) float64 {
	v := slices.Clone(values)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// hasLadder reports whether a side has at least two distinct offered
// rates: fewer make one point, which the tables already say.
func hasLadder(s *Side) bool { return len(throughputPoints(s)) >= 2 }

// throughputPlot draws 2xx/s against the offered rate, one line per side,
// with the diagonal where every offered request is served, as report's
// plot of a sweep does.
func throughputPlot(sides []*Side) *plot.Plot {
	p := plot.New()
	p.Title.Text = "2xx/s vs offered rate"
	p.X.Label.Text = "offered (req/s)"
	p.Y.Label.Text = "2xx responses/s (median of runs)"
	var lines []sideLine
	maxRate := 0.0
	for _, s := range sides {
		xy := throughputPoints(s)
		for _, pt := range xy {
			maxRate = max(maxRate, pt.X)
		}
		lines = append(lines, sideLine{s.Label, xy})
	}
	report.AddOfferedLine(p, maxRate)
	addLines(p, lines, true)
	p.X.Tick.Marker, p.Y.Tick.Marker = report.NiceTicks{}, report.NiceTicks{}
	// The lines rise from the bottom left and flatten at the top right:
	// the bottom right is free for the legend.
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), vg.Points(6)
	p.X.Min, p.Y.Min = 0, 0
	return p
}

// addLines adds one line per side, in the sides' colours (A's first), with point markers
// when marks (a few measured points rather than a dense curve), and the
// project's legend, grid and title style.
func addLines(p *plot.Plot, lines []sideLine, marks bool) {
	for i, s := range lines {
		if len(s.xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(s.xy)
		if err != nil {
			continue // NaN or Inf: nothing drawable
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		thumbs := []plot.Thumbnailer{l}
		p.Add(l)
		if marks {
			pts, err := plotter.NewScatter(s.xy)
			if err == nil {
				pts.Color = plotutil.Color(i)
				pts.Shape = plotutil.Shape(i)
				p.Add(pts)
				thumbs = append(thumbs, pts)
			}
		}
		p.Legend.Add(s.name, thumbs...)
	}
	p.Y.Tick.Marker = report.NiceTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())
	p.Title.TextStyle.Font.Size = vg.Points(11)
}
