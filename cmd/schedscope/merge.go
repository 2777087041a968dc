package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

const mergeSynopsis = "merge --out DIR SHARDDIR..."

// runMerge is `schedscope merge`: the results directories of the shards
// of one sharded run combined into one run directory, which report,
// compare and the TUI read like a single run's.
func runMerge(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags("merge", mergeSynopsis, s.out)
	out := fs.String("out", "", "merged run directory to create (required; new or empty)")
	var dirs []string
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for fs.NArg() > 0 { // flags after the directories too
		dirs = append(dirs, fs.Arg(0))
		if err := parseFlags(fs, fs.Args()[1:]); err != nil {
			return err
		}
	}
	switch {
	case *out == "":
		return usageErr("no --out DIR for the merged directory (usage: schedscope %s)", mergeSynopsis)
	case len(dirs) == 0:
		return usageErr("no shard directories (usage: schedscope %s)", mergeSynopsis)
	}
	for _, d := range dirs {
		if rundir.SameDir(d, *out) {
			return usageErr("--out %s is one of the shards' directories: name a new one", *out)
		}
		if rundir.Within(*out, d) {
			return usageErr("--out %s is inside the shard directory %s: name a new one outside the shards'", *out, d)
		}
	}
	if err := rundir.CheckNewRunDir(*out); err != nil {
		return usageErr("--out: %v", err)
	}
	parts := make([]load.ShardPart, len(dirs))
	for i, d := range dirs {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, err := rundir.ReadShardPart(d)
		if err != nil {
			return withCode(2, err)
		}
		parts[i] = p
	}
	res, intervals, err := load.Merge(parts)
	if errors.Is(err, load.ErrMerge) {
		return withCode(2, err)
	}
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := load.Table(&b, res); err != nil {
		return err
	}
	b.WriteString("\n")
	if err := load.MergeTable(&b, res); err != nil {
		return err
	}
	if err := rundir.WriteMerged(*out, parts, res, intervals, b.String()); err != nil {
		return err
	}
	fmt.Fprint(s.out, b.String())
	status := "complete"
	if res.Merged.Partial {
		status = "partial"
	}
	fmt.Fprintf(s.out, "merged run directory: %s (%s)\n", *out, status)
	if res.Merged.Partial {
		return withCode(3, fmt.Errorf("partial: %s", partialShards(res.Merged)))
	}
	return nil
}

// partialShards names the shards a partial merge lacks in whole or part.
func partialShards(m *load.MergeInfo) string {
	var names []string
	for _, sh := range m.Shards {
		if sh.Status != load.ShardComplete {
			names = append(names, fmt.Sprintf("shard %s (%s, host %s) %s", sh.Shard, sh.Dir, sh.Host, sh.Status))
		}
	}
	return strings.Join(names, "; ") + "; the merged figures cover the rest"
}
