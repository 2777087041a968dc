package collect

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadProcUsage(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	// Burn some CPU so the reading is not zero.
	deadline := time.Now().Add(50 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	u, err := readProcUsage("/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU <= 0 || u.RSS <= 0 || u.Threads < 1 {
		t.Errorf("own usage: %+v", u)
	}
	// A process name with spaces and parentheses, as /proc writes it.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "42"), 0o755); err != nil {
		t.Fatal(err)
	}
	stat := "42 (my (odd) name) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 100 1000000 300 18446744073709551615\n"
	os.WriteFile(filepath.Join(dir, "42", "stat"), []byte(stat), 0o644)
	os.WriteFile(filepath.Join(dir, "42", "status"), []byte("Name:\tx\nVmRSS:\t  2048 kB\n"), 0o644)
	u, err = readProcUsage(dir, 42)
	if err != nil || u.CPU != 3*time.Second || u.Threads != 7 || u.RSS != 2048<<10 {
		t.Errorf("parsed %+v, %v; want 3s CPU, 7 threads, 2 MiB", u, err)
	}
	if _, err := readProcUsage(dir, 43); err == nil {
		t.Error("a missing process read without error")
	}
	os.WriteFile(filepath.Join(dir, "42", "stat"), []byte("42 (x) Z 1 42 42 0 -1 0 0 0 0 0 250 50 0 0 20 0 7 0 100 0 0 0\n"), 0o644)
	if _, err := readProcUsage(dir, 42); err == nil {
		t.Error("a zombie read as alive")
	}
}
