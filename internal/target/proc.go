package target

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Usage is a process's (or a process group's) resource use at one instant,
// read from /proc (Linux only).
type Usage struct {
	CPU     time.Duration // user + system time since the process started
	RSS     int64         // resident set (VmRSS), bytes
	PeakRSS int64         // peak resident set (VmHWM), bytes
	Threads int           // OS threads
}

// procRoot is where the kernel's process file system is mounted.
const procRoot = "/proc"

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat. It
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// ReadUsage reads the process pid's usage from /proc/PID/stat and
// /proc/PID/status. It fails when the process is gone or a zombie, or /proc
// is not there (not Linux).
func ReadUsage(pid int) (Usage, error) {
	return readUsage(procRoot, pid)
}

func readUsage(proc string, pid int) (Usage, error) {
	dir := filepath.Join(proc, strconv.Itoa(pid))
	st, err := readStat(filepath.Join(dir, "stat"))
	if err != nil {
		return Usage{}, fmt.Errorf("process %d: %w", pid, err)
	}
	if st.state == "Z" || st.state == "X" {
		return Usage{}, fmt.Errorf("process %d: exited (state %s)", pid, st.state)
	}
	u := Usage{CPU: st.cpu(), Threads: st.threads}
	u.RSS, u.PeakRSS = readStatusMemory(filepath.Join(dir, "status"))
	return u, nil
}

// groupUsage sums the usage of every process in the process group pgid (a
// started target and what its shell started) but skip (0: none).
func groupUsage(proc string, pgid, skip int) (Usage, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return Usage{}, fmt.Errorf("usage of process group %d: %w", pgid, err)
	}
	var u Usage
	found := false
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if e.Name() == strconv.Itoa(skip) {
			continue
		}
		dir := filepath.Join(proc, e.Name())
		st, err := readStat(filepath.Join(dir, "stat"))
		if err != nil || st.pgrp != pgid {
			continue
		}
		found = true
		u.CPU += st.cpu()
		u.Threads += st.threads
		rss, hwm := readStatusMemory(filepath.Join(dir, "status"))
		u.RSS += rss
		u.PeakRSS += hwm
	}
	if !found {
		return Usage{}, fmt.Errorf("usage of process group %d: no live process", pgid)
	}
	return u, nil
}

// groupAlive reports whether a process of the process group pgid is still
// running (zombies do not count: they wait only to be reaped). Without a
// readable /proc it asks the kernel, zombies included.
func groupAlive(proc string, pgid int) bool {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		st, err := readStat(filepath.Join(proc, e.Name(), "stat"))
		if err == nil && st.pgrp == pgid && st.state != "Z" && st.state != "X" {
			return true
		}
	}
	return false
}

// procStat is what this package takes from /proc/PID/stat.
type procStat struct {
	state        string // R, S, D, Z, X, ...
	pgrp         int
	utime, stime int64 // clock ticks
	threads      int
}

// cpu is the user + system time.
func (s procStat) cpu() time.Duration {
	return time.Duration(s.utime+s.stime) * time.Second / clockTicks
}

func readStat(path string) (procStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	st, err := parseStat(b)
	if err != nil {
		return procStat{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// parseStat parses the contents of /proc/PID/stat. The command name (field
// 2) is in parentheses and may hold spaces and parentheses itself, so the
// fields are counted after the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("no command name in parentheses")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); field n is f[n-3]. The last one read is
	// num_threads, field 20.
	if len(f) < 20-2 {
		return procStat{}, fmt.Errorf("%d fields, want at least 20", len(f)+2)
	}
	var v [4]int64
	for i, n := range [...]int{5, 14, 15, 20} { // pgrp, utime, stime, num_threads
		var err error
		if v[i], err = strconv.ParseInt(f[n-3], 10, 64); err != nil {
			return procStat{}, fmt.Errorf("field %d: %q is not a number", n, f[n-3])
		}
	}
	return procStat{state: f[0], pgrp: int(v[0]), utime: v[1], stime: v[2], threads: int(v[3])}, nil
}

// readStatusMemory returns VmRSS and VmHWM in bytes from /proc/PID/status,
// zero for what it cannot read.
func readStatusMemory(path string) (rss, hwm int64) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			rss = kB(line)
		case strings.HasPrefix(line, "VmHWM:"):
			hwm = kB(line)
		}
	}
	return rss, hwm
}

// kB reads a status line's "NAME: N kB" as bytes; 0 when it cannot.
func kB(line string) int64 {
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n * 1024
}
