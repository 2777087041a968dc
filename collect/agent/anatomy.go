package agent

import (
	"context"
	"net/http"
	"runtime/trace"
	"strconv"
	"strings"
	"time"
)

// The request-anatomy contract: the names schedscope's trace analyzer
// (package analyze) looks for in a runtime/trace execution trace of the
// target, to split each request's wall time by what its goroutines were
// doing. They are part of the trace format and do not change.
const (
	// RequestHeader is the header `schedscope run`'s load generator sets on
	// every request: "<id> <intended-unix-ns>", where id is "<tag>-<seq>"
	// (tag 1 to 32 characters of A-Z, a-z, 0-9, '_' and '.'; seq a decimal
	// uint64) and intended-unix-ns the decimal int64 time the schedule meant
	// the request to start. Middleware copies it into its log; the analyzer
	// joins the log to the generator's record of the request through it.
	RequestHeader = "Schedscope-Request"

	// RequestTaskType is the type of the runtime/trace task Middleware runs
	// each request in. The analyzer takes every task of this type for one
	// request, from its begin to its end.
	RequestTaskType = "schedscope.request"

	// HandlerRegionType is the type of the runtime/trace region Middleware
	// opens in each request's task, on the handler's goroutine, around the
	// call of next: the analyzer takes the request's time from it (a task's
	// end event does not carry what the analyzer needs to read it safely
	// while the trace is still being parsed).
	HandlerRegionType = "schedscope.handler"

	// RequestLogCategory is the category of the trace log Middleware writes
	// on the handler goroutine as a request's task begins. Its message is
	// "<handler-start-unix-ns>", or "<handler-start-unix-ns> <id>
	// <intended-unix-ns>" when the request carried a well-formed
	// RequestHeader (its value copied as it came). The analyzer reads it to
	// place the task on the wall clock and to join it to the generator's
	// record of the request.
	RequestLogCategory = "schedscope.request"

	// WaitRegionPrefix begins the type of the runtime/trace region Wait
	// opens: "schedscope.wait:<pool>". The analyzer counts the time a
	// request's goroutine spends in such a region as waiting for that pool.
	WaitRegionPrefix = "schedscope.wait:"

	// WorkRegionType is the region type the examples and schedscope's
	// fixture use when a request's work runs on another goroutine (a worker
	// pool's): trace.WithRegion(reqCtx, WorkRegionType, work). The analyzer
	// takes any region that carries the request's task there, whatever its
	// type, and shows the request waiting for that goroutine meanwhile.
	WorkRegionType = "schedscope.work"
)

// maxRequestHeaderLen bounds a RequestHeader value: a 32-byte tag, '-', a
// uint64 (20 digits), ' ', an int64 (a sign and 19 digits).
const maxRequestHeaderLen = 32 + 1 + 20 + 1 + 20

// Middleware marks each request for schedscope's trace analyzer while an
// execution trace is being recorded (by the agent's /trace endpoint, its
// flight recorder, or anything else that calls runtime/trace.Start): the
// request runs inside a task of type RequestTaskType, begun before next is
// called and ended when it returns, and the task's first event is a log of
// category RequestLogCategory (see there for the message), written on the
// handler's goroutine, then a region of type HandlerRegionType spans the
// call. next gets the request with the task's context, so
// Wait and trace regions under it belong to the request.
//
// With no trace being recorded, Middleware calls next with the request as it
// came, and allocates nothing. Wrap the handlers whose requests schedscope
// measures, not the agent's own endpoints. The returned handler is safe for
// concurrent use if next is.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !trace.IsEnabled() {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now().UnixNano()
		ctx, task := trace.NewTask(r.Context(), RequestTaskType)
		defer task.End()
		trace.Log(ctx, RequestLogCategory, requestLog(start, r.Header[RequestHeader]))
		region := trace.StartRegion(ctx, HandlerRegionType)
		defer region.End()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// requestLog is the RequestLogCategory message for a request whose handler
// started at start (unix ns) and that carried values in RequestHeader: the
// start time, then the header's one value when it is well formed.
func requestLog(start int64, values []string) string {
	msg := strconv.FormatInt(start, 10)
	if len(values) != 1 || !validRequestHeader(values[0]) {
		return msg
	}
	return msg + " " + values[0]
}

// validRequestHeader reports whether v is "<tag>-<seq> <intended>" as
// RequestHeader describes, with nothing before, between or after.
func validRequestHeader(v string) bool {
	if len(v) > maxRequestHeaderLen {
		return false
	}
	id, intended, ok := strings.Cut(v, " ")
	if !ok {
		return false
	}
	tag, seq, ok := strings.Cut(id, "-")
	if !ok || !validTag(tag) || !decimal(seq) || !decimal(strings.TrimPrefix(intended, "-")) {
		return false
	}
	if _, err := strconv.ParseUint(seq, 10, 64); err != nil {
		return false // out of range
	}
	_, err := strconv.ParseInt(intended, 10, 64)
	return err == nil
}

// validTag reports whether tag is 1 to 32 characters of A-Z, a-z, 0-9, '_'
// and '.'.
func validTag(tag string) bool {
	if len(tag) == 0 || len(tag) > 32 {
		return false
	}
	for _, c := range []byte(tag) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// decimal reports whether s is one or more ASCII digits.
func decimal(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Wait marks a wait for the pool named pool, for schedscope's trace
// analyzer: while an execution trace is being recorded it opens a region of
// type WaitRegionPrefix+pool under ctx (the request's context, as Middleware
// passes it on), and end closes it. Call Wait just before the wait and end
// as soon as it is over, whether it succeeded or not, on the same goroutine
// (a runtime/trace region belongs to the goroutine that began it), once:
//
//	end := agent.Wait(ctx, "db")
//	conn, err := db.Conn(ctx)
//	end()
//
// With no trace being recorded, Wait allocates nothing and end does nothing.
// pool should be a name registered with Pools, so the analyzer's waits and
// the agent's pool figures line up.
func Wait(ctx context.Context, pool string) (end func()) {
	if !trace.IsEnabled() {
		return waitNotTraced
	}
	return trace.StartRegion(ctx, WaitRegionPrefix+pool).End
}

// waitNotTraced is Wait's end when no trace was being recorded.
func waitNotTraced() {}
