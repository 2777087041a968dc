package main

import (
	"context"
	"errors"

	"github.com/schedscope/schedscope/internal/tui"
)

// stream carries a producer's events (a run's or the tour's frames, a
// sweep's progress) to the view that shows them. An ordinary event never
// makes the producer wait: one the view has no room for is dropped, and the
// next one carries the news. An event for which mustArrive is true (the end
// screen, a finished step) waits for room; the view, or withView's drain
// after the view has gone, takes it.
type stream[E any] struct {
	events     chan E
	mustArrive func(E) bool
}

// newStream returns a stream that holds up to buffer events the view has
// not read yet.
func newStream[E any](buffer int, mustArrive func(E) bool) *stream[E] {
	return &stream[E]{events: make(chan E, buffer), mustArrive: mustArrive}
}

// send hands e to the view. It may be called from any goroutine, but only
// while withView's produce runs: the stream is closed when produce returns.
func (s *stream[E]) send(e E) {
	if s.mustArrive(e) {
		s.events <- e
		return
	}
	select {
	case s.events <- e:
	default: // the view is behind
	}
}

// endFrame reports whether f is a run's last Frame, the one that must arrive.
func endFrame(f tui.Frame) bool { return f.End != nil }

// withView runs produce(ctx) on a goroutine of its own while show reads s,
// and returns what produce returned, its error joined with show's, once
// both have ended. produce sends its events through s, which is closed when
// produce returns, so show sees the end of the feed. When show fails, stop
// asks the producer to end early; whenever show returns before the end of
// the feed (it failed, or the person left the view while the producer
// finishes), the rest of s is drained, so the producer never blocks on
// send. No goroutine outlives the call.
func withView[E, T any](ctx context.Context, s *stream[E], show func(<-chan E) error, stop func(),
	produce func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := produce(ctx)
		close(s.events)
		done <- result{v, err}
	}()
	viewErr := show(s.events)
	if viewErr != nil {
		stop()
	}
	for range s.events {
	}
	res := <-done
	return res.v, errors.Join(res.err, viewErr)
}
