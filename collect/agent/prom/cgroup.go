package prom

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// CPULimit is the CPU limit of the nearest cgroup, the process's own or an
// ancestor, that has one, with that cgroup's throttling counters.
type CPULimit struct {
	// Dir is the cgroup's directory.
	Dir string
	// Cores is the quota over the period (cpu.max, or cpu.cfs_quota_us over
	// cpu.cfs_period_us in cgroup v1).
	Cores float64
	// Periods, ThrottledPeriods and ThrottledSeconds are cpu.stat's
	// nr_periods, nr_throttled and throttled_usec (v1: throttled_time),
	// cumulative.
	Periods, ThrottledPeriods int64
	ThrottledSeconds          float64
}

// ReadCPULimit reads the CPU limit of the process described by
// procCgroup (the text of /proc/self/cgroup) under the cgroup file system
// mounted at root (/sys/fs/cgroup). It returns ok false, and no error, when
// no cgroup on the path up to the root has a limit.
func ReadCPULimit(root string, procCgroup []byte) (lim CPULimit, ok bool, err error) {
	v2, v1dir, v1path := "", "", ""
	sc := bufio.NewScanner(bytes.NewReader(procCgroup))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2 = f[2]
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "cpu" {
				v1dir, v1path = f[1], f[2]
			}
		}
	}
	switch {
	case v1path != "":
		// The v1 cpu controller may be mounted as "cpu,cpuacct" or "cpu".
		for _, mount := range []string{v1dir, "cpu"} {
			if _, err := os.Stat(filepath.Join(root, mount)); err == nil {
				return walkUp(filepath.Join(root, mount), v1path, readV1)
			}
		}
		return lim, false, fmt.Errorf("cgroup v1 cpu controller: not mounted under %s", root)
	case v2 != "":
		return walkUp(root, v2, readV2)
	}
	return lim, false, errors.New("no cgroup in /proc/self/cgroup")
}

// walkUp reads the cgroups from rel up to the root and returns the first
// with a limit. A cgroup path the process cannot see (a container's
// namespace maps it to "/") ends at the mount's root.
func walkUp(mount, rel string, read func(dir string) (CPULimit, bool, error)) (CPULimit, bool, error) {
	for p := path.Clean("/" + rel); ; p = path.Dir(p) {
		dir := filepath.Join(mount, filepath.FromSlash(p))
		lim, ok, err := read(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return lim, false, err
		}
		if ok {
			return lim, true, nil
		}
		if p == "/" {
			return CPULimit{}, false, nil
		}
	}
}

func readV2(dir string) (CPULimit, bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
	if err != nil {
		return CPULimit{}, false, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return CPULimit{}, false, nil
	}
	quota, err1 := strconv.ParseFloat(f[0], 64)
	period, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || period <= 0 {
		return CPULimit{}, false, fmt.Errorf("%s/cpu.max: %q: want QUOTA PERIOD", dir, strings.TrimSpace(string(b)))
	}
	return withStat(CPULimit{Dir: dir, Cores: quota / period}, "throttled_usec", 1e6)
}

func readV1(dir string) (CPULimit, bool, error) {
	qb, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
	if err != nil {
		return CPULimit{}, false, err
	}
	pb, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if err != nil {
		return CPULimit{}, false, err
	}
	quota, err1 := strconv.ParseFloat(strings.TrimSpace(string(qb)), 64)
	period, err2 := strconv.ParseFloat(strings.TrimSpace(string(pb)), 64)
	if err1 != nil || err2 != nil || period <= 0 {
		return CPULimit{}, false, fmt.Errorf("%s: cpu.cfs_quota_us %q, cpu.cfs_period_us %q: want numbers", dir, qb, pb)
	}
	if quota < 0 {
		return CPULimit{}, false, nil
	}
	return withStat(CPULimit{Dir: dir, Cores: quota / period}, "throttled_time", 1e9)
}

// withStat adds lim's cgroup's periods and throttling from its cpu.stat,
// whose throttled time is under throttledKey in units of 1/perSecond s
// (v2: throttled_usec, v1: throttled_time in ns).
func withStat(lim CPULimit, throttledKey string, perSecond float64) (CPULimit, bool, error) {
	st, err := readStat(lim.Dir)
	if err != nil {
		return lim, false, err
	}
	lim.Periods, lim.ThrottledPeriods = st["nr_periods"], st["nr_throttled"]
	lim.ThrottledSeconds = float64(st[throttledKey]) / perSecond
	return lim, true, nil
}

// readStat reads cpu.stat's "key value" lines.
func readStat(dir string) (map[string]int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return nil, err
	}
	st := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			st[k] = n
		}
	}
	return st, nil
}
