package tui

import (
	"charm.land/lipgloss/v2"

	"github.com/schedscope/schedscope/internal/rundir"
)

// styles holds the dashboard's and browser's lipgloss styles. Colours are
// written as full RGB; the program's colour profile (NO_COLOR, TERM) decides
// what reaches the terminal, so the same styles serve every terminal.
type styles struct {
	title, dim, label, value, key, warn, bad, good, tabOn, tabOff lipgloss.Style
	panel, banner, help, selected, p50, p99, gor, thr             lipgloss.Style
}

func newStyles() styles {
	accent := lipgloss.Color("#7D56F4")
	return styles{
		title:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#FAFAFA")).Background(accent).Padding(0, 1),
		dim:      lipgloss.NewStyle().Foreground(lipgloss.Color("#8A8A8A")),
		label:    lipgloss.NewStyle().Foreground(lipgloss.Color("#A8A8A8")),
		value:    lipgloss.NewStyle().Bold(true),
		key:      lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#FFD75F")),
		warn:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#FFAF00")),
		bad:      lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#FF5F5F")),
		good:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#5FD75F")),
		tabOn:    lipgloss.NewStyle().Bold(true).Underline(true).Foreground(accent),
		tabOff:   lipgloss.NewStyle().Foreground(lipgloss.Color("#8A8A8A")),
		panel:    lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("#5F5F87")).Padding(0, 1),
		banner:   lipgloss.NewStyle().Padding(0, 1),
		help:     lipgloss.NewStyle().Foreground(lipgloss.Color("#8A8A8A")),
		selected: lipgloss.NewStyle().Bold(true).Reverse(true),
		p50:      lipgloss.NewStyle().Foreground(lipgloss.Color("#5FAFFF")),
		p99:      lipgloss.NewStyle().Foreground(lipgloss.Color("#FF5F87")),
		gor:      lipgloss.NewStyle().Foreground(lipgloss.Color("#87D787")),
		thr:      lipgloss.NewStyle().Foreground(lipgloss.Color("#D7AF5F")),
	}
}

// tone is how a verdict banner looks.
type tone int

const (
	toneNeutral tone = iota // a statement of fact: plain bold, "•"
	toneWarn                // a caveat or a limit coming: amber, "▲"
	toneBad                 // a limit reached: red, "▲"
	toneGood                // a limit not reached: green, "✓"
)

// toneOf maps each kind of conclusion onto its banner's tone. A kind not
// listed (or none) is neutral.
func toneOf(k rundir.Kind) tone {
	switch k {
	case rundir.KindPoolSaturated, rundir.KindCeiling,
		rundir.KindOverCapacity, rundir.KindErrors, rundir.KindUnreachable:
		return toneBad
	case rundir.KindGenerator, rundir.KindQueueing, rundir.KindClosedCeiling:
		return toneWarn
	case rundir.KindPassed, rundir.KindBelowCapacity:
		return toneGood
	case rundir.KindInfo, rundir.KindTargetGone, rundir.KindSnapshotCondition, rundir.KindSnapshot,
		rundir.KindSchedLatency, rundir.KindPinned, rundir.KindContention, rundir.KindLittlesLaw,
		// What held a ceiling (the ceiling itself is KindCeiling's).
		rundir.KindPool, rundir.KindCPU, rundir.KindUnknown,
		rundir.KindLimitPs, rundir.KindLimitConcurrency, rundir.KindLimitCPUStarved,
		rundir.KindLimitSerialized, rundir.KindLimitElsewhere, rundir.KindLimitQuota:
		return toneNeutral
	default:
		return toneNeutral
	}
}

// verdictStyle picks the style of a verdict banner by its kind.
func (s styles) verdictStyle(k rundir.Kind) lipgloss.Style {
	switch toneOf(k) {
	case toneWarn:
		return s.warn
	case toneBad:
		return s.bad
	case toneGood:
		return s.good
	default:
		return s.value
	}
}

// verdictMark is the banner's leading symbol, readable without colour.
func verdictMark(k rundir.Kind) string {
	switch toneOf(k) {
	case toneGood:
		return "✓"
	case toneNeutral:
		return "•"
	default:
		return "▲"
	}
}
