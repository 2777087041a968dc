package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func runCLI(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(ctx, &stdio{in: strings.NewReader(""), out: &out, errOut: &errOut}, args)
	return code, out.String(), errOut.String()
}

func TestLoadBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "--rate", "10"}, "no target URL"},
		{[]string{"load", "--rate", "10", "ftp://x/"}, "scheme"},
		{[]string{"load", "--rate", "10", "http://[::1/"}, "target URL"},
		{[]string{"load", "--rate", "0", "http://127.0.0.1:1/"}, "--rate 0: must be > 0"},
		{[]string{"load", "--rate", "-5", "http://127.0.0.1:1/"}, "must be > 0"},
		{[]string{"load", "http://127.0.0.1:1/"}, "neither"},
		{[]string{"load", "--rate", "10", "--users", "3", "http://127.0.0.1:1/"}, "both"},
		{[]string{"load", "--rate", "10", "--duration", "ten", "http://127.0.0.1:1/"}, "invalid value"},
		{[]string{"load", "--rates", "10,x", "http://127.0.0.1:1/"}, "--rates"},
		{[]string{"load", "--rate", "10", "--arrivals", "bursty", "http://127.0.0.1:1/"}, "arrivals"},
		{[]string{"load", "--rate", "10", "-H", "NoColon", "http://127.0.0.1:1/"}, "header"},
		{[]string{"load", "--rate", "10", "--body", "@/nonexistent/file", "http://127.0.0.1:1/"}, "--body"},
		{[]string{"load", "--rate", "10", "http://a/", "http://b/"}, "one target URL"},
		{[]string{"load", "--bogus", "http://a/"}, "flag provided but not defined"},
		// Bounds, each named in its error.
		{[]string{"load", "--rate", "10", "http://127.0.0.1:99999/"}, `target URL "http://127.0.0.1:99999/": port 99999: must be in [1, 65535]`},
		{[]string{"load", "--rate", "10", "--procs", "100000", "http://127.0.0.1:1/"}, "--procs 100000: must be in [0, 1024]"},
		{[]string{"load", "--rate", "10", "--body", "@/dev/zero", "http://127.0.0.1:1/"}, "--body: /dev/zero: a device, not a regular file"},
		{[]string{"load", "--users", "1000000", "http://127.0.0.1:1/"}, "users 1000000: must be in [1, 100000]"},
		{[]string{"load", "--rate", "10", "--max-inflight", "2000000000", "http://127.0.0.1:1/"}, "max in-flight 2000000000: must be in [1, 100000]"},
		{[]string{"load", "--rate", "2e7", "http://127.0.0.1:1/"}, "at most 10,000,000 req/s"},
		{[]string{"load", "--rates", strings.Repeat("1,", 100) + "1", "http://127.0.0.1:1/"}, "101 rates: a ladder has at most 100 steps"},
		{[]string{"load", "--rate", "10", "--duration", "1000h", "http://127.0.0.1:1/"}, "duration 1000h0m0s: at most 24h0m0s"},
		{[]string{"load", "--rate", "10", "--warmup", "-1s", "http://127.0.0.1:1/"}, "warmup -1s: must not be negative"},
		{[]string{"load", "--rate", "10", "--warmup", "25h", "http://127.0.0.1:1/"}, "warmup 25h0m0s: at most 24h0m0s"},
		{[]string{"load", "--rate", "10", "--pause", "2h", "http://127.0.0.1:1/"}, "pause 2h0m0s: at most 1h0m0s"},
		{[]string{"load", "--rate", "10", "--timeout", "2h", "http://127.0.0.1:1/"}, "timeout 2h0m0s: at most 1h0m0s"},
		{[]string{"load", "--users", "2", "--think", "2h", "http://127.0.0.1:1/"}, "think 2h0m0s: at most 1h0m0s"},
		{append(append([]string{"load"}, slices.Repeat([]string{"-H", "X: y"}, 101)...), "--rate", "10", "http://127.0.0.1:1/"), "more than 100 headers"},
		{[]string{"load", "--rate", "10", "-H", "X: " + strings.Repeat("v", 70_000), "http://127.0.0.1:1/"}, "at most 65536 (64 KiB)"},
		// The generator's own request id: a user's would be taken for it.
		{[]string{"load", "--rate", "10", "-H", "Schedscope-Request: abc-1 1", "http://127.0.0.1:1/"}, "header Schedscope-Request: set by schedscope itself"},
		{[]string{"run", "--rate", "10", "-H", "schedscope-request: abc-1 1", "http://127.0.0.1:1/"}, "header schedscope-request: set by schedscope itself"},
	} {
		code, _, errOut := runCLI(t, context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

// A short real run: flags after the URL, the table on stdout, the JSON
// with the fields, and the HDR log.
func TestLoadWritesTableJSONAndHDRLog(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.Header.Get("X-Test") != "yes" {
			http.Error(w, "bad", 400)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	body := filepath.Join(dir, "body")
	os.WriteFile(body, []byte(`{"a":1}`), 0o644)
	js, hl := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.hlog")
	code, out, errOut := runCLI(t, context.Background(), "load", srv.URL, "--rate", "100", "--duration", "500ms",
		"--method", "POST", "-H", "X-Test: yes", "--body", "@"+body, "--json", js, "--hdr-log", hl)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "littles-law") || !strings.Contains(out, "steady") || !regexp.MustCompile(`\sp90\s+p95\s+p99\s`).MatchString(out) {
		t.Errorf("table:\n%s", out)
	}
	raw, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Phases []map[string]any `json:"phases"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Phases) != 1 {
		t.Fatalf("JSON: %v, %d phases", err, len(res.Phases))
	}
	p := res.Phases[0]
	for _, k := range []string{"offered_rate", "duration_s", "planned", "sent", "not_sent", "completed", "ok", "errors",
		"ok_per_s", "latency_ms", "service_ms", "send_lag_ms", "generator_cpu_us_per_req", "verdicts"} {
		if _, ok := p[k]; !ok {
			t.Errorf("JSON phase lacks %q", k)
		}
	}
	for _, k := range []string{"p50", "p90", "p95", "p99", "p999", "max"} {
		if _, ok := p["latency_ms"].(map[string]any)[k]; !ok {
			t.Errorf("latency_ms lacks %q", k)
		}
	}
	if p["ok"].(float64) != 50 {
		t.Errorf("ok = %v, want 50 (the target answers 400 unless method, header and body arrived)", p["ok"])
	}
	log, err := os.ReadFile(hl)
	if err != nil || !strings.Contains(string(log), "#[StartTime:") || !strings.Contains(string(log), "HISTFAA") {
		t.Errorf("HDR log: %v\n%.300s", err, log)
	}
}

// An unreachable target is a result, not a crash; a cancelled run still
// prints its table and exits 130.
func TestLoadUnreachableAndInterrupted(t *testing.T) {
	code, out, errOut := runCLI(t, context.Background(), "load", "--rate", "50", "--duration", "200ms", "http://127.0.0.1:1/")
	if code != 0 || !strings.Contains(out, "connection") {
		t.Errorf("unreachable: exit %d\n%s\n%s", code, out, errOut)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, out, errOut = runCLI(t, ctx, "load", "--rate", "50", "--duration", "5s", "http://127.0.0.1:1/")
	if code != 130 || !strings.Contains(out, "INTERRUPTED") || !strings.Contains(errOut, "interrupted") {
		t.Errorf("interrupted: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestLoadBodyFileBounds: --body @FILE reads a regular file up to 64 MiB
// and refuses a bigger one without reading it.
func TestLoadBodyFileBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxBodyFile + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	code, _, errOut := runCLI(t, context.Background(), "load", "--rate", "10", "--body", "@"+big, "http://127.0.0.1:1/")
	if code != 2 || !strings.Contains(errOut, "64.0 MiB is over the 64 MiB bound for this file") {
		t.Errorf("a 64 MiB + 1 body file: exit %d, stderr %q", code, errOut)
	}
	if err := os.Truncate(big, maxBodyFile); err != nil {
		t.Fatal(err)
	}
	if b, err := readBodyFile(big); err != nil || len(b) != maxBodyFile {
		t.Errorf("a 64 MiB body file: %d bytes, %v", len(b), err)
	}
}

// TestLoadOutputsCheckedFirst: every output path is checked before any
// request is sent, an existing file is kept unless --force, and two
// outputs may not share a path.
func TestLoadOutputsCheckedFirst(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.json")
	os.WriteFile(existing, []byte("keep me"), 0o644)
	js := filepath.Join(dir, "r.json")
	os.Symlink(js, filepath.Join(dir, "link.json"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--json", "/nonexistent/x.json"}, "--json: open /nonexistent/x.json: no such file or directory"},
		{[]string{"--hdr-log", "/nonexistent/x.hlog"}, "--hdr-log: open /nonexistent/x.hlog"},
		{[]string{"--json", existing}, "--json " + existing + ": the file exists: remove it, or add --force to overwrite it"},
		{[]string{"--hdr-log", existing}, "the file exists"},
		{[]string{"--json", dir}, "is a directory"},
		{[]string{"--json", js, "--hdr-log", js}, "--json and --hdr-log name the same file"},
		{[]string{"--json", js, "--hdr-log", filepath.Join(dir, ".", "r.json")}, "name the same file"},
		{[]string{"--json", js, "--hdr-log", filepath.Join(dir, "link.json")}, "name the same file"},
	} {
		start := time.Now()
		args := append([]string{"load", "--rate", "50", "--duration", "30s", srv.URL}, tc.args...)
		code, _, errOut := runCLI(t, context.Background(), args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line mentioning %q", tc.args, code, errOut, tc.want)
		}
		// Refused after the load, it would take the load's 30 s; refused
		// before, well under a second: the bound is far from both.
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%v: refused after %v, not before the load", tc.args, d)
		}
		if _, err := os.Stat(js); err == nil {
			t.Errorf("%v: a refused command left %s behind", tc.args, js)
			os.Remove(js)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests sent by refused commands", n)
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("the existing file was changed: %q", b)
	}
	// --force overwrites it; /dev/null needs no --force.
	code, _, errOut := runCLI(t, context.Background(), "load", "--rate", "50", "--duration", "200ms", srv.URL,
		"--json", existing, "--hdr-log", os.DevNull, "--force")
	if b, _ := os.ReadFile(existing); code != 0 || !strings.Contains(string(b), `"phases"`) {
		t.Errorf("--force: exit %d, stderr %q, file %.80q", code, errOut, b)
	}
	code, _, errOut = runCLI(t, context.Background(), "load", "--rate", "50", "--duration", "200ms", srv.URL, "--hdr-log", os.DevNull)
	if code != 0 {
		t.Errorf("--hdr-log /dev/null: exit %d, stderr %q", code, errOut)
	}
}

// TestStartAtWait: a load that waits for --start-at says so on stderr, and
// until when; interrupted during the wait, it keeps its directory with an
// elapsed time of 0 (it reported the time left as a negative one), and
// sayStartWait says nothing without a wait.
func TestStartAtWait(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	at := time.Now().Add(10 * time.Minute).UTC()
	out := filepath.Join(t.TempDir(), "load")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	code, _, errOut := runCLI(t, ctx, "load", "--rate", "10", "--duration", "1s", "--start-at", at.Format(time.RFC3339Nano), "--out", out, srv.URL)
	want := "schedscope load: waiting until " + at.Format("15:04:05.000") + " UTC (in "
	if code != 130 || !strings.Contains(errOut, want) || !regexp.MustCompile(`\(in (9m59|10m0)s\) to start \(--start-at\)\n`).MatchString(errOut) {
		t.Errorf("exit %d, stderr %q; want exit 130 and %q...", code, errOut, want)
	}
	var res struct {
		ElapsedS    *float64 `json:"elapsed_s"`
		Interrupted bool     `json:"interrupted"`
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil || res.ElapsedS == nil || *res.ElapsedS != 0 || !res.Interrupted {
		t.Errorf("results.json: %v, %s", err, b)
	}
	now := time.Now()
	for _, at := range []time.Time{{}, now, now.Add(-time.Second)} {
		var b bytes.Buffer
		sayStartWait(&b, "load", at, now)
		if b.Len() != 0 {
			t.Errorf("sayStartWait(%v): %q, want nothing", at, b.String())
		}
	}
	var b2 bytes.Buffer
	sayStartWait(&b2, "run", time.Date(2026, 12, 4, 19, 18, 50, 123e6, time.UTC), time.Date(2026, 12, 4, 18, 19, 14, 0, time.UTC))
	if got, want := b2.String(), "schedscope run: waiting until 19:18:50.123 UTC (in 59m36s) to start (--start-at)\n"; got != want {
		t.Errorf("sayStartWait: %q, want %q", got, want)
	}
}
