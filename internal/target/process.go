package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/schedscope/schedscope/internal/redact"
)

// Spec describes how to start one target process.
type Spec struct {
	// Command is a shell command line, run with `sh -c` under a guard shell
	// (see Start). Used when Argv is empty.
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
	// guard is the guard shell's pid (Spec.Command), which Usage leaves
	// out; 0 when the target was started directly (Spec.Argv).
	guard int
	tail  *tailBuffer
	done  chan struct{} // closed when the process has exited
	err   error         // the exit status, valid after done is closed
}

// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// guardScript runs the command line "$1" in a child shell and waits for
// it. Start has the kernel send the guard SIGUSR1 when schedscope dies
// (Pdeathsig, Linux), and the guard then kills its whole process group:
// the target and everything it started. A Pdeathsig on the shell alone
// would not do: it covers only the process it is set on, not the shell's
// children (sh -c does not exec its last command in dash). The signal
// interrupts `wait` at once (POSIX), where a foreground child would
// hold the trap until it exited. SIGUSR1, not SIGHUP: a signal ignored
// when a shell starts cannot be trapped (POSIX), and schedscope run under
// nohup hands its children SIGHUP ignored; nothing ignores SIGUSR1, and
// Stop's SIGTERM still reaches the target as itself.
const guardScript = `trap 'kill -KILL 0' USR1; sh -c "$1" & wait $!`

// Start starts s in its own process group, with GOMAXPROCS in its
// environment and pinned with taskset when s.CPUs is set. The process is
// not tied to a context: the caller must call Stop. An error means no
// process is running.
//
// The target dies with schedscope, even when schedscope is killed with
// SIGKILL (Linux): a Spec.Argv target gets SIGKILL from the kernel when
// its parent dies (Pdeathsig; taskset execs it, so it keeps it), and a
// Spec.Command runs under a guard shell that then kills the process group
// (guardScript). Pdeathsig fires when the thread that started the child
// exits (golang/go#27505), so that thread stays locked to a goroutine
// until the process has exited.
func Start(s Spec) (*Process, error) {
	var argv []string
	guarded := false
	switch {
	case len(s.Argv) > 0:
		argv = append(argv, s.Argv...)
	case strings.TrimSpace(s.Command) != "":
		argv = []string{"sh", "-c", guardScript, "sh", s.Command}
		guarded = true
	default:
		return nil, errors.New("target: no command")
	}
	if s.CPUs != "" {
		argv = append([]string{"taskset", "-c", s.CPUs}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	if s.GOMAXPROCS > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(s.GOMAXPROCS))
	}
	tail := &tailBuffer{max: 4096}
	var out io.Writer = tail
	if s.Log != nil {
		out = io.MultiWriter(tail, s.Log)
	}
	cmd.Stdout, cmd.Stderr = out, out
	death := syscall.SIGKILL
	if guarded {
		death = syscall.SIGUSR1 // the guard's trap kills the group
	}
	cmd.SysProcAttr = procAttr(death)
	p := &Process{cmd: cmd, tail: tail, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked before the child is reaped: see Start
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		shown := argv
		if guarded {
			shown = []string{"sh", "-c", s.Command}
		}
		return nil, fmt.Errorf("target %q: %w", strings.Join(redact.Args(shown), " "), err)
	}
	p.pgid = cmd.Process.Pid
	if guarded {
		p.guard = cmd.Process.Pid
	}
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

// Usage reads the process group's CPU time, RSS and threads from /proc,
// leaving out the guard shell. It returns an error when /proc is unreadable
// (not Linux) or the group is gone.
func (p *Process) Usage() (Usage, error) {
	return groupUsage(procRoot, p.pgid, p.guard)
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

// Stop sends SIGTERM to the process group, waits up to 5 s for every
// process in it to exit (the started process is reaped; what it started
// may outlive it), then sends SIGKILL to what is left. It returns an error
// only when something had to be killed; a process that exits on SIGTERM
// with any status is a clean stop.
func (p *Process) Stop() error {
	if exited, _ := p.Exited(); exited && !groupAlive(procRoot, p.pgid) {
		return nil
	}
	_ = syscall.Kill(-p.pgid, syscall.SIGTERM)
	deadline := time.NewTimer(stopGrace)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	done := p.done
	for {
		if exited, _ := p.Exited(); exited && !groupAlive(procRoot, p.pgid) {
			return nil
		}
		select {
		case <-deadline.C:
			_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
			<-p.done
			return fmt.Errorf("target pid %d ignored SIGTERM for %v and was killed", p.PID(), stopGrace)
		case <-done:
			done = nil // reaped; what it started is polled on the ticks
		case <-tick.C:
		}
	}
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

// probe sends one GET and returns the status code.
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
