package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startAgent serves a new agent at /debug/schedscope/ on a loopback test
// server and returns its base URL.
func startAgent(t *testing.T, opts Options) (*Agent, string) {
	t.Helper()
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Mount(mux, "/debug/schedscope/")
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	})
	return a, srv.URL + "/debug/schedscope"
}

func do(t *testing.T, method, url, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
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
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func TestMetricsSnapshot(t *testing.T) {
	_, base := startAgent(t, Options{})
	code, body := do(t, "GET", base+"/metrics", "")
	if code != 200 {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	var snap Snapshot
	if err := json.Unmarshal(body, &snap); err != nil {
		t.Fatalf("decode snapshot: %v", err)
	}
	if snap.GoVersion != runtime.Version() || snap.GOMAXPROCS != runtime.GOMAXPROCS(0) {
		t.Errorf("go version %q gomaxprocs %d", snap.GoVersion, snap.GOMAXPROCS)
	}
	for _, name := range []string{
		"/sched/goroutines:goroutines", "/sched/gomaxprocs:threads", "/cpu/classes/total:cpu-seconds",
		"/memory/classes/total:bytes", "/gc/cycles/total:gc-cycles",
	} {
		if _, ok := snap.Values[name]; !ok {
			t.Errorf("snapshot lacks %s", name)
		}
	}
	if snap.Values["/sched/goroutines:goroutines"] < 1 {
		t.Errorf("goroutines = %v", snap.Values["/sched/goroutines:goroutines"])
	}
	// Go 1.26 metrics: present on 1.26, absent (not zero) on 1.25.
	for _, name := range []string{"/sched/goroutines/waiting:goroutines", "/sched/threads/total:threads"} {
		_, ok := snap.Values[name]
		switch {
		case strings.HasPrefix(runtime.Version(), "go1.26") && !ok:
			t.Errorf("go1.26 snapshot lacks %s", name)
		case strings.HasPrefix(runtime.Version(), "go1.25") && ok:
			t.Errorf("go1.25 snapshot has %s, a Go 1.26 metric", name)
		}
	}
	if _, ok := snap.Histograms["/sched/latencies:seconds"]; !ok {
		t.Errorf("snapshot lacks the /sched/latencies:seconds histogram")
	}
	if snap.FlightRecorder {
		t.Errorf("flight recorder on in a default agent that nobody armed; want it on demand")
	}
}

func TestRefusesRemoteClients(t *testing.T) {
	for _, tc := range []struct {
		remote      string
		allowRemote bool
		want        int
	}{
		{"192.0.2.7:4242", false, http.StatusForbidden},
		{"[2001:db8::1]:4242", false, http.StatusForbidden},
		{"not-an-address", false, http.StatusForbidden},
		{"127.0.0.1:4242", false, http.StatusOK},
		{"[::1]:4242", false, http.StatusOK},
		{"[::ffff:127.0.0.1]:4242", false, http.StatusOK},
		{"192.0.2.7:4242", true, http.StatusOK},
	} {
		a, err := New(Options{AllowRemote: tc.allowRemote, FlightRecorder: FlightRecorderOptions{Disabled: true}})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", "/pools", nil)
		req.RemoteAddr = tc.remote
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("remote %s allowRemote=%v: %d, want %d", tc.remote, tc.allowRemote, rec.Code, tc.want)
		}
		a.Close()
	}
}

func TestToken(t *testing.T) {
	_, base := startAgent(t, Options{Token: "s3cret"})
	for _, tc := range []struct {
		path, token string
		want        int
	}{
		{"/profile/goroutine", "", http.StatusUnauthorized},
		{"/profile/goroutine", "wrong", http.StatusUnauthorized},
		{"/profile/goroutine", "s3cret", http.StatusOK},
		{"/trace?seconds=0.05", "", http.StatusUnauthorized},
		{"/flightrecorder", "", http.StatusUnauthorized},
		{"/gomaxprocs", "", http.StatusUnauthorized},
		{"/gomaxprocs", "s3cret", http.StatusOK},
		// With a token, every path needs it: the index, metrics and pools
		// say what the process runs and how busy it is.
		{"/", "", http.StatusUnauthorized},
		{"/metrics", "", http.StatusUnauthorized},
		{"/metrics", "s3cret", http.StatusOK},
		{"/pools", "", http.StatusUnauthorized},
		{"/pools", "wrong", http.StatusUnauthorized},
		{"/pools", "s3cret", http.StatusOK},
		{"/no-such-endpoint", "", http.StatusUnauthorized}, // no probing for paths either
	} {
		if code, body := do(t, "GET", base+tc.path, tc.token); code != tc.want {
			t.Errorf("GET %s token %q: %d %s, want %d", tc.path, tc.token, code, body, tc.want)
		}
	}
}

// TestGuard checks that Guard puts another handler (net/http/pprof's, in
// a server) behind the agent's checks: loopback, then the token.
func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") })
	for _, tc := range []struct {
		opts          Options
		remote, token string
		want          int
	}{
		{Options{}, "127.0.0.1:4242", "", http.StatusOK},
		{Options{}, "192.0.2.7:4242", "", http.StatusForbidden},
		{Options{AllowRemote: true}, "192.0.2.7:4242", "", http.StatusOK},
		{Options{Token: "s3cret"}, "127.0.0.1:4242", "", http.StatusUnauthorized},
		{Options{Token: "s3cret"}, "127.0.0.1:4242", "wrong", http.StatusUnauthorized},
		{Options{Token: "s3cret"}, "127.0.0.1:4242", "s3cret", http.StatusOK},
		{Options{Token: "s3cret"}, "192.0.2.7:4242", "s3cret", http.StatusForbidden},
		{Options{Token: "s3cret", AllowRemote: true}, "192.0.2.7:4242", "s3cret", http.StatusOK},
		{Options{Token: "s3cret", AllowRemote: true}, "192.0.2.7:4242", "", http.StatusUnauthorized},
	} {
		req := httptest.NewRequest("GET", "/debug/pprof/heap", nil)
		req.RemoteAddr = tc.remote
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		rec := httptest.NewRecorder()
		Guard(tc.opts, ok).ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Guard(%+v) remote %s token %q: %d %q, want %d", tc.opts, tc.remote, tc.token, rec.Code, rec.Body, tc.want)
		}
		if served := rec.Body.String() == "served"; served != (tc.want == http.StatusOK) {
			t.Errorf("Guard(%+v) remote %s token %q: served %v with %d", tc.opts, tc.remote, tc.token, served, rec.Code)
		}
	}
	a, err := New(Options{Token: "s3cret", FlightRecorder: FlightRecorderOptions{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	req := httptest.NewRequest("GET", "/debug/pprof/heap", nil)
	req.RemoteAddr = "127.0.0.1:4242"
	rec := httptest.NewRecorder()
	a.Guard(ok).ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("Agent.Guard without the agent's token: %d, want 401", rec.Code)
	}
}

func TestOneCaptureAtATime(t *testing.T) {
	a, base := startAgent(t, Options{FlightRecorder: FlightRecorderOptions{AlwaysOn: true}})
	done := make(chan int)
	go func() {
		resp, err := http.Get(base + "/trace?seconds=1")
		if err != nil {
			done <- -1
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(a.capture) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the trace capture never started")
		}
		time.Sleep(time.Millisecond)
	}
	for _, path := range []string{"/trace?seconds=0.1", "/fgprof?seconds=0.1"} {
		code, body := do(t, "GET", base+path, "")
		if code != http.StatusTooManyRequests {
			t.Errorf("second capture %s: %d %s, want 429", path, code, body)
		}
	}
	if code, body := do(t, "POST", base+"/sleepprobe?seconds=0.1", ""); code != http.StatusTooManyRequests {
		t.Errorf("sleep probe during a capture: %d %s, want 429", code, body)
	}
	// Instant reads are not captures: a profile, a flight-recorder snapshot.
	if code, _ := do(t, "GET", base+"/profile/goroutine", ""); code != 200 {
		t.Errorf("goroutine profile during a capture: %d", code)
	}
	if code, body := do(t, "GET", base+"/flightrecorder", ""); code != 200 || !isTrace(body) {
		t.Errorf("flight-recorder snapshot during a capture: %d", code)
	}
	a.snapshotting.Lock() // as if a snapshot were being written
	if code, _ := do(t, "GET", base+"/flightrecorder", ""); code != http.StatusTooManyRequests {
		t.Errorf("second concurrent snapshot: %d, want 429", code)
	}
	a.snapshotting.Unlock()
	if code := <-done; code != 200 {
		t.Errorf("first capture: %d", code)
	}
	if code, body := do(t, "GET", base+"/flightrecorder", ""); code != 200 {
		t.Errorf("capture after the first ended: %d %s", code, body)
	}
}

func TestDurationBounds(t *testing.T) {
	_, base := startAgent(t, Options{MaxCapture: 2 * time.Second, FlightRecorder: FlightRecorderOptions{Disabled: true}})
	for _, q := range []string{"/trace?seconds=3", "/trace?seconds=-1", "/trace?seconds=0", "/trace?seconds=abc",
		"/trace?seconds=1e300", "/trace?seconds=NaN", "/fgprof?seconds=1h", "/sleepprobe?sleep=1ns",
		"/sleepprobe?sleep=11s", "/sleepprobe?goroutines=0", "/sleepprobe?goroutines=100000", "/sleepprobe?seconds=5"} {
		method := "GET"
		if strings.HasPrefix(q, "/sleepprobe") {
			method = "POST"
		}
		if code, body := do(t, method, base+q, ""); code != http.StatusBadRequest {
			t.Errorf("%s %s: %d %s, want 400", method, q, code, body)
		}
	}
	if code, _ := do(t, "GET", base+"/flightrecorder", ""); code != http.StatusServiceUnavailable {
		t.Errorf("disabled flight recorder: %d, want 503", code)
	}
	if code, _ := do(t, "GET", base+"/nope", ""); code != http.StatusNotFound {
		t.Errorf("unknown endpoint: %d, want 404", code)
	}
}

// isTrace reports whether b starts like a Go execution trace.
func isTrace(b []byte) bool { return bytes.HasPrefix(b, []byte("go 1.")) && len(b) > 64 }

func TestTraceAndFlightRecorder(t *testing.T) {
	_, base := startAgent(t, Options{FlightRecorder: FlightRecorderOptions{AlwaysOn: true}})
	code, body := do(t, "GET", base+"/trace?seconds=0.2", "")
	if code != 200 || !isTrace(body) {
		t.Fatalf("trace window: %d, %d bytes, starts %q", code, len(body), body[:min(16, len(body))])
	}
	code, body = do(t, "GET", base+"/flightrecorder", "")
	if code != 200 || !isTrace(body) {
		t.Fatalf("flight recorder: %d, %d bytes, starts %q", code, len(body), body[:min(16, len(body))])
	}
	// Arming a recorder that runs for good changes nothing and says so.
	var st ArmState
	if code, body := do(t, "POST", base+"/flightrecorder/arm?for=1m", ""); code != 200 || json.Unmarshal(body, &st) != nil || st.FlightRecorder != "on" || st.Until != nil {
		t.Errorf("arm an always-on recorder: %d %s", code, body)
	}
}

func TestProfiles(t *testing.T) {
	_, base := startAgent(t, Options{})
	for _, name := range []string{"goroutine", "block", "mutex", "threadcreate"} {
		code, body := do(t, "GET", base+"/profile/"+name, "")
		if code != 200 || !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
			t.Errorf("profile %s: %d, %d bytes, not gzip", name, code, len(body))
		}
	}
	code, body := do(t, "GET", base+"/profile/goroutine?debug=2", "")
	if code != 200 || !bytes.Contains(body, []byte("goroutine ")) {
		t.Errorf("goroutine?debug=2: %d %q", code, body[:min(80, len(body))])
	}
	if code, _ := do(t, "GET", base+"/profile/heap", ""); code != http.StatusNotFound {
		t.Errorf("heap profile: %d, want 404", code)
	}
	if code, _ := do(t, "GET", base+"/profile/goroutine?debug=7", ""); code != http.StatusBadRequest {
		t.Errorf("debug=7: %d, want 400", code)
	}
	code, body = do(t, "GET", base+"/fgprof?seconds=0.2", "")
	if code != 200 || !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		t.Errorf("fgprof: %d, %d bytes, not gzip", code, len(body))
	}
	// A window shorter than fgprof's 10 ms period takes no sample; fgprof
	// then panics, which must come back as an error, not a dropped connection.
	code, body = do(t, "GET", base+"/fgprof?seconds=0.000001", "")
	if code != http.StatusInternalServerError || !bytes.Contains(body, []byte("no sample")) {
		t.Errorf("fgprof of 1 us: %d %s, want 500 no sample", code, body)
	}
}

func TestSleepProbe(t *testing.T) {
	_, base := startAgent(t, Options{})
	code, body := do(t, "POST", base+"/sleepprobe?goroutines=4&sleep=1ms&seconds=0.3", "")
	if code != 200 {
		t.Fatalf("sleep probe: %d %s", code, body)
	}
	var res ProbeResult
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	// 4 goroutines x 0.3 s / (1 ms + overshoot): far more than 40 sleeps.
	if res.Goroutines != 4 || res.Sleep != time.Millisecond || res.Samples < 40 {
		t.Fatalf("probe: %+v", res)
	}
	if !(res.Min <= res.P50 && res.P50 <= res.P99 && res.P99 <= res.Max) {
		t.Errorf("quantiles out of order: %+v", res)
	}
	var n int64
	for _, c := range res.Histogram.Counts {
		n += c
	}
	if n != res.Samples {
		t.Errorf("histogram holds %d samples, want %d", n, res.Samples)
	}
	if code, _ := do(t, "GET", base+"/sleepprobe", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /sleepprobe: %d, want 405", code)
	}
}

func TestSleepProbeAnnotatesTrace(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("tracer busy: %v", err)
	}
	res := SleepProbe(context.Background(), 2, 2*time.Millisecond, 50*time.Millisecond)
	trace.Stop()
	if res.Samples == 0 {
		t.Fatal("probe measured nothing")
	}
	for _, s := range []string{SleepLogCategory, SleepProbeTask, "2000000"} {
		if !bytes.Contains(buf.Bytes(), []byte(s)) {
			t.Errorf("trace lacks %q", s)
		}
	}
}

func TestGOMAXPROCS(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })

	_, ro := startAgent(t, Options{FlightRecorder: FlightRecorderOptions{Disabled: true}})
	code, body := do(t, "GET", ro+"/gomaxprocs", "")
	var st GOMAXPROCSState
	if err := json.Unmarshal(body, &st); code != 200 || err != nil || st.GOMAXPROCS != before || st.Settable {
		t.Fatalf("GET: %d %s %v", code, body, err)
	}
	if code, _ := do(t, "POST", ro+"/gomaxprocs?n=1", ""); code != http.StatusForbidden {
		t.Errorf("POST without AllowSetGOMAXPROCS: %d, want 403", code)
	}
	if runtime.GOMAXPROCS(0) != before {
		t.Fatal("a refused POST changed GOMAXPROCS")
	}

	_, rw := startAgent(t, Options{AllowSetGOMAXPROCS: true, FlightRecorder: FlightRecorderOptions{Disabled: true}})
	for _, bad := range []string{"0", "-2", "x", "99999"} {
		if code, _ := do(t, "POST", rw+"/gomaxprocs?n="+bad, ""); code != http.StatusBadRequest {
			t.Errorf("n=%s: %d, want 400", bad, code)
		}
	}
	code, body = do(t, "POST", rw+"/gomaxprocs?n=1", "")
	if err := json.Unmarshal(body, &st); code != 200 || err != nil || st.GOMAXPROCS != 1 || st.Previous != before {
		t.Fatalf("POST n=1: %d %s", code, body)
	}
	if runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("GOMAXPROCS = %d after POST n=1", runtime.GOMAXPROCS(0))
	}
	if code, body = do(t, "POST", rw+"/gomaxprocs?n=default", ""); code != 200 {
		t.Errorf("POST n=default: %d %s", code, body)
	}
}

func TestIndex(t *testing.T) {
	a, base := startAgent(t, Options{Token: "x"})
	a.Pools().Register("workers", PoolFunc(func() PoolStats { return PoolStats{Size: 4} }))
	code, body := do(t, "GET", base+"/", "x")
	var idx Index
	if err := json.Unmarshal(body, &idx); code != 200 || err != nil {
		t.Fatalf("index: %d %s %v", code, body, err)
	}
	if idx.Agent != "schedscope" || idx.FlightRecorder != FlightRecorderOnDemand || idx.FlightRecorderUntil != nil || !idx.TokenRequired || len(idx.Pools) != 1 {
		t.Errorf("index: %+v", idx)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{{MaxCapture: -1}, {BlockProfileRate: -1}, {FlightRecorder: FlightRecorderOptions{MinAge: -1}},
		{FlightRecorder: FlightRecorderOptions{AlwaysOn: true, Disabled: true}},
		{FlightRecorder: FlightRecorderOptions{AlwaysOn: true, OnDemand: true}}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

func TestSecondFlightRecorderDoesNotFail(t *testing.T) {
	alwaysOn := Options{FlightRecorder: FlightRecorderOptions{AlwaysOn: true}}
	a1, err := New(alwaysOn)
	if err != nil {
		t.Fatal(err)
	}
	defer a1.Close()
	a2, err := New(alwaysOn)
	if err != nil {
		t.Fatalf("second agent: %v", err)
	}
	defer a2.Close()
	if st := a2.flightRecorderState(); st == "on" || st == "off" || st == FlightRecorderOnDemand {
		t.Errorf("second flight recorder state %q, want the reason it is unavailable", st)
	}
	// An on-demand agent beside it fails when armed, and says why.
	_, base := startAgent(t, Options{})
	if code, body := do(t, "POST", base+"/flightrecorder/arm?for=1m", ""); code != http.StatusServiceUnavailable || !strings.Contains(string(body), "flight recorder") {
		t.Errorf("arming a second recorder: %d %s, want 503 and the reason", code, body)
	}
}

// The flight recorder's mode at New: on demand unless AlwaysOn or Disabled
// says otherwise; the deprecated OnDemand field is the default.
func TestFlightRecorderModes(t *testing.T) {
	for _, tc := range []struct {
		fro  FlightRecorderOptions
		want string
	}{
		{FlightRecorderOptions{}, FlightRecorderOnDemand},
		{FlightRecorderOptions{OnDemand: true}, FlightRecorderOnDemand},
		{FlightRecorderOptions{AlwaysOn: true}, "on"},
		{FlightRecorderOptions{Disabled: true}, "off"},
		{FlightRecorderOptions{Disabled: true, OnDemand: true}, "off"},
	} {
		a, err := New(Options{FlightRecorder: tc.fro})
		if err != nil {
			t.Fatalf("New(%+v): %v", tc.fro, err)
		}
		if st := a.flightRecorderState(); st != tc.want {
			t.Errorf("%+v: state %q at New, want %q", tc.fro, st, tc.want)
		}
		a.Close()
	}
}

// A default agent's recorder is on demand: off until armed, on for the
// armed period, off by itself afterwards; arming is token-guarded and
// bounded.
func TestFlightRecorderOnDemand(t *testing.T) {
	a, base := startAgent(t, Options{Token: "tok"})
	if st := a.flightRecorderState(); st != FlightRecorderOnDemand {
		t.Fatalf("state before arming %q, want %q", st, FlightRecorderOnDemand)
	}
	if code, body := do(t, "GET", base+"/flightrecorder", "tok"); code != 503 || !strings.Contains(string(body), "arm") {
		t.Errorf("snapshot before arming: %d %s, want 503 saying how to arm", code, body)
	}
	if code, _ := do(t, "POST", base+"/flightrecorder/arm?for=1s", ""); code != 401 {
		t.Errorf("arm without the token: %d, want 401", code)
	}
	if code, _ := do(t, "GET", base+"/flightrecorder/arm?for=1s", "tok"); code != 405 {
		t.Errorf("arm with GET: %d, want 405", code)
	}
	for _, bad := range []string{"0s", "-1s", "25h", "soon"} {
		if code, _ := do(t, "POST", base+"/flightrecorder/arm?for="+bad, "tok"); code != 400 {
			t.Errorf("arm for=%s: %d, want 400", bad, code)
		}
	}
	code, body := do(t, "POST", base+"/flightrecorder/arm?for=700ms", "tok")
	var st ArmState
	if code != 200 || json.Unmarshal(body, &st) != nil || st.FlightRecorder != "on" || st.Until == nil {
		t.Fatalf("arm: %d %s", code, body)
	}
	var idx Index
	if code, body := do(t, "GET", base+"/", "tok"); code != 200 || json.Unmarshal(body, &idx) != nil || idx.FlightRecorder != "on" || idx.FlightRecorderUntil == nil {
		t.Errorf("index while armed: %d %s", code, body)
	}
	time.Sleep(100 * time.Millisecond) // something to record
	if code, body := do(t, "GET", base+"/flightrecorder", "tok"); code != 200 || !isTrace(body) {
		t.Fatalf("snapshot while armed: %d, %d bytes", code, len(body))
	}
	deadline := time.Now().Add(5 * time.Second)
	for a.flightRecorderState() != FlightRecorderOnDemand {
		if time.Now().After(deadline) {
			t.Fatalf("recorder still %q 5 s after a 700 ms arm", a.flightRecorderState())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, _ := do(t, "GET", base+"/flightrecorder", "tok"); code != 503 {
		t.Errorf("snapshot after the armed period: %d, want 503", code)
	}
	// A disabled recorder cannot be armed.
	_, base2 := startAgent(t, Options{FlightRecorder: FlightRecorderOptions{Disabled: true}})
	if code, _ := do(t, "POST", base2+"/flightrecorder/arm", ""); code != 503 {
		t.Errorf("arm on a disabled recorder: %d, want 503", code)
	}
}

// TestSleepProbeEndsAtDeadline: a sleep longer than the probe's window must
// not hold the request (nor the capture slot) past the window. The issue's
// reproduction: sleep=10s&seconds=0.1 answered after 10 s.
func TestSleepProbeEndsAtDeadline(t *testing.T) {
	_, base := startAgent(t, Options{})
	start := time.Now()
	code, body := do(t, "POST", base+"/sleepprobe?goroutines=1&sleep=10s&seconds=0.1", "")
	took := time.Since(start)
	if code != 200 {
		t.Fatalf("sleep probe: %d %s", code, body)
	}
	var res ProbeResult
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	// No 10 s sleep fits in 0.1 s: nothing measured, nothing left asleep.
	if res.Samples != 0 || res.Unfinished != 0 {
		t.Errorf("probe: %+v, want no samples and nothing unfinished", res)
	}
	if took >= 5*time.Second {
		t.Errorf("a 0.1 s probe answered after %v", took)
	}
	if code, body := do(t, "POST", base+"/sleepprobe?sleep=1ms&seconds=0.05", ""); code != 200 {
		t.Errorf("probe after the first: %d %s", code, body)
	}
	waitNoSleepers(t, time.Second)
}

// TestSleepProbeClientGoes: a client that goes away mid-sleep releases the
// capture slot at once; the sleeping goroutine is abandoned and exits when
// its sleep ends, without touching the finished probe.
func TestSleepProbeClientGoes(t *testing.T) {
	const sleep = 3 * time.Second
	_, base := startAgent(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/sleepprobe?goroutines=2&sleep=3s&seconds=10", nil)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		// Retry while a poll below holds the slot for an instant.
		for {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errc <- err
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusTooManyRequests {
				errc <- fmt.Errorf("probe answered %d before its client left", resp.StatusCode)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	// Wait until the probe holds the slot (a probe with a bad parameter gets
	// 429 then, 400 while the slot is free), then leave.
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _ := do(t, "POST", base+"/sleepprobe?goroutines=0", "")
		if code == http.StatusTooManyRequests {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the probe never took the capture slot")
		}
		time.Sleep(5 * time.Millisecond)
	}
	left := time.Now()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the probe's client: %v, want context.Canceled", err)
	}
	// The slot comes back long before the 3 s sleep could end.
	for {
		code, body := do(t, "POST", base+"/sleepprobe?sleep=1ms&seconds=0.01", "")
		if code == 200 {
			break
		}
		if code != http.StatusTooManyRequests || time.Since(left) > sleep/2 {
			t.Fatalf("probe after the client left: %d %s after %v", code, body, time.Since(left))
		}
		time.Sleep(5 * time.Millisecond)
	}
	waitNoSleepers(t, 2*sleep)
}

// TestSleepProbeCancelled: SleepProbe itself returns when its context ends,
// with the sleeps in progress counted as unfinished.
func TestSleepProbeCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res := SleepProbe(ctx, 3, 2*time.Second, 5*time.Second)
	// Noise delays the return, but 0.8 s past the context's end is a margin
	// only a stalled machine breaches (the sleeps themselves last 2 s).
	if took := time.Since(start); took >= time.Second {
		t.Errorf("SleepProbe returned %v after its context ended at 200 ms", took)
	}
	// Each goroutine was asleep when the context ended (unless the machine
	// was too busy to start it within 200 ms; at least one must have
	// started by then, which a busy machine does within milliseconds).
	if res.Samples != 0 || res.Unfinished < 1 || res.Unfinished > 3 {
		t.Errorf("probe: %+v, want 0 samples and 1 to 3 unfinished", res)
	}
	waitNoSleepers(t, 4*time.Second)
}

// waitNoSleepers waits until no goroutine of SleepProbe is left (an
// abandoned sleeper exits when its sleep ends), so goleak stays meaningful.
func waitNoSleepers(t *testing.T, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if !bytes.Contains(buf[:n], []byte("agent.SleepProbe.func")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleep probe goroutines still running after %v", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Options.Exposition answers metrics?format=prometheus behind the guard;
// without one that format is 404, and an unknown format 400.
func TestExposition(t *testing.T) {
	served := 0
	exp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served++
		io.WriteString(w, "schedscope_gomaxprocs 2\n")
	})
	_, base := startAgent(t, Options{Token: "t0k", Exposition: exp})
	if code, _ := do(t, "GET", base+"/metrics?format=prometheus", ""); code != http.StatusUnauthorized || served != 0 {
		t.Errorf("no token: %d, exposition served %d times; want 401 and 0", code, served)
	}
	if code, body := do(t, "GET", base+"/metrics?format=prometheus", "t0k"); code != 200 || string(body) != "schedscope_gomaxprocs 2\n" {
		t.Errorf("with the token: %d %q", code, body)
	}
	code, body := do(t, "GET", base+"/", "t0k")
	var idx Index
	if err := json.Unmarshal(body, &idx); code != 200 || err != nil || !strings.Contains(strings.Join(idx.Endpoints, " "), "metrics?format=prometheus") {
		t.Errorf("index: %d %v, endpoints %q", code, err, idx.Endpoints)
	}
	if code, _ := do(t, "GET", base+"/metrics?format=yaml", "t0k"); code != http.StatusBadRequest {
		t.Errorf("format=yaml: %d, want 400", code)
	}

	_, plain := startAgent(t, Options{})
	if code, _ := do(t, "GET", plain+"/metrics?format=prometheus", ""); code != http.StatusNotFound {
		t.Errorf("no Exposition: %d, want 404", code)
	}
	if code, _ := do(t, "GET", plain+"/metrics?format=json", ""); code != 200 {
		t.Errorf("format=json: %d, want 200", code)
	}
}

// Status counts arms and snapshots and keeps the last finished probe.
func TestStatus(t *testing.T) {
	a, base := startAgent(t, Options{})
	st := a.Status()
	if st.FlightRecorder != FlightRecorderOnDemand || st.FlightRecorderOn || st.Arms != 0 || st.Snapshots != 0 || st.LastProbe != nil {
		t.Fatalf("a new agent's status: %+v", st)
	}
	if code, body := do(t, "POST", base+"/flightrecorder/arm?for=1m", ""); code != 200 {
		t.Fatalf("arm: %d %s", code, body)
	}
	if code, body := do(t, "GET", base+"/flightrecorder", ""); code != 200 {
		t.Fatalf("snapshot: %d %s", code, body)
	}
	if code, body := do(t, "POST", base+"/sleepprobe?goroutines=1&sleep=1ms&seconds=0.05", ""); code != 200 {
		t.Fatalf("probe: %d %s", code, body)
	}
	st = a.Status()
	if !st.FlightRecorderOn || st.Arms != 1 || st.Snapshots != 1 || time.Until(st.FlightRecorderUntil) < 30*time.Second {
		t.Errorf("after arming and one snapshot: %+v", st)
	}
	if st.LastProbe == nil || st.LastProbe.Samples == 0 || st.LastProbeAt.IsZero() {
		t.Errorf("after a probe: last probe %+v at %v", st.LastProbe, st.LastProbeAt)
	}
}
