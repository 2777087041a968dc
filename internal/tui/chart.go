package tui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/NimbleMarkets/ntcharts/v2/canvas"
	"github.com/NimbleMarkets/ntcharts/v2/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/v2/canvas/runes"
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

// renderChart draws the series as braille lines on a w x h chart whose y
// axis starts at 0; yLabel formats y values. Stage boundaries (x values) are
// marked with a dotted vertical line. The plot is ntcharts' braille grid; the
// axes are drawn here, and each row is styled in runs of one series, because
// styling cell by cell (an ntcharts canvas's View) cost most of a frame.
// It keeps no state, so the dashboard model stays a plain value.
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

	// Y ticks at round fractions of the nice maximum.
	gh := h - 2
	n := 4
	if m := maxY / math.Pow(10, math.Floor(math.Log10(maxY))); m == 2.5 || m == 5 || m == 10 {
		n = 5
	}
	labels := make(map[int]string)
	lw := 0
	for k := 1; k <= n; k++ {
		v := maxY * float64(k) / float64(n)
		row := int(math.Round((1 - v/maxY) * float64(gh-1)))
		if _, taken := labels[row]; taken {
			continue
		}
		labels[row] = yLabel(v)
		lw = max(lw, len([]rune(labels[row])))
	}
	gw := w - lw - 1
	if gw < 4 {
		return ""
	}

	// owner records which series drew each cell: -1 none, -2 a stage mark.
	const none, stageMark = int8(-1), int8(-2)
	cells := make([]rune, gw*gh)
	owner := make([]int8, gw*gh)
	for i := range cells {
		cells[i], owner[i] = ' ', none
	}
	for _, x := range stages {
		if x <= minX || x > maxX {
			continue
		}
		col := int(math.Round((x - minX) / (maxX - minX) * float64(gw-1)))
		for y := 0; y < gh; y++ {
			cells[y*gw+col], owner[y*gw+col] = '┊', stageMark
		}
	}
	for si, s := range ss {
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
		for y, row := range grid.BraillePatterns() {
			for x, r := range row {
				if r == runes.BrailleBlockOffset || y >= gh || x >= gw {
					continue
				}
				i := y*gw + x
				if owner[i] >= 0 {
					r = runes.CombineBraillePatterns(cells[i], r)
				}
				cells[i], owner[i] = r, int8(si)
			}
		}
	}

	axis := lipgloss.NewStyle().Foreground(lipgloss.Color("#6C6C6C"))
	axisPaint := newPaint(axis)
	paints := make([]paint, len(ss))
	for i, s := range ss {
		paints[i] = newPaint(s.style)
	}
	var b strings.Builder
	for y := 0; y < gh; y++ {
		tick := "│"
		if _, ok := labels[y]; ok {
			tick = "┤"
		}
		axisPaint.write(&b, padLeft(labels[y], lw)+tick)
		var run strings.Builder
		class := none
		flush := func() {
			switch {
			case run.Len() == 0:
			case class == stageMark:
				axisPaint.write(&b, run.String())
			case class >= 0:
				paints[class].write(&b, run.String())
			default:
				b.WriteString(run.String())
			}
			run.Reset()
		}
		for x := 0; x < gw; x++ {
			if c := owner[y*gw+x]; c != class {
				flush()
				class = c
			}
			run.WriteRune(cells[y*gw+x])
		}
		flush()
		b.WriteByte('\n')
	}
	b.WriteString(axis.Render(padLeft(yLabel(0), lw) + "└" + strings.Repeat("─", gw)))
	b.WriteByte('\n')
	xl := []rune(strings.Repeat(" ", lw+1+gw))
	next := 0
	for col := 0; col < gw; col += max(8, gw/6) {
		v := minX + float64(col)/float64(gw-1)*(maxX-minX)
		l := []rune(strconv.Itoa(int(math.Round(v))) + "s")
		at := lw + 1 + col
		if at < next || at+len(l) > len(xl) {
			continue
		}
		copy(xl[at:], l)
		next = at + len(l) + 1
	}
	b.WriteString(axis.Render(strings.TrimRight(string(xl), " ")))
	return b.String()
}

// paint is a style reduced to the escape codes around its text, for text
// known to be one line without escapes: writing it skips lipgloss's width
// and wrapping work, which dominated the chart's cost.
type paint struct{ pre, post string }

func newPaint(s lipgloss.Style) paint {
	pre, post, _ := strings.Cut(s.Render("x"), "x")
	return paint{pre, post}
}

func (p paint) write(b *strings.Builder, text string) {
	b.WriteString(p.pre)
	b.WriteString(text)
	b.WriteString(p.post)
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
