package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// envExec makes the test binary schedscope itself (mainWith, real signal
// handling), with one more command, "hang", standing in for a step that
// ignores its context. Processes it starts (a --cmd target, a sweep's
// fixture) inherit it and are schedscope too.
const envExec = "SCHEDSCOPE_TEST_EXEC"

func TestMain(m *testing.M) {
	if os.Getenv(envExec) == "1" {
		os.Exit(mainWith(append(commands(), hangCommand()), os.Args[1:]))
	}
	os.Exit(m.Run())
}

func hangCommand() command {
	return command{"hang", "test only: ignore the context for a minute", func(context.Context, *stdio, []string) error {
		time.Sleep(time.Minute)
		return nil
	}}
}

// exitBound is how long a command may take to exit after a signal here.
// A command that does not end on its own is ended by the backstop after
// exitGrace, which says so on stderr: the tests fail on that line, so the
// bound only catches a broken backstop, i.e. a command left running what
// it was given (20 s to a minute of load, sleep or pause in these tests;
// one that ran it out would also exit 0, not as signalled). So it sits
// between the two outcomes: 5 s was within reach of a loaded 2-core
// machine's exit (writing and deriving the run directory).
const exitBound = 15 * time.Second

// cli is the test binary running as schedscope in a process of its own.
type cli struct {
	cmd    *exec.Cmd
	stdout syncBuffer
	stderr syncBuffer
	done   chan struct{}
	ended  time.Time
}

func startCLI(t *testing.T, stdin io.Reader, args ...string) *cli {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), envExec+"=1")
	cmd.Stdin = stdin
	return startProcess(t, cmd)
}

// startProcess starts cmd with its output kept, waits for it in a
// goroutine of its own and kills it when the test ends.
func startProcess(t *testing.T, cmd *exec.Cmd) *cli {
	t.Helper()
	c := &cli{cmd: cmd, done: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = c.cmd.Wait()
		c.ended = time.Now()
		close(c.done)
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.done
	})
	return c
}

// waitFor waits until stdout or stderr holds re, or the process has
// exited, for up to 60 s.
func (c *cli) waitFor(t *testing.T, re string) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(60 * time.Second)
	for !rx.MatchString(c.stdout.String()) && !rx.MatchString(c.stderr.String()) {
		select {
		case <-c.done:
			t.Fatalf("exited before %q appeared: stdout %q, stderr %q", re, c.stdout.String(), c.stderr.String())
		case <-deadline:
			t.Fatalf("no %q within 60 s: stdout %q, stderr %q", re, c.stdout.String(), c.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// signalAndWait sends sig and waits for the exit, failing past exitBound or
// when the backstop had to end the command. It returns the exit code.
func (c *cli) signalAndWait(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	sent := time.Now()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	return c.wait(t, sent, sig.String())
}

func (c *cli) wait(t *testing.T, since time.Time, what string) int {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(exitBound):
		t.Fatalf("still running %v after %s: stdout %q, stderr %q", exitBound, what, c.stdout.String(), c.stderr.String())
	}
	took := c.ended.Sub(since)
	t.Logf("exit %d %v after %s", c.cmd.ProcessState.ExitCode(), took.Round(time.Millisecond), what)
	if strings.Contains(c.stderr.String(), "still finishing") {
		t.Errorf("the backstop ended the command %v after %s: it did not end on its own: %q", took, what, c.stderr.String())
	}
	return c.cmd.ProcessState.ExitCode()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Every command ends soon after SIGINT or SIGTERM, with what it measured
// written, and never by the backstop: the reproductions of the hardening
// issue (analyze on a FIFO or a silent pipe hung through both signals).
func TestSignalEndsEveryCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()

	t.Run("analyze refuses a FIFO", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "trace.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		c := startCLI(t, nil, "analyze", fifo)
		code := c.wait(t, time.Now(), "start")
		if code != 1 || !strings.Contains(c.stderr.String(), "named pipe (FIFO), not a regular file") {
			t.Errorf("exit %d, stderr %q", code, c.stderr.String())
		}
	})
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("analyze - on a silent pipe, "+sig.String(), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close() // open, never written: the read blocks
			c := startCLI(t, r, "analyze", "-")
			r.Close()
			time.Sleep(300 * time.Millisecond)
			if code := c.signalAndWait(t, sig); code != 1 || !strings.Contains(c.stderr.String(), "before the trace's header: context canceled") {
				t.Errorf("exit %d, stderr %q", code, c.stderr.String())
			}
		})
	}
	t.Run("load", func(t *testing.T) {
		c := startCLI(t, nil, "load", "--rate", "50", "--duration", "60s", srv.URL)
		time.Sleep(time.Second) // load prints nothing until its end
		if code := c.signalAndWait(t, syscall.SIGINT); code != 130 || !strings.Contains(c.stdout.String(), "INTERRUPTED") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, c.stdout.String(), c.stderr.String())
		}
	})
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("fixture, "+sig.String(), func(t *testing.T) {
			c := startCLI(t, nil, "fixture", "--addr", "127.0.0.1:0")
			c.waitFor(t, `listening on`)
			if code := c.signalAndWait(t, sig); code != 0 {
				t.Errorf("exit %d, stderr %q", code, c.stderr.String())
			}
		})
	}
	// SIGHUP (a closed terminal or SSH session) interrupts as SIGINT does:
	// it used to kill the process (exit 129) with the directory still
	// "running" and the run's results unwritten.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP} {
		t.Run("run --cmd, "+sig.String(), func(t *testing.T) {
			addr := freeAddr(t)
			out := filepath.Join(t.TempDir(), "run")
			exe, _ := os.Executable()
			c := startCLI(t, nil, "run", "--no-tui", "--rate", "50", "--duration", "60s", "--poll", "250ms",
				"--cmd", exe+" fixture --addr "+addr, "--out", out, "http://"+addr+"/sleep?ms=5")
			c.waitFor(t, `\n +[1-9][0-9.]*s \[`) // a progress line past the first second
			if code := c.signalAndWait(t, sig); code != 130 || !strings.Contains(c.stderr.String(), "holds what was measured") {
				t.Errorf("exit %d, stderr %q", code, c.stderr.String())
			}
			interruptedRunDir(t, out, "interrupted ("+signalName(sig)+")", rundir.ResultsFile, rundir.MetricsFile, rundir.HLogFile)
			if answers(addr) {
				t.Errorf("the target at %s still answers after the run ended", addr)
			}
		})
	}
	t.Run("run --repeat, SIGHUP", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "repeat")
		c := startCLI(t, nil, "run", "--repeat", "2", "--rate", "50", "--duration", "60s", "--poll", "250ms", "--out", out, srv.URL)
		c.waitFor(t, `run 1/2 +[1-9][0-9.]*s \[`)
		if code := c.signalAndWait(t, syscall.SIGHUP); code != 130 || !strings.Contains(c.stderr.String(), "no further run started") {
			t.Errorf("exit %d, stderr %q", code, c.stderr.String())
		}
		if rep, err := rundir.ReadRepeat(out); err != nil || rep.Status != rundir.StatusInterrupted || len(rep.Runs) != 1 || !strings.Contains(rep.Reason, "interrupted (SIGHUP)") {
			t.Errorf("repeat.json: %v, %+v", err, rep)
		}
		interruptedRunDir(t, filepath.Join(out, rundir.RepeatRunDir(1)), "interrupted (SIGHUP)", rundir.ResultsFile, rundir.SummaryFile, rundir.HLogFile)
	})
	t.Run("load --out, SIGHUP", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "load")
		c := startCLI(t, nil, "load", "--rate", "50", "--duration", "60s", "--out", out, srv.URL)
		time.Sleep(time.Second)
		if code := c.signalAndWait(t, syscall.SIGHUP); code != 130 || !strings.Contains(c.stderr.String(), "holds what was measured") {
			t.Errorf("exit %d, stderr %q", code, c.stderr.String())
		}
		interruptedRunDir(t, out, "interrupted (SIGHUP)", rundir.ResultsFile, rundir.HLogFile)
	})
	t.Run("demo", func(t *testing.T) {
		if testing.Short() {
			t.Skip("runs a demo")
		}
		c := startCLI(t, nil, "demo", "--no-tui", "--workers", "10", "--sleep", "50ms", "--rates", "100,300",
			"--duration", "20s", "--pause", "200ms", "--warmup", "300ms", "--dir", t.TempDir())
		c.waitFor(t, `step 1/2`)
		if code := c.signalAndWait(t, syscall.SIGINT); code != 130 {
			t.Errorf("exit %d, stderr %q", code, c.stderr.String())
		}
	})
	t.Run("sweep", func(t *testing.T) {
		if testing.Short() {
			t.Skip("runs a sweep")
		}
		out := filepath.Join(t.TempDir(), "sweep")
		c := startCLI(t, nil, "sweep", "--fixture", "sleep?ms=5 --model pool", "--gomaxprocs", "1", "--rates", "50,100",
			"--iterations", "1", "--warmup", "500ms", "--duration", "20s", "--pause", "200ms", "--no-pin", "--no-tui", "--out", out)
		c.waitFor(t, `started pid`)
		time.Sleep(2 * time.Second)
		if code := c.signalAndWait(t, syscall.SIGINT); code != 1 || !strings.Contains(c.stderr.String(), "--resume") {
			t.Errorf("exit %d, stderr %q", code, c.stderr.String())
		}
	})
	t.Run("a second signal exits at once", func(t *testing.T) {
		c := startCLI(t, nil, "hang")
		time.Sleep(300 * time.Millisecond)
		if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		if code := c.signalAndWait(t, syscall.SIGTERM); code != 130 || !strings.Contains(c.stderr.String(), "second SIGTERM: exiting at once") {
			t.Errorf("exit %d, stderr %q", code, c.stderr.String())
		}
	})
	t.Run("the backstop ends a command that ignores the signal", func(t *testing.T) {
		c := startCLI(t, nil, "hang")
		time.Sleep(300 * time.Millisecond)
		sent := time.Now()
		if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.done:
		case <-time.After(exitGrace + exitBound):
			t.Fatalf("still running %v after SIGINT", exitGrace+exitBound)
		}
		took := c.ended.Sub(sent)
		if code := c.cmd.ProcessState.ExitCode(); code != 130 || took < exitGrace || !strings.Contains(c.stderr.String(), "still finishing 2s after SIGINT") {
			t.Errorf("exit %d after %v, stderr %q", code, took, c.stderr.String())
		}
	})
}

// interruptedRunDir checks that dir's manifest says interrupted, with
// reason, and that each of files is there and not empty.
func interruptedRunDir(t *testing.T, dir, reason string, files ...string) {
	t.Helper()
	var m rundir.Manifest
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.ManifestFile), &m); err != nil || m.Status != rundir.StatusInterrupted || m.Reason != reason {
		t.Errorf("%s: manifest: %v, status %q, reason %q; want interrupted, %q", dir, err, m.Status, m.Reason, reason)
	}
	for _, name := range files {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %s: %v", dir, name, err)
		}
	}
}

// A run or sweep killed with SIGKILL, which gives it no chance to stop its
// target, still takes the target with it: a --cmd target with or without
// shell syntax, and a sweep's fixture.
func TestKilledRunTakesItsTarget(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cmd  func(addr string) string
	}{
		{"plain command", func(addr string) string { return exe + " fixture --addr " + addr }},
		{"shell syntax", func(addr string) string { return "cd / && GOGC=100 " + exe + " fixture --addr " + addr }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := freeAddr(t)
			c := startCLI(t, nil, "run", "--no-tui", "--rate", "20", "--duration", "60s", "--cmd", tc.cmd(addr),
				"--out", filepath.Join(t.TempDir(), "run"), "http://"+addr+"/sleep?ms=1")
			c.waitFor(t, `\n +[0-9.]+s \[`)
			if !answers(addr) {
				t.Fatalf("positive control: the target at %s does not answer", addr)
			}
			killAndWatch(t, c, func() bool { return answers(addr) }, "the target at "+addr+" answers")
		})
	}
	// nohup hands schedscope, and through it the target's guard shell,
	// SIGHUP ignored, and a shell cannot trap a signal ignored when it
	// started: the guard must hear of schedscope's death another way.
	t.Run("under nohup", func(t *testing.T) {
		if _, err := exec.LookPath("nohup"); err != nil {
			t.Skip(err)
		}
		addr := freeAddr(t)
		cmd := exec.Command("nohup", exe, "run", "--no-tui", "--rate", "20", "--duration", "60s", "--cmd", exe+" fixture --addr "+addr,
			"--out", filepath.Join(t.TempDir(), "run"), "http://"+addr+"/sleep?ms=1")
		cmd.Env = append(os.Environ(), envExec+"=1")
		c := startProcess(t, cmd)
		c.waitFor(t, `\n +[0-9.]+s \[`)
		if !answers(addr) {
			t.Fatalf("positive control: the target at %s does not answer", addr)
		}
		killAndWatch(t, c, func() bool { return answers(addr) }, "the target at "+addr+" answers")
	})
	t.Run("sweep fixture", func(t *testing.T) {
		c := startCLI(t, nil, "sweep", "--fixture", "sleep?ms=1 --model pool", "--gomaxprocs", "1", "--rates", "20",
			"--iterations", "1", "--warmup", "30s", "--duration", "1s", "--no-pin", "--no-tui", "--no-report",
			"--out", filepath.Join(t.TempDir(), "sweep"))
		c.waitFor(t, `warm-up|warmup`)
		m := regexp.MustCompile(`started pid (\d+)`).FindStringSubmatch(c.stderr.String())
		if m == nil {
			t.Fatalf("no pid in %q", c.stderr.String())
		}
		pid, _ := strconv.Atoi(m[1])
		if !running(pid) {
			t.Fatalf("positive control: the sweep's target %d is not running", pid)
		}
		killAndWatch(t, c, func() bool { return running(pid) }, fmt.Sprintf("the sweep's target pid %d runs", pid))
	})
}

// killAndWatch sends c SIGKILL and waits until alive() turns false.
func killAndWatch(t *testing.T, c *cli, alive func() bool, what string) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.done
	killed := time.Now()
	for alive() {
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("%s 10 s after schedscope was killed", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("target gone %v after SIGKILL", time.Since(killed).Round(time.Millisecond))
}

func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := target.FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// answers reports whether something accepts connections at addr.
func answers(addr string) bool {
	client := &http.Client{Timeout: 500 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/sleep?ms=1")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
