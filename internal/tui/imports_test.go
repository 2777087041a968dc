package tui

import (
	"os/exec"
	"strings"
	"testing"
)

// Package tui draws what it is given: it imports neither the collectors
// nor the sweep (cmd/schedscope/internal/feed maps their values onto
// Frames and SweepEvents).
func TestImportsNoProducer(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the imports with")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"/internal/collect", "/internal/sweep"} {
			if strings.HasSuffix(dep, banned) || strings.Contains(dep, banned+"/") {
				t.Errorf("package tui depends on %s", dep)
			}
		}
	}
}
