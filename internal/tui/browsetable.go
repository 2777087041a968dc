package tui

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// browseRow is one row of a browsable table: its cells as shown, a number per
// column to sort by (NaN: sort that column as text), and the index of the
// report item it shows.
type browseRow struct {
	cells []string
	nums  []float64
	ref   int
}

// browseTable is the trace browser's scrollable, sortable, filterable list
// of rows with a cursor (unlike Table, a Summary's plain text table). It is
// a value: its methods return the changed table.
type browseTable struct {
	header  []string
	right   []bool // right-align this column (figures)
	rows    []browseRow
	sortCol int  // -1: the order rows came in
	asc     bool // ascending instead of the default descending
	filter  string
	cursor  int // index into visible(); the view scrolls to keep it shown
}

func newBrowseTable(header []string, right []bool, rows []browseRow) browseTable {
	return browseTable{header: header, right: right, rows: rows, sortCol: -1}
}

// visible returns the rows that match the filter, in sort order.
func (t browseTable) visible() []browseRow {
	out := make([]browseRow, 0, len(t.rows))
	f := strings.ToLower(t.filter)
	for _, r := range t.rows {
		if f == "" || strings.Contains(strings.ToLower(strings.Join(r.cells, " ")), f) {
			out = append(out, r)
		}
	}
	if t.sortCol >= 0 {
		c := t.sortCol
		slices.SortStableFunc(out, func(a, b browseRow) int {
			var o int
			if c < len(a.nums) && !math.IsNaN(a.nums[c]) {
				o = cmp.Compare(a.nums[c], b.nums[c])
			} else {
				o = strings.Compare(a.cells[c], b.cells[c])
			}
			if !t.asc {
				o = -o
			}
			return o
		})
	}
	return out
}

// selected returns the row under the cursor.
func (t browseTable) selected() (browseRow, bool) {
	v := t.visible()
	if t.cursor < 0 || t.cursor >= len(v) {
		return browseRow{}, false
	}
	return v[t.cursor], true
}

// move moves the cursor by d rows, keeping it in range.
func (t browseTable) move(d int) browseTable {
	n := len(t.visible())
	t.cursor = max(0, min(n-1, t.cursor+d))
	return t
}

// sortNext sorts by the next column (s), descending; a table without
// columns (a tab that shows no table) stays as it is.
func (t browseTable) sortNext() browseTable {
	if len(t.header) == 0 {
		return t
	}
	t.sortCol = (t.sortCol + 1) % len(t.header)
	t.asc = false
	t.cursor = 0
	return t
}

// reverse flips the sort order (S), sorting by the first column if none
// was chosen; a table without columns stays as it is.
func (t browseTable) reverse() browseTable {
	if len(t.header) == 0 {
		return t
	}
	if t.sortCol < 0 {
		t.sortCol = 0
	}
	t.asc = !t.asc
	t.cursor = 0
	return t
}

func (t browseTable) withFilter(f string) browseTable {
	t.filter = f
	t.cursor = 0
	return t
}

// render draws the table in at most h lines (header included) and w cells,
// scrolled so the cursor shows when focused.
func (t browseTable) render(st styles, w, h int, focused bool) string {
	rows := t.visible()
	widths := make([]int, len(t.header))
	for c, hd := range t.header {
		widths[c] = ansi.StringWidth(hd) + 2 // room for the sort arrow
	}
	for _, r := range rows {
		for c, cell := range r.cells {
			if c < len(widths) {
				widths[c] = max(widths[c], ansi.StringWidth(cell))
			}
		}
	}
	// Too wide: shrink the widest text column (it is cut with "…").
	total := 2 * (len(widths) - 1)
	for _, cw := range widths {
		total += cw
	}
	if excess := total - (w - 2); excess > 0 {
		widest := -1
		for c := range widths {
			if (c >= len(t.right) || !t.right[c]) && (widest < 0 || widths[c] > widths[widest]) {
				widest = c
			}
		}
		if widest >= 0 {
			widths[widest] = max(12, widths[widest]-excess)
		}
	}
	line := func(cells []string) string {
		var b strings.Builder
		for c := range t.header {
			if c > 0 {
				b.WriteString("  ")
			}
			cell := ""
			if c < len(cells) {
				cell = cells[c]
			}
			if c < len(t.right) && t.right[c] {
				b.WriteString(padLeft(cell, widths[c]))
			} else {
				b.WriteString(padRight(cell, widths[c]))
			}
		}
		return padRight(strings.TrimRight(b.String(), " "), w-2)
	}
	head := make([]string, len(t.header))
	for c, hd := range t.header {
		head[c] = hd
		if c == t.sortCol {
			if t.asc {
				head[c] += " ↑"
			} else {
				head[c] += " ↓"
			}
		}
	}
	out := []string{"  " + st.label.Render(line(head))}
	if len(rows) == 0 {
		msg := "(nothing)"
		if t.filter != "" {
			msg = "(no row matches “" + t.filter + "”)"
		}
		return strings.Join(append(out, "  "+st.dim.Render(msg)), "\n")
	}
	body := max(1, h-1)
	if len(rows) > body {
		body = max(1, body-1) // keep a line to say how many rows are hidden
	}
	cursor := max(0, min(len(rows)-1, t.cursor))
	offset := max(0, cursor-body+1)
	for i := offset; i < len(rows) && i < offset+body; i++ {
		l := line(rows[i].cells)
		if focused && i == cursor {
			out = append(out, st.key.Render("›")+" "+st.selected.Render(l))
		} else {
			out = append(out, "  "+l)
		}
	}
	if hidden := len(rows) - body; hidden > 0 {
		out = append(out, "  "+st.dim.Render(fmtCount(int64(hidden))+" more rows (↑/↓ to scroll, / to search)"))
	}
	return strings.Join(out, "\n")
}
