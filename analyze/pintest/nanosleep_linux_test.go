//go:build linux

package pintest_test

import (
	"syscall"
	"time"
)

// nanosleep blocks in the nanosleep system call for d.
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
