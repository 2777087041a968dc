package report

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/schedscope/schedscope/internal/rundir"
)

// checkOutDir returns nil when a report may be written into outDir, before
// anything is written: outDir is the one input directory itself (a report
// beside its data), nothing, an empty directory, or a directory holding only
// a report's files (an earlier report, rewritten). It refuses a run or
// sweep directory of its own, any other non-empty directory and a file, so
// a report never overwrites another directory's report or mixes into it.
func checkOutDir(outDir string, inputs ...string) error {
	if len(inputs) == 1 && rundir.SameDir(outDir, inputs[0]) {
		return nil
	}
	reportFiles := []string{ReportFile, ThroughputPlot, P99Plot, LatencyPlot, GoroutinesPlot}
	return CheckOutDir(outDir, func(name string) bool { return slices.Contains(reportFiles, name) })
}

// CheckOutDir returns nil when a report may be written into outDir, before
// anything is written: nothing is there, an empty directory, or a directory
// whose every entry ours accepts (an earlier report of the same kind, to be
// rewritten). It refuses a run, sweep or repeat directory, any other
// non-empty directory and a file, each with one line naming outDir and
// what it is. Whether outDir may be one of the report's inputs is the
// caller's rule.
func CheckOutDir(outDir string, ours func(name string) bool) error {
	kind, err := rundir.DirKindOf(outDir)
	if err != nil {
		return fmt.Errorf("report directory %s: %w", outDir, err)
	}
	switch kind {
	case rundir.DirAbsent, rundir.DirEmpty:
		return nil
	case rundir.DirOther:
		entries, err := os.ReadDir(outDir)
		if err != nil {
			return fmt.Errorf("report directory %s: %w", outDir, err)
		}
		var other []string
		for _, e := range entries {
			if !ours(e.Name()) {
				other = append(other, e.Name())
			}
		}
		if len(other) == 0 {
			return nil
		}
		names := strings.Join(other[:min(len(other), 3)], ", ")
		if len(other) > 3 {
			names += fmt.Sprintf(" and %d more", len(other)-3)
		}
		return fmt.Errorf("report directory %s holds other files (%s): choose a new or empty --out", outDir, names)
	case rundir.NotDir:
		return fmt.Errorf("report directory %s exists and is not a directory", outDir)
	}
	return fmt.Errorf("report directory %s is %s: choose a new or empty --out", outDir, kind)
}
