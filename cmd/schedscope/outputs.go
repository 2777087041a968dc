package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// output is a file a command writes, named by its flag.
type output struct {
	flag, path string
}

// outputFile is an output opened before the command runs, so that a path
// that cannot be written fails at once, not after the load.
type outputFile struct {
	*os.File
	flag    string
	created bool // by this command: discard removes it
}

// openOutputs checks and opens outs before anything runs: no two may name
// the same file, none may be a directory, and an existing regular file is
// refused unless force (a device such as /dev/null is written as it is).
// Empty paths are skipped (nil in the result), as is "-" (standard output).
// Every problem is a usage error naming the flag.
func openOutputs(force bool, outs ...output) ([]*outputFile, error) {
	seen := map[string]string{} // absolute path -> flag
	for _, o := range outs {
		if o.path == "" || o.path == "-" {
			continue
		}
		abs, err := resolvePath(o.path)
		if err != nil {
			return nil, usageErr("%s %s: %v", o.flag, o.path, err)
		}
		for p, other := range seen {
			if p == abs || sameFile(p, abs) {
				return nil, usageErr("%s and %s name the same file %s: give each its own", other, o.flag, o.path)
			}
		}
		seen[abs] = o.flag
	}
	files := make([]*outputFile, len(outs))
	for i, o := range outs {
		if o.path == "" || o.path == "-" {
			continue
		}
		f, err := openOutput(o, force)
		if err != nil {
			for _, g := range files[:i] {
				g.discard()
			}
			return nil, err
		}
		files[i] = f
	}
	return files, nil
}

// openOutput opens one output for writing.
func openOutput(o output, force bool) (*outputFile, error) {
	fi, err := os.Stat(o.path)
	switch {
	case err == nil && fi.IsDir():
		return nil, usageErr("%s %s: is a directory: name a file", o.flag, o.path)
	case err == nil && !fi.Mode().IsRegular():
		f, err := os.OpenFile(o.path, os.O_WRONLY, 0)
		if err != nil {
			return nil, usageErr("%s: %v", o.flag, err)
		}
		return &outputFile{File: f, flag: o.flag}, nil
	case err == nil && !force:
		return nil, usageErr("%s %s: the file exists: remove it, or add --force to overwrite it", o.flag, o.path)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(o.path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, usageErr("%s %s: the file exists: remove it, or add --force to overwrite it", o.flag, o.path)
	}
	if err != nil {
		return nil, usageErr("%s: %v", o.flag, err)
	}
	return &outputFile{File: f, flag: o.flag, created: true}, nil
}

// close closes f; a nil f does nothing.
func (f *outputFile) close() {
	if f != nil {
		f.Close()
	}
}

// discard closes f and removes it when this command created it; a nil f
// does nothing.
func (f *outputFile) discard() {
	if f == nil {
		return
	}
	f.Close()
	if f.created {
		os.Remove(f.Name())
	}
}

// resolvePath is path made absolute with its symbolic links followed,
// also a last one that points to a file not created yet.
func resolvePath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for range 40 { // the kernel's own limit on links in a path
		fi, err := os.Lstat(abs)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		to, err := os.Readlink(abs)
		if err != nil {
			break
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(abs), to)
		}
		abs = to
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	return abs, nil
}

// sameFile reports whether a and b are one existing file (a link, a
// hard link).
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// inside reports whether path is dir or lies under it.
func inside(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
