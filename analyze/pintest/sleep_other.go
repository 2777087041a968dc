//go:build !linux

package pintest

import "time"

// syscallSleepAvailable says whether syscallSleep can pin a thread here: the
// control's system call is Linux's nanosleep, so elsewhere the control is
// the locked goroutine alone.
const syscallSleepAvailable = false

func syscallSleep(time.Duration) {}
