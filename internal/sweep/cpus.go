package sweep

import "github.com/schedscope/schedscope/internal/target"

// PinList returns the taskset list for a target with n Ps: the last n of
// allowed (so the lowest-numbered CPUs, where the generator's first threads
// tend to run, are left to it when there are spare ones), and false when
// there are fewer than n allowed CPUs.
func PinList(allowed []int, n int) (string, bool) {
	if n <= 0 || len(allowed) < n {
		return "", false
	}
	return target.FormatCPUList(allowed[len(allowed)-n:]), true
}
