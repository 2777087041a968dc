//go:build unix

package agent

import "syscall"

// processCPU returns the user and system CPU time the process has used so
// far; ok is false when it cannot be read.
func processCPU() (ns int64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
