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

// Read reads the regular file at path whole (Open).
func Read(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
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
