package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/collect/load/promload"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// loadDir is `schedscope load --out DIR`: a results directory of the
// load alone (manifest.json, results.json, load.hlog), the form a shard
// of a sharded run leaves for `schedscope merge`. The manifest is written
// first, naming the shard, and the log as measured, so that a shard whose
// process dies still leaves a directory merge can name.
type loadDir struct {
	w    *rundir.Writer
	log  *rundir.Appender
	hlog *load.HLog
}

// createLoadDir creates dir (new or empty) and writes its first manifest.
func createLoadDir(dir string, cfg load.Config, args []string) (*loadDir, error) {
	w, err := rundir.Create(dir)
	if err != nil {
		return nil, usageErr("--out: %v", err)
	}
	shard, err := cfg.ShardRun()
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if shard.Count <= 1 && cfg.StartAt.IsZero() {
		shard = nil
	}
	m := rundir.Manifest{
		Schema: rundir.ManifestSchema, Tool: "schedscope", Version: buildModuleVersion(), GoVersion: runtime.Version(),
		Args:      args,
		Config:    rundir.ManifestConfig{TargetURL: cfg.URL},
		Machine:   target.DescribeMachine(),
		Generator: rundir.ProcessInfo{PID: os.Getpid(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()},
		Target:    rundir.TargetInfo{Source: rundir.SourceNone},
		Start:     time.Now(), Status: rundir.StatusRunning, RequestTag: cfg.RequestTag,
		Shard: shard, Files: []rundir.FileEntry{},
	}
	if err := w.UpdateManifest(func(mm *rundir.Manifest) { *mm = m }); err != nil {
		return nil, err
	}
	log, err := w.CreateAppender(rundir.HLogFile)
	if err != nil {
		return nil, err
	}
	return &loadDir{w: w, log: log, hlog: load.NewHLog(log)}, nil
}

// finish writes results.json, closes the log and marks the manifest
// complete or interrupted (why ctx ended: describeStop); res nil is a run
// that failed before it began.
func (d *loadDir) finish(ctx context.Context, res *load.Result, runErr error) error {
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	start := time.Now()
	if res != nil {
		start = res.Start
		keep(d.w.WriteFile(rundir.ResultsFile, func(w io.Writer) error { return load.WriteJSON(w, res) }))
		keep(d.w.RecordFile(rundir.ResultsFile, "the load generator's result"))
	}
	keep(d.hlog.Close(start))
	keep(d.log.Close())
	keep(d.w.RecordFile(rundir.HLogFile, "load generator's HdrHistogram interval log, latency in ns"))
	keep(d.w.UpdateManifest(func(m *rundir.Manifest) {
		m.End = time.Now()
		m.Status = rundir.StatusComplete
		switch {
		case runErr != nil:
			m.Status, m.Reason = rundir.StatusInterrupted, runErr.Error()
		case res.Interrupted:
			m.Status, m.Reason = rundir.StatusInterrupted, describeStop(ctx)
		}
		if res != nil {
			m.LoadStart = res.Start
			m.Shard = res.Shard
		}
	}))
	return errors.Join(errs...)
}

// buildModuleVersion is schedscope's module version ("(devel)" from a
// checkout), as internal/collect records it.
func buildModuleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// runLoadDir runs cfg with its results going into dir, and its live
// figures served for Prometheus at promAddr when set.
func runLoadDir(ctx context.Context, s *stdio, cfg load.Config, dir string, args []string, status *statusLine, promAddr string) error {
	d, err := createLoadDir(dir, cfg, args)
	if err != nil {
		return err
	}
	cfg.Interval = func(iv load.Interval) { _ = d.hlog.Write(iv) } // the first error is kept; finish reports it
	if cfg.Progress == nil && status != nil {
		cfg.Progress = status.show
	}
	var ps *promServer
	if promAddr != "" {
		id := "load-" + time.Now().Format("20060102-150405")
		if cfg.Shard.Count > 1 {
			id += "-shard-" + strconv.Itoa(cfg.Shard.Index)
		}
		m := promload.New(id)
		cfg.Progress, cfg.Interval = chain(cfg.Progress, m.Progress), chain(cfg.Interval, m.Interval)
		if ps, err = startPrometheus(promAddr, m, s.errOut); err != nil {
			return errors.Join(err, d.finish(ctx, nil, err))
		}
	}
	res, err := load.Run(ctx, cfg)
	status.clear()
	defer ps.stop(ctx, time.Now()) // after the table: the figures' last scrape
	if ferr := d.finish(ctx, res, err); ferr != nil || err != nil {
		return errors.Join(err, ferr)
	}
	if err := load.Table(s.out, res); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "results directory: %s\n", dir)
	if res.Interrupted {
		return withCode(130, fmt.Errorf("interrupted: %s holds what was measured until then", dir))
	}
	return nil
}
