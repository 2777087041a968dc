package regular_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/schedscope/schedscope/internal/regular"
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

// ReadAtMost refuses a file over its bound before reading it, and one whose
// size says nothing of its length (a /proc file says 0) once it has read
// past the bound.
func TestReadAtMost(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := regular.ReadAtMost(small, 2); err != nil || string(b) != "{}" {
		t.Errorf("within the bound: %q, %v", b, err)
	}
	if _, err := regular.ReadAtMost(small, 1); err == nil || !strings.Contains(err.Error(), small+": 2 B is over the 1 B bound for this file") {
		t.Errorf("over the bound: %v", err)
	}
	if _, err := regular.ReadAtMost("/proc/self/maps", 16); err == nil || !strings.Contains(err.Error(), "grew over the 16 B bound") {
		t.Errorf("a file longer than its size: %v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{512: "512 B", 64 << 10: "64 KiB", 16 << 20: "16 MiB", 1 << 30: "1 GiB", 1536 << 20: "1.5 GiB", 64<<20 + 1: "64.0 MiB"} {
		if got := regular.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
