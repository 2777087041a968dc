package main

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestWithView(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	type event struct {
		n    int
		last bool
	}
	last := func(e event) bool { return e.last }
	errView := errors.New("view: terminal gone")
	errRun := errors.New("run: target gone")
	for _, tc := range []struct {
		name string
		// leaveAfter: the view returns after this many events (-1: at the
		// end of the feed); viewErr is what it returns.
		leaveAfter int
		viewErr    error
		runErr     error
		wantStop   bool
	}{
		{name: "the view reads to the end", leaveAfter: -1},
		{name: "the person leaves, the run ends on its own", leaveAfter: 1},
		{name: "the view fails: the run is stopped", leaveAfter: 1, viewErr: errView, wantStop: true},
		{name: "both fail", leaveAfter: 0, viewErr: errView, runErr: errRun, wantStop: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStream(2, last)
			var stopped atomic.Bool
			var sawLast bool
			got, err := withView(t.Context(), s, func(events <-chan event) error {
				i := 0
				for e := range events {
					if i == tc.leaveAfter {
						break
					}
					i++
					sawLast = sawLast || e.last
				}
				return tc.viewErr
			}, func() { stopped.Store(true) }, func(ctx context.Context) (int, error) {
				// Far more events than the stream holds: ordinary ones are
				// dropped when the view is behind, never block.
				for i := range 1000 {
					s.send(event{n: i})
				}
				s.send(event{n: 1000, last: true})
				return 42, tc.runErr
			})
			if got != 42 {
				t.Errorf("result %d, want the producer's 42", got)
			}
			for _, want := range []error{tc.runErr, tc.viewErr} {
				if want != nil && !errors.Is(err, want) {
					t.Errorf("error %v, want it to hold %v", err, want)
				}
			}
			if tc.runErr == nil && tc.viewErr == nil && err != nil {
				t.Errorf("error %v, want none", err)
			}
			if stopped.Load() != tc.wantStop {
				t.Errorf("stop called: %v, want %v", stopped.Load(), tc.wantStop)
			}
			if tc.leaveAfter < 0 && !sawLast {
				t.Error("the last event must reach a view that reads to the end")
			}
		})
	}
}
