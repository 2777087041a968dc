package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DirKind is what a path holds, as far as schedscope's directories go: the
// answer a command needs before it writes into a directory it was given.
type DirKind int

// The kinds DirKindOf tells apart.
const (
	// DirAbsent: nothing exists at the path.
	DirAbsent DirKind = iota
	// DirEmpty: an empty directory.
	DirEmpty
	// DirRun: a run directory (it holds manifest.json).
	DirRun
	// DirSweep: a sweep directory (it holds sweep.json).
	DirSweep
	// DirRepeat: a repeat directory (it holds repeat.json and the run
	// directories of `schedscope run --repeat`).
	DirRepeat
	// DirOther: a directory that holds files but is neither a run nor a
	// sweep directory.
	DirOther
	// NotDir: something that is not a directory (a file, a FIFO, a device).
	NotDir
)

// String names the kind as a sentence's object: "a run directory".
func (k DirKind) String() string {
	switch k {
	case DirAbsent:
		return "absent"
	case DirEmpty:
		return "an empty directory"
	case DirRun:
		return "a run directory (" + ManifestFile + ")"
	case DirSweep:
		return "a sweep directory (" + SweepFile + ")"
	case DirRepeat:
		return "a repeat directory (" + RepeatFile + ")"
	case DirOther:
		return "a directory holding other files"
	case NotDir:
		return "not a directory"
	}
	return fmt.Sprintf("DirKind(%d)", int(k))
}

// DirKindOf says what dir holds. It reads only the directory's entry list
// (and follows a symbolic link to a directory). The error is set when the
// path cannot be examined (permissions, I/O); the kind is then meaningless.
func DirKindOf(dir string) (DirKind, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return DirAbsent, nil
	case err != nil:
		return 0, err
	case !fi.IsDir():
		return NotDir, nil
	}
	names, err := entryNames(dir)
	if err != nil {
		return 0, err
	}
	switch {
	case len(names) == 0:
		return DirEmpty, nil
	case slices.Contains(names, SweepFile):
		return DirSweep, nil
	case slices.Contains(names, RepeatFile):
		return DirRepeat, nil
	case slices.Contains(names, ManifestFile):
		return DirRun, nil
	}
	return DirOther, nil
}

// CheckNewRunDir returns nil when Create(dir) may create a run directory
// there: nothing is at dir, or an empty directory. Otherwise its error says
// what dir is, so no command writes into a directory of another kind.
func CheckNewRunDir(dir string) error {
	kind, err := DirKindOf(dir)
	if err != nil {
		return fmt.Errorf("run directory %s: %w", dir, err)
	}
	switch kind {
	case DirAbsent, DirEmpty:
		return nil
	case DirOther:
		return fmt.Errorf("run directory %s: exists and holds other files (%s): choose a new or empty directory", dir, SomeEntries(dir))
	case NotDir:
		return fmt.Errorf("run directory %s: exists and is not a directory", dir)
	}
	return fmt.Errorf("run directory %s: exists and is %s: choose a new or empty directory", dir, kind)
}

// entryNames lists dir's entry names.
func entryNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// OnlyEntries reports whether every entry of dir is one of names (an empty
// or absent directory qualifies): a directory holding only what a command
// writes may be written again.
func OnlyEntries(dir string, names ...string) bool {
	have, err := entryNames(dir)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	for _, n := range have {
		if !slices.Contains(names, n) {
			return false
		}
	}
	return true
}

// SomeEntries names up to three of dir's entries, for an error message
// about a directory that holds other files.
func SomeEntries(dir string) string {
	names, _ := entryNames(dir)
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
	return strings.Join(names, ", ")
}

// SameDir reports whether a and b name the same directory, through symbolic
// links too (by their cleaned names when a does not exist).
func SameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// Distinct returns nil when no two of paths name the same file or
// directory; otherwise an error naming the first path that repeats an
// earlier one, by any spelling: through symbolic links too (os.SameFile),
// by cleaned absolute names where a path does not exist. It is the one
// check of a list of runs (compare's sides, a repeat's runs), where a run
// given twice would count as two.
func Distinct(paths []string) error {
	type seen struct {
		path string
		info os.FileInfo // nil: the path does not exist
		abs  string
	}
	var earlier []seen
	for _, p := range paths {
		cur := seen{path: p}
		cur.info, _ = os.Stat(p)
		if abs, err := filepath.Abs(p); err == nil {
			cur.abs = abs
		} else {
			cur.abs = filepath.Clean(p)
		}
		for _, e := range earlier {
			same := cur.abs == e.abs
			if cur.info != nil && e.info != nil {
				same = os.SameFile(cur.info, e.info)
			}
			if !same {
				continue
			}
			if p == e.path {
				return fmt.Errorf("%s is given twice: give each run once (a copy would count as one more run)", p)
			}
			return fmt.Errorf("%s is %s again: give each run once (a copy would count as one more run)", p, e.path)
		}
		earlier = append(earlier, cur)
	}
	return nil
}

// Within reports whether path is dir or lies inside it, through symbolic
// links too: a link inside dir that leads out of it is not within. path
// need not exist (where its existing part lies decides); a dir that does
// not exist holds nothing.
func Within(path, dir string) bool {
	di, err := os.Stat(dir)
	if err != nil {
		return false
	}
	p, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	// Resolve the part of p that exists, so a link counts where it leads.
	rest := ""
	for q := p; ; q = filepath.Dir(q) {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			p = filepath.Join(r, rest)
			break
		}
		if filepath.Dir(q) == q {
			break
		}
		rest = filepath.Join(filepath.Base(q), rest)
	}
	for q := p; ; q = filepath.Dir(q) {
		if qi, err := os.Stat(q); err == nil && os.SameFile(qi, di) {
			return true
		}
		if filepath.Dir(q) == q {
			return false
		}
	}
}
