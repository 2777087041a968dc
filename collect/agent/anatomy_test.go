package agent

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/trace"
	"strconv"
	"strings"
	"testing"
)

// The trace events themselves (task types, log messages, region types and
// goroutines) are checked by parsing real traces in the main module's
// internal/anatomytest, which may depend on golang.org/x/exp/trace; this
// module does not.

func TestRequestLog(t *testing.T) {
	const start = 1700000000123456789
	for _, tc := range []struct {
		name   string
		values []string
		valid  bool // the message carries the value
	}{
		{"absent", nil, false},
		{"plain", []string{"run1-42 1700000000000000000"}, true},
		{"tag of every kind", []string{"A_z.09-0 0"}, true},
		{"32-char tag", []string{strings.Repeat("t", 32) + "-1 2"}, true},
		{"max seq and intended", []string{"t-18446744073709551615 9223372036854775807"}, true},
		{"min intended", []string{strings.Repeat("t", 32) + "-18446744073709551615 -9223372036854775808"}, true},
		{"leading zeros", []string{"t-007 0042"}, true},
		{"two values", []string{"a-1 2", "b-3 4"}, false},
		{"empty", []string{""}, false},
		{"no intended", []string{"run1-42"}, false},
		{"no seq", []string{"run1 42"}, false},
		{"empty seq", []string{"run1- 42"}, false},
		{"empty tag", []string{"-1 42"}, false},
		{"33-char tag", []string{strings.Repeat("t", 33) + "-1 2"}, false},
		{"dash in tag", []string{"a-b-1 2"}, false},
		{"space in tag", []string{"a b-1 2"}, false},
		{"bad tag char", []string{"a/b-1 2"}, false},
		{"non-ASCII tag", []string{"é-1 2"}, false},
		{"signed seq", []string{"t-+1 2"}, false},
		{"negative seq", []string{"t--1 2"}, false},
		{"seq overflow", []string{"t-18446744073709551616 2"}, false},
		{"intended overflow", []string{"t-1 9223372036854775808"}, false},
		{"intended underflow", []string{"t-1 -9223372036854775809"}, false},
		{"plus intended", []string{"t-1 +2"}, false},
		{"lone minus", []string{"t-1 -"}, false},
		{"double minus", []string{"t-1 --2"}, false},
		{"hex", []string{"t-0x1 2"}, false},
		{"two spaces", []string{"t-1  2"}, false},
		{"tab", []string{"t-1\t2"}, false},
		{"trailing field", []string{"t-1 2 3"}, false},
		{"trailing space", []string{"t-1 2 "}, false},
		{"leading space", []string{" t-1 2"}, false},
		{"newline", []string{"t-1 2\nx"}, false},
		{"too long", []string{"t-1 " + strings.Repeat("0", maxRequestHeaderLen)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := requestLog(start, tc.values)
			want := strconv.FormatInt(start, 10)
			if tc.valid {
				want += " " + tc.values[0]
			}
			if got != want {
				t.Errorf("requestLog(%q) = %q, want %q", tc.values, got, want)
			}
		})
	}
}

// FuzzRequestLog: whatever the header says, the message is the start time
// alone or the start time, the id and the intended time, three fields that
// parse as RequestHeader documents.
func FuzzRequestLog(f *testing.F) {
	for _, s := range []string{"run1-42 1700000000000000000", "t-1 -5", "", "a-b-1 2", "t-1  2", "x.y_z-18446744073709551615 9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		msg := requestLog(-1, []string{v})
		fields := strings.Split(msg, " ")
		if fields[0] != "-1" {
			t.Fatalf("message %q does not start with the start time", msg)
		}
		switch len(fields) {
		case 1:
			return
		case 3:
		default:
			t.Fatalf("message %q: %d fields, want 1 or 3", msg, len(fields))
		}
		if msg[len("-1 "):] != v {
			t.Fatalf("message %q does not carry the header %q as it came", msg, v)
		}
		tag, seq, ok := strings.Cut(fields[1], "-")
		if !ok || !validTag(tag) {
			t.Fatalf("message %q: bad id %q", msg, fields[1])
		}
		if _, err := strconv.ParseUint(seq, 10, 64); err != nil {
			t.Fatalf("message %q: seq: %v", msg, err)
		}
		if _, err := strconv.ParseInt(fields[2], 10, 64); err != nil {
			t.Fatalf("message %q: intended: %v", msg, err)
		}
	})
}

// answerOK answers 200 "ok".
func answerOK(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }

func TestMiddlewareAllocatesNothingUntraced(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("a trace is being recorded (go test -trace?)")
	}
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set(RequestHeader, "run1-42 1700000000000000000")
	rec := httptest.NewRecorder()
	serve := func(h http.Handler) func() {
		return func() {
			rec.Body.Reset()
			h.ServeHTTP(rec, req)
		}
	}
	bare := testing.AllocsPerRun(1000, serve(http.HandlerFunc(answerOK)))
	wrapped := testing.AllocsPerRun(1000, serve(Middleware(http.HandlerFunc(answerOK))))
	if wrapped != bare {
		t.Errorf("untraced: %v allocations per request with Middleware, %v without", wrapped, bare)
	}
	if n := testing.AllocsPerRun(1000, func() { Wait(req.Context(), "db")() }); n != 0 {
		t.Errorf("untraced: Wait allocates %v times", n)
	}
}

// ctxKey marks a request context, to tell whether Middleware replaced it.
type ctxKey struct{}

func TestMiddlewarePassesRequestOn(t *testing.T) {
	var sawOriginal []bool
	h := Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawOriginal = append(sawOriginal, r.Context().Value(ctxKey{}) == "original")
		end := Wait(r.Context(), "db")
		end()
		w.WriteHeader(http.StatusTeapot)
	}))
	serve := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req = req.WithContext(context.WithValue(req.Context(), ctxKey{}, "original"))
		req.Header.Set(RequestHeader, "run1-42 1700000000000000000")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := serve(); rec.Code != http.StatusTeapot {
		t.Errorf("untraced: status %d", rec.Code)
	}
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("tracer busy: %v", err)
	}
	rec := serve()
	trace.Stop()
	if rec.Code != http.StatusTeapot {
		t.Errorf("traced: status %d", rec.Code)
	}
	if len(sawOriginal) != 2 || !sawOriginal[0] || !sawOriginal[1] {
		t.Errorf("the handler's context did not derive from the request's: %v", sawOriginal)
	}
	// A smoke check; internal/anatomytest parses the trace.
	for _, s := range []string{RequestTaskType, "run1-42 1700000000000000000", WaitRegionPrefix + "db"} {
		if !bytes.Contains(buf.Bytes(), []byte(s)) {
			t.Errorf("trace lacks %q", s)
		}
	}
}
