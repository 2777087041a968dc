package target_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/target"
	"github.com/schedscope/schedscope/internal/target/targettest"
)

// envParent makes the test binary a parent that starts a target, prints
// the target's process group and waits to be killed: "argv" starts this
// binary directly (as sweep's fixture targets are), "command" through a
// shell command line with shell syntax (as --cmd targets are).
const envParent = "SCHEDSCOPE_TEST_PARENT"

// startAndHang is the parent's life; it returns false in a normal test run.
func startAndHang() bool {
	mode := os.Getenv(envParent)
	if mode == "" {
		return false
	}
	os.Unsetenv(envParent) // the target is this binary again: it must serve
	exe, err := os.Executable()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	spec := target.Spec{Argv: []string{exe}}
	if mode == "command" {
		spec = target.Spec{Command: "cd / && '" + exe + "'"}
	}
	p, err := target.Start(spec)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("pgid", p.PID())
	time.Sleep(time.Minute) // until killed
	return true
}

// A target dies with its parent, even one killed with SIGKILL, which has
// no chance to stop it: the target of a direct start, and the real target
// under a shell (the shell's child, which Pdeathsig alone does not cover).
func TestTargetDiesWithItsParent(t *testing.T) {
	for _, mode := range []string{"argv", "command"} {
		t.Run(mode, func(t *testing.T) {
			argv, base := targettest.Argv(t, targettest.Serving)
			parent := exec.Command(argv[0])
			parent.Env = append(os.Environ(), envParent+"="+mode)
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			defer parent.Process.Kill()
			line, err := bufio.NewReader(out).ReadString('\n')
			pgid, perr := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "pgid "))
			if err != nil || perr != nil {
				t.Fatalf("parent said %q (%v)", line, err)
			}
			// Positive control: the target runs and answers.
			if err := target.WaitReady(context.Background(), nil, base+"/ok", 20*time.Second); err != nil {
				t.Fatal(err)
			}
			if err := parent.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = parent.Wait()
			killed := time.Now()
			client := &http.Client{Timeout: 500 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
			for {
				resp, err := client.Get(base + "/ok")
				if err != nil && len(liveGroup(t, pgid)) == 0 {
					break
				}
				if err == nil {
					resp.Body.Close()
				}
				if time.Since(killed) > 10*time.Second {
					t.Fatalf("10 s after its parent's SIGKILL the target still answers (%v) or its group lives: %v", err == nil, liveGroup(t, pgid))
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("target gone %v after its parent's SIGKILL", time.Since(killed).Round(time.Millisecond))
		})
	}
}

// liveGroup lists the processes of group pgid that are not zombies.
func liveGroup(t *testing.T, pgid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited meanwhile
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:])) // f[0] state, f[2] pgrp
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			live = append(live, string(b[:i+1]))
		}
	}
	return live
}

// Stop returns once every process of the target's group has exited, not
// only the shell it started: the next target may take the same address.
func TestStopWaitsForTheGroup(t *testing.T) {
	argv, base := targettest.Argv(t, targettest.Serving)
	p, err := target.Start(target.Spec{Command: "cd / && '" + argv[0] + "'"})
	if err != nil {
		t.Fatal(err)
	}
	if err := target.WaitReady(context.Background(), p, base+"/ok", 20*time.Second); err != nil {
		p.Stop()
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if live := liveGroup(t, p.PID()); len(live) > 0 {
		t.Errorf("after Stop, group %d still runs %v", p.PID(), live)
	}
}
