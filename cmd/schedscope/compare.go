package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/internal/compare"
	"github.com/schedscope/schedscope/internal/cond"
	"github.com/schedscope/schedscope/internal/figures"
	"github.com/schedscope/schedscope/internal/rundir"
)

const compareSynopsis = "compare [--json] [--out DIR] [--force] [--fail-on COND] A B\n       schedscope compare [flags] A1 A2 ... -- B1 B2 ...   (repeated runs per side)"

// gateFlag collects repeated --fail-on flags as written; they are parsed
// once the inputs say which context they are checked in.
type gateFlag []string

func (g *gateFlag) String() string { return strings.Join(*g, ",") }

func (g *gateFlag) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("empty condition")
	}
	*g = append(*g, v)
	return nil
}

// parse parses every flag's conditions for ctx.
func (g gateFlag) parse(ctx cond.Context) ([]cond.Condition, error) {
	var out []cond.Condition
	for _, v := range g {
		cs, err := cond.ParseList(v, ctx)
		if err != nil {
			return nil, usageErr("--fail-on: %v", err)
		}
		out = append(out, cs...)
	}
	return out, nil
}

// gateExit turns the breaches into exit status 4 with one line each, and
// warns about conditions nothing could read.
func gateExit(s *stdio, breaches []figures.Breach, unread []string) error {
	for _, u := range unread {
		fmt.Fprintf(s.errOut, "schedscope: warning: --fail-on %s: no figure to check it on (not measured here)\n", u)
	}
	if len(breaches) == 0 {
		return nil
	}
	lines := make([]string, len(breaches))
	for i, b := range breaches {
		lines[i] = "--fail-on " + b.Line
	}
	return withCode(4, errors.New(strings.Join(lines, "\n")))
}

// gateDir checks conditions on the run or sweep directory dir: exit 4 with
// one line per breach.
func gateDir(ctx context.Context, s *stdio, dir string, conds []cond.Condition) error {
	sets, err := figures.Read(ctx, dir, analyze.Options{})
	if err != nil {
		return err
	}
	var breaches []figures.Breach
	var unread []string
	for _, set := range sets {
		breaches = append(breaches, figures.Check(set, conds)...)
		unread = append(unread, figures.Unread(set, conds)...)
	}
	return gateExit(s, breaches, slices.Compact(unread))
}

// runCompare is `schedscope compare`. Exit status: 0, 1 bad input (not a
// run, sweep, repeat directory or trace; runs that cannot be compared), 2
// bad flags, 4 a --fail-on condition held.
func runCompare(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags("compare", compareSynopsis, s.out)
	help := fs.Usage
	fs.Usage = func() {
		help()
		fmt.Fprintf(s.out, "\nA and B are run directories, repeat directories (schedscope run --repeat N: one side of N runs), sweep directories or trace files.\n")
		fmt.Fprintf(s.out, "\n--fail-on conditions on runs. A signed value is a change from A to B: p99>+10%% (B's p99 more than 10%% above A's),\np99>+1ms (more than 1ms above), ok_per_s<-5%%; with repeated runs only a significant change. An unsigned value is\nB's figure: p99>250ms. Metrics:\n%s", cond.Help(cond.Run))
		fmt.Fprintf(s.out, "\non sweeps:\n%s", cond.Help(cond.Sweep))
	}
	asJSON := fs.Bool("json", false, "write the comparison as JSON")
	out := fs.String("out", "", "also write a Markdown report with plots into this directory")
	force := fs.Bool("force", false, "compare sides whose load differs (request, offered rates, durations), stating the differences at the top")
	alpha := fs.Float64("alpha", 0.05, "significance level of the Mann-Whitney U test (0 < alpha < 0.5)")
	pin := fs.Duration("pin-threshold", 20*time.Millisecond, "with traces: shortest span counted as a pinned OS thread")
	var gates gateFlag
	fs.Var(&gates, "fail-on", "exit 4 when a condition holds, e.g. 'p99>+10%' or 'p99>+1ms' (signed: a change from A to B) or 'p99>250ms, errors>1%' (unsigned: B's figure); repeatable")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !(*alpha > 0 && *alpha < 0.5) {
		return usageErr("--alpha %g: must be in (0, 0.5)", *alpha)
	}
	left, right, err := splitSides(fs.Args())
	if err != nil {
		return err
	}
	if err := rundir.Distinct(slices.Concat(left, right)); err != nil {
		return usageErr("%v", err)
	}
	opts := analyze.Options{PinThreshold: *pin}
	a, err := readSide(ctx, left, opts)
	if err != nil {
		return err
	}
	b, err := readSide(ctx, right, opts)
	if err != nil {
		return err
	}
	// A repeat directory and one of its runs given beside it: one run twice.
	var paths []string
	for _, set := range slices.Concat(a, b) {
		paths = append(paths, set.Path)
	}
	if err := rundir.Distinct(paths); err != nil {
		return usageErr("%v", err)
	}
	conds, err := gates.parse(a[0].Kind.Context() | cond.Changes)
	if err != nil {
		return err
	}
	c, err := compare.Compare(a, b, compare.Options{Alpha: *alpha, Force: *force})
	if err != nil {
		return err
	}
	if *out != "" {
		if err := compare.CheckReportDir(c, *out); err != nil {
			return usageErr("--out: %v", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(c); err != nil {
			return fmt.Errorf("write JSON: %w", err)
		}
	} else if err := compare.WriteText(s.out, c); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	if *out != "" {
		files, err := compare.WriteReport(c, *out)
		if err != nil {
			return err
		}
		if !*asJSON {
			fmt.Fprintf(s.out, "\nreport: %s\n", strings.Join(files, " "))
		}
	}
	return gateExit(s, compare.Check(c, conds), compare.Unread(c, conds))
}

// splitSides splits compare's arguments into its two sides: A B, or the
// paths before and after "--".
func splitSides(args []string) (a, b []string, err error) {
	for _, arg := range args {
		if arg == "-" {
			return nil, nil, usageErr("-: compare reads no standard input: name the trace files (or run, repeat and sweep directories)")
		}
		if strings.HasPrefix(arg, "-") && arg != "--" {
			return nil, nil, usageErr("%s: flags go before the paths", arg)
		}
	}
	if i := slices.Index(args, "--"); i >= 0 {
		a, b = args[:i], args[i+1:]
		if len(a) == 0 || len(b) == 0 {
			return nil, nil, usageErr("want paths on both sides of --: A1 A2 ... -- B1 B2 ...")
		}
		return a, b, nil
	}
	if len(args) != 2 {
		return nil, nil, usageErr("want two paths, A and B, or A1 A2 ... -- B1 B2 ... (got %d)", len(args))
	}
	return args[:1], args[1:], nil
}

// readSide reads one side's paths; a repeat directory gives all its runs.
func readSide(ctx context.Context, paths []string, opts analyze.Options) ([]*figures.Set, error) {
	var out []*figures.Set
	for _, p := range paths {
		sets, err := figures.Read(ctx, p, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, sets...)
	}
	return out, nil
}
