package figures

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/regular"
	"github.com/schedscope/schedscope/internal/rundir"
)

// Read reads the figures at path: a run directory, a sweep directory, a
// repeat directory (one Set per run in it) or an execution trace file.
// Anything else is an error of one line saying what path is.
func Read(ctx context.Context, path string, opts analyze.Options) ([]*Set, error) {
	kind, err := rundir.DirKindOf(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch kind {
	case rundir.DirRun:
		s, err := ReadRun(ctx, path)
		if err != nil {
			return nil, err
		}
		return []*Set{s}, nil
	case rundir.DirSweep:
		s, err := ReadSweep(path)
		if err != nil {
			return nil, err
		}
		return []*Set{s}, nil
	case rundir.DirRepeat:
		return readRepeat(ctx, path)
	case rundir.NotDir:
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
			// Refused before it is opened: its reads could block or never end.
			return nil, fmt.Errorf("%s: %s, not a regular file: copy the trace into a file and give that", path, regular.Describe(fi.Mode()))
		}
		s, err := ReadTrace(ctx, path, opts)
		if err != nil {
			return nil, err
		}
		return []*Set{s}, nil
	case rundir.DirAbsent:
		return nil, fmt.Errorf("%s: no such file or directory", path)
	case rundir.DirEmpty:
		return nil, fmt.Errorf("%s: an empty directory, neither a run, a sweep nor a repeat directory", path)
	}
	return nil, fmt.Errorf("%s: neither a run directory (%s), a sweep directory (%s) nor a repeat directory (%s); it holds %s",
		path, rundir.ManifestFile, rundir.SweepFile, rundir.RepeatFile, rundir.SomeEntries(path))
}

// readRepeat reads every run of a repeat directory, labelled with the
// repeat directory's label.
func readRepeat(ctx context.Context, dir string) ([]*Set, error) {
	r, err := rundir.ReadRepeat(dir)
	if err != nil {
		return nil, err
	}
	dirs := r.RunDirs(dir)
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: a repeat directory with no run yet", dir)
	}
	var out []*Set
	for _, d := range dirs {
		s, err := ReadRun(ctx, d)
		if err != nil {
			return nil, err
		}
		s.Label = filepath.Base(filepath.Clean(dir)) // the side's name is the repeat's
		out = append(out, s)
	}
	if r.Status != rundir.StatusComplete {
		why := r.Reason
		if why == "" {
			why = "its process ended before it said how it ended"
		}
		out[0].Warnings = append(out[0].Warnings, fmt.Sprintf("%s: %d of %d runs (the repeat is %s: %s)", dir, len(dirs), r.Count, r.Status, why))
	}
	if !r.FreshTarget && r.FreshNote != "" {
		out[0].Warnings = append(out[0].Warnings, dir+": "+r.FreshNote)
	}
	return out, nil
}

// Breach is a condition that held on a group of a Set.
type Breach struct {
	Condition cond.Condition `json:"-"`
	// Text is the condition as written; Group the title of the group it
	// held on; Value the figure; Line says it all in one line.
	Text  string  `json:"condition"`
	Group string  `json:"group"`
	Value float64 `json:"value"`
	Line  string  `json:"line"`
}

// Check checks conditions on each of s's gated groups and returns every
// one that held, once per group, in the order of the conditions.
func Check(s *Set, conditions []cond.Condition) []Breach {
	var out []Breach
	for _, c := range conditions {
		for i := range s.Groups {
			g := &s.Groups[i]
			if !g.Gate {
				continue
			}
			if v, held, _ := c.Eval(g.Source()); held {
				out = append(out, Breach{Condition: c, Text: c.String(), Group: g.Title, Value: v,
					Line: fmt.Sprintf("%s (%s, %s)", c.Explain(v), g.Title, s.Path)})
			}
		}
	}
	return out
}

// Unread returns the conditions that no gated group of s could read (a
// pool figure in a run without pools, a trace figure without a trace): a
// gate that cannot see its figure must say so rather than pass in silence.
func Unread(s *Set, conditions []cond.Condition) []string {
	var out []string
	for _, c := range conditions {
		read := false
		for i := range s.Groups {
			if s.Groups[i].Gate {
				if _, _, ok := c.Eval(s.Groups[i].Source()); ok {
					read = true
					break
				}
			}
		}
		if !read {
			out = append(out, c.String())
		}
	}
	return out
}
