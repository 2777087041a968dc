package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/agent/prom"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/collect/load/promload"
)

// dashboardFile is the Grafana dashboard for the agent and the load.
const dashboardFile = "../../deploy/grafana/schedscope.json"

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID      int    `json:"id"`
		Type    string `json:"type"`
		Title   string `json:"title"`
		Targets []struct {
			Expr  string `json:"expr"`
			RefID string `json:"refId"`
		} `json:"targets"`
		GridPos struct{ H, W, X, Y int } `json:"gridPos"`
	} `json:"panels"`
}

// scrapeNames fetches url's text exposition and returns its metric
// families.
func scrapeNames(t *testing.T, url string) map[string]dto.MetricType {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	names := map[string]dto.MetricType{}
	for name, f := range fams {
		names[name] = f.GetType()
	}
	return names
}

var (
	promqlString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promqlBraces = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promqlGroup  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlIdent  = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*\s*\(?`)
	promqlWords  = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "bool": true, "and": true, "or": true,
		"unless": true, "offset": true, "Inf": true, "NaN": true}
)

// metricNames returns the metric names expr selects: its identifiers
// that are neither functions, keywords, label names nor Grafana variables.
func metricNames(expr string) []string {
	s := promqlString.ReplaceAllString(expr, `""`)
	s = promqlBraces.ReplaceAllString(s, " ")
	s = promqlGroup.ReplaceAllString(s, " ")
	var names []string
	for _, m := range promqlIdent.FindAllStringIndex(s, -1) {
		tok := s[m[0]:m[1]]
		name := strings.TrimSpace(tok)
		if strings.HasSuffix(tok, "(") || promqlWords[name] || m[0] > 0 && strings.ContainsRune("$0123456789.", rune(s[m[0]-1])) {
			continue // a function, a keyword, a variable, a duration's unit
		}
		names = append(names, name)
	}
	return names
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`rate(a_total{x="y",z=~"$v"}[$__rate_interval]) / rate(b_total[5m])`:                      {"a_total", "b_total"},
		`histogram_quantile(0.99, sum by (le, pool) (rate(c_bucket{instance=~"$instance"}[1m])))`: {"c_bucket"},
		`d / (e > 0)`:                    {"d", "e"},
		`f >= bool on(pool) g offset 5m`: {"f", "g"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%s) = %q, want %q", expr, got, want)
		}
	}
}

// TestDashboard: deploy/grafana/schedscope.json is a dashboard Grafana
// imports (title, uid, panels with queries, variables), and every metric
// its queries select is one the exporters serve, read from real scrapes
// of the fixture's agent and of `--prometheus`'s server.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("%s: no title, uid or panels", dashboardFile)
	}

	// The agent: the fixture's own exposition, after a sleep probe; the
	// CPU quota's figures from a collector over a cgroup with a limit, as
	// this test's process may have none.
	base := startFixture(t, "--model", "pool", "--workers", "4")
	resp, err := http.Post(base+"/debug/schedscope/sleepprobe?goroutines=1&sleep=1ms&seconds=0.05", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	served := scrapeNames(t, base+"/debug/schedscope/metrics?format=prometheus")
	root := t.TempDir()
	writeTestFile(t, filepath.Join(root, "cpu.max"), "50000 100000\n")
	writeTestFile(t, filepath.Join(root, "cpu.stat"), "nr_periods 1\nnr_throttled 1\nthrottled_usec 1\n")
	writeTestFile(t, filepath.Join(root, "self-cgroup"), "0::/\n")
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	reg.MustRegister(prom.NewCollector(a, prom.Options{CgroupRoot: root, ProcCgroup: filepath.Join(root, "self-cgroup")}))
	srv := httptest.NewServer(prom.Handler(reg))
	defer srv.Close()
	for name, typ := range scrapeNames(t, srv.URL) {
		served[name] = typ
	}

	// The load: `--prometheus`'s server after a progress report and an
	// interval.
	m := promload.New("dashboard-test")
	m.Progress(load.Progress{Kind: load.Steady, Name: "steady", OfferedRate: 10, Sent: 1, OK: 1})
	h := hdrhistogram.New(1, int64(time.Hour), 3)
	h.RecordValue(int64(time.Millisecond))
	m.Interval(load.Interval{Kind: load.Steady, Latency: h, SendLag: h})
	addr := freeAddr(t)
	ps, err := startPrometheus(addr, m, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range scrapeNames(t, "http://"+addr+"/metrics") {
		served[name] = typ
	}
	stopped, stop := context.WithCancel(t.Context())
	stop() // no wait for a last scrape
	ps.stop(stopped, time.Now())

	// A histogram or summary is selected by its series' names.
	known := map[string]bool{}
	for name, typ := range served {
		known[name] = true
		if typ == dto.MetricType_HISTOGRAM || typ == dto.MetricType_SUMMARY {
			known[name+"_sum"], known[name+"_count"] = true, true
		}
		if typ == dto.MetricType_HISTOGRAM {
			known[name+"_bucket"] = true
		}
	}
	check := func(where, expr string) {
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: %q selects no metric", where, expr)
		}
		for _, n := range names {
			if !known[n] {
				t.Errorf("%s: %q selects %s, which no exporter serves", where, expr, n)
			}
		}
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 || p.GridPos.W == 0 || p.GridPos.H == 0 {
			t.Errorf("panel %q: no query or no size", p.Title)
		}
		for _, q := range p.Targets {
			check("panel "+p.Title, q.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			inner := strings.TrimSuffix(strings.TrimPrefix(v.Definition, "label_values("), ")")
			check("variable "+v.Name, strings.SplitN(inner, ",", 2)[0])
		}
	}
}

func writeTestFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
