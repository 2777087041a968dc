package regular_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
)

// A reader refuses a named pipe instead of blocking on it.
func TestReadersRefuseFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, rundir.ManifestFile), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, rundir.MetricsFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := rundir.ReadRun(dir); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("ReadRun with a FIFO manifest: %v", err)
	}
	if _, _, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile)); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("ReadMetrics on a FIFO: %v", err)
	}
}
