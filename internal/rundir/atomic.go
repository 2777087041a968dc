package rundir

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes the file at path whole: write fills a temporary
// file in the same directory, which is synced and then renamed over path,
// so a reader sees the old file or the new one, never half of one, and a
// write that fails (a full disk) leaves no file at path and no temporary
// one beside it. The file is made readable by all (0644): a run directory
// is for reading. The error names the path. Every writer of a run, sweep
// or repeat directory's files, and of the reports written beside them,
// goes through it.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	bw := bufio.NewWriter(tmp)
	err = tmp.Chmod(0o644) // CreateTemp makes it private
	if err == nil {
		err = write(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil && cerr != nil && !errors.Is(cerr, os.ErrClosed) {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
