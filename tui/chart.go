package tui

import (
	"math"
	"strconv"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/NimbleMarkets/ntcharts/v2/canvas"
	"github.com/NimbleMarkets/ntcharts/v2/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/v2/linechart"
)

// point is one sample of a time series: X in seconds since the run started.
type point struct{ x, y float64 }

// series is a named line on a chart.
type series struct {
	name   string
	style  lipgloss.Style
	points []point
}

// maxPoints bounds each chart series; older points are halved in density
// when it is reached, so a long run keeps its whole shape in fixed memory.
const maxPoints = 1024

// appendPoint adds p to pts, thinning the older half when pts is full.
func appendPoint(pts []point, p point) []point {
	if len(pts) >= maxPoints {
		half := len(pts) / 2
		thin := make([]point, 0, maxPoints)
		for i := 0; i < half; i += 2 {
			thin = append(thin, pts[i])
		}
		thin = append(thin, pts[half:]...)
		pts = thin
	}
	return append(pts, p)
}

// renderChart draws the series as braille lines on a w x h linechart whose
// y axis starts at 0; yLabel formats y values. Stage boundaries (x values)
// are marked with a dotted vertical line. It builds a fresh ntcharts model on
// every call, so the dashboard model stays a plain value.
func renderChart(w, h int, yLabel func(float64) string, stages []float64, ss ...series) string {
	if w < 12 || h < 4 {
		return ""
	}
	minX, maxX := math.Inf(1), math.Inf(-1)
	maxY := 0.0
	for _, s := range ss {
		for _, p := range s.points {
			minX, maxX = math.Min(minX, p.x), math.Max(maxX, p.x)
			maxY = math.Max(maxY, p.y)
		}
	}
	if math.IsInf(minX, 1) {
		minX, maxX = 0, 1
	}
	if maxX-minX < 1 {
		maxX = minX + 1
	}
	maxY = niceCeil(maxY * 1.05)
	if maxY <= 0 {
		maxY = 1
	}
	axis := lipgloss.NewStyle().Foreground(lipgloss.Color("#6C6C6C"))
	lc := linechart.New(w, h, minX, maxX, 0, maxY,
		linechart.WithXYSteps(max(1, (w-8)/6), max(1, (h-2)/3)),
		linechart.WithStyles(axis, axis, lipgloss.NewStyle()),
		linechart.WithXLabelFormatter(func(_ int, v float64) string {
			return strconv.Itoa(int(math.Round(v))) + "s"
		}),
		linechart.WithYLabelFormatter(func(_ int, v float64) string { return yLabel(v) }),
	)
	lc.DrawXYAxisAndLabel()
	gw, gh := lc.GraphWidth(), lc.GraphHeight()
	if gw < 2 || gh < 1 {
		return lc.View()
	}
	start := canvas.Point{X: lc.Origin().X + 1, Y: 0}
	for _, x := range stages {
		if x <= minX || x > maxX {
			continue
		}
		col := start.X + int(math.Round((x-minX)/(maxX-minX)*float64(gw-1)))
		for y := 0; y < gh; y++ {
			lc.Canvas.SetCell(canvas.Point{X: col, Y: y}, canvas.NewCellWithStyle('┊', axis))
		}
	}
	for _, s := range ss {
		if len(s.points) == 0 {
			continue
		}
		grid := graph.NewBrailleGrid(gw, gh, minX, maxX, 0, maxY)
		prev := grid.GridPoint(canvas.Float64Point{X: s.points[0].x, Y: s.points[0].y})
		grid.Set(prev)
		for _, p := range s.points[1:] {
			cur := grid.GridPoint(canvas.Float64Point{X: p.x, Y: p.y})
			for _, q := range graph.GetLinePoints(prev, cur) {
				grid.Set(q)
			}
			prev = cur
		}
		graph.DrawBraillePatterns(&lc.Canvas, start, grid.BraillePatterns(), s.style)
	}
	return lc.View()
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// msLabel formats a y value in milliseconds as a short duration label.
func msLabel(v float64) string {
	d := time.Duration(v * float64(time.Millisecond))
	switch {
	case v <= 0:
		return "0"
	case v < 10:
		return strconv.FormatFloat(v, 'f', 1, 64) + "ms"
	case d < time.Second:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + "ms"
	default:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
}

// countLabel formats a y value that counts things.
func countLabel(v float64) string {
	if v >= 10000 {
		return strconv.FormatFloat(math.Round(v/1000), 'f', 0, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}
