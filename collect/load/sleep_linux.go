package load

import (
	"syscall"
	"time"
)

// shortSleep sleeps for d (under a few milliseconds) with microsecond
// precision. The Go runtime's timers wake an idle process with millisecond
// granularity (its netpoller waits in whole milliseconds), which would show
// as send lag; nanosleep blocks this goroutine's thread instead, for at most
// d, with the kernel's timer slack (50 us by default).
func shortSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR only shortens the sleep: the caller loops
}
