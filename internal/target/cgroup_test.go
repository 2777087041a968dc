package target

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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
		wantErr  bool
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
	cmd.Process.Kill()
	cmd.Wait()
	t.Logf("%+v", c)
	if c.Version != 1 || c.Path != "/"+filepath.Base(dir) || c.QuotaCores != 0.1 || c.PeriodUS != 100000 {
		t.Errorf("limit: %+v, want v1 %s at 0.1 cores per 100 ms", c, "/"+filepath.Base(dir))
	}
	if c.Periods < 2 || c.Throttled < 2 || c.ThrottledSeconds <= 0 {
		t.Errorf("a busy loop held to 0.1 core for 0.5 s was not throttled: %+v", c)
	}
}
