package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/cmd/schedscope/internal/tour"
	"github.com/schedscope/schedscope/internal/tui"
)

const demoSynopsis = "demo [flags]"

// runDemo is `schedscope demo`: the guided tour (package tour) on the
// live dashboard on a terminal, or as plain lines with --no-tui or when
// standard output is not a terminal.
func runDemo(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags("demo", demoSynopsis, s.out)
	workers := fs.Int("workers", 200, "worker goroutines of the pool model")
	sleep := fs.Duration("sleep", 200*time.Millisecond, "blocking wait per request (/sleep), whole milliseconds")
	ratesFlag := fs.String("rates", "", "offered rates, e.g. 500,1000,1500 (default: 0.5x, 1x and 1.5x the pool's ceiling)")
	duration := fs.Duration("duration", 4*time.Second, "length of each measured step")
	pause := fs.Duration("pause", time.Second, "pause between steps")
	warmup := fs.Duration("warmup", time.Second, "warm-up before the steps (excluded)")
	dir := fs.String("dir", ".", "where to create the two run directories")
	noTUI := fs.Bool("no-tui", false, "print plain progress lines and the final table instead of the dashboard")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q (usage: schedscope %s)", fs.Arg(0), demoSynopsis)
	}
	if *workers < 1 {
		return usageErr("--workers %d: must be at least 1", *workers)
	}
	if *sleep < time.Millisecond || *sleep%time.Millisecond != 0 {
		return usageErr("--sleep %v: must be a whole number of milliseconds, at least 1ms", *sleep)
	}
	if *duration <= 0 || *pause < 0 || *warmup < 0 {
		return usageErr("--duration must be > 0, --pause and --warmup >= 0")
	}
	var rates []float64
	if *ratesFlag != "" {
		for _, f := range strings.Split(*ratesFlag, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !(r > 0) {
				return usageErr("--rates %q: want positive rates separated by commas", *ratesFlag)
			}
			rates = append(rates, r)
		}
	}
	t, err := tour.New(tour.Config{
		Workers: *workers, Sleep: *sleep, Rates: rates, Duration: *duration, Pause: *pause, Warmup: *warmup,
		Dir: *dir, Name: "demo-" + time.Now().Format("20060102-150405"), Command: selfCommand(os.Args[0]),
	})
	if err != nil {
		return usageErr("%v", err)
	}

	useTUI := !*noTUI && tui.IsTerminal(s.out)
	show := func(frames <-chan tui.Frame) error {
		_, err := tui.RunDashboard(ctx, tui.Terminal{In: s.in, Out: s.out}, tui.DashboardConfig{
			Title: "demo", Frames: frames, Stop: t.Stop, TakeTrace: t.TakeTrace,
		})
		return err
	}
	if !useTUI {
		demoIntro(s.out, t.Config())
		show = func(frames <-chan tui.Frame) error {
			// Not ctx: on Ctrl-C the tour stops and still sends its end.
			_, err := tui.PrintFrames(context.Background(), s.out, frames, time.Second)
			return err
		}
	}
	frames := newStream(64, endFrame)
	return demoExit(withView(ctx, frames, show, t.Stop, func(ctx context.Context) (*tour.Outcome, error) {
		return t.Run(ctx, frames.send)
	}))
}

// demoExit maps the tour's outcome onto the exit status: 130 when it was
// interrupted (what ran is saved).
func demoExit(out *tour.Outcome, err error) error {
	if err != nil {
		return err
	}
	if out != nil && (out.Stopped || len(out.Underived) > 0) {
		msg := "stopped early: the run directories above hold what was measured"
		for _, dir := range out.Underived {
			msg += fmt.Sprintf("; derive %s's analysis with 'schedscope analyze --rederive %s'", dir, dir)
		}
		return withCode(130, errors.New(msg))
	}
	return nil
}

// demoIntro explains the tour before plain output starts (the dashboard
// narrates it on screen instead): its first line says what is about to
// happen and how long it takes.
func demoIntro(w io.Writer, cfg tour.Config) {
	fmt.Fprintf(w, `schedscope demo: about %.0f s. The same load on a pool of %d workers, then on a goroutine
per request; a progress line each second, then a table that compares them.

The seeds' first lesson, live on this machine. The fixture server runs in this
process on a loopback port. Every request to /sleep?ms=%d blocks for %v,
standing in for a call to a slow downstream.
  pool:      %d worker goroutines fed by a queue. Little's law caps it at
             workers / latency = %d / %.3f s = %.0f req/s.
  goroutine: a goroutine per request (net/http's default): no such cap.
Both get the same open-model ladder (%s req/s, %v each, latency measured from
each request's intended send time), crossing the pool's ceiling. Each model's
run is saved as a run directory (load, runtime metrics, a trace window).

`, cfg.Expected().Seconds(), cfg.Workers, cfg.Sleep.Milliseconds(), cfg.Sleep, cfg.Workers, cfg.Workers, cfg.Sleep.Seconds(), cfg.Ceiling(), fmtRates(cfg.Rates), cfg.Duration)
}

// selfCommand is how a person runs this program again, for the commands
// the demo suggests at its end: "go run ./cmd/schedscope" when arg0 is a
// binary `go run` built (a temporary go-build*/b001/exe/NAME, or since Go
// 1.24 the build cache's go-build/xx/HASH-d/NAME), else arg0 as it was
// typed ("schedscope" from PATH, "./schedscope").
func selfCommand(arg0 string) string {
	slashed := strings.ReplaceAll(arg0, `\`, "/") // also a Windows path, whatever GOOS the test runs on
	dir := path.Base(path.Dir(slashed))
	if strings.Contains(slashed, "/go-build") && (dir == "exe" || strings.HasSuffix(dir, "-d")) {
		return "go run ./cmd/schedscope"
	}
	if arg0 == "" {
		return "schedscope"
	}
	return arg0
}

func fmtRates(rs []float64) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strings.Join(s, ", ")
}
