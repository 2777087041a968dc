package main

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/redact"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// writeSecret writes content to a file of the test's and returns its path.
func writeSecret(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSecretFlagsRefused: the flags that took a token on the command line
// are refused with one line naming the new way, exit 2, and the error does
// not repeat the token.
func TestSecretFlagsRefused(t *testing.T) {
	t.Setenv(tokenEnv, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fixture", "--agent-token", "s3cret"}, "schedscope fixture: --agent-token: removed, as a secret on the command line is visible to every user of the host (ps, /proc), to shell history and to /debug/pprof/cmdline; use --agent-token-file PATH or $SCHEDSCOPE_AGENT_TOKEN\n"},
		{[]string{"fixture", "--addr", "127.0.0.1:0", "-agent-token=s3cret"}, "--agent-token: removed"},
		{[]string{"run", "--rate", "10", "--token", "s3cret", "http://127.0.0.1:1/"}, "--token: removed, as a secret on the command line is visible to every user of the host (ps, /proc), to shell history and to /debug/pprof/cmdline; use --token-file PATH or $SCHEDSCOPE_AGENT_TOKEN"},
		{[]string{"run", "--rate", "10", "http://127.0.0.1:1/", "--token=s3cret"}, "--token: removed"},
		{[]string{"sweep", "--fixture", "sleep", "--gomaxprocs", "1", "--rates", "10", "--agent-token", "s3cret"}, "--agent-token: removed"},
		{[]string{"sweep", "--fixture", "sleep --agent-token s3cret", "--gomaxprocs", "1", "--rates", "10"}, "--fixture: --agent-token: removed"},
	} {
		code, out, errOut := runCLI(t, context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %q", tc.args, code, errOut, tc.want)
		}
		if strings.Contains(out+errOut, "s3cret") {
			t.Errorf("%v: the refusal repeats the token: %q", tc.args, out+errOut)
		}
	}
}

// TestTokenFileErrors: a token file that cannot serve is a one-line usage
// error that never quotes the file's content.
func TestTokenFileErrors(t *testing.T) {
	t.Setenv(tokenEnv, "")
	for _, tc := range []struct {
		content string // "" with missing: no file
		missing bool
		want    string
	}{
		{missing: true, want: "no such file"},
		{content: "\n", want: "empty"},
		{content: "s3cret\nsecond-line\n", want: "white space"},
	} {
		path := filepath.Join(t.TempDir(), "absent")
		if !tc.missing {
			path = writeSecret(t, "token", tc.content)
		}
		for _, args := range [][]string{
			{"fixture", "--addr", "127.0.0.1:0", "--agent-token-file", path},
			{"run", "--rate", "10", "--token-file", path, "http://127.0.0.1:1/"},
			{"sweep", "--fixture", "sleep", "--gomaxprocs", "1", "--rates", "10", "--agent-token-file", path},
		} {
			code, _, errOut := runCLI(t, context.Background(), args...)
			if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "s3cret") {
				t.Errorf("%v with %q: exit %d, stderr %q; want exit 2 and one line mentioning %q", args, tc.content, code, errOut, tc.want)
			}
		}
	}
}

// TestHelpSaysWhereTokensComeFrom: -h names the token file flag and the
// environment variable, and no flag that takes a token itself.
func TestHelpSaysWhereTokensComeFrom(t *testing.T) {
	for cmd, flag := range map[string]string{"fixture": "-agent-token-file", "run": "-token-file", "sweep": "-agent-token-file"} {
		code, out, _ := runCLI(t, context.Background(), cmd, "-h")
		if code != 0 || !strings.Contains(out, flag) || !strings.Contains(out, "$"+tokenEnv) || !strings.Contains(out, "never given on the command line") {
			t.Errorf("%s -h: exit %d, want %s and $%s in:\n%s", cmd, code, flag, tokenEnv, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && (f[0] == "-token" || f[0] == "-agent-token") {
				t.Errorf("%s -h still lists %s", cmd, f[0])
			}
		}
	}
	code, out, _ := runCLI(t, context.Background(), "load", "-h")
	if code != 0 || !strings.Contains(out, "@FILE") {
		t.Errorf("load -h: exit %d, want -H @FILE in:\n%s", code, out)
	}
}

// startFixture runs `schedscope fixture ARGS --addr ADDR` in-process until
// the test ends and returns its base URL once it answers.
func startFixture(t *testing.T, args ...string) string {
	t.Helper()
	addr, err := target.FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var code int
	var errOut string
	go func() {
		defer close(done)
		code, _, errOut = runCLI(t, ctx, append(append([]string{"fixture"}, args...), "--addr", addr)...)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if code != 0 {
			t.Errorf("fixture %v: exit %d, %s", args, code, errOut)
		}
	})
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-done:
			t.Fatalf("fixture %v exited: %d %s", args, code, errOut)
		default:
		}
		if resp, err := http.Get(base + "/stats"); err == nil {
			resp.Body.Close()
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("fixture %v: not answering after 30 s", args)
		}
	}
}

// get answers path's status and body, with token as a bearer token when set.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestFixtureTokenGuardsEveryCapturePath: with a token (from a file or the
// environment), every /debug/pprof/ and /debug/schedscope/ path of the
// fixture answers 401 without it and 200 with it, with the agent mounted
// or not; the scenarios need no token.
func TestFixtureTokenGuardsEveryCapturePath(t *testing.T) {
	t.Setenv(tokenEnv, "")
	const token = "fixture-t0ken"
	// The capture paths: all of /debug/pprof/ and the agent's.
	captureURLs := []string{
		"/debug/pprof/", "/debug/pprof/trace?seconds=0.1", "/debug/pprof/goroutine?debug=2", "/debug/pprof/profile?seconds=1",
		"/debug/pprof/heap", "/debug/pprof/allocs", "/debug/pprof/block", "/debug/pprof/mutex", "/debug/pprof/threadcreate",
		"/debug/pprof/cmdline", "/debug/pprof/symbol",
		"/debug/schedscope/", "/debug/schedscope/metrics", "/debug/schedscope/pools", "/debug/schedscope/profile/goroutine",
		"/debug/schedscope/trace?seconds=0.1", "/debug/schedscope/gomaxprocs",
	}
	file := writeSecret(t, "token", token+"\n")
	for _, tc := range []struct {
		name  string
		env   string
		args  []string
		agent bool
	}{
		{"token file", "", []string{"--agent-token-file", file}, true},
		{"environment", token, nil, true},
		{"no agent", "", []string{"--agent=false", "--agent-token-file", file}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tokenEnv, tc.env)
			base := startFixture(t, tc.args...)
			if code, _ := get(t, base+"/sleep?ms=1", ""); code != 200 {
				t.Errorf("/sleep without a token: %d, want 200", code)
			}
			for _, path := range captureURLs {
				if !tc.agent && strings.HasPrefix(path, "/debug/schedscope/") {
					continue
				}
				if code, body := get(t, base+path, ""); code != http.StatusUnauthorized {
					t.Errorf("%s without the token: %d %.80q, want 401", path, code, body)
				}
				if code, _ := get(t, base+path, "wrong"); code != http.StatusUnauthorized {
					t.Errorf("%s with a wrong token: %d, want 401", path, code)
				}
				if strings.Contains(path, "profile?seconds") {
					continue // a second of CPU profile per case is enough below
				}
				code, body := get(t, base+path, token)
				if code != 200 {
					t.Errorf("%s with the token: %d %.80q, want 200", path, code, body)
				}
				if strings.Contains(body, token) {
					t.Errorf("%s serves the token", path)
				}
			}
			if code, _ := get(t, base+"/debug/pprof/profile?seconds=1", token); code != 200 {
				t.Errorf("/debug/pprof/profile with the token: %d, want 200", code)
			}
		})
	}
}

// TestRunRecordsNoSecret runs `schedscope run` with a token file, an
// Authorization header, a header file and a URL with a password and a
// secret query parameter against a fixture that wants the token, and
// checks that no secret is anywhere in the run directory or the output,
// while the run did get its trace and profiles through the token.
func TestRunRecordsNoSecret(t *testing.T) {
	t.Setenv(tokenEnv, "")
	const token = "run-t0ken-zq"
	secrets := []string{token, "hdrsecret-zq", "apisecret-zq", "cookiesecret-zq", "urlpass-zq", "qpass-zq"}
	tokenPath := writeSecret(t, "token", token+"\n")
	headerPath := writeSecret(t, "headers", "# credentials\nCookie: session=cookiesecret-zq\n\n")
	base := startFixture(t, "--agent-token-file", tokenPath)
	out := filepath.Join(t.TempDir(), "run")
	target := strings.Replace(base, "http://", "http://user:urlpass-zq@", 1) + "/sleep?ms=1&password=qpass-zq"
	code, stdout, stderr := runCLI(t, context.Background(), "run", "--no-tui", "--token-file", tokenPath,
		"-H", "Authorization: Bearer hdrsecret-zq", "-H", "X-Api-Key: apisecret-zq", "-H", "@"+headerPath,
		"--rate", "20", "--duration", "2s", "--trace-window", "500ms", "--out", out, target)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, s := range secrets {
		if strings.Contains(stdout+stderr, s) {
			t.Errorf("the run's output holds %q", s)
		}
	}
	files := 0
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds %q", filepath.Base(path), s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rundir.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	m := run.Manifest
	args := strings.Join(m.Args, " ")
	for _, want := range []string{"--token-file " + tokenPath, "Authorization: Bearer " + redact.Marker, "X-Api-Key: " + redact.Marker, "user:" + redact.Marker + "@"} {
		if !strings.Contains(args, want) {
			t.Errorf("manifest args %q lack %q", args, want)
		}
	}
	if m.Target.Source != rundir.SourceAgent || m.Trace == nil {
		t.Errorf("the run did not reach the agent with its token: source %s, trace %+v, missing %+v", m.Target.Source, m.Trace, m.Missing)
	}
	if files < 5 {
		t.Errorf("only %d files in the run directory", files)
	}
}

// TestHeaderFile: -H @FILE reads one header a line, skipping blank lines
// and comments; a bad header, on the command line or in the file, is a
// one-line usage error that does not quote its value.
func TestHeaderFile(t *testing.T) {
	file := writeSecret(t, "headers", "# credentials\r\nAuthorization: Bearer zq-hdr\r\n\r\n  \nX-Api-Key:zq-key\n")
	h := headerList{"Accept: text/plain", "@" + file}
	got, err := h.headers()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Accept=text/plain", "Authorization=Bearer zq-hdr", "X-Api-Key=zq-key"}
	var names []string
	for _, hd := range got {
		names = append(names, hd.Name+"="+hd.Value)
	}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("headers %q, want %q", names, want)
	}
	bad := writeSecret(t, "bad", "Accept: */*\nAuthorization Bearer zq-bad\n")
	for _, arg := range []string{"Authorization Bearer zq-bad", "@" + bad, "@" + filepath.Join(t.TempDir(), "absent")} {
		code, _, errOut := runCLI(t, context.Background(), "load", "--rate", "10", "-H", arg, "http://127.0.0.1:1/")
		if code != 2 || !strings.Contains(errOut, "-H: ") || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "zq-bad") {
			t.Errorf("-H %q: exit %d, stderr %q; want exit 2 and one line without the value", arg, code, errOut)
		}
	}
}
