package target

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadUsage(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	// Burn some CPU so the reading is not zero.
	deadline := time.Now().Add(50 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	u, err := ReadUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU <= 0 || u.RSS <= 0 || u.PeakRSS < u.RSS || u.Threads < 1 {
		t.Errorf("own usage: %+v", u)
	}
	// A process name with spaces and parentheses, as /proc writes it.
	dir := t.TempDir()
	writeProc(t, dir, 42, "42 (my (odd) name) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 100 1000000 300 18446744073709551615\n", 2048)
	u, err = readUsage(dir, 42)
	if err != nil || u.CPU != 3*time.Second || u.Threads != 7 || u.RSS != 2048<<10 || u.PeakRSS != 4096<<10 {
		t.Errorf("parsed %+v, %v; want 3s CPU, 7 threads, 2 MiB, peak 4 MiB", u, err)
	}
	if _, err := readUsage(dir, 43); err == nil {
		t.Error("a missing process read without error")
	}
	writeProc(t, dir, 42, "42 (x) Z 1 42 42 0 -1 0 0 0 0 0 250 50 0 0 20 0 7 0 100 0 0 0\n", 0)
	if _, err := readUsage(dir, 42); err == nil || !strings.Contains(err.Error(), "exited (state Z)") {
		t.Errorf("a zombie: err = %v, want exited", err)
	}
}

func TestGroupUsage(t *testing.T) {
	dir := t.TempDir()
	// 10 leads group 10 (sh), 11 is its child in the group, 12 is elsewhere.
	writeProc(t, dir, 10, "10 (sh) S 1 10 10 0 -1 0 0 0 0 0 100 0 0 0 20 0 1 0 100 0 0 0\n", 1024)
	writeProc(t, dir, 11, "11 (srv) S 10 10 10 0 -1 0 0 0 0 0 200 100 0 0 20 0 9 0 100 0 0 0\n", 4096)
	writeProc(t, dir, 12, "12 (other) S 1 12 12 0 -1 0 0 0 0 0 900 0 0 0 20 0 3 0 100 0 0 0\n", 8192)
	os.MkdirAll(filepath.Join(dir, "self"), 0o755) // not a process number: skipped
	u, err := groupUsage(dir, 10, 0)
	if err != nil || u.CPU != 4*time.Second || u.Threads != 10 || u.RSS != 5<<20 || u.PeakRSS != 10<<20 {
		t.Errorf("group 10: %+v, %v; want 4s CPU, 10 threads, 5 MiB, peak 10 MiB", u, err)
	}
	if _, err := groupUsage(dir, 99, 0); err == nil {
		t.Error("an empty group read without error")
	}
}

// writeProc writes a fake /proc/PID with stat and a status whose VmRSS is
// rssKB and VmHWM twice that.
func writeProc(t *testing.T, root string, pid int, stat string, rssKB int) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	status := fmt.Sprintf("Name:\tx\nVmHWM:\t  %d kB\nVmRSS:\t  %d kB\n", 2*rssKB, rssKB)
	for name, content := range map[string]string{"stat": stat, "status": status} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		line string
		want procStat
		err  string
	}{
		{"1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 7 0 100 1000 200 18446744073709551615",
			procStat{state: "S", pgrp: 1234, utime: 250, stime: 50, threads: 7}, ""},
		{"7 () R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0", procStat{state: "R", pgrp: 7, utime: 1, stime: 2, threads: 1}, ""},
		{"1 (x) S 1 2", procStat{}, "fields"},
		{"1 x S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18", procStat{}, "no command name"},
		{"1 (x) S 1 one 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0", procStat{}, "field 5"},
		{"", procStat{}, "no command name"},
	}
	for _, tt := range tests {
		got, err := parseStat([]byte(tt.line))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseStat(%q): err = %v, want one containing %q", tt.line, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v", tt.line, got, err, tt.want)
		}
	}
}

// statTail is a stat line's fields after the command name.
const statTail = " S 1 77 77 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 7 0 100 1000 200 18446744073709551615\n"

// FuzzParseStat: whatever the file holds, parseStat returns without
// panicking, and an error is one line.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1234 (my (odd) prog)" + statTail))
	f.Add([]byte("1 (x) S 1 2"))
	f.Add([]byte(") ) )"))
	f.Add([]byte("1 (a\nb)" + statTail))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := parseStat(b)
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("parseStat(%q): error spans lines: %q", b, err)
		}
	})
}

// FuzzParseStatCommandName: the kernel writes the command name as it is
// (up to 15 bytes, any of them but NUL), so it may hold spaces, parentheses
// and newlines; the fields after it must parse the same whatever it is.
func FuzzParseStatCommandName(f *testing.F) {
	for _, name := range []string{"prog", "my (odd) prog", ") S 1 2 3", "((", "a b\tc\nd", ""} {
		f.Add(name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if strings.ContainsRune(name, 0) {
			return
		}
		got, err := parseStat([]byte("77 (" + name + ")" + statTail))
		want := procStat{state: "S", pgrp: 77, utime: 250, stime: 50, threads: 7}
		if err != nil || got != want {
			t.Errorf("command name %q: parsed %+v, %v; want %+v", name, got, err, want)
		}
	})
}
