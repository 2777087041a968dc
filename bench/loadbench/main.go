// Command loadbench compares schedscope's load generator with wrk, hey and
// vegeta, and its lean HTTP client with net/http's and fasthttp's
// (bench/fastclient), against the same hello-world target (bench/hello) on
// 127.0.0.1, in one run, and prints Markdown tables of medians and ratios.
// The schedscope-procs1 variant runs the generator with --procs 1
// (GOMAXPROCS=1) instead of Go's default.
//
// Two experiments:
//
//   - full speed: each tool with the same number of connections for the same
//     time, as fast as it can (schedscope: closed model, --users N). Figures:
//     2xx/s and the generator process's CPU microseconds per request
//     (user+system from the kernel's accounting of the tool's process).
//   - open model: schedscope (default, --procs 1, --engine goroutines) and vegeta at a fixed rate (default 20,000/s
//     for 10 s). Figures: 2xx/s, requests sent of those planned, send lag
//     p99 (schedscope measures it; vegeta does not report it), latency p99,
//     CPU per request.
//
// Each figure is the median of -runs runs; the tools' order rotates between
// runs so none always runs on a warmer machine. The machine's load average
// is printed before and after: on a shared machine, compare ratios within a
// run, not absolute figures between runs.
//
//	go run ./bench/loadbench -runs 5
//
// Flags for the event-loop benchmark (bench/evloops.sh): -wrk-threads 2,
// -open-tools, -open-warmup (schedscope's --warmup), -fresh-target=false
// (one target, warmed up once, for every open-model run), -quiet-wait,
// and -base (another schedscope build, run as the tool schedscope-base).
// The open model also prints each schedscope run's send lag p99 and in
// how many runs it was under 1 ms with every request sent.
//
// wrk and hey come from Debian (apt-get install wrk hey); vegeta from
// go install github.com/tsenart/vegeta/v12@v12.13.0. A missing tool is
// skipped with a note.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/internal/target"
)

type options struct {
	runs         int
	duration     time.Duration
	conns        int
	openRate     int
	openDuration time.Duration
	tools        string
	experiments  string
	target       string
	wrkThreads   int
	openTools    string
	openWarmup   time.Duration
	freshTarget  bool
	quietWait    time.Duration
	base         string
}

// measure is one run of one tool.
type measure struct {
	okPerS     float64
	requests   float64 // completed requests
	cpuUSPerRq float64
	planned    float64 // open model
	notSent    float64 // open model, schedscope only
	lagP99MS   float64 // open model, schedscope only (-1: not reported)
	latP99MS   float64
}

func main() {
	var o options
	flag.IntVar(&o.runs, "runs", 5, "runs per tool; figures are medians")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "length of each full-speed run")
	flag.IntVar(&o.conns, "conns", 50, "connections (users) of each tool at full speed")
	flag.IntVar(&o.openRate, "open-rate", 20000, "open-model rate, req/s")
	flag.DurationVar(&o.openDuration, "open-duration", 10*time.Second, "length of each open-model run")
	flag.StringVar(&o.tools, "tools", "wrk,hey,vegeta,fasthttp,schedscope,schedscope-goroutines,schedscope-nethttp,schedscope-procs1", "tools to compare at full speed")
	flag.StringVar(&o.experiments, "experiments", "full,open", "experiments to run: full, open")
	flag.StringVar(&o.target, "target", "", "URL of an already running target (default: build and start bench/hello)")
	flag.IntVar(&o.wrkThreads, "wrk-threads", 1, "wrk's threads (-t)")
	flag.StringVar(&o.openTools, "open-tools", "schedscope,schedscope-procs1,schedscope-goroutines,vegeta", "tools to compare in the open model")
	flag.DurationVar(&o.openWarmup, "open-warmup", 0, "schedscope's --warmup in the open model (excluded from its figures)")
	flag.BoolVar(&o.freshTarget, "fresh-target", true, "open model: a fresh target, warmed up, for every run (false: one target, warmed up once)")
	flag.DurationVar(&o.quietWait, "quiet-wait", 15*time.Second, "open model: wait up to this long before each run for the CPUs to be under 10 % busy")
	flag.StringVar(&o.base, "base", "", "another schedscope binary, run as the tool schedscope-base (e.g. an earlier commit's build)")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "loadbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ss := filepath.Join(dir, "schedscope")
	if out, err := exec.Command("go", "build", "-o", ss, "./cmd/schedscope").CombinedOutput(); err != nil {
		return fmt.Errorf("building schedscope (run from the repository root): %v\n%s", err, out)
	}
	url := o.target
	if url == "" {
		hello := filepath.Join(dir, "hello")
		if out, err := exec.Command("go", "build", "-o", hello, "./bench/hello").CombinedOutput(); err != nil {
			return fmt.Errorf("building bench/hello: %v\n%s", err, out)
		}
		u, stop, err := startHello(hello)
		if err != nil {
			return err
		}
		defer stop()
		url = u
	}
	fmt.Printf("target %s; %d runs each; load average before: %s\n\n", url, o.runs, target.LoadAverage())

	b := &bench{o: o, dir: dir, ss: ss, url: url}
	if o.target == "" {
		b.hello = filepath.Join(dir, "hello")
	}
	if strings.Contains(o.experiments, "full") {
		if err := b.full(ctx); err != nil {
			return err
		}
	}
	if strings.Contains(o.experiments, "open") {
		if err := b.open(ctx); err != nil {
			return err
		}
	}
	fmt.Printf("\nload average after: %s\n", target.LoadAverage())
	return nil
}

type bench struct {
	o       options
	dir, ss string
	url     string
	hello   string // the target's binary when the bench started it
}

// startHello starts bench/hello on a loopback port and returns its URL.
func startHello(bin string) (string, func(), error) {
	cmd := exec.Command(bin)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting bench/hello: %w", err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("reading bench/hello's URL: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}

// full runs every tool at full speed, rotating the order between runs.
func (b *bench) full(ctx context.Context) error {
	tools := strings.Split(b.o.tools, ",")
	var avail []string
	for _, t := range tools {
		if _, err := b.fullRun(ctx, t, true); err != nil {
			fmt.Printf("skipping %s: %v\n", t, err)
			continue
		}
		avail = append(avail, t)
	}
	res := map[string][]measure{}
	for r := 0; r < b.o.runs; r++ {
		for i := range avail {
			t := avail[(i+r)%len(avail)]
			m, err := b.fullRun(ctx, t, false)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", t, r+1, err)
			}
			fmt.Fprintf(os.Stderr, "full %-20s run %d: %8.0f 2xx/s %6.1f us/req\n", t, r+1, m.okPerS, m.cpuUSPerRq)
			res[t] = append(res[t], m)
		}
	}
	fmt.Printf("### Full speed, %d connections, %s per run, median of %d\n\n", b.o.conns, b.o.duration, b.o.runs)
	fmt.Println("| tool | 2xx/s | vs wrk | vs wrk, paired | CPU us/req | vs wrk | vs wrk, paired |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	ref := res["wrk"]
	for _, t := range avail {
		ms := res[t]
		rps, cpu := median(ms, func(m measure) float64 { return m.okPerS }), median(ms, func(m measure) float64 { return m.cpuUSPerRq })
		vs, vsc, pvs, pvsc := "", "", "", ""
		if len(ref) > 0 {
			vs = fmt.Sprintf("%.2fx", rps/median(ref, func(m measure) float64 { return m.okPerS }))
			vsc = fmt.Sprintf("%.2fx", cpu/median(ref, func(m measure) float64 { return m.cpuUSPerRq }))
			// Paired: the median over runs of each run's ratio to wrk in
			// the same run, which cancels the machine's drift between runs
			// (wrk alone spread over 42,800-53,200 req/s in one benchmark).
			var ratios []measure // each run's figures over wrk's in the same run
			for i := range min(len(ms), len(ref)) {
				ratios = append(ratios, measure{okPerS: ms[i].okPerS / ref[i].okPerS, cpuUSPerRq: ms[i].cpuUSPerRq / ref[i].cpuUSPerRq})
			}
			pvs = fmt.Sprintf("%.2fx", median(ratios, func(m measure) float64 { return m.okPerS }))
			pvsc = fmt.Sprintf("%.2fx", median(ratios, func(m measure) float64 { return m.cpuUSPerRq }))
		}
		fmt.Printf("| %s | %.0f | %s | %s | %.1f | %s | %s |\n", t, rps, vs, pvs, cpu, vsc, pvsc)
	}
	fmt.Println()
	return nil
}

// fullRun runs one tool at full speed; probe runs it for a moment only, to
// see that it works.
func (b *bench) fullRun(ctx context.Context, tool string, probe bool) (measure, error) {
	d := b.o.duration
	if probe {
		d = 300 * time.Millisecond
	}
	secs := fmt.Sprintf("%.3fs", d.Seconds())
	c := strconv.Itoa(b.o.conns)
	switch tool {
	case "wrk":
		out, cpu, err := b.exec(ctx, "wrk", "-t"+strconv.Itoa(b.o.wrkThreads), "-c"+c, "-d"+fmt.Sprintf("%ds", max(1, int(d.Seconds()))), b.url)
		if err != nil {
			return measure{}, err
		}
		n := grabFloat(out, `(\d+) requests in`)
		return measure{okPerS: grabFloat(out, `Requests/sec:\s+([\d.]+)`), requests: n, cpuUSPerRq: perReq(cpu, n)}, nil
	case "hey":
		out, cpu, err := b.exec(ctx, "hey", "-z", secs, "-c", c, b.url)
		if err != nil {
			return measure{}, err
		}
		n := grabFloat(out, `\[200\]\s+(\d+) responses`)
		return measure{okPerS: grabFloat(out, `Requests/sec:\s+([\d.]+)`), requests: n, cpuUSPerRq: perReq(cpu, n)}, nil
	case "vegeta":
		return b.vegeta(ctx, []string{"-rate=0", "-max-workers=" + c, "-duration=" + secs}, 0)
	case "fasthttp":
		bin := filepath.Join(b.dir, "fastclient")
		if _, err := os.Stat(bin); err != nil {
			build := exec.Command("go", "build", "-o", bin, ".")
			build.Dir = "bench/fastclient"
			build.Env = append(os.Environ(), "GOWORK=off")
			if out, err := build.CombinedOutput(); err != nil {
				return measure{}, fmt.Errorf("building bench/fastclient: %v\n%s", err, out)
			}
		}
		out, cpu, err := b.exec(ctx, bin, "-url", b.url, "-c", c, "-d", secs)
		if err != nil {
			return measure{}, err
		}
		n := grabFloat(out, `requests (\d+)`)
		return measure{okPerS: grabFloat(out, `req/s ([\d.]+)`), requests: n, cpuUSPerRq: perReq(cpu, n)}, nil
	case "schedscope", "schedscope-nethttp", "schedscope-procs1", "schedscope-goroutines", "schedscope-base":
		args := []string{"load", "--users", c, "--duration", secs}
		if tool == "schedscope-nethttp" {
			args = append(args, "--client", "net/http")
		}
		if tool == "schedscope-goroutines" {
			args = append(args, "--engine", "goroutines")
		}
		if tool == "schedscope-procs1" {
			args = append(args, "--procs", "1")
		}
		if tool == "schedscope-base" {
			return b.schedscopeBin(ctx, b.o.base, args)
		}
		return b.schedscope(ctx, args)
	}
	return measure{}, fmt.Errorf("unknown tool %q", tool)
}

// open runs the open-model experiment: schedscope and vegeta at a fixed rate.
func (b *bench) open(ctx context.Context) error {
	secs := fmt.Sprintf("%.3fs", b.o.openDuration.Seconds())
	rate := strconv.Itoa(b.o.openRate)
	planned := float64(b.o.openRate) * b.o.openDuration.Seconds()
	tools := strings.Split(b.o.openTools, ",")
	ssArgs := []string{"load", "--rate", rate, "--duration", secs}
	if b.o.openWarmup > 0 {
		ssArgs = append(ssArgs, "--warmup", b.o.openWarmup.String())
	}
	if !b.o.freshTarget { // warm the one target up once
		if _, _, err := b.exec(ctx, b.ss, "load", "--users", "20", "--duration", "3s", "--progress", "off", b.url); err != nil {
			return fmt.Errorf("warming the target up: %w", err)
		}
	}
	res := map[string][]measure{}
	for r := 0; r < b.o.runs; r++ {
		for i := range tools {
			t := tools[(i+r)%len(tools)]
			var m measure
			var err error
			// A fresh target for every open-model run, warmed up by the
			// same closed-model load each time (a cold Go server at 20,000
			// req/s spends its first seconds growing its heap): a tool that
			// overloads it (vegeta at 20,000 req/s leaves it tens of
			// thousands of requests behind) must not slow the next one.
			// Wait for the previous run's processes and sockets to settle:
			// right after vegeta's overload, one run in five stalled for a
			// quarter of a second (not sent, latency p99 0.4 s).
			if busy, err := waitQuiet(ctx, 0.10, b.o.quietWait); err != nil {
				fmt.Fprintf(os.Stderr, "open %-10s run %d: the machine did not settle (%.0f %% busy): %v\n", t, r+1, 100*busy, err)
			}
			stopTarget := func() {}
			if b.hello != "" && b.o.freshTarget {
				u, stop, serr := b.warmTarget(ctx)
				if serr != nil {
					return serr
				}
				b.url, stopTarget = u, stop
			}
			load := target.LoadAverage()
			switch t {
			case "vegeta":
				m, err = b.vegeta(ctx, []string{"-rate=" + rate, "-duration=" + secs}, planned)
			case "schedscope":
				m, err = b.schedscope(ctx, ssArgs)
			case "schedscope-base":
				m, err = b.schedscopeBin(ctx, b.o.base, ssArgs)
			case "schedscope-procs1":
				m, err = b.schedscope(ctx, append(slices.Clip(ssArgs), "--procs", "1"))
			case "schedscope-goroutines":
				m, err = b.schedscope(ctx, append(slices.Clip(ssArgs), "--engine", "goroutines"))
			default:
				err = fmt.Errorf("unknown tool %q", t)
			}
			stopTarget()
			if err != nil {
				fmt.Printf("skipping %s: %v\n", t, err)
				continue
			}
			fmt.Fprintf(os.Stderr, "open %-10s run %d: %8.0f 2xx/s, sent %.0f of %.0f, lag p99 %.3f ms, p99 %.2f ms, %.1f us/req (load average %s)\n",
				t, r+1, m.okPerS, m.planned-m.notSent, m.planned, m.lagP99MS, m.latP99MS, m.cpuUSPerRq, load)
			res[t] = append(res[t], m)
		}
	}
	fmt.Printf("### Open model, %s req/s for %s, median of %d\n\n", rate, b.o.openDuration, b.o.runs)
	fmt.Println("| tool | 2xx/s | sent / planned | not sent (reported) | send lag p99 ms | latency p99 ms | CPU us/req |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, t := range tools {
		ms := res[t]
		if len(ms) == 0 {
			continue
		}
		get := func(f func(measure) float64) float64 { return median(ms, f) }
		sent := get(func(m measure) float64 { return m.planned - m.notSent })
		lag, notSent := "not reported", "not reported"
		if t != "vegeta" {
			lag = fmt.Sprintf("%.3f", get(func(m measure) float64 { return m.lagP99MS }))
			notSent = fmt.Sprintf("%.0f", get(func(m measure) float64 { return m.notSent }))
		}
		fmt.Printf("| %s | %.0f | %.0f / %.0f | %s | %s | %.2f | %.1f |\n", t, get(func(m measure) float64 { return m.okPerS }),
			sent, get(func(m measure) float64 { return m.planned }), notSent, lag,
			get(func(m measure) float64 { return m.latP99MS }), get(func(m measure) float64 { return m.cpuUSPerRq }))
	}
	fmt.Println()
	for _, t := range tools {
		if t == "vegeta" || len(res[t]) == 0 {
			continue
		}
		var lags []string
		under := 0
		for _, m := range res[t] {
			lags = append(lags, fmt.Sprintf("%.2f", m.lagP99MS))
			if m.lagP99MS < 1 && m.notSent == 0 {
				under++
			}
		}
		fmt.Printf("%s: send lag p99 per run %s ms; under 1 ms with every request sent in %d of %d runs\n", t, strings.Join(lags, ", "), under, len(res[t]))
	}
	return nil
}

// warmTarget starts a fresh bench/hello and warms it up with 3 s of
// closed-model load (a cold Go server at 20,000 req/s spends its first
// seconds growing its heap).
func (b *bench) warmTarget(ctx context.Context) (string, func(), error) {
	u, stop, err := startHello(b.hello)
	if err != nil {
		return "", nil, err
	}
	if _, _, err := b.exec(ctx, b.ss, "load", "--users", "20", "--duration", "3s", "--progress", "off", u); err != nil {
		stop()
		return "", nil, fmt.Errorf("warming the target up: %w", err)
	}
	time.Sleep(500 * time.Millisecond)
	return u, stop, nil
}

func (b *bench) schedscope(ctx context.Context, args []string, env ...string) (measure, error) {
	return b.schedscopeBin(ctx, b.ss, args, env...)
}

// schedscopeBin runs the schedscope binary bin (its CPU is measured) and
// reads its JSON result.
func (b *bench) schedscopeBin(ctx context.Context, bin string, args []string, env ...string) (measure, error) {
	if bin == "" {
		return measure{}, errors.New("no binary (-base)")
	}
	js := filepath.Join(b.dir, "ss.json")
	os.Remove(js)
	args = append(slices.Clip(args), "--progress", "off", "--json", js, b.url)
	_, cpu, err := b.execEnv(ctx, env, bin, args...)
	if err != nil {
		return measure{}, err
	}
	raw, err := os.ReadFile(js)
	if err != nil {
		return measure{}, err
	}
	var res struct {
		Phases []struct {
			Planned   float64               `json:"planned"`
			NotSent   float64               `json:"not_sent"`
			Completed float64               `json:"completed"`
			OKPerS    float64               `json:"ok_per_s"`
			Latency   struct{ P99 float64 } `json:"latency_ms"`
			SendLag   struct{ P99 float64 } `json:"send_lag_ms"`
		} `json:"phases"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Phases) != 1 {
		return measure{}, fmt.Errorf("schedscope JSON: %v", err)
	}
	p := res.Phases[0]
	return measure{okPerS: p.OKPerS, requests: p.Completed, cpuUSPerRq: perReq(cpu, p.Completed),
		planned: p.Planned, notSent: p.NotSent, lagP99MS: p.SendLag.P99, latP99MS: p.Latency.P99}, nil
}

// vegeta runs `vegeta attack` (its CPU is measured) then `vegeta report`.
func (b *bench) vegeta(ctx context.Context, attack []string, planned float64) (measure, error) {
	bin, err := vegetaPath()
	if err != nil {
		return measure{}, err
	}
	targets := filepath.Join(b.dir, "targets")
	if err := os.WriteFile(targets, []byte("GET "+b.url+"\n"), 0o644); err != nil {
		return measure{}, err
	}
	out := filepath.Join(b.dir, "vegeta.bin")
	args := append([]string{"attack", "-targets=" + targets, "-output=" + out}, attack...)
	if _, cpu, err := b.exec(ctx, bin, args...); err != nil {
		return measure{}, err
	} else {
		rep, _, err := b.exec(ctx, bin, "report", "-type=json", out)
		if err != nil {
			return measure{}, err
		}
		var r struct {
			Requests   float64            `json:"requests"`
			Throughput float64            `json:"throughput"`
			Latencies  map[string]float64 `json:"latencies"`
			Status     map[string]float64 `json:"status_codes"`
		}
		if err := json.Unmarshal([]byte(rep), &r); err != nil {
			return measure{}, fmt.Errorf("vegeta report: %w", err)
		}
		m := measure{okPerS: r.Throughput, requests: r.Requests, cpuUSPerRq: perReq(cpu, r.Requests),
			latP99MS: r.Latencies["99th"] / 1e6, lagP99MS: -1, planned: planned}
		if planned > 0 {
			m.notSent = planned - r.Requests
		}
		return m, nil
	}
}

func vegetaPath() (string, error) {
	if p, err := exec.LookPath("vegeta"); err == nil {
		return p, nil
	}
	home, _ := os.UserHomeDir()
	p := filepath.Join(home, "go", "bin", "vegeta")
	if _, err := os.Stat(p); err != nil {
		return "", errors.New("vegeta not found (go install github.com/tsenart/vegeta/v12@v12.13.0)")
	}
	return p, nil
}

// exec runs a tool and returns its stdout+stderr and its CPU time.
func (b *bench) exec(ctx context.Context, name string, args ...string) (string, time.Duration, error) {
	return b.execEnv(ctx, nil, name, args...)
}

// execEnv is exec with extra environment variables.
func (b *bench) execEnv(ctx context.Context, env []string, name string, args ...string) (string, time.Duration, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), 0, fmt.Errorf("%s: %w\n%s", name, err, tail(out.String()))
	}
	st := cmd.ProcessState
	return out.String(), st.UserTime() + st.SystemTime(), nil
}

func tail(s string) string {
	if len(s) > 500 {
		return s[len(s)-500:]
	}
	return s
}

func grabFloat(s, re string) float64 {
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	f, _ := strconv.ParseFloat(m[1], 64)
	return f
}

func perReq(cpu time.Duration, n float64) float64 {
	if n == 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / n
}

func median(ms []measure, f func(measure) float64) float64 {
	if len(ms) == 0 {
		return 0
	}
	xs := make([]float64, len(ms))
	for i, m := range ms {
		xs[i] = f(m)
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// waitQuiet waits until the machine's CPUs were less than limit busy (a
// share of all of them) over two consecutive 250 ms windows, up to max; it
// returns the last window's share, and an error when max passed first.
func waitQuiet(ctx context.Context, limit float64, max time.Duration) (float64, error) {
	deadline := time.Now().Add(max)
	var busy float64
	quiet := 0
	prev, err := target.ReadMachineCPU()
	for err == nil && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return busy, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		var cur target.MachineCPU
		if cur, err = target.ReadMachineCPU(); err != nil {
			break
		}
		busy, prev = cur.BusyShare(prev), cur
		if quiet = quiet + 1; busy >= limit {
			quiet = 0
		}
		if quiet >= 2 {
			return busy, nil
		}
	}
	if err == nil {
		err = errors.New("timed out")
	}
	return busy, err
}
