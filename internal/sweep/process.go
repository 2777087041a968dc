package sweep

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Target describes how to start one target process.
type Target struct {
	// Command is a shell command line, run with `sh -c`. Used when Argv is empty.
	Command string
	// Argv, when set, is run directly (argv[0] is the program).
	Argv []string
	// GOMAXPROCS is set in the process's environment; 0 leaves the
	// inherited environment alone.
	GOMAXPROCS int
	// CPUs, when non-empty, pins the process with `taskset -c CPUs`
	// (a list such as "0-3").
	CPUs string
	// Log receives the process's stdout and stderr; nil discards them.
	Log io.Writer
}

// Process is a running target started by Start. Its methods are safe for
// concurrent use.
type Process struct {
	cmd  *exec.Cmd
	pgid int
	tail *tailBuffer
	done chan struct{} // closed when the process has exited
	err  error         // the exit status, valid after done is closed
}

// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// Start starts t in its own process group, with GOMAXPROCS in its environment
// and pinned with taskset when t.CPUs is set. The process is not tied to ctx:
// the caller must call Stop. An error means no process is running.
func Start(t Target) (*Process, error) {
	var argv []string
	switch {
	case len(t.Argv) > 0:
		argv = append(argv, t.Argv...)
	case strings.TrimSpace(t.Command) != "":
		argv = []string{"sh", "-c", t.Command}
	default:
		return nil, errors.New("target: no command")
	}
	if t.CPUs != "" {
		argv = append([]string{"taskset", "-c", t.CPUs}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	if t.GOMAXPROCS > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(t.GOMAXPROCS))
	}
	tail := &tailBuffer{max: 4096}
	var out io.Writer = tail
	if t.Log != nil {
		out = io.MultiWriter(tail, t.Log)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("target %q: %w", strings.Join(argv, " "), err)
	}
	p := &Process{cmd: cmd, pgid: cmd.Process.Pid, tail: tail, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id of the started process (the leader of its group).
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the process has exited, and its exit error.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// exitError describes how the process ended, with its last output line.
func (p *Process) exitError() error {
	status := "exited"
	if p.err != nil {
		status = "exited (" + p.err.Error() + ")"
	}
	if last := p.tail.lastLine(); last != "" {
		return fmt.Errorf("target %s before answering: %s", status, last)
	}
	return fmt.Errorf("target %s before answering", status)
}

// Stop sends SIGTERM to the process group, waits up to 5 s, then sends
// SIGKILL, and waits for the process to be reaped. It returns the process's
// exit error only when it had to be killed; a process that exits on SIGTERM
// with any status is a clean stop.
func (p *Process) Stop() error {
	if exited, _ := p.Exited(); exited {
		return nil
	}
	_ = syscall.Kill(-p.pgid, syscall.SIGTERM)
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
	}
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("target pid %d ignored SIGTERM for %v and was killed", p.PID(), stopGrace)
}

// ErrNotFound is wrapped by WaitReady when the URL answers 404.
var ErrNotFound = errors.New("404 Not Found")

// WaitReady polls GET url until it answers 2xx, and returns nil then. It
// returns an error at once when the process exits or the URL answers a 4xx
// status (a wrong URL), and when the deadline passes without a 2xx answer.
// p may be nil for a target this package did not start.
func WaitReady(ctx context.Context, p *Process, url string, deadline time.Duration) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if p != nil {
			if exited, _ := p.Exited(); exited {
				return p.exitError()
			}
		}
		status, err := probe(ctx, client, url)
		switch {
		case err == nil && status/100 == 2:
			return nil
		case err == nil && status == http.StatusNotFound:
			return fmt.Errorf("GET %s: %w: check --url (or the scenario's path)", url, ErrNotFound)
		case err == nil && status/100 == 4:
			return fmt.Errorf("GET %s answered %d %s", url, status, http.StatusText(status))
		case err == nil:
			last = fmt.Errorf("answered %d %s", status, http.StatusText(status))
		case ctx.Err() == nil || last == nil:
			last = err // not the probe cut short by the deadline
		}
		select {
		case <-ctx.Done():
			if p != nil {
				if exited, _ := p.Exited(); exited {
					return p.exitError()
				}
			}
			if err := parent.Err(); err != nil {
				return err
			}
			return fmt.Errorf("GET %s did not answer 2xx within %v (last: %v)", url, deadline, last)
		case <-tick.C:
		}
	}
}

func probe(ctx context.Context, client *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// Usage is the resource use of a process group at one instant, read from
// /proc (Linux only).
type Usage struct {
	CPU     time.Duration // user + system time of every live process in the group
	RSS     int64         // resident set, bytes, summed over the group
	PeakRSS int64         // VmHWM, bytes, summed over the group
	Threads int           // OS threads, summed over the group
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat. It
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// Usage reads the process group's CPU time, RSS and threads from /proc. It
// returns an error when /proc is unreadable (not Linux) or the group is gone.
func (p *Process) Usage() (Usage, error) {
	return groupUsage("/proc", p.pgid)
}

func groupUsage(proc string, pgid int) (Usage, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return Usage{}, fmt.Errorf("usage of process group %d: %w", pgid, err)
	}
	var u Usage
	found := false
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(filepath.Join(proc, e.Name(), "stat"))
		if err != nil || st.pgrp != pgid {
			continue
		}
		found = true
		u.CPU += time.Duration(st.utime+st.stime) * time.Second / clockTicks
		u.Threads += st.threads
		rss, hwm := readStatusMemory(filepath.Join(proc, strconv.Itoa(pid), "status"))
		u.RSS += rss
		u.PeakRSS += hwm
	}
	if !found {
		return Usage{}, fmt.Errorf("usage of process group %d: no live process", pgid)
	}
	return u, nil
}

type procStat struct {
	pgrp         int
	utime, stime int64
	threads      int
}

// readStat parses /proc/PID/stat. The command name (field 2) may contain
// spaces and parentheses, so fields are counted after its last ')'.
func readStat(path string) (procStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 18 {
		return procStat{}, fmt.Errorf("stat: %d fields", len(f)+2)
	}
	var s procStat
	var errs [4]error
	s.pgrp, errs[0] = strconv.Atoi(f[5-3])
	s.utime, errs[1] = strconv.ParseInt(f[14-3], 10, 64)
	s.stime, errs[2] = strconv.ParseInt(f[15-3], 10, 64)
	s.threads, errs[3] = strconv.Atoi(f[20-3])
	if err := errors.Join(errs[:]...); err != nil {
		return procStat{}, fmt.Errorf("stat: %w", err)
	}
	return s, nil
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

func kB(line string) int64 {
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n * 1024
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// MachineCPU is the machine's CPU time since boot, from /proc/stat's first
// line, in clock ticks.
type MachineCPU struct {
	Busy, Idle int64 // busy: user, nice, system, irq, softirq, steal; idle: idle, iowait
}

// ReadMachineCPU reads /proc/stat (Linux only).
func ReadMachineCPU() (MachineCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return MachineCPU{}, fmt.Errorf("machine CPU: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return MachineCPU{}, fmt.Errorf("machine CPU: unexpected /proc/stat line %q", line)
	}
	var v [9]int64
	for i := 1; i < len(f) && i < 9; i++ {
		v[i], _ = strconv.ParseInt(f[i], 10, 64)
	}
	// user nice system idle iowait irq softirq steal
	return MachineCPU{Busy: v[1] + v[2] + v[3] + v[6] + v[7] + v[8], Idle: v[4] + v[5]}, nil
}

// BusyShare is the share of the machine's CPU time that was busy between
// two readings, 0 when nothing elapsed.
func (m MachineCPU) BusyShare(since MachineCPU) float64 {
	busy, idle := m.Busy-since.Busy, m.Idle-since.Idle
	if busy+idle <= 0 {
		return 0
	}
	return float64(busy) / float64(busy+idle)
}
