package prom_test

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/agent/prom"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeCgroupV2 writes a cgroup v2 tree whose limit sits on the parent of
// the process's cgroup, and returns its root and /proc/self/cgroup file.
func fakeCgroupV2(t *testing.T) (root, procCgroup string) {
	t.Helper()
	root = t.TempDir()
	write(t, filepath.Join(root, "cpu.max"), "max 100000\n") // the root has none
	write(t, filepath.Join(root, "svc", "cpu.max"), "150000 100000\n")
	write(t, filepath.Join(root, "svc", "cpu.stat"), "usage_usec 9000000\nnr_periods 200\nnr_throttled 50\nthrottled_usec 2500000\n")
	write(t, filepath.Join(root, "svc", "pod", "cpu.max"), "max 100000\n")
	write(t, filepath.Join(root, "svc", "pod", "cpu.stat"), "nr_periods 0\nnr_throttled 0\nthrottled_usec 0\n")
	procCgroup = filepath.Join(t.TempDir(), "cgroup")
	write(t, procCgroup, "0::/svc/pod\n")
	return root, procCgroup
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scrape fetches url with the Accept header given and parses the text
// exposition.
func scrape(t *testing.T, url, accept string) (map[string]*dto.MetricFamily, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	if accept != "" {
		return nil, resp.Header, string(body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse exposition: %v\n%s", err, body)
	}
	return fams, resp.Header, string(body)
}

// value is the value of the sample of family name whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no metric family %s", name)
	}
	for _, m := range f.GetMetric() {
		match := true
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			match = match && found
		}
		if !match {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	t.Fatalf("%s: no sample with labels %v", name, want)
	return 0
}

func TestExposition(t *testing.T) {
	root, procCgroup := fakeCgroupV2(t)
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{Exposition: prom.Handler(reg)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	reg.MustRegister(prom.NewCollector(a, prom.Options{CgroupRoot: root, ProcCgroup: procCgroup}),
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler)))
	a.Pools().Register("db", agent.PoolFunc(func() agent.PoolStats {
		return agent.PoolStats{Kind: "sql.DB", Size: 10, InUse: 7, Idle: 3, WaitCount: 4, WaitDuration: 2 * time.Second}
	}))
	a.Pools().Register("downstream", agent.PoolFunc(func() agent.PoolStats {
		return agent.PoolStats{Kind: "http.Transport", Size: 4, WaitCount: 5, WaitDuration: 1100 * time.Millisecond,
			Waits: &agent.WaitHistogram{Bounds: []time.Duration{time.Millisecond, 10 * time.Millisecond, time.Second}, Counts: []int64{2, 2, 1}}}
	}))
	a.Pools().Register("workers", agent.PoolFunc(func() agent.PoolStats {
		return agent.PoolStats{Size: 8, InUse: 8, Waiting: 5, Acquired: 100, HoldDuration: 30 * time.Second,
			Known: agent.Known{Waiting: true, Acquired: true}}
	}))
	mux := http.NewServeMux()
	a.Mount(mux, "/debug/schedscope/")
	srv := httptest.NewServer(mux)
	defer srv.Close()
	url := srv.URL + "/debug/schedscope/metrics?format=prometheus"

	fams, _, _ := scrape(t, url, "")
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"schedscope_pool_size", map[string]string{"pool": "db", "kind": "sql.DB"}, 10},
		{"schedscope_pool_in_use", map[string]string{"pool": "db"}, 7},
		{"schedscope_pool_idle", map[string]string{"pool": "db"}, 3},
		{"schedscope_pool_wait_seconds", map[string]string{"pool": "db"}, 4},
		{"schedscope_pool_in_use", map[string]string{"pool": "workers", "kind": "func"}, 8},
		{"schedscope_pool_waiting", map[string]string{"pool": "workers"}, 5},
		{"schedscope_pool_acquired_total", map[string]string{"pool": "workers"}, 100},
		{"schedscope_pool_hold_seconds_total", map[string]string{"pool": "workers"}, 30},
		{"schedscope_gomaxprocs", nil, float64(runtime.GOMAXPROCS(0))},
		{"schedscope_cpu_quota_cores", nil, 1.5},
		{"schedscope_cpu_periods_total", nil, 200},
		{"schedscope_cpu_throttled_periods_total", nil, 50},
		{"schedscope_cpu_throttled_seconds_total", nil, 2.5},
		{"schedscope_flight_recorder_on", nil, 0},
		{"schedscope_flight_recorder_state", map[string]string{"state": prom.StateOnDemand}, 1},
		{"schedscope_flight_recorder_state", map[string]string{"state": prom.StateOn}, 0},
		{"schedscope_flight_recorder_snapshots_total", nil, 0},
	} {
		if got := value(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %g, want %g", c.name, c.labels, got, c.want)
		}
	}
	for _, m := range fams["schedscope_pool_wait_seconds"].GetMetric() {
		h := m.GetHistogram()
		switch m.GetLabel()[1].GetValue() {
		case "db": // database/sql: count and sum only
			if b := h.GetBucket(); h.GetSampleSum() != 2 || len(b) != 1 || !math.IsInf(b[0].GetUpperBound(), 1) {
				t.Errorf("db pool wait histogram: sum %g s, buckets %v; want 2 and none but +Inf", h.GetSampleSum(), h.GetBucket())
			}
		case "downstream": // a distribution: cumulative buckets at the bounds
			var got []string
			for _, b := range h.GetBucket() {
				got = append(got, fmt.Sprintf("%g:%d", b.GetUpperBound(), b.GetCumulativeCount()))
			}
			if strings.Join(got, " ") != "0.001:2 0.01:4 1:5 +Inf:5" || h.GetSampleCount() != 5 {
				t.Errorf("downstream pool wait buckets %v, count %d; want 0.001:2 0.01:4 1:5 +Inf:5, 5", got, h.GetSampleCount())
			}
		}
	}
	if _, ok := fams["schedscope_pool_waiting"]; ok {
		for _, m := range fams["schedscope_pool_waiting"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == "db" {
					t.Error("schedscope_pool_waiting reported for database/sql, which cannot tell")
				}
			}
		}
	}
	if _, ok := fams["go_sched_gomaxprocs_threads"]; !ok {
		t.Error("client_golang's Go collector registered beside it: go_sched_gomaxprocs_threads missing")
	}
	if _, ok := fams["schedscope_sleep_probe_overshoot_seconds"]; ok {
		t.Error("sleep probe figures before any probe ran")
	}

	// A probe and an armed recorder show up in the next scrape.
	post := func(path string) {
		resp, err := http.Post(srv.URL+"/debug/schedscope/"+path, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s: %s", path, resp.Status)
		}
	}
	post("sleepprobe?goroutines=2&sleep=1ms&seconds=0.2")
	post("flightrecorder/arm?for=1m")
	fams, _, _ = scrape(t, url, "")
	if n := value(t, fams, "schedscope_sleep_probe_samples", nil); n < 20 {
		t.Errorf("sleep probe samples = %g, want about 2 x 200 ms / 1 ms", n)
	}
	if p99 := value(t, fams, "schedscope_sleep_probe_overshoot_seconds", map[string]string{"quantile": "0.99"}); p99 <= 0 || p99 > 1 {
		t.Errorf("sleep probe p99 overshoot = %gs", p99)
	}
	if value(t, fams, "schedscope_flight_recorder_on", nil) != 1 || value(t, fams, "schedscope_flight_recorder_arms_total", nil) != 1 {
		t.Error("armed flight recorder not reported as on, armed once")
	}
	if until := value(t, fams, "schedscope_flight_recorder_armed_until_timestamp_seconds", nil); until < float64(time.Now().Unix()) {
		t.Errorf("armed until %g, in the past", until)
	}

	// OpenMetrics on content negotiation, text otherwise.
	_, h, body := scrape(t, url, "application/openmetrics-text; version=1.0.0")
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(body, "# EOF\n") {
		t.Errorf("OpenMetrics asked for: Content-Type %q, ends %q", ct, body[max(len(body)-20, 0):])
	}
	_, h, _ = scrape(t, url, "text/plain")
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("text asked for: Content-Type %q", ct)
	}
}

func TestExpositionGuarded(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{Token: "s3cret", Exposition: prom.Handler(reg)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	reg.MustRegister(prom.NewCollector(a, prom.Options{NoCPULimit: true}))
	srv := httptest.NewServer(a)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics?format=prometheus")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %s, want 401", resp.Status)
	}
}

func TestNoExposition(t *testing.T) {
	a, err := agent.New(agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a)
	defer srv.Close()
	for q, want := range map[string]int{"format=prometheus": 404, "format=xml": 400, "format=json": 200} {
		resp, err := http.Get(srv.URL + "/metrics?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %s, want %d", q, resp.Status, want)
		}
	}
}

func TestReadCPULimit(t *testing.T) {
	v2root, v2proc := fakeCgroupV2(t)
	v2b, _ := os.ReadFile(v2proc)

	v1root := t.TempDir()
	write(t, filepath.Join(v1root, "cpu,cpuacct", "job", "cpu.cfs_quota_us"), "50000\n")
	write(t, filepath.Join(v1root, "cpu,cpuacct", "job", "cpu.cfs_period_us"), "100000\n")
	write(t, filepath.Join(v1root, "cpu,cpuacct", "job", "cpu.stat"), "nr_periods 10\nnr_throttled 4\nthrottled_time 300000000\n")
	write(t, filepath.Join(v1root, "cpu,cpuacct", "cpu.cfs_quota_us"), "-1\n")
	write(t, filepath.Join(v1root, "cpu,cpuacct", "cpu.cfs_period_us"), "100000\n")

	unlimited := t.TempDir()
	write(t, filepath.Join(unlimited, "cpu.max"), "max 100000\n")

	for _, c := range []struct {
		name, root, proc string
		ok               bool
		want             prom.CPULimit
		wantErr          bool
	}{
		{"v2 limit on the parent", v2root, string(v2b), true, prom.CPULimit{Dir: filepath.Join(v2root, "svc"), Cores: 1.5, Periods: 200, ThrottledPeriods: 50, ThrottledSeconds: 2.5}, false},
		{"v1", v1root, "12:cpu,cpuacct:/job\n3:memory:/job\n", true, prom.CPULimit{Dir: filepath.Join(v1root, "cpu,cpuacct", "job"), Cores: 0.5, Periods: 10, ThrottledPeriods: 4, ThrottledSeconds: 0.3}, false},
		{"v2 no limit", unlimited, "0::/\n", false, prom.CPULimit{}, false},
		{"v2 cgroup not visible", unlimited, "0::/elsewhere/x\n", false, prom.CPULimit{}, false},
		{"empty", unlimited, "", false, prom.CPULimit{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok, err := prom.ReadCPULimit(c.root, []byte(c.proc))
			if (err != nil) != c.wantErr || ok != c.ok || got != c.want {
				t.Errorf("ReadCPULimit = %+v, %v, %v; want %+v, %v, error %v", got, ok, err, c.want, c.ok, c.wantErr)
			}
		})
	}
	bad := t.TempDir()
	write(t, filepath.Join(bad, "cpu.max"), "lots 100000\n")
	if _, _, err := prom.ReadCPULimit(bad, []byte("0::/\n")); err == nil || !strings.Contains(err.Error(), "cpu.max") {
		t.Errorf("bad cpu.max: error %v, want one naming cpu.max", err)
	}
}
