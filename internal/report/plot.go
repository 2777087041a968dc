package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/schedscope/schedscope/internal/capacity"
	"github.com/schedscope/schedscope/internal/rundir"
)

// Plot size: about 480 x 300 pixels at the default 96 dpi, small enough for
// a repository and readable in a design document.
const (
	plotWidth  = 5 * vg.Inch
	plotHeight = 3.1 * vg.Inch
)

// series is one line of a plot.
type series struct {
	name string
	xy   plotter.XYs
}

// labeledLevel is one line of a plot: a level, named.
type labeledLevel struct {
	name  string
	level capacity.Level
}

// sweepLines names each line of a sweep by its label ("pool, GOMAXPROCS 2,
// workers=20").
func sweepLines(r *SweepReport) []labeledLevel {
	var out []labeledLevel
	for _, l := range r.Analysis.Levels {
		name := l.Label
		if name == "" {
			name = fmt.Sprintf("GOMAXPROCS %d", l.GOMAXPROCS)
		}
		out = append(out, labeledLevel{name, l})
	}
	return out
}

// closedLines reports whether the lines' load axis is closed-model users
// (the first line's decides).
func closedLines(levels []labeledLevel) bool {
	return len(levels) > 0 && levels[0].level.Closed
}

// levelPlot is a new plot of what against the load of levels: the
// offered rate, or users in the closed model.
func levelPlot(levels []labeledLevel, what, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text = what+" vs offered rate", "offered (req/s)"
	if closedLines(levels) {
		p.Title.Text, p.X.Label.Text = what+" vs users", "users (closed model)"
	}
	p.Y.Label.Text = yLabel
	return p
}

// throughputPlot draws 2xx/s against the load (offered rate, or users),
// one line per level (a combination of GOMAXPROCS, model and fixture flags),
// with, for rates, the diagonal where every offered request is served for
// reference.
func throughputPlot(levels []labeledLevel) *plot.Plot {
	p := levelPlot(levels, "2xx/s", "2xx responses/s")
	closed := closedLines(levels)
	var lines []series
	maxRate := 0.0
	for _, ll := range levels {
		l := ll.level
		s := series{name: ll.name}
		for _, c := range l.Cells {
			s.xy = append(s.xy, plotter.XY{X: c.X(), Y: c.OKPerSec})
			maxRate = max(maxRate, c.X())
		}
		lines = append(lines, s)
	}
	if !closed {
		AddOfferedLine(p, maxRate)
	}
	addLines(p, lines)
	// The lines rise from the bottom left and flatten at the top right:
	// the bottom right is free for the legend.
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), vg.Points(6)
	p.X.Min, p.Y.Min = 0, 0
	return p
}

// p99Plot draws p99 latency against the offered rate on a log scale.
func p99Plot(levels []labeledLevel) *plot.Plot {
	p := levelPlot(levels, "p99 latency", "p99 (ms)")
	var lines []series
	for _, ll := range levels {
		l := ll.level
		s := series{name: ll.name}
		for _, c := range l.Cells {
			ms := float64(c.P99) / 1e6
			if ms <= 0 {
				continue // a log scale cannot show zero
			}
			s.xy = append(s.xy, plotter.XY{X: c.X(), Y: ms})
		}
		lines = append(lines, s)
	}
	addLines(p, lines)
	// A log scale only when p99 spans more than 20x (it shows only powers
	// of ten); latency rises to the top right, so the legend goes bottom right.
	lo, hi := math.Inf(1), 0.0
	for _, s := range lines {
		for _, xy := range s.xy {
			lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
		}
	}
	if hi > 20*lo {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Label.Text = "p99 (ms, log scale)"
	} else {
		p.Y.Min = 0
	}
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), vg.Points(6)
	p.X.Min = 0
	return p
}

func addLines(p *plot.Plot, lines []series) {
	for i, s := range lines {
		if len(s.xy) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(s.xy)
		if err != nil {
			continue // NaN or Inf: nothing drawable
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		pts.Color = plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	p.X.Tick.Marker = NiceTicks{}
	p.Y.Tick.Marker = NiceTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(6)
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())
	p.Title.TextStyle.Font.Size = vg.Points(11)
}

// NiceTicks labels a linear axis with about five round values (1, 2 or 5
// times a power of ten), printed without trailing zeros.
type NiceTicks struct{}

// Ticks implements plot.Ticker.
func (NiceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ts
}

var _ plot.Ticker = NiceTicks{}

// AddOfferedLine draws on a 2xx/s-against-offered plot the dashed
// diagonal where every offered request is answered, up to maxRate, with
// its legend entry "offered".
func AddOfferedLine(p *plot.Plot, maxRate float64) {
	diag := plotter.NewFunction(func(x float64) float64 { return x })
	diag.Color = color.Gray{Y: 160}
	diag.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	diag.XMin, diag.XMax = 0, maxRate
	p.Add(diag)
	p.Legend.Add("offered", diag)
}

// SavePlot writes p as a PNG of the reports' size to path.
func SavePlot(path string, p *plot.Plot) error {
	wt, err := p.WriterTo(plotWidth, plotHeight, "png")
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	// Through a temporary file: a full disk leaves no half-written PNG.
	if err := rundir.WriteFileAtomic(path, func(w io.Writer) error { _, err := wt.WriteTo(w); return err }); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// writeMarkdown creates the report file md and renders it with render; its
// error names the file.
func writeMarkdown(md string, render func(io.Writer) error) error {
	if err := rundir.WriteFileAtomic(md, render); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
