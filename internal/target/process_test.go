package target_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/schedscope/schedscope/internal/target"
	"github.com/schedscope/schedscope/internal/target/targettest"
)

// The test binary doubles as the target process (see targettest).
func TestMain(m *testing.M) {
	if startAndHang() {
		return
	}
	if targettest.Serve() {
		return
	}
	goleak.VerifyTestMain(m)
}

func TestWaitReadyAndUsage(t *testing.T) {
	argv, base := targettest.Argv(t, targettest.Serving)
	p, err := target.Start(target.Spec{Argv: argv, GOMAXPROCS: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
	}()
	ctx := context.Background()
	if err := target.WaitReady(ctx, p, base+"/ok", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		resp, err := http.Get(base + "/cpu?rounds=20000")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	u, err := p.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.RSS <= 0 || u.PeakRSS < u.RSS || u.Threads < 1 {
		t.Errorf("usage %+v: want RSS > 0, peak >= RSS, threads >= 1", u)
	}
	if u.CPU <= 0 {
		t.Errorf("usage %+v: want some CPU after 400,000 SHA-256 rounds", u)
	}
	if one, err := target.ReadUsage(p.PID()); err != nil || one.CPU <= 0 || one.Threads < 1 {
		t.Errorf("ReadUsage(leader) = %+v, %v; want CPU and threads", one, err)
	}
	err = target.WaitReady(ctx, p, base+"/nothing-here", 5*time.Second)
	if !errors.Is(err, target.ErrNotFound) {
		t.Errorf("404 URL: err = %v, want ErrNotFound", err)
	}
}

func TestWaitReadyFailures(t *testing.T) {
	tests := []struct {
		name     string
		mode     targettest.Mode
		deadline time.Duration
		want     []string
	}{
		{"exits", targettest.Exit, 10 * time.Second, []string{"address already in use", "exit status 3"}},
		{"never answers", targettest.Mute, 2 * time.Second, []string{"did not answer 2xx within 2s", "connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, base := targettest.Argv(t, tt.mode)
			p, err := target.Start(target.Spec{Argv: argv})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			err = target.WaitReady(context.Background(), p, base+"/ok", tt.deadline)
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want one containing %q", err, want)
				}
			}
		})
	}
	t.Run("command not found", func(t *testing.T) {
		p, err := target.Start(target.Spec{Command: "/nonexistent/schedscope-target --x"})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		addr, err := target.FreeLoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		err = target.WaitReady(context.Background(), p, "http://"+addr+"/", 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), "exited (exit status 127) before answering") {
			t.Errorf("err = %v, want exit status 127 from sh", err)
		}
	})
	t.Run("no command", func(t *testing.T) {
		if _, err := target.Start(target.Spec{Command: "  "}); err == nil {
			t.Error("an empty command started")
		}
	})
}
