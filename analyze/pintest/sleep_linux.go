//go:build linux

package pintest

import (
	"syscall"
	"time"
)

// syscallSleepAvailable says whether syscallSleep can pin a thread here.
const syscallSleepAvailable = true

// syscallSleep blocks in the nanosleep system call for d, through
// syscall.Syscall, so the runtime sees it (the trace shows the goroutine
// Running -> Syscall) and the thread is held meanwhile. An interrupted sleep
// resumes with the time left.
func syscallSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for {
		var left syscall.Timespec
		if err := syscall.Nanosleep(&ts, &left); err != syscall.EINTR {
			return
		}
		ts = left
	}
}
