package report

import (
	"fmt"

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
	kind, err := rundir.DirKindOf(outDir)
	if err != nil {
		return fmt.Errorf("report directory %s: %w", outDir, err)
	}
	switch kind {
	case rundir.DirAbsent, rundir.DirEmpty:
		return nil
	case rundir.DirOther:
		if rundir.OnlyEntries(outDir, ReportFile, ThroughputPlot, P99Plot, LatencyPlot, GoroutinesPlot) {
			return nil
		}
		return fmt.Errorf("report directory %s holds other files (%s): choose a new or empty --out", outDir, rundir.SomeEntries(outDir))
	case rundir.NotDir:
		return fmt.Errorf("report directory %s exists and is not a directory", outDir)
	}
	return fmt.Errorf("report directory %s is %s: choose a new or empty --out", outDir, kind)
}
