// Package regular opens input files that must be regular files: a named
// pipe, a device or a socket is refused before it is opened, so a reader
// never blocks on a pipe nobody writes to (and Ctrl-C is never stuck behind
// an open). It is a leaf: the public analyze package and the run directory
// readers both use it.
package regular

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Open opens the regular file at path for reading. Anything else (a
// named pipe, a device, a socket, a directory) is refused before it is
// opened, so a reader never blocks on a pipe nobody writes to; the error
// names the path and what it is, and wraps fs.ErrNotExist when it is absent.
func Open(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err // *PathError names the file
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s, not a regular file", path, Describe(fi.Mode()))
	}
	return os.Open(path)
}

// Read reads the regular file at path whole (Open), however large: for a
// file of a size the caller knows; ReadAtMost for one it does not.
func Read(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ReadAtMost reads the regular file at path whole (Open), refusing one
// over limit bytes: its size is checked before anything is read, and it
// is read through an io.LimitReader, so that one growing while read is
// refused too. The error names the path, its size and the bound:
// "results.json: 2.0 GiB is over the 256 MiB bound for this file".
func ReadAtMost(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err // *PathError names the file
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %s is over the %s bound for this file", path, FormatBytes(fi.Size()), FormatBytes(limit))
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: grew over the %s bound for this file while read", path, FormatBytes(limit))
	}
	return b, nil
}

// FormatBytes writes a size in binary units: "512 B", "256 MiB", "2.1 GiB".
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// Describe names a file mode's type for an error: "a named pipe (FIFO)".
func Describe(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "a device"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDir != 0:
		return "a directory"
	}
	return "a special file"
}
