package load

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// preciseSleeper sleeps with microsecond precision without holding an OS
// thread or a P. The Go runtime's own timers wake an idle process with
// millisecond granularity (its netpoller waits in whole milliseconds), which
// would show as send lag at low rates; a timerfd in the netpoller wakes it
// on time instead: the sleeping goroutine parks like any network read.
//
// A preciseSleeper is used by one goroutine at a time.
type preciseSleeper struct {
	fd  int
	f   *os.File
	buf [8]byte
}

func newPreciseSleeper() (*preciseSleeper, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd: %w", err)
	}
	// A non-blocking descriptor: os.NewFile registers it with the netpoller.
	return &preciseSleeper{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}, nil
}

// sleep blocks for about d (d > 0). An error means the timer could not be
// armed or read; the caller falls back to the runtime's timers.
func (s *preciseSleeper) sleep(d time.Duration) error {
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(s.fd, 0, &its, nil); err != nil {
		return err
	}
	_, err := s.f.Read(s.buf[:])
	return err
}

func (s *preciseSleeper) close() { s.f.Close() }
