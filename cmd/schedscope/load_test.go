package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if !strings.Contains(out, "littles-law") || !strings.Contains(out, "steady") {
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
	for _, k := range []string{"p50", "p90", "p99", "p999", "max"} {
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
