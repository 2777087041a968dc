// Package cgroup puts a target process under a CPU quota: it finds the cpu
// controller (cgroup v2's unified cpu.max, or v1's cpu hierarchy with
// cpu.cfs_quota_us and cpu.cfs_period_us), creates a child cgroup for one
// target under a schedscope-owned parent, moves the target into it, reads
// its cpu.stat, and removes it. It imports nothing of schedscope.
//
// Every child's name starts with its owner's PID ("pid-4242-..."), so a
// later sweep removes what a crashed one left (RemoveStale).
//
// The hierarchy's root is a parameter (DefaultRoot on a real machine), so
// tests run on a fake tree in a temporary directory.
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultRoot is where cgroup file systems are mounted.
const DefaultRoot = "/sys/fs/cgroup"

// Parent is the schedscope-owned cgroup that holds every child.
const Parent = "schedscope"

// Period is the quota period children get: a limit of L CPUs is a quota of
// L x Period per Period.
const Period = 100 * time.Millisecond

// MinLimit is the lowest accepted limit (exclusive): the kernel refuses a
// quota under 1 ms.
const MinLimit = 0.01

// Version is the cgroup version of a hierarchy: 1 or 2.
type Version int

// Hierarchy is the cpu controller's hierarchy, found by Detect.
type Hierarchy struct {
	Version Version
	// CPUDir is the directory of the cpu controller's root cgroup:
	// root/cpu (v1) or root (v2).
	CPUDir string
	// rmdir removes a child; os.Remove on a real hierarchy (a cgroup's
	// files are the kernel's, and go with the directory). Tests on a fake
	// tree, whose files are real, set os.RemoveAll.
	rmdir func(string) error
}

// String says which hierarchy: "cgroup v1, cpu controller at /sys/fs/cgroup/cpu".
func (h Hierarchy) String() string {
	return fmt.Sprintf("cgroup v%d, cpu controller at %s", h.Version, h.CPUDir)
}

// Detect finds the cpu controller under root: cgroup v2 when root holds
// cgroup.controllers naming cpu, v1 when root/cpu holds cpu.cfs_quota_us.
// The error names what is missing. Detect does not check permission: see
// Check.
func Detect(root string) (Hierarchy, error) {
	h := Hierarchy{rmdir: os.Remove}
	if b, err := os.ReadFile(filepath.Join(root, "cgroup.controllers")); err == nil {
		if !slices.Contains(strings.Fields(string(b)), "cpu") {
			return h, fmt.Errorf("cgroup v2 at %s has no cpu controller (cgroup.controllers: %q)", root, strings.TrimSpace(string(b)))
		}
		h.Version, h.CPUDir = 2, root
		return h, nil
	}
	for _, d := range []string{"cpu", "cpu,cpuacct"} {
		dir := filepath.Join(root, d)
		if _, err := os.Stat(filepath.Join(dir, "cpu.cfs_quota_us")); err == nil {
			h.Version, h.CPUDir = 1, dir
			return h, nil
		}
	}
	return h, fmt.Errorf("no cpu controller under %s: neither cgroup v2 (cgroup.controllers) nor v1 (cpu/cpu.cfs_quota_us)", root)
}

// ParentDir is the schedscope parent cgroup's directory.
func (h Hierarchy) ParentDir() string { return filepath.Join(h.CPUDir, Parent) }

// Check makes sure the parent cgroup exists and children can be created
// in it, before any load: the error is one line naming what is missing
// (root, a read-only hierarchy).
func (h Hierarchy) Check() error {
	if err := h.ensureParent(); err != nil {
		return err
	}
	probe := filepath.Join(h.ParentDir(), fmt.Sprintf("pid-%d-probe", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return fmt.Errorf("cannot create cgroups in %s (run as root, on a writable cgroup hierarchy): %w", h.ParentDir(), errors.Unwrap(err))
	}
	if err := h.rmdir(probe); err != nil {
		return fmt.Errorf("cgroup %s: remove: %w", probe, err)
	}
	return nil
}

func (h Hierarchy) ensureParent() error {
	dir := h.ParentDir()
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cannot create cgroup %s (run as root, on a writable cgroup hierarchy): %w", dir, errors.Unwrap(err))
	}
	if h.Version == 2 {
		// Children get the cpu controller only when every ancestor
		// delegates it.
		for _, d := range []string{h.CPUDir, dir} {
			if err := writeFile(filepath.Join(d, "cgroup.subtree_control"), "+cpu"); err != nil {
				return fmt.Errorf("cgroup %s: enable the cpu controller for children: %w", d, err)
			}
		}
	}
	return nil
}

// CheckLimit refuses a limit outside (MinLimit, cpus]; cpus <= 0 means no
// upper bound.
func CheckLimit(limit float64, cpus int) error {
	switch {
	case math.IsNaN(limit) || limit <= MinLimit:
		return fmt.Errorf("CPU limit %g: must be above %g", limit, MinLimit)
	case cpus > 0 && limit > float64(cpus):
		return fmt.Errorf("CPU limit %g: at most the %d CPUs targets may use", limit, cpus)
	}
	return nil
}

// Group is one child cgroup with a CPU quota.
type Group struct {
	h     Hierarchy
	Dir   string
	Limit float64 // CPUs
	// Leaf, when set (CreateParent), is a child of Dir without a quota
	// that processes join: the limit is then a parent's.
	Leaf string
}

// LeafName is the unlimited child cgroup CreateParent makes.
const LeafName = "leaf"

// CreateParent is Create with the quota one level up: processes join the
// group's child LeafName, which has no quota of its own, as in a
// Kubernetes pod whose limit is set on the pod and not the container. The
// Go runtime reads only its own cgroup's limit (golang/go#81180), so a Go
// target in it takes GOMAXPROCS from the CPUs while the parent's quota
// throttles it.
func (h Hierarchy) CreateParent(name string, limit float64) (*Group, error) {
	g, err := h.Create(name, limit)
	if err != nil {
		return nil, err
	}
	leaf := filepath.Join(g.Dir, LeafName)
	if err := os.Mkdir(leaf, 0o755); err != nil {
		return nil, errors.Join(fmt.Errorf("cgroup: %w", err), g.Remove())
	}
	g.Leaf = leaf
	return g, nil
}

// Create creates the child cgroup pid-<this PID>-<name> under the parent
// with a quota of limit CPUs (limit x Period per Period). name must be a
// single path element. The caller must Remove it once its processes have
// exited.
func (h Hierarchy) Create(name string, limit float64) (*Group, error) {
	if err := CheckLimit(limit, 0); err != nil {
		return nil, err
	}
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup name %q: want one path element", name)
	}
	if err := h.ensureParent(); err != nil {
		return nil, err
	}
	g := &Group{h: h, Dir: filepath.Join(h.ParentDir(), fmt.Sprintf("pid-%d-%s", os.Getpid(), name)), Limit: limit}
	if err := os.Mkdir(g.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	period := Period.Microseconds()
	quota := int64(math.Round(limit * float64(period)))
	var err error
	if h.Version == 2 {
		err = writeFile(filepath.Join(g.Dir, "cpu.max"), fmt.Sprintf("%d %d", quota, period))
	} else {
		err = writeFile(filepath.Join(g.Dir, "cpu.cfs_period_us"), strconv.FormatInt(period, 10))
		if err == nil {
			err = writeFile(filepath.Join(g.Dir, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10))
		}
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("cgroup %s: set the quota: %w", g.Dir, err), g.Remove())
	}
	return g, nil
}

// Add moves process pid into g.
func (g *Group) Add(pid int) error {
	if err := writeFile(g.ProcsFile(), strconv.Itoa(pid)); err != nil {
		return fmt.Errorf("cgroup %s: add process %d: %w", g.join(), pid, err)
	}
	return nil
}

// ProcsFile is the file a process writes its PID to to join g; a target
// started through a shell joins before it execs (see Wrap).
func (g *Group) ProcsFile() string { return filepath.Join(g.join(), "cgroup.procs") }

// join is the directory processes join: the leaf when there is one.
func (g *Group) join() string {
	if g.Leaf != "" {
		return g.Leaf
	}
	return g.Dir
}

// Wrap returns argv prefixed with a shell that moves itself into g and then
// execs argv, so the target starts inside the quota (its runtime reads the
// limit when it starts).
func (g *Group) Wrap(argv []string) []string {
	return append([]string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, g.ProcsFile()}, argv...)
}

// Remove removes g. It fails while a process is in it. Removing a group
// that is already gone is not an error.
func (g *Group) Remove() error { return g.h.removeTree(g.Dir) }

// removeTree removes dir and its LeafName child, if any; a directory
// already gone is not an error.
func (h Hierarchy) removeTree(dir string) error {
	for _, d := range []string{filepath.Join(dir, LeafName), dir} {
		if err := h.rmdir(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("cgroup %s: remove: %w", d, err)
		}
	}
	return nil
}

// Stat is a cgroup's cpu.stat counters.
type Stat struct {
	Periods   int64         // enforcement periods with runnable tasks
	Throttled int64         // of Periods, those in which the quota ran out
	Time      time.Duration // total time its threads were throttled
}

// ThrottledShare is Throttled / Periods, 0 without periods.
func (s Stat) ThrottledShare() float64 {
	if s.Periods == 0 {
		return 0
	}
	return float64(s.Throttled) / float64(s.Periods)
}

// Sub is s - before: the counters over an interval.
func (s Stat) Sub(before Stat) Stat {
	return Stat{Periods: s.Periods - before.Periods, Throttled: s.Throttled - before.Throttled, Time: s.Time - before.Time}
}

// Stat reads g's cpu.stat.
func (g *Group) Stat() (Stat, error) { return ReadStat(g.Dir) }

// ReadStat reads the cpu.stat of the cgroup in dir: nr_periods,
// nr_throttled, and throttled_time (v1, ns) or throttled_usec (v2). A
// cpu.stat without those counters (the cpu controller not enabled there)
// is an error.
func ReadStat(dir string) (Stat, error) {
	s, seen, err := readStat(dir)
	if err != nil {
		return Stat{}, err
	}
	if seen < 3 {
		return Stat{}, fmt.Errorf("cgroup %s/cpu.stat: no throttling counters (is the cpu controller enabled?)", dir)
	}
	return s, nil
}

// ReadCounters is ReadStat for a cgroup schedscope did not make: the
// counters its cpu.stat has, 0 for those it lacks. Its error wraps
// fs.ErrNotExist when there is no cpu.stat.
func ReadCounters(dir string) (Stat, error) {
	s, _, err := readStat(dir)
	return s, err
}

// readStat reads dir's cpu.stat and says how many of the three counters
// it held; other lines are skipped.
func readStat(dir string) (s Stat, seen int, err error) {
	f, err := os.Open(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return Stat{}, 0, fmt.Errorf("cgroup: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		var field *int64
		var unit time.Duration
		switch k {
		case "nr_periods":
			field = &s.Periods
		case "nr_throttled":
			field = &s.Throttled
		case "throttled_time":
			unit = time.Nanosecond
		case "throttled_usec":
			unit = time.Microsecond
		default:
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return Stat{}, 0, fmt.Errorf("cgroup %s/cpu.stat: %s: %w", dir, k, err)
		}
		if field != nil {
			*field = n
		} else {
			s.Time = time.Duration(n) * unit
		}
		seen++
	}
	if err := sc.Err(); err != nil {
		return Stat{}, 0, fmt.Errorf("cgroup %s/cpu.stat: %w", dir, err)
	}
	return s, seen, nil
}

// RemoveStale removes the children of the parent cgroup whose owner
// process no longer runs (a crashed sweep's), and returns their
// directories. A stale cgroup that still holds a process is left and
// named in the error. No parent is not an error.
func (h Hierarchy) RemoveStale() ([]string, error) {
	entries, err := os.ReadDir(h.ParentDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		pid, ok := ownerPID(e.Name())
		if !ok || alive(pid) {
			continue
		}
		dir := filepath.Join(h.ParentDir(), e.Name())
		if err := h.removeTree(dir); err != nil {
			errs = append(errs, fmt.Errorf("stale cgroup %s (owner %d gone): %w", dir, pid, err))
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// ownerPID reads the owner's PID from a child's name, "pid-N-...".
func ownerPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "pid-")
	if !ok {
		return 0, false
	}
	n, _, _ := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(n)
	return pid, err == nil && pid > 0
}

// alive reports whether process pid exists (EPERM: it exists, not ours).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// writeFile writes s to an existing cgroup file, or creates it on a fake
// tree. A cgroup file takes one write.
func writeFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(s)
	return errors.Join(werr, f.Close())
}

// RemoveParent removes the parent cgroup when no child is left in it (a
// child of another running sweep keeps it: that is not an error).
func (h Hierarchy) RemoveParent() error {
	err := syscall.Rmdir(h.ParentDir())
	if err == nil || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.ENOTEMPTY) {
		return nil
	}
	return fmt.Errorf("cgroup %s: remove: %w", h.ParentDir(), err)
}
