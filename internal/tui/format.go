package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// fmtCount formats n with thousands separators: 12345 -> "12,345".
func fmtCount(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtRate formats a per-second rate: one decimal below 100, none above.
func fmtRate(r float64) string {
	switch {
	case math.IsNaN(r) || math.IsInf(r, 0):
		return "-"
	case r < 100:
		return strconv.FormatFloat(r, 'f', 1, 64)
	default:
		return fmtCount(int64(math.Round(r)))
	}
}

// fmtDur formats a latency with three significant figures and a unit a
// person reads at a glance: "850 µs", "53.9 ms", "1.27 s". Zero is "-".
func fmtDur(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	switch {
	case d < time.Millisecond:
		return sig3(float64(d)/float64(time.Microsecond)) + " µs"
	case d < time.Second:
		return sig3(float64(d)/float64(time.Millisecond)) + " ms"
	default:
		return sig3(d.Seconds()) + " s"
	}
}

// sig3 prints v with three significant figures (no exponent).
func sig3(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// fmtClock formats an elapsed time as m:ss.
func fmtClock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// fitWidth cuts every line of s to at most w cells (ANSI-aware).
func fitWidth(s string, w int) string {
	if w <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "…")
		}
	}
	return strings.Join(lines, "\n")
}

// fitHeight keeps at most h lines of s.
func fitHeight(s string, h int) string {
	if h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(lines, "\n")
}

// padRight pads s with spaces to w cells (ANSI-aware); longer s is cut.
func padRight(s string, w int) string {
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

// padLeft right-aligns s in w cells.
func padLeft(s string, w int) string {
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return strings.Repeat(" ", w-n) + s
}

// textTable renders t as aligned columns separated by two spaces; numeric
// columns (every data cell parses as a number after removing , % and units)
// are right-aligned. The first row returned is the header.
func textTable(t Table) []string {
	cols := len(t.Header)
	for _, r := range t.Rows {
		cols = max(cols, len(r))
	}
	widths := make([]int, cols)
	numeric := make([]bool, cols)
	for c := range numeric {
		numeric[c] = len(t.Rows) > 0
	}
	cell := func(r []string, c int) string {
		if c < len(r) {
			return r[c]
		}
		return ""
	}
	for c := 0; c < cols; c++ {
		widths[c] = ansi.StringWidth(cell(t.Header, c))
		for _, r := range t.Rows {
			v := cell(r, c)
			widths[c] = max(widths[c], ansi.StringWidth(v))
			if !looksNumeric(v) {
				numeric[c] = false
			}
		}
	}
	row := func(r []string) string {
		var b strings.Builder
		for c := 0; c < cols; c++ {
			if c > 0 {
				b.WriteString("  ")
			}
			if numeric[c] {
				b.WriteString(padLeft(cell(r, c), widths[c]))
			} else {
				b.WriteString(padRight(cell(r, c), widths[c]))
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	out := make([]string, 0, len(t.Rows)+1)
	if len(t.Header) > 0 {
		out = append(out, row(t.Header))
	}
	for _, r := range t.Rows {
		out = append(out, row(r))
	}
	return out
}

// looksNumeric reports whether a table cell is a figure ("1,234", "53.9 ms",
// "12 %", "-") rather than a label.
func looksNumeric(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" || v == "-" {
		return true
	}
	for _, unit := range []string{" req/s", " ms", " µs", " s", " %", "%", "x"} {
		v = strings.TrimSuffix(v, unit)
	}
	v = strings.ReplaceAll(v, ",", "")
	_, err := strconv.ParseFloat(v, 64)
	return err == nil
}

// screenBody stacks a screen's top, middle and foot, the middle cut or padded
// to exactly rest lines so the foot stays on the last line.
func screenBody(top, mid, foot string, rest int) string {
	mid = fitHeight(mid, rest)
	if pad := rest - lipgloss.Height(mid); pad > 0 {
		mid += strings.Repeat("\n", pad)
	}
	return top + "\n" + mid + "\n" + foot
}
