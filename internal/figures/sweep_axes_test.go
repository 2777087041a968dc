package figures

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
)

func TestLineKey(t *testing.T) {
	if got := LineKey(rundir.Line{GOMAXPROCS: 2}); got != LevelKey(2) {
		t.Errorf("GOMAXPROCS-only line key %q, want %q", got, LevelKey(2))
	}
	l := rundir.Line{GOMAXPROCS: 2, Model: "pool", Set: rundir.Settings{}.With("workers", "20")}
	if got, want := LineKey(l), "pool, gomaxprocs 2, workers=20"; got != want {
		t.Errorf("line key %q, want %q", got, want)
	}
	for _, tc := range []struct {
		line rundir.Line
		want string
	}{
		{rundir.Line{GOMAXPROCS: 2, CPULimit: 0.5}, "limit 0.5 cpu, gomaxprocs 2"},
		{rundir.Line{GOMAXPROCS: 0, CPULimit: 1}, "limit 1 cpu, gomaxprocs auto"},
	} {
		if got := LineKey(tc.line); got != tc.want {
			t.Errorf("line key %q, want %q", got, tc.want)
		}
	}
}

// A version 1 sweep keeps its group keys, so old comparisons and gates
// read the same.
func TestReadSweepVersion1Groups(t *testing.T) {
	s, err := ReadSweep(filepath.Join("..", "..", "docs", "sweep-sleep"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, g := range s.Groups {
		keys = append(keys, g.Key)
	}
	if want := []string{"gomaxprocs 1", "gomaxprocs 2", RecommendedKey}; !slices.Equal(keys, want) {
		t.Errorf("groups %q, want %q", keys, want)
	}
}
