package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/load/promload"
	"github.com/schedscope/schedscope/internal/cgroup"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// TestPrometheusBadAddress: a bad listen address or a port in use is one
// line and exit 2, before any request is sent.
func TestPrometheusBadAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	inUse := ln.Addr().String()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "--rate", "10", "--prometheus", "127.0.0.1:notaport", "http://127.0.0.1:1/"}, "--prometheus 127.0.0.1:notaport:"},
		{[]string{"load", "--rate", "10", "--prometheus", "no-colon", "http://127.0.0.1:1/"}, "--prometheus no-colon:"},
		{[]string{"load", "--rate", "10", "--prometheus", inUse, "http://127.0.0.1:1/"}, "address already in use"},
		{[]string{"run", "--rate", "10", "--prometheus", inUse, "--out", filepath.Join(t.TempDir(), "r"), "http://127.0.0.1:1/"}, "address already in use"},
		{[]string{"run", "--rate", "10", "--prometheus", "127.0.0.1:0", "--repeat", "2", "--out", filepath.Join(t.TempDir(), "r"), "http://127.0.0.1:1/"}, "--prometheus with --repeat"},
	} {
		code, _, errOut := runCLI(t, context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

// promAPI queries a Prometheus server's HTTP API.
type promAPI struct {
	t    *testing.T
	base string
}

type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
	Values [][2]any          `json:"values"`
}

// query runs an instant query at time at and returns its samples.
func (p promAPI) query(q string, at time.Time) []promSample {
	p.t.Helper()
	v := url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64)}}
	resp, err := http.Get(p.base + "/api/v1/query?" + v.Encode())
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		p.t.Fatalf("query %s: %v %s %s", q, err, r.Status, r.Error)
	}
	return r.Data.Result
}

// scalar runs q at at and returns its one sample's value.
func (p promAPI) scalar(q string, at time.Time) float64 {
	p.t.Helper()
	res := p.query(q, at)
	if len(res) != 1 {
		p.t.Fatalf("query %s at %v: %d series, want 1: %+v", q, at, len(res), res)
	}
	f, err := strconv.ParseFloat(res[0].Value[1].(string), 64)
	if err != nil {
		p.t.Fatal(err)
	}
	return f
}

// samples returns the raw samples of q Prometheus scraped between from
// and to.
func (p promAPI) samples(q string, from, to time.Time) []float64 {
	p.t.Helper()
	sel := fmt.Sprintf("%s[%dms]", q, to.Sub(from).Milliseconds())
	res := p.query(sel, to)
	if len(res) != 1 || len(res[0].Values) == 0 {
		p.t.Fatalf("%s at %v: want one series with samples: %+v", sel, to, res)
	}
	var out []float64
	for _, v := range res[0].Values {
		f, err := strconv.ParseFloat(v[1].(string), 64)
		if err != nil {
			p.t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// window returns how much counter q grew over the raw samples Prometheus
// scraped between from and to (last minus first), and over how long.
func (p promAPI) window(q string, from, to time.Time) (delta, seconds float64) {
	p.t.Helper()
	sel := fmt.Sprintf("%s[%dms]", q, to.Sub(from).Milliseconds())
	res := p.query(sel, to)
	if len(res) != 1 || len(res[0].Values) < 2 {
		p.t.Fatalf("%s at %v: want one series of at least 2 samples: %+v", sel, to, res)
	}
	vals := res[0].Values
	at := func(i int) (float64, float64) {
		ts := vals[i][0].(float64)
		v, _ := strconv.ParseFloat(vals[i][1].(string), 64)
		return ts, v
	}
	t0, v0 := at(0)
	t1, v1 := at(len(vals) - 1)
	return v1 - v0, t1 - t0
}

// startPrometheusServer starts Debian's prometheus binary on a free
// loopback port with a 1 s scrape of the given jobs (job name to
// metrics URL) and returns its API; it stops when the test ends.
func startPrometheusServer(t *testing.T, bin string, jobs map[string]string) promAPI {
	t.Helper()
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\nscrape_configs:\n")
	for job, u := range jobs {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&cfg, "  - job_name: %s\n    metrics_path: %s\n", job, pu.Path)
		if q := pu.Query(); len(q) > 0 {
			cfg.WriteString("    params:\n")
			for k, v := range q {
				fmt.Fprintf(&cfg, "      %s: [%q]\n", k, v[0])
			}
		}
		fmt.Fprintf(&cfg, "    static_configs:\n      - targets: [%q]\n", pu.Host)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, err := target.FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus log:\n%s\nconfig:\n%s", b, cfg.String())
		}
	})
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus on %s not ready after 30 s: %v", addr, err)
		}
	}
	// The scrape manager takes up new targets every 5 s: wait until each
	// has been tried once (down, as nothing serves it yet), so the
	// scrapes cover the run from its start.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var r struct {
			Data struct {
				ActiveTargets []struct {
					LastScrape time.Time `json:"lastScrape"`
				} `json:"activeTargets"`
			} `json:"data"`
		}
		resp, err := http.Get(base + "/api/v1/targets")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		tried := 0
		for _, at := range r.Data.ActiveTargets {
			if at.LastScrape.Year() > 2000 {
				tried++
			}
		}
		if err == nil && tried == len(jobs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus: %d of %d targets scraped after 30 s (%v)", tried, len(jobs), err)
		}
	}
	return promAPI{t: t, base: base}
}

// prometheusBinary finds Debian's prometheus: absent, the test skips with
// the reason, except under CI, where .ci/run installs it.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no prometheus binary (.ci/run installs Debian's prometheus): %v", err)
		}
		t.Skip("no prometheus binary (apt-get install prometheus, as .ci/run does)")
	}
	return bin
}

// TestPrometheusEndToEnd: a real Prometheus scrapes a fixture's agent and
// `schedscope run --prometheus`, at 1 s, while the run overloads the
// fixture's pool of 4 workers under a CPU quota of 0.5 (as root on a
// writable cgroup hierarchy; without one, the throttling is left out).
// Then Prometheus' answers are compared with the run's own figures
// (results.json and analysis.json, which summary.txt prints): the 2xx
// count exactly, the 2xx rate during the phase within what 250 ms-old
// progress and windows 1.25 s apart allow, the p99 within one classic
// bucket, the pool's saturation within one sample at each end, the
// throttling within one scrape interval (plus one of the run's 250 ms
// polls) at each end of the phase. docs/prometheus.md has the queries and
// a run's answers. About 20 s; not under -short.
func TestPrometheusEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("a real run scraped by a real Prometheus: about 20 s")
	}
	bin := prometheusBinary(t)

	fixtureAddr, err := target.FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	loadAddr, err := target.FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	cmd := fixtureCmd(t, fixtureAddr) + " --model pool --workers 4"
	var quota *cgroup.Group
	if h, err := cgroup.Detect(cgroup.DefaultRoot); err == nil && os.Getuid() == 0 && h.Check() == nil {
		if quota, err = h.Create("prom-e2e", 0.5); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := quota.Remove(); err != nil {
				t.Error(err)
			}
		})
		// The command's shell moves its parent (the run's guard shell,
		// whose cgroup the run reads) and itself into the cgroup, then
		// becomes the fixture.
		cmd = fmt.Sprintf("echo $PPID > %[1]s && echo $$ > %[1]s && exec env %[2]s", quota.ProcsFile(), cmd)
	} else {
		t.Logf("no cgroup with a CPU quota (needs root and a writable cgroup hierarchy): throttling not checked")
	}

	prom := startPrometheusServer(t, bin, map[string]string{
		"fixture": "http://" + fixtureAddr + "/debug/schedscope/metrics?format=prometheus",
		"load":    "http://" + loadAddr + "/metrics",
	})
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, errOut := runCLI(t, context.Background(), "run", "--no-tui", "--prometheus", loadAddr, "--cmd", cmd, "--poll", "250ms",
		"--rate", "300", "--duration", "6s", "--out", out, "http://"+fixtureAddr+"/cpu?us=2000")
	if code != 0 {
		t.Fatalf("run: exit %d\nstdout %s\nstderr %s", code, stdout, errOut)
	}
	end := time.Now()
	r, err := rundir.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Result == nil || r.Analysis == nil || len(r.Result.Phases) != 1 || len(r.Analysis.Phases) != 1 {
		t.Fatalf("run directory without one steady phase's results and analysis")
	}
	res, fig := r.Result.Phases[0], r.Analysis.Phases[0]
	t0 := r.Result.Start.Add(time.Duration(res.StartS * float64(time.Second)))
	t1 := r.Result.Start.Add(time.Duration(res.EndS * float64(time.Second)))
	runID := filepath.Base(out)
	check := func(what, q string, got, own, tol float64) {
		t.Helper()
		t.Logf("%-22s %-110s prometheus %-10.4g schedscope %-10.4g (tolerance %.3g)", what, q, got, own, tol)
		if math.IsNaN(got) || math.Abs(got-own) > tol {
			t.Errorf("%s: prometheus %g, schedscope %g: more than %g apart", what, got, own, tol)
		}
	}

	// The load: the final 2xx count exactly (the run waits for one scrape
	// after the load), the rate over the phase's scrapes, the p99.
	load := fmt.Sprintf(`{job="load",run_id=%q}`, runID)
	q := `last_over_time(schedscope_load_completed_total{job="load",outcome="2xx"}[1m])`
	check("2xx count", q, prom.scalar(q, end), float64(res.OK), 0)
	q = `schedscope_load_completed_total{job="load",outcome="2xx"}`
	// The 2xx that arrived during the phase, per second: analysis.json's
	// achieved_per_s from the run's polls ("2xx/s during" in the summary),
	// not results.json's ok_per_s, which follows the phase's own requests
	// past its end. The exported counter is up to 250 ms old at each end
	// of the window; the scrapes and the polls start and end up to
	// 1.25 s apart, which a throttled target's uneven rate turns into 10 %.
	n, secs := prom.window(q, t0, t1)
	rate := n / secs
	check("2xx/s during the phase", q+"[phase]", rate, fig.AchievedPerS, 2*0.25*fig.AchievedPerS/secs+0.1*fig.AchievedPerS)
	q = fmt.Sprintf(`histogram_quantile(0.99, last_over_time(schedscope_load_latency_seconds_bucket%s[1m]))`, load)
	// Prometheus interpolates inside the bucket holding the 99th
	// percentile; the run's p99 lies in the same bucket, BucketFactor wide.
	p99 := prom.scalar(q, end) * 1e3
	check("p99 latency (ms)", q, p99, res.Latency.P99, res.Latency.P99*(promload.BucketFactor-1))
	q = `last_over_time(schedscope_load_offered_rate{job="load"}[1m])`
	check("offered rate", q, prom.scalar(q, end), res.OfferedRate, 0)

	var workers *rundir.PoolFigures
	for i := range fig.Pools {
		if fig.Pools[i].Name == "workers" {
			workers = &fig.Pools[i]
		}
	}
	if workers == nil {
		t.Fatalf("analysis.json: no workers pool in %+v", fig.Pools)
	}
	// Prometheus' samples inside the phase, against the run's polls in it:
	// a sample at either end may fall while the pool was still filling or
	// already draining, so each side may differ by one sample's weight.
	q = `schedscope_pool_in_use{job="fixture",pool="workers"}`
	inUse := prom.samples(q, t0, t1)
	saturated, sum := 0.0, 0.0
	for _, v := range inUse {
		sum += v
		if int(v) >= workers.Size {
			saturated++
		}
	}
	samples := float64(len(inUse))
	weight := 1/samples + 1/float64(max(fig.Polls, 1))
	check("workers saturated share", fmt.Sprintf("share of %s[phase] >= size", q), saturated/samples, workers.SaturatedShare, weight)
	check("workers mean in use", fmt.Sprintf("avg of %s[phase]", q), sum/samples, workers.MeanInUse, float64(workers.Size)*weight)
	q = `last_over_time(schedscope_pool_size{job="fixture",pool="workers"}[1m])`
	check("workers size", q, prom.scalar(q, end), float64(workers.Size), 0)
	// 0.6 CPUs of demand under 0.5: the pool queues; a busy machine
	// slows the fixture further, so noise only raises this share.
	if workers.SaturatedShare < 0.5 {
		t.Errorf("the pool of 4 at 300/s x 2 ms under 0.5 CPU was saturated in only %.0f %% of the run's polls", 100*workers.SaturatedShare)
	}

	// Every query of the dashboard, its variables set to all, is PromQL
	// this Prometheus accepts (query fails the test otherwise).
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer("$__rate_interval", "4s", "$instance", ".*", "$run_id", ".*")
	answered := 0
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			if len(prom.query(vars.Replace(q.Expr), t1)) > 0 {
				answered++
			}
		}
	}
	t.Logf("dashboard: %d of its queries answered with data at the phase's end", answered)

	if quota == nil {
		return
	}
	cg := fig.Cgroup
	if cg == nil || cg.Periods == 0 {
		t.Fatalf("analysis.json: no throttling figures: %+v", cg)
	}
	q = `last_over_time(schedscope_cpu_quota_cores{job="fixture"}[1m])`
	check("CPU quota (cores)", q, prom.scalar(q, end), cg.TightestCores, 1e-9)
	// The scrapes inside the phase start and end up to one scrape interval
	// (1 s) from its ends, the run's polls up to one poll (250 ms): at
	// most 1.25 s apart at each end, 10 periods of 100 ms a second.
	slack := 2 * 1.25 * float64(time.Second/cgroup.Period)
	qt, qp := `schedscope_cpu_throttled_periods_total{job="fixture"}`, `schedscope_cpu_periods_total{job="fixture"}`
	throttled, _ := prom.window(qt, t0, t1)
	periods, _ := prom.window(qp, t0, t1)
	check("throttled periods", qt+"[phase]", throttled, float64(cg.ThrottledPeriods), slack)
	check("throttled share", qt+"[phase] / "+qp+"[phase]", throttled/periods, cg.ThrottledShare, slack/float64(cg.Periods))
	// Throttled only if the machine let the fixture reach its quota
	// (0.6 CPUs of demand): other processes holding the CPUs keep it
	// under, and noise pushes the share down. The control is its use of
	// the quota; the comparisons with Prometheus above are exact or within
	// the windows' offsets and always run.
	if cg.UseOfLimit < 0.9 {
		t.Skipf("the fixture used %.0f %% of its 0.5-CPU quota at 0.6 CPUs of demand (throttled in %.0f %% of periods): the machine, not the quota, limited it", 100*cg.UseOfLimit, 100*cg.ThrottledShare)
	}
	if cg.ThrottledShare < 0.3 {
		t.Errorf("300/s x 2 ms under 0.5 CPU throttled in only %.0f %% of periods (%.0f %% of the quota used)", 100*cg.ThrottledShare, 100*cg.UseOfLimit)
	}
}

// TestPrometheusFinalScrape: after the load, --prometheus keeps serving
// until a scrape that began after the load's end, so Prometheus holds the
// final figures; not at all when nothing ever scraped it.
func TestPrometheusFinalScrape(t *testing.T) {
	scrape := func(addr string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	stopped := func(ps *promServer, ended time.Time) chan struct{} {
		done := make(chan struct{})
		go func() { defer close(done); ps.stop(context.Background(), ended) }()
		return done
	}

	addr := freeAddr(t)
	ps, err := startPrometheus(addr, promload.New("final"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	scrape(addr)
	done := stopped(ps, time.Now())
	select {
	case <-done:
		t.Fatal("stopped without waiting for a scrape after the load")
	case <-time.After(300 * time.Millisecond):
	}
	scrape(addr)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("still serving 5 s after the final scrape")
	}

	// Never scraped: nothing waits for it.
	addr = freeAddr(t)
	if ps, err = startPrometheus(addr, promload.New("unwatched"), io.Discard); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped(ps, time.Now()):
	case <-time.After(5 * time.Second):
		t.Fatal("an unscraped server waited for a scrape")
	}
}
