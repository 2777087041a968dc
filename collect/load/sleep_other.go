//go:build !linux

package load

import "time"

// shortSleep sleeps for d with the runtime's timer precision.
func shortSleep(d time.Duration) { time.Sleep(d) }
