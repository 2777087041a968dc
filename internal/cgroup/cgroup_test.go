package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeV1 builds a v1 cpu hierarchy under a temporary root.
func fakeV1(t *testing.T) (string, Hierarchy) {
	t.Helper()
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, "cpu", "cpu.cfs_quota_us"), "-1\n")
	h, err := Detect(root)
	if err != nil {
		t.Fatal(err)
	}
	h.rmdir = os.RemoveAll
	return root, h
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string
		version Version
		cpuDir  string
		err     string
	}{
		{name: "v2", files: map[string]string{"cgroup.controllers": "cpuset cpu io memory pids\n"}, version: 2, cpuDir: ""},
		{name: "v2 without cpu", files: map[string]string{"cgroup.controllers": "memory pids\n"}, err: "has no cpu controller"},
		{name: "v1", files: map[string]string{"cpu/cpu.cfs_quota_us": "-1"}, version: 1, cpuDir: "cpu"},
		{name: "v1 co-mounted", files: map[string]string{"cpu,cpuacct/cpu.cfs_quota_us": "-1"}, version: 1, cpuDir: "cpu,cpuacct"},
		{name: "none", files: map[string]string{"memory/memory.limit_in_bytes": "1"}, err: "no cpu controller under"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for p, s := range tc.files {
				mustWrite(t, filepath.Join(root, p), s)
			}
			h, err := Detect(root)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Detect: %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Version != tc.version || h.CPUDir != filepath.Join(root, tc.cpuDir) {
				t.Errorf("Detect = %v, want v%d at %s", h, tc.version, tc.cpuDir)
			}
		})
	}
}

func TestCreateV1(t *testing.T) {
	_, h := fakeV1(t)
	g, err := h.Create("s1-line1", 1.5)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(h.CPUDir, "schedscope", "pid-"+itoa(os.Getpid())+"-s1-line1"); g.Dir != want {
		t.Errorf("dir %s, want %s", g.Dir, want)
	}
	if got := read(t, filepath.Join(g.Dir, "cpu.cfs_period_us")); got != "100000" {
		t.Errorf("period %q", got)
	}
	if got := read(t, filepath.Join(g.Dir, "cpu.cfs_quota_us")); got != "150000" {
		t.Errorf("quota %q", got)
	}
	if err := g.Add(4242); err != nil {
		t.Fatal(err)
	}
	if got := read(t, g.ProcsFile()); got != "4242" {
		t.Errorf("cgroup.procs %q", got)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Dir); !os.IsNotExist(err) {
		t.Errorf("after Remove: %v", err)
	}
	if err := g.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}

func TestCreateV2(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, "cgroup.controllers"), "cpu memory\n")
	h, err := Detect(root)
	if err != nil {
		t.Fatal(err)
	}
	h.rmdir = os.RemoveAll
	g, err := h.Create("x", 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(g.Dir, "cpu.max")); got != "50000 100000" {
		t.Errorf("cpu.max %q", got)
	}
	for _, d := range []string{root, filepath.Join(root, "schedscope")} {
		if got := read(t, filepath.Join(d, "cgroup.subtree_control")); got != "+cpu" {
			t.Errorf("%s subtree_control %q", d, got)
		}
	}
}

func TestCreateRefuses(t *testing.T) {
	_, h := fakeV1(t)
	for _, tc := range []struct {
		name  string
		limit float64
	}{{"", 1}, {"a/b", 1}, {"..", 1}, {"x", 0.01}, {"x", 0}, {"x", -1}} {
		if g, err := h.Create(tc.name, tc.limit); err == nil {
			t.Errorf("Create(%q, %g) = %s, want an error", tc.name, tc.limit, g.Dir)
		}
	}
}

func TestCheckLimit(t *testing.T) {
	for _, tc := range []struct {
		limit float64
		cpus  int
		ok    bool
	}{{0.5, 2, true}, {2, 2, true}, {0.02, 2, true}, {0.01, 2, false}, {2.5, 2, false}, {0, 2, false}, {64, 0, true}} {
		if err := CheckLimit(tc.limit, tc.cpus); (err == nil) != tc.ok {
			t.Errorf("CheckLimit(%g, %d) = %v", tc.limit, tc.cpus, err)
		}
	}
}

func TestCheckReadOnly(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes anywhere")
	}
	_, h := fakeV1(t)
	if err := os.Chmod(h.CPUDir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(h.CPUDir, 0o755) })
	err := h.Check()
	if err == nil || !strings.Contains(err.Error(), "run as root") {
		t.Fatalf("Check = %v", err)
	}
}

func TestReadStat(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "cpu.stat"), "nr_periods 100\nnr_throttled 25\nthrottled_time 3000000\nnr_bursts 0\n")
	s, err := ReadStat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Stat{Periods: 100, Throttled: 25, Time: 3 * time.Millisecond}); s != want {
		t.Errorf("v1 %+v, want %+v", s, want)
	}
	if s.ThrottledShare() != 0.25 {
		t.Errorf("share %g", s.ThrottledShare())
	}
	mustWrite(t, filepath.Join(dir, "cpu.stat"), "usage_usec 9\nuser_usec 5\nsystem_usec 4\nnr_periods 10\nnr_throttled 1\nthrottled_usec 7\n")
	if s, err = ReadStat(dir); err != nil || s != (Stat{Periods: 10, Throttled: 1, Time: 7 * time.Microsecond}) {
		t.Errorf("v2 %+v, %v", s, err)
	}
	if d := (Stat{Periods: 10, Throttled: 4, Time: 9}).Sub(Stat{Periods: 4, Throttled: 1, Time: 2}); d != (Stat{6, 3, 7}) {
		t.Errorf("Sub %+v", d)
	}
	mustWrite(t, filepath.Join(dir, "cpu.stat"), "usage_usec 9\n")
	if _, err := ReadStat(dir); err == nil {
		t.Error("no counters: want an error")
	}
}

func TestRemoveStale(t *testing.T) {
	_, h := fakeV1(t)
	// A process that has exited gives a PID nobody holds (until reused).
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	parent := h.ParentDir()
	for _, n := range []string{"pid-" + itoa(dead) + "-s-1", "pid-" + itoa(os.Getpid()) + "-s-2", "other"} {
		mustWrite(t, filepath.Join(parent, n, "cgroup.procs"), "")
	}
	removed, err := h.RemoveStale()
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || filepath.Base(removed[0]) != "pid-"+itoa(dead)+"-s-1" {
		t.Errorf("removed %v", removed)
	}
	left, _ := os.ReadDir(parent)
	if len(left) != 2 {
		t.Errorf("left %d entries, want 2 (ours and one not named by schedscope)", len(left))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestCreateParent: the quota is on the group, processes join its leaf,
// which has none, and Remove takes both.
func TestCreateParent(t *testing.T) {
	_, h := fakeV1(t)
	h.rmdir = os.Remove // a fake directory is removable once its files are: see below
	g, err := h.CreateParent("p1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if g.Leaf != filepath.Join(g.Dir, LeafName) || g.ProcsFile() != filepath.Join(g.Leaf, "cgroup.procs") {
		t.Errorf("leaf %s, procs file %s", g.Leaf, g.ProcsFile())
	}
	if got := read(t, filepath.Join(g.Dir, "cpu.cfs_quota_us")); got != "100000" {
		t.Errorf("the group's quota %q, want 100000", got)
	}
	if _, err := os.Stat(filepath.Join(g.Leaf, "cpu.cfs_quota_us")); !os.IsNotExist(err) {
		t.Errorf("the leaf has a quota of its own: %v", err)
	}
	if err := g.Add(4242); err != nil {
		t.Fatal(err)
	}
	// A real cgroup's files vanish with it; the fake's must go first.
	for _, f := range []string{filepath.Join(g.Leaf, "cgroup.procs"), filepath.Join(g.Dir, "cpu.cfs_quota_us"), filepath.Join(g.Dir, "cpu.cfs_period_us")} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Dir); !os.IsNotExist(err) {
		t.Errorf("after Remove: %v", err)
	}
}

// TestRealThrottle puts a busy shell loop under a 0.5 CPU quota on the
// machine's cgroup v1 or v2 hierarchy, on its own cgroup and on its
// parent's (CreateParent, the loop in the unlimited leaf): it must be
// throttled, and the cgroups gone afterwards. Skipped without root or a
// writable hierarchy.
func TestRealThrottle(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	h, err := Detect(DefaultRoot)
	if err != nil {
		t.Skip(err)
	}
	if err := h.Check(); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() {
		if err := h.RemoveParent(); err != nil {
			t.Error(err)
		}
	})
	for _, tc := range []struct {
		name   string
		create func(string, float64) (*Group, error)
	}{{"own", h.Create}, {"parent", h.CreateParent}} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := tc.create("test-"+tc.name+"-"+itoa(os.Getpid()), 0.5)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Remove()
			argv := g.Wrap([]string{"sh", "-c", "while :; do :; done"})
			cmd := exec.Command(argv[0], argv[1:]...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			procs := read(t, g.ProcsFile())
			before, err := g.Stat()
			if err != nil {
				t.Fatal(err)
			}
			cpu0 := processCPU(t, cmd.Process.Pid)
			time.Sleep(time.Second)
			after, err := g.Stat()
			cpu := processCPU(t, cmd.Process.Pid) - cpu0
			cmd.Process.Kill()
			cmd.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(procs, itoa(cmd.Process.Pid)) {
				t.Errorf("the loop %d is not in %s: %q", cmd.Process.Pid, g.ProcsFile(), procs)
			}
			d := after.Sub(before)
			t.Logf("%v, %s: over 1 s: %d periods, %d throttled (%.0f%%), throttled %v; the loop used %v of CPU", h, tc.name, d.Periods, d.Throttled, 100*d.ThrottledShare(), d.Time, cpu)
			// The control: a loop the machine starved (other processes on
			// every core) never reaches the quota, and is rightly not
			// throttled. One that got 0.4 s in the second ran at the quota's
			// rate in most periods (a quiet machine gives it 0.5 s, throttled
			// in nearly every period).
			if d.Throttled == 0 && cpu < 400*time.Millisecond {
				t.Skipf("machine too busy to reach the quota: the loop got %v of CPU in 1 s under a 0.5 CPU limit, %d periods, none throttled", cpu, d.Periods)
			}
			if d.Throttled == 0 || d.Time == 0 {
				t.Errorf("a busy loop under 0.5 CPU was not throttled: %+v", d)
			}
			if err := g.Remove(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(g.Dir); !os.IsNotExist(err) {
				t.Errorf("cgroup %s still there: %v", g.Dir, err)
			}
		})
	}
}

// processCPU is pid's user + system time from /proc/PID/stat (clock ticks
// of 10 ms, Linux's USER_HZ).
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "stat"))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command's closing parenthesis: state is the
	// first, utime and stime the 12th and 13th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("/proc/%d/stat: %q: %v", pid, v, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
