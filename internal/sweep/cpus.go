package sweep

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// AllowedCPUs returns the CPUs this process may run on, ascending, from
// sched_getaffinity; nil when that fails.
func AllowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// PinList returns the taskset list for a target with n Ps: the last n of
// allowed (so the lowest-numbered CPUs, where the generator's first threads
// tend to run, are left to it when there are spare ones), and false when
// there are fewer than n allowed CPUs.
func PinList(allowed []int, n int) (string, bool) {
	if n <= 0 || len(allowed) < n {
		return "", false
	}
	return formatCPUList(allowed[len(allowed)-n:]), true
}

// formatCPUList writes ascending CPU numbers as taskset's list: "0-3,6".
func formatCPUList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// ParseCPUList parses a taskset-style CPU list ("0-3,8,10-11") into
// ascending CPU numbers.
func ParseCPUList(s string) ([]int, error) {
	seen := map[int]bool{}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b > 4095 {
			return nil, fmt.Errorf("CPU list %q: bad element %q (want e.g. 0-3,8)", s, part)
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				cpus = append(cpus, c)
			}
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("CPU list %q: empty", s)
	}
	sort.Ints(cpus)
	return cpus, nil
}
