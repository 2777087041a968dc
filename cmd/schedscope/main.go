// Command schedscope drives honest load at a Go server, records what the Go
// scheduler did meanwhile, and says where the ceiling is.
//
// This package is wiring only: a table of subcommands, flag parsing, and one
// place that turns an error into an exit code. The work is done in the
// packages under analyze/, collect/ and internal/ (the fixture in
// internal/fixtures/, runs in internal/collect/, sweeps in internal/sweep/,
// reports in internal/report/, the views in internal/tui/);
// cmd/schedscope/internal/feed/ maps runs and sweeps onto the views' frames,
// and cmd/schedscope/internal/tour/ is the demo. README.md's Architecture
// section lists every package.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/schedscope/schedscope/internal/redact"
)

// command is one subcommand of the CLI.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, io *stdio, args []string) error
}

// stdio carries the process's standard streams, so commands never touch os.Std*.
type stdio struct {
	in          io.Reader
	out, errOut io.Writer
}

// commands returns the subcommand table, in the order `schedscope help` lists it.
func commands() []command {
	return []command{
		{"demo", "start the fixture in-process and show the seeds' first lesson live", runDemo},
		{"fixture", "serve the seed scenarios (sleep, cpu, fanout, db, split, pinned) in a concurrency model", runFixture},
		{"load", "drive open-model (or closed-model) HTTP load and report latencies and verdicts", runLoad},
		{"run", "load a target while collecting traces, metrics and profiles into a run directory", runRun},
		{"merge", "merge the results directories of a sharded load (--shard i/N) into one run directory", runMerge},
		{"analyze", "analyze an execution trace or run directory: scheduling latency, sleep, pinning", runAnalyze},
		{"sweep", "sweep GOMAXPROCS over fresh target processes and find the knee", runSweep},
		{"report", "write a Markdown report with plots from a run or sweep directory", runReport},
		{"compare", "compare runs, repeated runs, sweeps or traces: did my change help? (benchstat's statistics, --fail-on gates)", runCompare},
	}
}

// exitError carries a specific exit code with its error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr is a bad invocation: exit status 2.
func usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// withCode wraps err so the process exits with code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// exitGrace is how long a command may still run after the first SIGINT,
// SIGTERM or SIGHUP before the process exits regardless. Every command ends well
// within a second of the signal on its own (what was measured is written,
// slow steps after it are cut or skipped); this catches one that does not.
const exitGrace = 2 * time.Second

func main() {
	os.Exit(mainWith(commands(), os.Args[1:]))
}

// mainWith runs the process: args dispatched to one of cmds, on the
// process's standard streams, with the signal handling of onSignals. It
// returns the exit status.
func mainWith(cmds []command, args []string) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 2)
	// SIGHUP (a closed terminal or SSH session) interrupts as SIGINT does:
	// by default it would kill the process with the run half written.
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go onSignals(signals, cancel, os.Stderr)
	code := dispatch(ctx, &stdio{in: os.Stdin, out: os.Stdout, errOut: os.Stderr}, cmds, args)
	signal.Stop(signals)
	return code
}

// onSignals cancels the commands' context at the first SIGINT, SIGTERM or
// SIGHUP, and exits the process with status 130 at the second, or
// exitGrace after the first, whichever comes first: a command interrupted
// once writes what it measured and ends; one interrupted twice ends at
// once. It runs until the process exits.
// The context's cause is an interruption naming the signal.
func onSignals(signals <-chan os.Signal, cancel context.CancelCauseFunc, errOut io.Writer) {
	first := <-signals
	cancel(interruption{first})
	grace := time.NewTimer(exitGrace)
	select {
	case sig := <-signals:
		fmt.Fprintf(errOut, "schedscope: second %s: exiting at once\n", signalName(sig))
	case <-grace.C:
		fmt.Fprintf(errOut, "schedscope: still finishing %v after %s: exiting (what was written is kept)\n", exitGrace, signalName(first))
	}
	os.Exit(130)
}

// interruption is the cause of the commands' context when a signal ended
// it: it is context.Canceled (errors.Is), and its text names the signal
// ("interrupted (SIGHUP)"), for the reasons a directory records.
type interruption struct{ sig os.Signal }

func (e interruption) Error() string        { return "interrupted (" + signalName(e.sig) + ")" }
func (e interruption) Is(target error) bool { return target == context.Canceled }

// signalName is SIGINT, SIGTERM or SIGHUP.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// run dispatches args to a subcommand and maps its error to an exit code.
func run(ctx context.Context, s *stdio, args []string) int {
	return dispatch(ctx, s, commands(), args)
}

// dispatch dispatches args to one of cmds and maps its error to an exit
// code. It is the only place that prints an error.
func dispatch(ctx context.Context, s *stdio, cmds []command, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(s.out)
		return 0
	}
	for _, c := range cmds {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, s, args[1:])
		if err == nil || errors.Is(err, flag.ErrHelp) {
			return 0
		}
		// An error may quote a flag's value or a URL: secrets are redacted.
		// One of several lines (a gate's breaches) gets the prefix each.
		for line := range strings.Lines(redact.Text(err.Error())) {
			fmt.Fprintf(s.errOut, "schedscope %s: %s\n", c.name, unprefixed(strings.TrimSuffix(line, "\n"), c.name))
		}
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	fmt.Fprintf(s.errOut, "schedscope: unknown command %q (see 'schedscope help')\n", args[0])
	return 2
}

// unprefixed is line without the leading "name: " a package may have put
// on its errors (collect's runner says "run: ..."), since dispatch names
// the command itself: "schedscope run: trace window ...", never
// "schedscope run: run: trace window ...".
func unprefixed(line, name string) string {
	for {
		rest, ok := strings.CutPrefix(line, name+": ")
		if !ok {
			return line
		}
		line = rest
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "schedscope: why doesn't my Go server go faster under load?")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: schedscope COMMAND [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'schedscope COMMAND -h' for a command's flags.")
}

// newFlags returns a flag set whose parse errors come back as one-line usage
// errors; -h prints the flags to out and returns flag.ErrHelp.
func newFlags(name, synopsis string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: schedscope %s\n\nflags:\n", synopsis)
		fs.SetOutput(out)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args into fs, turning a bad flag into a usage error.
// fs.Usage is printed only for -h, never for a bad flag.
func parseFlags(fs *flag.FlagSet, args []string) error {
	help := fs.Usage
	fs.Usage = func() {} // the flag package calls Usage on every parse error
	err := fs.Parse(args)
	fs.Usage = help
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help()
			return flag.ErrHelp
		}
		return usageErr("%v", err)
	}
	return nil
}
