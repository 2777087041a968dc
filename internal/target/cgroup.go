package target

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/schedscope/schedscope/internal/rundir"
)

// ErrNoCPUController is returned by ReadCgroup when the process's cgroup
// has no CPU controller schedscope can read (not Linux, or neither a cgroup
// v1 "cpu" hierarchy nor a cgroup v2 one with cpu.stat is mounted).
var ErrNoCPUController = errors.New("no cgroup CPU controller")

// ReadCgroup reads the CPU limit and throttling counters of process pid's
// own cgroup: cgroup v1's cpu hierarchy (cpu.cfs_quota_us,
// cpu.cfs_period_us, cpu.stat) when the process is in one, else cgroup
// v2's (cpu.max, cpu.stat).
func ReadCgroup(pid int) (rundir.CgroupCounters, error) {
	return readCgroup(procRoot, pid)
}

func readCgroup(proc string, pid int) (rundir.CgroupCounters, error) {
	cg, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return rundir.CgroupCounters{}, fmt.Errorf("cgroup of process %d: %w", pid, err)
	}
	mounts, err := os.ReadFile(filepath.Join(proc, "self", "mountinfo"))
	if err != nil {
		return rundir.CgroupCounters{}, fmt.Errorf("cgroup mounts: %w", err)
	}
	v1Path, v2Path, hasV1, hasV2 := parseProcCgroup(string(cg))
	v1Mount, v2Mount := cgroupMounts(string(mounts))
	switch {
	case hasV1 && v1Mount != "":
		return readCgroupV1(filepath.Join(v1Mount, v1Path), v1Path)
	case hasV2 && v2Mount != "":
		c, err := readCgroupV2(filepath.Join(v2Mount, v2Path), v2Path)
		if errors.Is(err, os.ErrNotExist) {
			return c, fmt.Errorf("cgroup %s of process %d: %w", v2Path, pid, ErrNoCPUController)
		}
		return c, err
	}
	return rundir.CgroupCounters{}, fmt.Errorf("process %d: %w", pid, ErrNoCPUController)
}

// parseProcCgroup reads /proc/PID/cgroup: the path in the v1 hierarchy
// holding the "cpu" controller, and the v2 path ("0::/path").
func parseProcCgroup(s string) (v1Path, v2Path string, hasV1, hasV2 bool) {
	for line := range strings.SplitSeq(s, "\n") {
		id, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		controllers, path, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		if id == "0" && controllers == "" {
			v2Path, hasV2 = path, true
			continue
		}
		for c := range strings.SplitSeq(controllers, ",") {
			if c == "cpu" {
				v1Path, hasV1 = path, true
			}
		}
	}
	return v1Path, v2Path, hasV1, hasV2
}

// cgroupMounts finds, in /proc/self/mountinfo, where the v1 hierarchy with
// the cpu controller and the v2 hierarchy are mounted ("" when not).
func cgroupMounts(mountinfo string) (v1, v2 string) {
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	for sc.Scan() {
		// ID parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 1 {
			continue
		}
		switch g[0] {
		case "cgroup2":
			if v2 == "" {
				v2 = f[4]
			}
		case "cgroup":
			if len(g) >= 3 && v1 == "" {
				for o := range strings.SplitSeq(g[2], ",") {
					if o == "cpu" {
						v1 = f[4]
					}
				}
			}
		}
	}
	return v1, v2
}

func readCgroupV1(dir, path string) (rundir.CgroupCounters, error) {
	c := rundir.CgroupCounters{Version: 1, Path: path}
	quota, err := readInt(filepath.Join(dir, "cpu.cfs_quota_us"))
	if err != nil {
		return c, err
	}
	period, err := readInt(filepath.Join(dir, "cpu.cfs_period_us"))
	if err != nil {
		return c, err
	}
	if quota > 0 && period > 0 {
		c.QuotaCores, c.PeriodUS = float64(quota)/float64(period), period
	}
	st, err := readKeyed(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return c, err
	}
	c.Periods, c.Throttled = st["nr_periods"], st["nr_throttled"]
	c.ThrottledSeconds = float64(st["throttled_time"]) / 1e9 // nanoseconds
	return c, nil
}

func readCgroupV2(dir, path string) (rundir.CgroupCounters, error) {
	c := rundir.CgroupCounters{Version: 2, Path: path}
	st, err := readKeyed(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return c, err
	}
	c.Periods, c.Throttled = st["nr_periods"], st["nr_throttled"]
	c.ThrottledSeconds = float64(st["throttled_usec"]) / 1e6
	b, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
	if errors.Is(err, os.ErrNotExist) {
		return c, nil // the root cgroup has no cpu.max
	}
	if err != nil {
		return c, err
	}
	f := strings.Fields(string(b))
	if len(f) == 2 && f[0] != "max" {
		quota, qerr := strconv.ParseInt(f[0], 10, 64)
		period, perr := strconv.ParseInt(f[1], 10, 64)
		if qerr != nil || perr != nil || period <= 0 {
			return c, fmt.Errorf("%s: unexpected %q", filepath.Join(dir, "cpu.max"), strings.TrimSpace(string(b)))
		}
		c.QuotaCores, c.PeriodUS = float64(quota)/float64(period), period
	}
	return c, nil
}

// readInt reads a file holding one integer.
func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// readKeyed reads a file of "key value" lines (cpu.stat).
func readKeyed(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}
