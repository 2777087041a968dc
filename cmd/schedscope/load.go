package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/collect/load/promload"
	"github.com/schedscope/schedscope/internal/tui"
)

const loadSynopsis = "load [flags] URL"

// loadFlags are the flags of `schedscope load`, parsed into a load.Config.
type loadFlags struct {
	cfg      load.Config
	rate     float64
	rates    string
	arrivals string
	client   string
	headers  headerList
	body     string
	jsonOut  string
	hdrLog   string
	progress string
	procs    int
	engine   string
	force    bool
	// Sharding: --shard i/N, --shards N, --start-at TIME; shardSource
	// names the scheduler's variables a shard was read from.
	shard       string
	shards      int
	startAt     string
	shardSource string
	promAddr    string
}

// headerList collects repeated -H flags as given: "Name: value", or @FILE
// for a file of such lines (blank lines and lines starting with # skipped),
// so that credentials stay off the command line. They are parsed after the
// flags, by headers: the flag package would quote a bad one, credential
// included, in its error.
type headerList []string

func (h *headerList) String() string { return fmt.Sprint(len(*h), " headers") }
func (h *headerList) Set(s string) error {
	if len(*h) >= load.MaxHeaders {
		return fmt.Errorf("more than %d headers", load.MaxHeaders)
	}
	*h = append(*h, s)
	return nil
}

// headers parses the -H flags. Errors never quote a header's value.
func (h headerList) headers() ([]load.Header, error) {
	var out []load.Header
	for _, s := range h {
		name, ok := strings.CutPrefix(s, "@")
		if !ok {
			hd, err := load.ParseHeader(s)
			if err != nil {
				return nil, err
			}
			out = append(out, hd)
			continue
		}
		b, err := readRegularFile(name, load.MaxRequestHead)
		if err != nil {
			return nil, err
		}
		for i, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if trimmed := strings.TrimSpace(line); trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			hd, err := load.ParseHeader(line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
			}
			out = append(out, hd)
		}
	}
	return out, nil
}

func newLoadFlagSet(out io.Writer) (*flag.FlagSet, *loadFlags) {
	f := &loadFlags{}
	fs := newFlags("load", loadSynopsis, out)
	fs.Float64Var(&f.rate, "rate", 0, "open model: offered rate in requests/s (one steady phase)")
	fs.StringVar(&f.rates, "rates", "", "open model: a ladder of rates, e.g. 200,400,800 (one phase each)")
	fs.StringVar(&f.arrivals, "arrivals", "uniform", "open-model arrivals: uniform or poisson")
	fs.Uint64Var(&f.cfg.Seed, "seed", load.DefaultSeed, "seed of Poisson arrivals")
	fs.IntVar(&f.cfg.Users, "users", 0, "closed model: N users, each waiting for its response")
	fs.DurationVar(&f.cfg.Think, "think", 0, "closed model: each user's pause between requests")
	fs.DurationVar(&f.cfg.Warmup, "warmup", 0, "warm-up before the measured phases (excluded from results)")
	fs.DurationVar(&f.cfg.Duration, "duration", load.DefaultDuration, "length of each measured phase")
	fs.DurationVar(&f.cfg.Pause, "pause", 0, "pause between consecutive phases")
	fs.IntVar(&f.cfg.MaxInflight, "max-inflight", 0, "open model: cap on requests in flight; requests due beyond it are not sent (default min(10 s x rate, 5000))")
	fs.DurationVar(&f.cfg.Timeout, "timeout", load.DefaultTimeout, "client timeout per request")
	fs.StringVar(&f.cfg.Method, "method", "GET", "HTTP method")
	fs.Var(&f.headers, "H", "request header \"Name: value\" (repeatable), or @FILE for a file of them, one a line: keep credentials (Authorization, Cookie, X-Api-Key) in a file, off the command line; records redact them either way")
	fs.StringVar(&f.body, "body", "", "request body, or @FILE to read it from FILE (a regular file, at most 64 MiB)")
	fs.StringVar(&f.jsonOut, "json", "", "write the result as JSON to FILE (- for stdout)")
	fs.StringVar(&f.hdrLog, "hdr-log", "", "write an HdrHistogram interval log (ns) to FILE")
	fs.BoolVar(&f.force, "force", false, "overwrite output files that exist (--json, --hdr-log; run's --cmd-log)")
	fs.BoolVar(&f.cfg.InsecureTLS, "insecure", false, "https: do not verify the target's certificate")
	fs.StringVar(&f.client, "client", string(load.Lean), "HTTP client: lean or net/http")
	fs.StringVar(&f.progress, "progress", "auto", "live one-line progress on stderr: auto (when a terminal), on, off")
	fs.IntVar(&f.procs, "procs", 0, "GOMAXPROCS of the generator (0: Go's default, at most 1024); see bench/README.md for 1 vs 2 on a 2-core machine")
	fs.StringVar(&f.shard, "shard", "", "send shard i of N of the open-model schedule (i from 0), e.g. 0/4: requests i, i+N, i+2N, ... of the schedule --rate/--rates describe; default: from the scheduler ($JOB_COMPLETION_INDEX with --shards, $SLURM_PROCID of $SLURM_NTASKS, $SLURM_ARRAY_TASK_ID); --shard 0/1 sends it all (docs/sharded-load.md)")
	fs.IntVar(&f.shards, "shards", 0, "how many shards share the schedule, with an index from the scheduler (a Kubernetes Indexed Job's completions)")
	fs.StringVar(&f.startAt, "start-at", "", "begin at this wall-clock instant, for every shard together: RFC 3339 (2026-12-01T21:00:00Z) or +D@FILE, D after FILE's modification time (a file every shard sees)")
	fs.StringVar(&f.promAddr, "prometheus", "", "serve the load's live figures for Prometheus at http://ADDR/metrics (e.g. 127.0.0.1:9465), labelled with the run's id; docs/prometheus.md")
	fs.StringVar(&f.engine, "engine", "auto", "how requests are sent: auto (an event loop on Linux for plain HTTP with the lean client) or goroutines (one per connection or user)")
	return fs, f
}

// parseLoadArgs turns the command line into a Config, accepting flags
// before and after the URL. Every problem is a usage error (exit 2).
func parseLoadArgs(fs *flag.FlagSet, f *loadFlags, args []string) (load.Config, error) {
	if err := parseFlags(fs, args); err != nil {
		return load.Config{}, err
	}
	var urls []string
	for fs.NArg() > 0 {
		urls = append(urls, fs.Arg(0))
		if err := parseFlags(fs, fs.Args()[1:]); err != nil {
			return load.Config{}, err
		}
	}
	switch {
	case len(urls) == 0:
		return load.Config{}, usageErr("no target URL (usage: schedscope %s)", loadSynopsis)
	case len(urls) > 1:
		return load.Config{}, usageErr("one target URL expected, got %d: %s", len(urls), strings.Join(urls, " "))
	}
	cfg := f.cfg
	cfg.URL = urls[0]
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if set["rate"] {
		if !(f.rate > 0) {
			return cfg, usageErr("--rate %g: must be > 0", f.rate)
		}
		cfg.Rate = f.rate
	}
	if set["rates"] {
		for _, s := range strings.Split(f.rates, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || !(r > 0) {
				return cfg, usageErr("--rates %q: want positive rates separated by commas", f.rates)
			}
			cfg.Rates = append(cfg.Rates, r)
		}
	}
	if set["users"] && cfg.Users <= 0 {
		return cfg, usageErr("--users %d: must be > 0", cfg.Users)
	}
	if set["max-inflight"] && cfg.MaxInflight <= 0 {
		return cfg, usageErr("--max-inflight %d: must be > 0", cfg.MaxInflight)
	}
	if set["duration"] && cfg.Duration <= 0 {
		return cfg, usageErr("--duration %v: must be > 0", cfg.Duration)
	}
	if set["timeout"] && cfg.Timeout <= 0 {
		return cfg, usageErr("--timeout %v: must be > 0", cfg.Timeout)
	}
	cfg.Arrivals = load.Arrivals(f.arrivals)
	cfg.Client = load.Client(f.client)
	headers, err := f.headers.headers()
	if err != nil {
		return cfg, usageErr("-H: %v", err)
	}
	cfg.Header = headers
	if f.body != "" {
		if name, ok := strings.CutPrefix(f.body, "@"); ok {
			b, err := readBodyFile(name)
			if err != nil {
				return cfg, usageErr("--body: %v", err)
			}
			cfg.Body = b
		} else {
			cfg.Body = []byte(f.body)
		}
	}
	switch f.progress {
	case "auto", "on", "off":
	default:
		return cfg, usageErr("--progress %q: want auto, on or off", f.progress)
	}
	if f.procs < 0 || f.procs > maxProcs {
		return cfg, usageErr("--procs %d: must be in [0, %d]", f.procs, maxProcs)
	}
	switch f.engine {
	case "auto":
	case "goroutines":
		cfg.Goroutines = true
	default:
		return cfg, usageErr("--engine %q: want auto or goroutines", f.engine)
	}
	if err := f.parseShard(&cfg, set, os.LookupEnv); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageErr("%v", err)
	}
	return cfg, nil
}

// parseShard sets cfg's shard, from --shard or else from the scheduler's
// environment (getenv), and its shared start from --start-at.
func (f *loadFlags) parseShard(cfg *load.Config, set map[string]bool, getenv func(string) (string, bool)) error {
	if set["shards"] && (f.shards < 1 || f.shards > load.MaxShards) {
		return usageErr("--shards %d: must be in [1, %d]", f.shards, load.MaxShards)
	}
	switch {
	case set["shard"]:
		sh, err := load.ParseShard(f.shard)
		if err != nil {
			return usageErr("--shard: %v", err)
		}
		if set["shards"] && f.shards != sh.Count {
			return usageErr("--shard %s and --shards %d disagree", sh, f.shards)
		}
		cfg.Shard = sh
	default:
		sh, source, found, err := load.ShardFromEnv(getenv, f.shards)
		switch {
		case err != nil:
			return usageErr("shard from the scheduler: %v", err)
		case found:
			cfg.Shard, f.shardSource = sh, source
		case set["shards"] && f.shards > 1:
			return usageErr("--shards %d without --shard i/N or a scheduler's index ($%s, $%s, $%s)", f.shards,
				load.EnvJobCompletionIndex, load.EnvSlurmProcID, load.EnvSlurmArrayID)
		}
	}
	if f.startAt != "" {
		at, err := load.ParseStartAt(f.startAt, time.Now(), os.Stat)
		if err != nil {
			return usageErr("--start-at: %v", err)
		}
		cfg.StartAt = at
	}
	return nil
}

// sayStartWait tells on w that command waits for --start-at's instant at
// before it starts, and until when: a wait of up to load.MaxWait would
// otherwise print nothing. It says nothing without a start instant or
// once it has passed.
func sayStartWait(w io.Writer, command string, at, now time.Time) {
	wait := at.Sub(now)
	if at.IsZero() || wait <= 0 {
		return
	}
	if wait >= time.Second {
		wait = wait.Round(time.Second)
	} else {
		wait = wait.Round(time.Millisecond)
	}
	fmt.Fprintf(w, "schedscope %s: waiting until %s UTC (in %v) to start (--start-at)\n", command, at.UTC().Format("15:04:05.000"), wait)
}

func runLoad(ctx context.Context, s *stdio, args []string) error {
	fs, f := newLoadFlagSet(s.out)
	outDir := fs.String("out", "", "write a results directory (manifest.json, results.json, load.hlog) instead of --json and --hdr-log: what a shard leaves for 'schedscope merge'")
	cfg, err := parseLoadArgs(fs, f, args)
	if err != nil {
		return err
	}
	if f.shardSource != "" {
		fmt.Fprintf(s.errOut, "schedscope load: shard %s from %s\n", cfg.Shard, f.shardSource)
	}
	sayStartWait(s.errOut, "load", cfg.StartAt, time.Now())
	if *outDir != "" {
		if f.jsonOut != "" || f.hdrLog != "" {
			return usageErr("--out writes results.json and load.hlog into its directory: give --json and --hdr-log only without it")
		}
		var status *statusLine
		if f.progress == "on" || (f.progress == "auto" && tui.IsTerminal(s.errOut)) {
			status = &statusLine{w: s.errOut}
		}
		if f.procs > 0 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(f.procs))
		}
		return runLoadDir(ctx, s, cfg, *outDir, args, status, f.promAddr)
	}
	outs, err := openOutputs(f.force, output{"--json", f.jsonOut}, output{"--hdr-log", f.hdrLog})
	if err != nil {
		return err
	}
	jsonFile, hdrFile := outs[0], outs[1]
	defer hdrFile.close()

	var hl *load.HLog
	if hdrFile != nil {
		hl = load.NewHLog(hdrFile)
		cfg.Interval = func(iv load.Interval) { _ = hl.Write(iv) } // the first error is kept and reported below
	}
	var status *statusLine
	if f.progress == "on" || (f.progress == "auto" && tui.IsTerminal(s.errOut)) {
		status = &statusLine{w: s.errOut}
		cfg.Progress = status.show
	}

	var ps *promServer
	if f.promAddr != "" {
		m := promload.New("load-" + time.Now().Format("20060102-150405"))
		cfg.Progress, cfg.Interval = chain(cfg.Progress, m.Progress), chain(cfg.Interval, m.Interval)
		if ps, err = startPrometheus(f.promAddr, m, s.errOut); err != nil {
			jsonFile.discard()
			hdrFile.discard()
			return err
		}
	}

	if f.procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(f.procs))
	}
	res, err := load.Run(ctx, cfg)
	status.clear()
	defer ps.stop(ctx, time.Now()) // after the table: the figures' last scrape
	if err != nil {
		jsonFile.discard()
		hdrFile.discard()
		return err
	}
	return finishLoad(s, res, f.jsonOut, jsonFile, hl, f.hdrLog)
}

// finishLoad prints the table and writes the JSON (to standard output for
// "-", else to jsonFile) and the HDR log; an interrupted run is still
// written, then reported as exit status 130.
func finishLoad(s *stdio, res *load.Result, jsonOut string, jsonFile *outputFile, hl *load.HLog, hdrLog string) error {
	var errs []error
	if err := load.Table(s.out, res); err != nil {
		errs = append(errs, err)
	}
	if jsonOut == "-" {
		if err := load.WriteJSON(s.out, res); err != nil {
			errs = append(errs, err)
		}
	} else if jsonFile != nil {
		if err := writeJSONFile(jsonFile, res); err != nil {
			errs = append(errs, err)
		}
	}
	if hl != nil {
		if err := hl.Close(res.Start); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", hdrLog, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if res.Interrupted {
		return withCode(130, errors.New("interrupted: the figures above cover what was measured until then"))
	}
	return nil
}

// writeJSONFile writes res into f, opened before the run, and closes it.
func writeJSONFile(f *outputFile, res *load.Result) error {
	if err := load.WriteJSON(f, res); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	return nil
}

// statusLine rewrites one terminal line with the latest progress. A nil
// statusLine does nothing.
type statusLine struct{ w io.Writer }

func (l *statusLine) show(p load.Progress) {
	if p.Done {
		return
	}
	fmt.Fprintf(l.w, "\r%s\x1b[K", load.FormatProgress(p))
}

func (l *statusLine) clear() {
	if l != nil {
		fmt.Fprint(l.w, "\r\x1b[K")
	}
}
