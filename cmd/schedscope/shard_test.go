package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

func TestShardFlagsBadInput(t *testing.T) {
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	u := "http://127.0.0.1:1/"
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"load", "--rate", "10", "--shard", "5/4", u}, nil, "--shard: shard 5/4: the index must be in [0, 3]"},
		{[]string{"load", "--rate", "10", "--shard", "x", u}, nil, `--shard: shard "x": want i/N`},
		{[]string{"load", "--rate", "10", "--shard", "0/0", u}, nil, "count must be in [1, 10000]"},
		{[]string{"load", "--rate", "10", "--shard", "1/4", "--shards", "3", u}, nil, "--shard 1/4 and --shards 3 disagree"},
		{[]string{"load", "--rate", "10", "--shards", "4", u}, nil, "--shards 4 without --shard i/N"},
		{[]string{"load", "--users", "3", "--shard", "1/4", u}, nil, "the closed model has none"},
		{[]string{"load", "--rate", "10", "--start-at", past, u}, nil, "in the past: more than 1s"},
		{[]string{"load", "--rate", "10", "--start-at", "soon", u}, nil, "want an RFC 3339 time"},
		{[]string{"load", "--rate", "10", "--start-at", "+30s", u}, nil, "+30s@FILE"},
		{[]string{"load", "--rate", "10", "--start-at", "+30s@/nonexistent/start", u}, nil, "/nonexistent/start"},
		{[]string{"load", "--rate", "10", "--shards", "4", u}, map[string]string{"JOB_COMPLETION_INDEX": "4"}, "index must be in [0, 3]"},
		{[]string{"load", "--rate", "10", u}, map[string]string{"JOB_COMPLETION_INDEX": "1"}, "give the Job's completions as --shards N"},
		{[]string{"load", "--rate", "10", "--out", t.TempDir(), "--json", "x.json", u}, nil, "give --json and --hdr-log only without it"},
		{[]string{"run", "--rate", "10", "--shard", "4/4", u}, nil, "index must be in [0, 3]"},
		{[]string{"run", "--rate", "10", "--shard", "1/4", "--repeat", "3", "--start-at", time.Now().Add(time.Minute).UTC().Format(time.RFC3339), u}, nil, "--start-at with --repeat 3"},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		code, _, errOut := runCLI(t, context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v %v: exit %d, stderr %q; want exit 2 and one line mentioning %q", tc.env, tc.args, code, errOut, tc.want)
		}
		for k := range tc.env {
			os.Unsetenv(k)
		}
	}
}

func TestMergeBadInput(t *testing.T) {
	notShard := t.TempDir()
	if code, _, errOut := runCLI(t, context.Background(), "load", "--rate", "20", "--duration", "100ms", "--out", notShard, fixtureURL(t, "")); code != 0 {
		t.Fatalf("load --out: exit %d: %s", code, errOut)
	}
	base := t.TempDir()
	shards := shardDirs(t, "", base, 3, 100, "300ms", fixtureURL(t, ""))
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "merged")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", shards[0]}, "no --out DIR"},
		{[]string{"merge", "--out", out}, "no shard directories"},
		{[]string{"merge", "--out", out, shards[0], shards[2]}, "missing shard 1/3 of 3"},
		{[]string{"merge", "--out", out, shards[0], shards[1], shards[2], shards[1]}, "shard 1/3 given twice"},
		{[]string{"merge", "--out", out, notShard}, "not a shard's directory"},
		{[]string{"merge", "--out", out, filepath.Join(base, "nowhere")}, "not a run directory"},
		{[]string{"merge", "--out", full, shards[0], shards[1], shards[2]}, "--out"},
		{[]string{"merge", "--out", shards[0], shards[0], shards[1], shards[2]}, "is one of the shards' directories"},
		{[]string{"merge", "--out", filepath.Join(shards[1], "merged"), shards[0], shards[1], shards[2]}, "is inside the shard directory " + shards[1]},
		{[]string{"merge", "--out", filepath.Join(shards[2], "a", "b"), shards[0], shards[1], shards[2]}, "is inside the shard directory " + shards[2]},
	} {
		code, _, errOut := runCLI(t, context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
	// Mixed versions: one shard made by another build.
	res := filepath.Join(shards[2], rundir.ResultsFile)
	b, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"build": "`, `"build": "v9.9.9 `, 1)
	if err := os.WriteFile(res, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, context.Background(), "merge", "--out", out, shards[0], shards[1], shards[2])
	if code != 2 || !strings.Contains(errOut, "different builds of schedscope") {
		t.Errorf("mixed builds: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused merge left %s behind", out)
	}
}

// buildSchedscope builds this package, without the test's -race or
// coverage, into a temporary directory and returns the binary: the shards
// and the fixture of the timing tests run as the binary users run, not as
// the test binary, which under -race is several times slower.
func buildSchedscope(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "schedscope")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startBin runs bin with args in a process of its own until the test
// ends; bin "" is the test binary as schedscope (startCLI).
func startBin(t *testing.T, bin string, args ...string) *cli {
	t.Helper()
	if bin == "" {
		return startCLI(t, nil, args...)
	}
	return startProcess(t, exec.Command(bin, args...))
}

// fixtureURL starts the fixture in a process of its own (bin fixture; ""
// for the test binary) and returns its /sleep?ms=1 URL.
func fixtureURL(t *testing.T, bin string) string {
	t.Helper()
	addr, err := target.FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	startBin(t, bin, "fixture", "--addr", addr)
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(base + "/stats"); err == nil {
			resp.Body.Close()
			return base + "/sleep?ms=1"
		}
		if time.Now().After(deadline) {
			t.Fatal("fixture: not answering after 30 s")
		}
	}
}

// shardDirs runs n shards of rate req/s in all for dur, each a process of
// its own (bin load), started together 1 s from now, and returns their
// results directories.
func shardDirs(t *testing.T, bin, base string, n int, rate float64, dur, url string, extra ...string) []string {
	t.Helper()
	at := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	var dirs []string
	var clis []*cli
	for i := range n {
		dir := filepath.Join(base, fmt.Sprintf("shard-%d", i))
		dirs = append(dirs, dir)
		args := append([]string{"load", "--progress", "off", "--rate", fmt.Sprint(rate), "--duration", dur, "--shard", fmt.Sprintf("%d/%d", i, n),
			"--start-at", at, "--out", dir}, extra...)
		clis = append(clis, startBin(t, bin, append(args, url)...))
	}
	for i, c := range clis {
		select {
		case <-c.done:
		case <-time.After(2 * time.Minute):
			t.Fatalf("shard %d still running after 2 minutes", i)
		}
		if code := c.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, code, c.stderr.String())
		}
	}
	return dirs
}

func readResult(t *testing.T, dir string) *load.Result {
	t.Helper()
	run, err := rundir.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Result == nil {
		t.Fatalf("%s: no results.json", dir)
	}
	return run.Result
}

// singleRun runs one generator of the whole schedule and returns its
// result and directory.
func singleRun(t *testing.T, bin, url string, args ...string) (*load.Result, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "single")
	c := startBin(t, bin, append(append([]string{"load", "--progress", "off", "--out", dir}, args...), url)...)
	<-c.done
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("one generator: exit %d: %s", code, c.stderr.String())
	}
	return readResult(t, dir), dir
}

// steadyLatency reads dir's load.hlog and returns its steady phases'
// latency histograms (tag ""), merged, and how many intervals it had.
func steadyLatency(t *testing.T, dir string) (*hdrhistogram.Histogram, int) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, rundir.HLogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, cut, err := load.ReadHLog(f)
	if err != nil || cut {
		t.Fatalf("%s: %v (cut %v)", f.Name(), err, cut)
	}
	h := hdrhistogram.New(1, int64(time.Hour), 3)
	n := 0
	for _, e := range entries {
		if e.Kind == load.Steady && e.Tag == "" {
			h.Merge(e.Hist)
			n++
		}
	}
	return h, n
}

// checkMergedExactly checks what a merge of shards must get exactly,
// whatever the machine's load, against one generator of the same plan:
//   - the same planned count, and each shard the plan's share of it;
//   - every planned request sent and answered 2xx, alone and sharded
//     (the fixture's 1 ms at 2,000 req/s keeps a few in flight, against an
//     in-flight cap in the thousands: a late generator sends late, it
//     does not leave requests unsent);
//   - counts summed: the merged phase's sent, 2xx and completed are the
//     shards' sums;
//   - the HDR merge exact: the merged load.hlog's steady latency
//     histogram equals the sum of the shards' (bucket by bucket), holds
//     every 2xx, and results.json's merged percentiles are read from it;
//   - the start skew is the spread of the shards' own start lateness.
//
// It compares no latency or throughput between the two: on this shared
// 2-core machine two sets of 11 runs of one configuration had median p99s
// -28 % to +38 % apart, more than any tolerance worth testing. That
// comparison, with its A/A spread beside it, is bench/shardbench's.
func checkMergedExactly(t *testing.T, single *load.Result, merged *load.Result, mergedDir string, loadavg string) {
	t.Helper()
	s, m := single.Phases[0], merged.Phases[0]
	t.Logf("load average %s; one generator: planned %d, 2xx/s %.1f, p50 %.3f ms, p99 %.3f ms, send lag p99 %.3f ms; merged shards: planned %d, 2xx/s %.1f, p50 %.3f ms, p99 %.3f ms, send lag p99 %.3f ms; start skew %.3f ms (figures logged, not compared: bench/shardbench compares them)",
		loadavg, s.Planned, s.OKPerS, s.Latency.P50, s.Latency.P99, s.SendLag.P99,
		m.Planned, m.OKPerS, m.Latency.P50, m.Latency.P99, m.SendLag.P99, merged.Merged.StartSkewMS)
	if s.Planned != m.Planned {
		t.Errorf("planned: one generator %d, merged shards %d", s.Planned, m.Planned)
	}
	for _, r := range []struct {
		what string
		p    load.PhaseResult
	}{{"one generator", s}, {"merged shards", m}} {
		if r.p.Sent != r.p.Planned || r.p.NotSent != 0 || r.p.OK != r.p.Planned || r.p.Completed != r.p.Planned {
			t.Errorf("%s: planned %d, sent %d, not sent %d, completed %d, 2xx %d: want every planned request sent and answered 2xx",
				r.what, r.p.Planned, r.p.Sent, r.p.NotSent, r.p.Completed, r.p.OK)
		}
	}
	sum := hdrhistogram.New(1, int64(time.Hour), 3)
	var planned, sent, ok, completed int64
	var late []float64
	for _, sh := range merged.Merged.Shards {
		r := readResult(t, sh.Dir)
		p := r.Phases[0]
		if want := m.Planned / int64(merged.Merged.Count); p.Planned != want {
			t.Errorf("shard %s planned %d, want %d of %d", sh.Shard, p.Planned, want, m.Planned)
		}
		planned, sent, ok, completed = planned+p.Planned, sent+p.Sent, ok+p.OK, completed+p.Completed
		h, n := steadyLatency(t, sh.Dir)
		if n == 0 || h.TotalCount() != p.Latency.Count {
			t.Errorf("shard %s: %d steady intervals holding %d latencies, results.json %d", sh.Shard, n, h.TotalCount(), p.Latency.Count)
		}
		sum.Merge(h)
		late = append(late, r.Shard.StartLateMS)
	}
	if planned != m.Planned || sent != m.Sent || ok != m.OK || completed != m.Completed {
		t.Errorf("merged planned/sent/2xx/completed %d/%d/%d/%d, the shards' sums %d/%d/%d/%d", m.Planned, m.Sent, m.OK, m.Completed, planned, sent, ok, completed)
	}
	got, _ := steadyLatency(t, mergedDir)
	if !got.Equals(sum) || got.TotalCount() != m.OK {
		t.Errorf("merged load.hlog: %d latencies (equal to the shards' sum: %v), want the shards' %d summed exactly, one per 2xx (%d)", got.TotalCount(), got.Equals(sum), sum.TotalCount(), m.OK)
	}
	if p50, p99 := float64(sum.ValueAtQuantile(50))/1e6, float64(sum.ValueAtQuantile(99))/1e6; m.Latency.P50 != p50 || m.Latency.P99 != p99 || m.Latency.Count != sum.TotalCount() {
		t.Errorf("merged results.json: p50 %g ms, p99 %g ms, %d latencies; the shards' summed histogram says %g, %g, %d",
			m.Latency.P50, m.Latency.P99, m.Latency.Count, p50, p99, sum.TotalCount())
	}
	if len(late) > 0 {
		if want := slices.Max(late) - slices.Min(late); math.Abs(merged.Merged.StartSkewMS-want) > 1e-3 {
			t.Errorf("start skew %.6f ms, the shards' start lateness %v ms spreads over %.6f", merged.Merged.StartSkewMS, late, want)
		}
	}
}

// TestShardsMergeLikeOneGenerator is the loopback check: 4 shards
// of 2,500 req/s, each its own process, merged, against one generator at
// 10,000 req/s, on the same fixture (at a rate this machine can serve:
// loopbackRate). It checks what is exact (checkMergedExactly); whether the
// merged latencies match one generator's is measured by bench/shardbench,
// beside the spread of two runs of one generator.
func TestShardsMergeLikeOneGenerator(t *testing.T) {
	if testing.Short() {
		t.Skip("two 10,000 req/s runs of 5 s")
	}
	bin := buildSchedscope(t)
	url := fixtureURL(t, bin)
	const dur = "4s"
	warm := []string{"--warmup", "1s"}
	rate := loopbackRate(t)
	rateText := fmt.Sprint(rate)
	single, singleDir := singleRun(t, bin, url, append([]string{"--rate", rateText, "--duration", dur}, warm...)...)
	base := t.TempDir()
	dirs := shardDirs(t, bin, base, 4, rate, dur, url, warm...)
	out := filepath.Join(base, "merged")
	code, stdout, errOut := runCLI(t, context.Background(), append([]string{"merge", "--out", out}, dirs...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errOut)
	}
	t.Logf("merge:\n%s", stdout)
	checkMergedExactly(t, single, readResult(t, out), out, target.LoadAverage())
	// The merged directory reads like a run: report and compare take it.
	if code, _, errOut := runCLI(t, context.Background(), "report", out); code != 0 {
		t.Errorf("report of the merged directory: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, context.Background(), "compare", singleDir, out); code != 0 {
		t.Errorf("compare one generator with the merged shards: exit %d: %s", code, errOut)
	}
}

// TestMergeKeepsTheRestOfADeadShard: a shard killed mid-run (SIGKILL: no
// chance to write its results) is named by merge, which reports the run
// as partial (exit 3) and keeps the other shards.
func TestMergeKeepsTheRestOfADeadShard(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 4 shards for 3 s")
	}
	bin := buildSchedscope(t)
	url := fixtureURL(t, bin)
	base := t.TempDir()
	at := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	var dirs []string
	var clis []*cli
	for i := range 4 {
		dir := filepath.Join(base, fmt.Sprintf("shard-%d", i))
		dirs = append(dirs, dir)
		clis = append(clis, startBin(t, bin, "load", "--progress", "off", "--rate", "1000", "--duration", "3s", "--shard", fmt.Sprintf("%d/4", i), "--start-at", at, "--out", dir, url))
	}
	time.Sleep(time.Until(mustTime(t, at).Add(1500 * time.Millisecond)))
	if err := clis[2].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, c := range clis {
		<-c.done
	}
	out := filepath.Join(base, "merged")
	code, stdout, errOut := runCLI(t, context.Background(), append([]string{"merge", "--out", out}, dirs...)...)
	if code != 3 || !strings.Contains(errOut, "partial: shard 2/4 ("+dirs[2]) || !strings.Contains(errOut, "lost") {
		t.Fatalf("merge with a dead shard: exit %d, stderr %q; want 3 naming shard 2/4 as lost", code, errOut)
	}
	if !strings.Contains(stdout, "PARTIAL: shard 2/4 ("+dirs[2]+", host ") {
		t.Errorf("the summary does not name the lost shard:\n%s", stdout)
	}
	res := readResult(t, out)
	var planned int64
	for _, i := range []int{0, 1, 3} {
		planned += readResult(t, dirs[i]).Phases[0].Planned
	}
	if p := res.Phases[0]; p.Planned != planned || p.Planned != 2250 {
		t.Errorf("merged planned %d, the three live shards' %d (want 3 x 750)", p.Planned, planned)
	}
	m, err := rundir.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Manifest.Status != rundir.StatusInterrupted || !strings.Contains(m.Manifest.Reason, "shard 2/4") {
		t.Errorf("merged manifest: %s (%s)", m.Manifest.Status, m.Manifest.Reason)
	}
	// compare reads it as a partial run, with a warning.
	if code, stdout, errOut := runCLI(t, context.Background(), "compare", "--force", out, dirs[0]); code != 0 || !strings.Contains(stdout+errOut, "partial") {
		t.Errorf("compare of the partial merge: exit %d: %s %s", code, stdout, errOut)
	}
}

// loopbackRate is the whole schedule's rate of the loopback comparisons:
// $SCHEDSCOPE_SHARD_TEST_RATE, else the 10,000 req/s on a machine
// of 8 CPUs or more, else 2,000. On this project's shared 2-core machine
// the fixture and the generators together could not serve 10,000 (the
// fixture answered 88 % of it at a load average of 6.8, and the two runs'
// 2xx/s then compare the machine's ceiling under two CPU splits, not the
// sharding).
func loopbackRate(t *testing.T) float64 {
	t.Helper()
	if v := os.Getenv("SCHEDSCOPE_SHARD_TEST_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r <= 0 {
			t.Fatalf("$SCHEDSCOPE_SHARD_TEST_RATE=%q: want a positive rate", v)
		}
		return r
	}
	if runtime.NumCPU() >= 8 {
		return 10000
	}
	t.Logf("%d CPUs: 2,000 req/s in all (4 x 500) instead of the issue's 10,000 (4 x 2,500), which the fixture and the generators cannot serve together here; $SCHEDSCOPE_SHARD_TEST_RATE sets it", runtime.NumCPU())
	return 2000
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// TestSlurmShards runs deploy/slurm/schedscope-shards.sbatch on a real
// Slurm cluster (.ci/run starts a one-node one: deploy/slurm/ci-cluster.sh):
// 4 srun tasks of 2,500 req/s against a fixture on 127.0.0.1, merged by the
// script, checked exactly against one generator at 10,000 req/s
// (loopbackRate; checkMergedExactly).
func TestSlurmShards(t *testing.T) {
	if testing.Short() {
		t.Skip("a Slurm job of 4 tasks")
	}
	for _, tool := range []string{"sbatch", "sinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI: %s not found: .ci/run installs slurm-wlm and starts deploy/slurm/ci-cluster.sh", tool)
			}
			t.Skipf("no %s: Slurm is not installed (.ci/run installs it; deploy/slurm/ci-cluster.sh starts a one-node cluster)", tool)
		}
	}
	if out, err := exec.Command("sinfo", "-h", "-o", "%t").Output(); err != nil || !strings.Contains(string(out), "idle") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI: no idle Slurm node (sinfo: %q, %v): run deploy/slurm/ci-cluster.sh", out, err)
		}
		t.Skipf("no idle Slurm node (sinfo: %q, %v): deploy/slurm/ci-cluster.sh starts one", out, err)
	}
	bin := buildSchedscope(t)
	script, err := filepath.Abs("../../deploy/slurm/schedscope-shards.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	url := fixtureURL(t, bin)
	const dur = "4s"
	rate := fmt.Sprint(loopbackRate(t))
	single, _ := singleRun(t, bin, url, "--rate", rate, "--duration", dur, "--warmup", "1s")

	results := filepath.Join(t.TempDir(), "slurm")
	jobOut := filepath.Join(t.TempDir(), "job.out")
	// The node has fewer CPUs than tasks: --overcommit lets 4 tasks share
	// them.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	name := fmt.Sprintf("schedscope-test-%d", os.Getpid())
	sb := exec.CommandContext(ctx, "sbatch", "--wait", "--overcommit", "--ntasks=4", "--time=5", "--job-name="+name,
		"--output="+jobOut, script, "--rate", rate, "--duration", dur, "--warmup", "1s", url)
	sb.Env = append(os.Environ(), "SCHEDSCOPE="+bin, "RESULTS="+results, "START_DELAY=3s")
	if out, err := sb.CombinedOutput(); err != nil {
		// A job still queued or running when sbatch was ended is cancelled.
		_ = exec.Command("scancel", "--name="+name).Run()
		job, _ := os.ReadFile(jobOut)
		t.Fatalf("sbatch: %v: %s\njob output:\n%s", err, out, job)
	}
	job, err := os.ReadFile(jobOut)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("job output:\n%s", job)
	mergedDir := filepath.Join(results, "merged")
	merged := readResult(t, mergedDir)
	for _, s := range merged.Merged.Shards {
		if s.Status != load.ShardComplete {
			t.Errorf("shard %s: %s: %s", s.Shard, s.Status, s.Reason)
		}
	}
	if merged.Merged.Count != 4 {
		t.Errorf("%d shards, want srun's 4", merged.Merged.Count)
	}
	checkMergedExactly(t, single, merged, mergedDir, target.LoadAverage())
}
