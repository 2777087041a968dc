package target

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/schedscope/schedscope/internal/cgroup"
	"github.com/schedscope/schedscope/internal/rundir"
)

// ErrNoCPUController is returned by ReadCgroup when the process's cgroup
// has no CPU controller schedscope can read (not Linux, or neither a cgroup
// v1 "cpu" hierarchy nor a cgroup v2 one with cpu.stat is mounted).
var ErrNoCPUController = errors.New("no cgroup CPU controller")

// ReadCgroup reads the CPU limit and throttling counters of process pid's
// own cgroup: cgroup v1's cpu hierarchy (cpu.cfs_quota_us,
// cpu.cfs_period_us, cpu.stat) when the process is in one, else cgroup
// v2's (cpu.max, cpu.stat). It also walks up the cgroup's ancestors in the
// same hierarchy, up to the mount point, for the tightest CPU limit
// (TightestQuotaCores): the Go runtime reads the leaf's limit only.
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
		c, err := readCgroupV1(filepath.Join(v1Mount, v1Path), v1Path)
		if err != nil {
			return c, err
		}
		return c, tightestLimit(&c, v1Mount, readLimitV1)
	case hasV2 && v2Mount != "":
		c, err := readCgroupV2(filepath.Join(v2Mount, v2Path), v2Path)
		if errors.Is(err, os.ErrNotExist) {
			return c, fmt.Errorf("cgroup %s of process %d: %w", v2Path, pid, ErrNoCPUController)
		}
		if err != nil {
			return c, err
		}
		return c, tightestLimit(&c, v2Mount, readLimitV2)
	}
	return rundir.CgroupCounters{}, fmt.Errorf("process %d: %w", pid, ErrNoCPUController)
}

// tightestLimit sets c's TightestQuotaCores and TightestPath from the leaf's
// limit and those of its ancestors under mount, read by limit (cores, 0
// when none), and the throttling counters of the ancestor that sets it. An
// ancestor the mount does not show (a container's view of a hierarchy)
// ends the walk; any other read error is returned.
func tightestLimit(c *rundir.CgroupCounters, mount string, limit func(dir string) (cores float64, periodUS int64, err error)) error {
	if c.QuotaCores > 0 {
		c.TightestQuotaCores, c.TightestPath = c.QuotaCores, c.Path
	}
	p := c.Path
	for p != "/" && p != "" && p != "." {
		p = filepath.Dir(p)
		q, _, err := limit(filepath.Join(mount, p))
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return fmt.Errorf("cgroup %s, ancestor %s: %w", c.Path, p, err)
		}
		if q > 0 && (c.TightestQuotaCores == 0 || q < c.TightestQuotaCores) {
			c.TightestQuotaCores, c.TightestPath = q, p
		}
	}
	if c.TightestPath == "" || c.TightestPath == c.Path {
		return nil
	}
	st, err := readCPUStat(filepath.Join(mount, c.TightestPath))
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", c.TightestPath, err)
	}
	c.TightestStat = &st
	return nil
}

// readCPUStat reads the throttling counters of the cgroup in dir (cgroup's
// cpu.stat parser; counters it lacks are 0).
func readCPUStat(dir string) (rundir.CgroupStat, error) {
	st, err := cgroup.ReadCounters(dir)
	if err != nil {
		return rundir.CgroupStat{}, err
	}
	return rundir.CgroupStat{Periods: st.Periods, Throttled: st.Throttled, ThrottledSeconds: st.Time.Seconds()}, nil
}

// readLimitV1 reads a v1 cpu cgroup's limit in cores and its period (0:
// none).
func readLimitV1(dir string) (float64, int64, error) {
	quota, err := readInt(filepath.Join(dir, "cpu.cfs_quota_us"))
	if err != nil {
		return 0, 0, err
	}
	period, err := readInt(filepath.Join(dir, "cpu.cfs_period_us"))
	if err != nil {
		return 0, 0, err
	}
	if quota > 0 && period > 0 {
		return float64(quota) / float64(period), period, nil
	}
	return 0, 0, nil
}

// readLimitV2 reads a v2 cgroup's cpu.max in cores and its period (0:
// none, or no cpu.max, as in the root cgroup).
func readLimitV2(dir string) (float64, int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return 0, 0, serr // the ancestor itself is not visible
		}
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0, 0, nil
	}
	quota, qerr := strconv.ParseInt(f[0], 10, 64)
	period, perr := strconv.ParseInt(f[1], 10, 64)
	if qerr != nil || perr != nil || period <= 0 {
		return 0, 0, fmt.Errorf("%s: unexpected %q", filepath.Join(dir, "cpu.max"), strings.TrimSpace(string(b)))
	}
	return float64(quota) / float64(period), period, nil
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

// readCgroupV1 reads a v1 cpu cgroup's limit and counters.
func readCgroupV1(dir, path string) (rundir.CgroupCounters, error) {
	c := rundir.CgroupCounters{Version: 1, Path: path}
	var err error
	if c.QuotaCores, c.PeriodUS, err = readLimitV1(dir); err != nil {
		return c, err
	}
	st, err := readCPUStat(dir)
	c.Periods, c.Throttled, c.ThrottledSeconds = st.Periods, st.Throttled, st.ThrottledSeconds
	return c, err
}

// readCgroupV2 reads a v2 cgroup's counters and limit.
func readCgroupV2(dir, path string) (rundir.CgroupCounters, error) {
	c := rundir.CgroupCounters{Version: 2, Path: path}
	st, err := readCPUStat(dir)
	if err != nil {
		return c, err
	}
	c.Periods, c.Throttled, c.ThrottledSeconds = st.Periods, st.Throttled, st.ThrottledSeconds
	c.QuotaCores, c.PeriodUS, err = readLimitV2(dir)
	return c, err
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
