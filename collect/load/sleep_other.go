//go:build !linux

package load

import (
	"errors"
	"time"
)

// preciseSleeper is only implemented on Linux; elsewhere the runtime's
// timers are used.
type preciseSleeper struct{}

func newPreciseSleeper() (*preciseSleeper, error) {
	return nil, errors.New("no precise sleeper on this platform")
}

func (s *preciseSleeper) sleep(d time.Duration) error { time.Sleep(d); return nil }

func (s *preciseSleeper) close() {}
