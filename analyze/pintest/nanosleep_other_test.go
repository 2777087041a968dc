//go:build !linux

package pintest_test

import "time"

// nanosleep is Linux's; the tests that need it skip elsewhere.
func nanosleep(time.Duration) {}
