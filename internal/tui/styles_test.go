package tui

import (
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
)

// The banner of a verdict follows its kind: the kinds the dashboard showed
// before the taxonomy was shared keep their look.
func TestVerdictTone(t *testing.T) {
	for _, tc := range []struct {
		kind rundir.Kind
		tone tone
		mark string
	}{
		{rundir.KindPoolSaturated, toneBad, "▲"},
		{rundir.KindCeiling, toneBad, "▲"},
		{rundir.KindOverCapacity, toneBad, "▲"},
		{rundir.KindGenerator, toneWarn, "▲"},
		{rundir.KindQueueing, toneWarn, "▲"},
		{rundir.KindPassed, toneGood, "✓"},
		{rundir.KindBelowCapacity, toneGood, "✓"},
		{rundir.KindInfo, toneNeutral, "•"},
		{rundir.KindTargetGone, toneNeutral, "•"},
		{rundir.KindSnapshot, toneNeutral, "•"},
		{rundir.KindSchedLatency, toneNeutral, "•"},
		{rundir.KindLimitPs, toneNeutral, "•"},
		{"", toneNeutral, "•"},
		{"a kind from a newer run directory", toneNeutral, "•"},
	} {
		if got := toneOf(tc.kind); got != tc.tone {
			t.Errorf("toneOf(%q) = %d, want %d", tc.kind, got, tc.tone)
		}
		if got := verdictMark(tc.kind); got != tc.mark {
			t.Errorf("verdictMark(%q) = %q, want %q", tc.kind, got, tc.mark)
		}
	}
}
