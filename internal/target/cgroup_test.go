package target

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// writeTree writes files under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadCgroupVersions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cgroup   string
		mounts   string
		files    map[string]string
		version  int
		quota    float64
		periods  int64
		throttle int64
		seconds  float64
		// tightest and tightestPath: the tightest limit on the leaf or an ancestor.
		tightest     float64
		tightestPath string
		wantErr      bool
	}{
		{
			name:   "v1 cpu beside an empty unified hierarchy (this machine's layout)",
			cgroup: "4:memory:/x\n2:cpuacct:/\n1:cpu:/app\n0::/\n",
			mounts: "30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n" +
				"31 25 0:27 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu\n",
			files: map[string]string{
				"sys/fs/cgroup/cpu/app/cpu.cfs_quota_us":  "50000\n",
				"sys/fs/cgroup/cpu/app/cpu.cfs_period_us": "100000\n",
				"sys/fs/cgroup/cpu/app/cpu.stat":          "nr_periods 40\nnr_throttled 31\nthrottled_time 2500000000\n",
			},
			version: 1, quota: 0.5, periods: 40, throttle: 31, seconds: 2.5,
			tightest: 0.5, tightestPath: "/app",
		},
		{
			name:   "v1: the limit on a parent, none on the leaf (the runtime's blind spot)",
			cgroup: "1:cpu:/pod/app\n",
			mounts: "31 25 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
			files: map[string]string{
				"sys/fs/cgroup/cpu/cpu.cfs_quota_us":          "-1\n",
				"sys/fs/cgroup/cpu/cpu.cfs_period_us":         "100000\n",
				"sys/fs/cgroup/cpu/pod/cpu.cfs_quota_us":      "50000\n",
				"sys/fs/cgroup/cpu/pod/cpu.cfs_period_us":     "100000\n",
				"sys/fs/cgroup/cpu/pod/cpu.stat":              "nr_periods 10\nnr_throttled 8\nthrottled_time 300000000\n",
				"sys/fs/cgroup/cpu/pod/app/cpu.cfs_quota_us":  "-1\n",
				"sys/fs/cgroup/cpu/pod/app/cpu.cfs_period_us": "100000\n",
				"sys/fs/cgroup/cpu/pod/app/cpu.stat":          "nr_periods 10\nnr_throttled 4\nthrottled_time 100000000\n",
			},
			version: 1, periods: 10, throttle: 4, seconds: 0.1, tightest: 0.5, tightestPath: "/pod",
		},
		{
			name:   "v1: a looser parent does not hide the leaf's limit",
			cgroup: "1:cpu:/pod/app\n",
			mounts: "31 25 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
			files: map[string]string{
				"sys/fs/cgroup/cpu/cpu.cfs_quota_us":          "-1\n",
				"sys/fs/cgroup/cpu/cpu.cfs_period_us":         "100000\n",
				"sys/fs/cgroup/cpu/pod/cpu.cfs_quota_us":      "400000\n",
				"sys/fs/cgroup/cpu/pod/cpu.cfs_period_us":     "100000\n",
				"sys/fs/cgroup/cpu/pod/app/cpu.cfs_quota_us":  "150000\n",
				"sys/fs/cgroup/cpu/pod/app/cpu.cfs_period_us": "100000\n",
				"sys/fs/cgroup/cpu/pod/app/cpu.stat":          "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n",
			},
			version: 1, quota: 1.5, tightest: 1.5, tightestPath: "/pod/app",
		},
		{
			name:   "v1 without a quota",
			cgroup: "3:cpu,cpuacct:/\n",
			mounts: "31 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
			files: map[string]string{
				"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":  "-1\n",
				"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
				"sys/fs/cgroup/cpu,cpuacct/cpu.stat":          "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n",
			},
			version: 1,
		},
		{
			name:   "v2 with a limit",
			cgroup: "0::/kubepods/pod1/c1\n",
			mounts: "29 25 0:25 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
			files: map[string]string{
				"sys/fs/cgroup/kubepods/pod1/c1/cpu.max":  "150000 100000\n",
				"sys/fs/cgroup/kubepods/pod1/c1/cpu.stat": "usage_usec 9\nnr_periods 12\nnr_throttled 3\nthrottled_usec 450000\n",
			},
			version: 2, quota: 1.5, periods: 12, throttle: 3, seconds: 0.45,
			tightest: 1.5, tightestPath: "/kubepods/pod1/c1",
		},
		{
			name:   "v2: a tighter grandparent, the root without cpu.max",
			cgroup: "0::/kubepods/pod1/c1\n",
			mounts: "29 25 0:25 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
			files: map[string]string{
				"sys/fs/cgroup/cgroup.procs":              "1\n",
				"sys/fs/cgroup/kubepods/cpu.max":          "25000 100000\n",
				"sys/fs/cgroup/kubepods/cpu.stat":         "nr_periods 12\nnr_throttled 9\nthrottled_usec 900000\n",
				"sys/fs/cgroup/kubepods/pod1/cpu.max":     "max 100000\n",
				"sys/fs/cgroup/kubepods/pod1/c1/cpu.max":  "200000 100000\n",
				"sys/fs/cgroup/kubepods/pod1/c1/cpu.stat": "usage_usec 9\nnr_periods 12\nnr_throttled 3\nthrottled_usec 450000\n",
			},
			version: 2, quota: 2, periods: 12, throttle: 3, seconds: 0.45,
			tightest: 0.25, tightestPath: "/kubepods",
		},
		{
			name:    "v2 without the cpu controller",
			cgroup:  "0::/a\n",
			mounts:  "29 25 0:25 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			files:   map[string]string{"sys/fs/cgroup/a/cgroup.procs": "1\n"},
			wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{"proc/7/cgroup": tc.cgroup, "proc/self/mountinfo": ""}
			for k, v := range tc.files {
				files[k] = v
			}
			// Mount points in mountinfo are absolute: root them in the temp dir.
			mounts := ""
			for line := range strings.Lines(tc.mounts) {
				mounts += rebase(strings.TrimSuffix(line, "\n"), root) + "\n"
			}
			files["proc/self/mountinfo"] = mounts
			writeTree(t, root, files)
			c, err := readCgroup(filepath.Join(root, "proc"), 7)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("read %+v, want an error", c)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Version != tc.version || c.QuotaCores != tc.quota || c.Periods != tc.periods || c.Throttled != tc.throttle || c.ThrottledSeconds != tc.seconds {
				t.Errorf("got %+v", c)
			}
			if c.TightestQuotaCores != tc.tightest || c.TightestPath != tc.tightestPath {
				t.Errorf("tightest limit %v on %q, want %v on %q", c.TightestQuotaCores, c.TightestPath, tc.tightest, tc.tightestPath)
			}
			if got := c.TightestStat; (got != nil) != (tc.tightestPath != "" && tc.tightestPath != c.Path) || got != nil && (got.Throttled < 8 || got.ThrottledSeconds < 0.3) {
				t.Errorf("tightest cgroup's counters %+v", got)
			}
		})
	}
}

// rebase prefixes a mountinfo line's mount point (the fifth field) with root.
func rebase(line, root string) string {
	f := strings.Split(line, " ")
	f[4] = root + f[4]
	return strings.Join(f, " ")
}

// TestReadCgroupLive puts a busy process in a fresh cgroup v1 child with a
// 0.1-core quota, the way `sweep --cpu-limits` will, and reads its limit
// and throttling back: the positive control that the counters move.
func TestReadCgroupLive(t *testing.T) {
	base := "/sys/fs/cgroup/cpu"
	if _, err := os.Stat(filepath.Join(base, "cpu.cfs_quota_us")); err != nil {
		t.Skip("no cgroup v1 cpu controller at " + base)
	}
	dir := filepath.Join(base, fmt.Sprintf("schedscope-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup (needs root): %v", err)
	}
	defer os.Remove(dir)
	for name, v := range map[string]string{"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "10000"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	c, err := ReadCgroup(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	u, uerr := ReadUsage(cmd.Process.Pid)
	cmd.Process.Kill()
	cmd.Wait()
	t.Logf("%+v; the loop used %v of CPU (%v)", c, u.CPU, uerr)
	if c.Version != 1 || c.Path != "/"+filepath.Base(dir) || c.QuotaCores != 0.1 || c.PeriodUS != 100000 {
		t.Errorf("limit: %+v, want v1 %s at 0.1 cores per 100 ms", c, "/"+filepath.Base(dir))
	}
	// The control: a loop the machine starved never reaches even 0.1 core
	// and is rightly not throttled; 0.03 s in 0.5 s is 60 % of the quota's
	// rate (a quiet machine gives it 0.05 s, throttled in every period).
	if c.Throttled < 2 && uerr == nil && u.CPU < 30*time.Millisecond {
		t.Skipf("machine too busy to reach the quota: the loop got %v of CPU in 0.5 s under a 0.1 CPU limit: %+v", u.CPU, c)
	}
	if c.Periods < 2 || c.Throttled < 2 || c.ThrottledSeconds <= 0 {
		t.Errorf("a busy loop held to 0.1 core for 0.5 s was not throttled: %+v", c)
	}
}

// TestCgroupBurnHelper is the busy process of TestCgroupParentLimitLive: with
// SCHEDSCOPE_CGROUP_BURN set it prints the GOMAXPROCS the runtime chose and
// burns CPU for up to 20 s (the test kills it sooner).
func TestCgroupBurnHelper(t *testing.T) {
	if os.Getenv("SCHEDSCOPE_CGROUP_BURN") == "" {
		t.Skip("the helper process of TestCgroupParentLimitLive")
	}
	fmt.Printf("gomaxprocs %d numcpu %d\n", runtime.GOMAXPROCS(0), runtime.NumCPU())
	os.Stdout.Sync()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
	}
	os.Exit(0)
}

// TestCgroupParentLimitLive is the runtime's blind spot for real: a cgroup v1
// parent with a 0.5-core quota, a child without one, and a Go process
// started in the child. ReadCgroup must find the parent's limit; the
// process's GOMAXPROCS is what the runtime chose without seeing it.
func TestCgroupParentLimitLive(t *testing.T) {
	base := "/sys/fs/cgroup/cpu"
	if _, err := os.Stat(filepath.Join(base, "cpu.cfs_quota_us")); err != nil {
		t.Skip("no cgroup v1 cpu controller at " + base)
	}
	parent := filepath.Join(base, fmt.Sprintf("schedscope-test-PARENT-%d", os.Getpid()))
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Skipf("cannot create a cgroup (needs root): %v", err)
	}
	child := filepath.Join(parent, "leaf")
	// Cleanups run last-registered first: the process dies before the
	// child is removed, the child before the parent.
	t.Cleanup(func() {
		if err := os.Remove(parent); err != nil {
			t.Errorf("remove %s: %v", parent, err)
		}
	})
	for name, v := range map[string]string{"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "50000"} {
		if err := os.WriteFile(filepath.Join(parent, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(child, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.Remove(child); err != nil {
			t.Errorf("remove %s: %v", child, err)
		}
	})
	// The shell joins the child cgroup, then becomes the Go process, so the
	// runtime reads its cgroup at start from inside it.
	cmd := exec.Command("sh", "-c", `echo $$ > "$1/cgroup.procs" && exec "$0" -test.run='^TestCgroupBurnHelper$'`, os.Args[0], child)
	cmd.Env = append(os.Environ(), "SCHEDSCOPE_CGROUP_BURN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	var gomaxprocs, numCPU int
	if _, err := fmt.Sscanf(line, "gomaxprocs %d numcpu %d", &gomaxprocs, &numCPU); err != nil {
		t.Fatalf("helper said %q: %v", line, err)
	}
	u0, _ := ReadUsage(cmd.Process.Pid)
	time.Sleep(time.Second)
	c, err := ReadCgroup(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	u1, uerr := ReadUsage(cmd.Process.Pid)
	cpu := u1.CPU - u0.CPU
	ps, err := readCPUStat(parent)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leaf %+v, parent's counters %+v; parent cpu.stat %v; helper GOMAXPROCS %d of %d CPUs, %d had the runtime seen the limit",
		c, c.TightestStat, ps, gomaxprocs, numCPU, rundir.DefaultGOMAXPROCS(numCPU, c.TightestQuotaCores))
	leaf := "/" + filepath.Base(parent) + "/leaf"
	if c.Version != 1 || c.Path != leaf || c.QuotaCores != 0 {
		t.Errorf("leaf: %+v, want v1 %s without a limit", c, leaf)
	}
	if c.TightestQuotaCores != 0.5 || c.TightestPath != "/"+filepath.Base(parent) {
		t.Errorf("tightest limit %v on %q, want 0.5 on /%s", c.TightestQuotaCores, c.TightestPath, filepath.Base(parent))
	}
	if gomaxprocs != numCPU {
		t.Errorf("GOMAXPROCS %d with %d CPUs: the runtime saw the parent's limit, against golang/go#81180", gomaxprocs, numCPU)
	}
	// The control: a helper the machine starved never reaches the quota
	// and is rightly not throttled; 0.4 s in the second is 80 % of it.
	if st := c.TightestStat; (st == nil || st.Throttled < 2) && uerr == nil && cpu < 400*time.Millisecond {
		t.Skipf("machine too busy to reach the quota: the helper got %v of CPU in 1 s under the parent's 0.5 CPU limit: %+v", cpu, st)
	}
	if st := c.TightestStat; st == nil || st.Throttled < 2 || st.ThrottledSeconds <= 0 {
		t.Errorf("a busy loop held to 0.5 core for 1 s was not throttled on the parent: %+v (cpu.stat %v)", st, ps)
	}
}
