package pintest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/schedscope/schedscope/analyze/pintest"
)

// report is the handler under test. It waits the way a handler waits on a
// downstream service: its goroutine parks and its OS thread goes on to run
// other goroutines.
func report(w http.ResponseWriter, r *http.Request) {
	time.Sleep(30 * time.Millisecond)
	fmt.Fprintln(w, "ok")
}

// testReportDoesNotPin is the test a user writes; in a _test.go file it is
// func TestReportDoesNotPin(t *testing.T).
func testReportDoesNotPin(t testing.TB) {
	srv := httptest.NewServer(http.HandlerFunc(report))
	defer srv.Close()
	pintest.NoPinning(t, func() {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Errorf("GET: %v", err)
			return
		}
		resp.Body.Close()
	}, pintest.Expect("pintest_test.report")) // the handler must be seen running
}

// A test that a handler reached over HTTP does not pin an OS thread. The
// handler runs on net/http's goroutine for the connection, not on f's, and
// its pins count all the same; Expect proves it ran. Were report to call
// runtime.LockOSThread before its wait, or make the wait a cgo call, the
// test would fail with the pin's kind, duration and call site.
func ExampleNoPinning() {
	t := &exampleT{}
	testReportDoesNotPin(t)
	fmt.Println("failed:", t.failed)
	// Output: failed: false
}

// exampleT stands in for the *testing.T that go test passes: it prints
// failures and drops the log.
type exampleT struct {
	testing.TB
	failed bool
}

func (t *exampleT) Helper()                   {}
func (t *exampleT) Logf(string, ...any)       {}
func (t *exampleT) Errorf(f string, a ...any) { t.failed = true; fmt.Printf(f+"\n", a...) }
func (t *exampleT) Fatalf(f string, a ...any) { t.failed = true; fmt.Printf(f+"\n", a...) }
