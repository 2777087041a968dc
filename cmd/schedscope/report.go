package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/schedscope/schedscope/internal/report"
	"github.com/schedscope/schedscope/internal/rundir"
)

const reportSynopsis = "report [--out DIR] SWEEPDIR|RUNDIR\n       schedscope report --out DIR SWEEPDIR SWEEPDIR... (side by side, e.g. one sweep per model)"

// runReport is `schedscope report`: a Markdown report with PNG plots of a
// sweep directory (or a run directory) into the directory itself or --out.
func runReport(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags("report", reportSynopsis, s.out)
	out := fs.String("out", "", "directory for report.md and the plots (default: the input directory)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		if *out == "" {
			return usageErr("comparing %d sweeps needs --out DIR for the comparison", fs.NArg())
		}
		c, err := report.WriteComparison(fs.Args(), *out)
		if err != nil {
			return err
		}
		for _, f := range c.Files {
			fmt.Fprintln(s.out, f)
		}
		return nil
	}
	if fs.NArg() != 1 {
		return usageErr("want a directory: schedscope report [--out DIR] SWEEPDIR|RUNDIR")
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usageErr("%s: not a directory", dir)
	}
	var files []string
	switch {
	case reportFileExists(filepath.Join(dir, rundir.SweepFile)):
		r, err := report.WriteSweep(dir, *out)
		if err != nil {
			return err
		}
		files = r.Files
	default:
		r, err := report.WriteRun(dir, *out)
		if err != nil {
			return err
		}
		for _, w := range r.Warnings() {
			fmt.Fprintf(s.errOut, "schedscope report: warning: %s: %s\n", dir, w)
		}
		files = r.Files
	}
	for _, f := range files {
		fmt.Fprintln(s.out, f)
	}
	return nil
}

func reportFileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
