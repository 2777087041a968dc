package collect

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ProcUsage is a local process's resource use at one instant, from /proc.
type ProcUsage struct {
	CPU     time.Duration // user + system time since the process started
	RSS     int64         // resident set, bytes
	Threads int           // OS threads
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat; it
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// readProcUsage reads /proc/PID/stat and /proc/PID/status. It fails when
// the process is gone or /proc is not there (not Linux).
func readProcUsage(proc string, pid int) (ProcUsage, error) {
	dir := filepath.Join(proc, strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return ProcUsage{}, fmt.Errorf("process %d: %w", pid, err)
	}
	// The command name is in parentheses and may hold spaces: parse after
	// the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ProcUsage{}, fmt.Errorf("process %d: malformed %s/stat", pid, dir)
	}
	f := strings.Fields(string(stat[i+1:]))
	// Fields after ')': state(0) ppid(1) ... utime(11) stime(12) ... num_threads(17) ... rss(21).
	if len(f) < 22 {
		return ProcUsage{}, fmt.Errorf("process %d: short %s/stat", pid, dir)
	}
	if f[0] == "Z" || f[0] == "X" {
		return ProcUsage{}, fmt.Errorf("process %d: exited (state %s)", pid, f[0])
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	threads, err3 := strconv.Atoi(f[17])
	if err1 != nil || err2 != nil || err3 != nil {
		return ProcUsage{}, fmt.Errorf("process %d: unparsable %s/stat", pid, dir)
	}
	u := ProcUsage{CPU: time.Duration(utime+stime) * time.Second / clockTicks, Threads: threads}
	if status, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				u.RSS = kb << 10
			}
		}
	}
	return u, nil
}
