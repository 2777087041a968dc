package rundir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/schedscope/schedscope/collect/load"
)

// ReadShardPart reads one shard's results directory (`schedscope load
// --shard --out`, or `schedscope run --shard`) for load.Merge: its
// result, its interval log, and how it ended. A shard whose process died
// has no results.json: its manifest names the shard, and its log holds
// what it measured until then. A directory that is not a shard's is an
// error naming it.
func ReadShardPart(dir string) (load.ShardPart, error) {
	run, err := ReadRun(dir)
	if err != nil {
		return load.ShardPart{}, err
	}
	p := load.ShardPart{Dir: dir, Result: run.Result, Shard: run.Manifest.Shard,
		Status: run.Manifest.Status, Reason: run.Manifest.Reason}
	if p.Result != nil && p.Result.Shard != nil {
		p.Shard = p.Result.Shard
	}
	if len(run.Manifest.MergedFrom) > 0 {
		return p, fmt.Errorf("%s: a merged directory, not a shard's: merge the shards' own directories", dir)
	}
	switch {
	case p.Shard == nil && p.Result == nil:
		return p, fmt.Errorf("%s: no %s and no shard in its manifest: not a shard, or a shard that died before its manifest was written", dir, ResultsFile)
	case p.Shard == nil:
		return p, fmt.Errorf("%s: not a shard's directory: its run had no --shard", dir)
	}
	// A line cut by a dying shard ends its log.
	_, err = ScanHLog(filepath.Join(dir, HLogFile), func(e load.HLogEntry) error {
		p.Intervals = append(p.Intervals, e)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return p, err
	}
	return p, nil
}

// WriteMerged writes a merged run directory at dir (new or empty), the
// form of a single run's: results.json (res, with its Merged part),
// load.hlog (the merged intervals), merge.txt (summary) and a manifest
// marking it merged from the shards' directories, with the first live
// shard's manifest's machine and version. It has no trace, metrics or
// profiles: the readers treat it as a run of the load alone.
func WriteMerged(dir string, parts []load.ShardPart, res *load.Result, intervals []load.Interval, summary string) error {
	w, err := Create(dir)
	if err != nil {
		return err
	}
	var first Manifest
	for _, p := range parts {
		if p.Result != nil {
			if err := ReadJSON(filepath.Join(p.Dir, ManifestFile), &first); err != nil {
				return err
			}
			break
		}
	}
	from := make([]string, len(res.Merged.Shards))
	for i, s := range res.Merged.Shards {
		from[i] = s.Dir
	}
	status, reason := StatusComplete, ""
	if res.Merged.Partial {
		status, reason = StatusInterrupted, partialReason(res.Merged)
	}
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	keep(w.WriteFile(ResultsFile, func(wr io.Writer) error { return load.WriteJSON(wr, res) }))
	keep(w.WriteFile(HLogFile, func(wr io.Writer) error {
		hl := load.NewHLog(wr)
		for _, iv := range intervals {
			if err := hl.Write(iv); err != nil {
				return err
			}
		}
		return hl.Close(res.Start)
	}))
	keep(w.WriteFile(MergeFile, func(wr io.Writer) error {
		_, err := io.WriteString(wr, summary)
		return err
	}))
	keep(w.UpdateManifest(func(m *Manifest) {
		*m = Manifest{Schema: ManifestSchema, Tool: "schedscope", Version: first.Version, GoVersion: first.GoVersion,
			Config: ManifestConfig{TargetURL: res.Target}, Machine: first.Machine, Generator: first.Generator,
			Target: TargetInfo{Source: SourceNone}, Start: res.Start, LoadStart: res.Start,
			End:    res.Start.Add(time.Duration(res.ElapsedS * 1e9)),
			Status: status, Reason: reason, MergedFrom: from, Files: []FileEntry{}}
	}))
	keep(w.RecordFile(ResultsFile, fmt.Sprintf("the merged result of %d shards (counts summed, percentiles from the merged histograms)", res.Merged.Count)))
	keep(w.RecordFile(HLogFile, "the shards' HdrHistogram interval logs merged, latency in ns"))
	keep(w.RecordFile(MergeFile, "schedscope merge's summary: the shards, their start skew and verdicts"))
	return errors.Join(errs...)
}

// partialReason says which shards a partial merge lacks in part or whole.
func partialReason(m *load.MergeInfo) string {
	s := "partial:"
	sep := " "
	for _, sh := range m.Shards {
		if sh.Status == load.ShardComplete {
			continue
		}
		s += fmt.Sprintf("%sshard %s (%s) %s", sep, sh.Shard, sh.Dir, sh.Status)
		sep = ", "
	}
	return s
}
