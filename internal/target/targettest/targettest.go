// Package targettest turns a test binary into a stand-in target process, so
// tests of what starts, polls and stops targets need no other program. A
// test binary calls Serve first thing in its TestMain:
//
//	func TestMain(m *testing.M) {
//		if targettest.Serve() {
//			return
//		}
//		os.Exit(m.Run())
//	}
//
// and a test starts the binary with the argv Argv returns.
package targettest

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/internal/target"
)

// Mode is how the stand-in target behaves.
type Mode string

// The modes.
const (
	// Serving serves, on its address until SIGTERM: /ok (empty 200),
	// /sleep?ms=N, /cpu?rounds=N (N SHA-256 rounds) and schedscope's agent
	// at /debug/schedscope/ with GOMAXPROCS settable.
	Serving Mode = ""
	// Exit prints "listen tcp: address already in use" and exits with status 3.
	Exit Mode = "exit"
	// Mute never listens, for a minute.
	Mute Mode = "mute"
)

// The environment that makes a test binary a target.
const (
	envAddr = "SCHEDSCOPE_TEST_TARGET"
	envMode = "SCHEDSCOPE_TEST_TARGET_MODE"
)

// Argv returns the argv that starts this test binary as a target in mode on
// a free loopback port, and the target's base URL ("http://127.0.0.1:N").
// It sets the environment with t.Setenv, so the test cannot run in parallel.
func Argv(t testing.TB, mode Mode) (argv []string, base string) {
	t.Helper()
	exe, addr := Self(t)
	t.Setenv(envAddr, addr)
	t.Setenv(envMode, string(mode))
	return []string{exe}, "http://" + addr
}

// Self returns this test binary's path and a free loopback address, for a
// test binary that serves as a target of its own making (its TestMain
// decides what to serve from an environment it sets).
func Self(t testing.TB) (exe, addr string) {
	t.Helper()
	addr, err := target.FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	if exe, err = os.Executable(); err != nil {
		t.Fatal(err)
	}
	return exe, addr
}

// Serve runs the target when the binary was started as one (by Argv's
// argv) and returns true when it is done; it returns false at once in a
// normal test run.
func Serve() bool {
	addr := os.Getenv(envAddr)
	if addr == "" {
		return false
	}
	switch Mode(os.Getenv(envMode)) {
	case Exit:
		fmt.Fprintln(os.Stderr, "listen tcp: address already in use")
		os.Exit(3)
	case Mute:
		time.Sleep(time.Minute)
		return true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		time.Sleep(time.Duration(n) * time.Millisecond)
	})
	mux.HandleFunc("/cpu", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("rounds"))
		sum := sha256.Sum256([]byte("x"))
		for i := 0; i < n; i++ {
			sum = sha256.Sum256(sum[:])
		}
		fmt.Fprintf(w, "%x", sum[:4])
	})
	a, err := agent.New(agent.Options{AllowSetGOMAXPROCS: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer a.Close()
	a.Mount(mux, "/debug/schedscope/")
	if err := http.ListenAndServe(addr, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return true
}
