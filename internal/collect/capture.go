package collect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/target"
)

// Capture timing margins.
const (
	// minFgprofPiece is the shortest fgprof piece worth taking.
	minFgprofPiece = 300 * time.Millisecond
	// endMargin is how long before the last steady phase's end the end
	// profiles are taken, so they fall inside it.
	endMargin = 200 * time.Millisecond
	// finishTimeout bounds the captures taken after the load ended;
	// interruptedFinishTimeout after an interruption, when the command
	// must end within a second (a slow target loses its end profiles).
	finishTimeout            = 20 * time.Second
	interruptedFinishTimeout = 400 * time.Millisecond
)

// captureLoop is the capturer: it waits for the last steady phase, then
// takes the start profiles, fgprof pieces, the trace window (or the
// flight-recorder snapshot when asked) and the end profiles, serving
// TraceNow requests and the snapshot trigger in between. Captures run one
// at a time, as the agent requires. It returns when the load is done and
// the final captures are taken.
func (st *runState) captureLoop(ctx context.Context) {
	defer close(st.r.done)
	defer st.finishCaptures(ctx)
	if st.client.Source() == rundir.SourceNone {
		select {
		case <-st.loadDone:
		case <-ctx.Done():
		}
		return
	}
	var p load.Progress
	for found := false; !found; {
		select {
		case p = <-st.progress:
			found = p.Kind == load.Steady && p.Step == st.steadySteps-1
		case cond := <-st.snapshotTrigger:
			st.snapshot(ctx, "condition "+cond+" held")
		case req := <-st.r.reqs:
			st.serveTraceNow(ctx, req)
		case <-st.loadDone:
			return
		case <-ctx.Done():
			return
		}
	}
	now := time.Now()
	phaseStart := now.Add(-p.Elapsed)
	phaseEnd := phaseStart.Add(p.Total)
	st.takeProfiles(ctx, []string{"block", "mutex"}, &st.caps.profStart) // cumulative: a delta needs a start

	if st.r.cfg.SnapshotWhen == "" {
		win := min(st.r.cfg.TraceWindow, p.Total)
		traceStart := phaseStart.Add(time.Duration(st.r.cfg.TraceAt*float64(p.Total)) - win/2)
		if traceStart.Add(win).After(phaseEnd) {
			traceStart = phaseEnd.Add(-win)
		}
		if traceStart.Before(time.Now()) {
			traceStart = time.Now()
		}
		if !st.fgprofUntil(ctx, traceStart) || !st.idle(ctx, traceStart) {
			return
		}
		st.traceWindow(ctx, rundir.TraceFile, win, rundir.TraceWindow)
		if !st.sleepProbe(ctx, phaseEnd) {
			return
		}
		if len(st.caps.fgprofPieces) == 0 {
			// Too little time before the window (a short phase, a late
			// start): take fgprof over half of what is left after it.
			if !st.fgprofUntil(ctx, time.Now().Add(time.Until(phaseEnd)/2)) {
				return
			}
		}
	}
	if st.r.cfg.SnapshotWhen != "" && (!st.fgprofUntil(ctx, phaseStart.Add(p.Total/2)) || !st.sleepProbe(ctx, phaseEnd)) {
		return
	}
	// The rest of the phase is left without captures: the CPU figures are
	// taken there (fgprof's 99 Hz goroutine profiles cost the target CPU).
	if !st.idle(ctx, phaseEnd.Add(-endMargin)) {
		return
	}
	st.takeProfiles(ctx, rundir.EndProfiles(), &st.caps.profEnd)
	// Serve requests until the load is done.
	st.idle(ctx, time.Time{})
}

// idle waits until t (forever when t is zero) serving TraceNow requests and
// the snapshot trigger; it returns false when the load ended or ctx is done.
func (st *runState) idle(ctx context.Context, t time.Time) bool {
	var timer <-chan time.Time
	if !t.IsZero() {
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		tm := time.NewTimer(d)
		defer tm.Stop()
		timer = tm.C
	}
	for {
		select {
		case <-timer:
			return true
		case cond := <-st.snapshotTrigger:
			st.snapshot(ctx, "condition "+cond+" held")
		case req := <-st.r.reqs:
			st.serveTraceNow(ctx, req)
		case <-st.progress: // only the capturer's wait for the last phase needs it
		case <-st.loadDone:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// fgprofUntil takes fgprof pieces until t, the agent's capture slot
// allowing. A TraceNow request cuts the running piece (its samples are
// lost), is served, and a new piece starts; a snapshot trigger is served
// while the piece runs (a flight-recorder snapshot is not a capture). It
// returns false when the load ended or ctx is done.
func (st *runState) fgprofUntil(ctx context.Context, t time.Time) bool {
	a, ok := st.client.(*target.Agent)
	if !ok {
		return true
	}
	for time.Until(t) >= minFgprofPiece {
		d := time.Until(t)
		pieceCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		var buf bytes.Buffer
		go func() {
			done <- a.Fgprof(pieceCtx, d, &buf)
		}()
		st.setCapture(fmt.Sprintf("fgprof %.1fs", d.Seconds()))
		var interrupt func()
		select {
		case err := <-done:
			cancel()
			st.setCapture("")
			if err != nil {
				st.missing("part of the fgprof profile", err)
				return st.idle(ctx, t)
			}
			st.caps.fgprofPieces = append(st.caps.fgprofPieces, buf.Bytes())
			continue
		case cond := <-st.snapshotTrigger:
			// A flight-recorder snapshot is not a capture: take it while the
			// piece runs, then wait for the piece.
			st.snapshot(ctx, "condition "+cond+" held")
			err := <-done
			cancel()
			st.setCapture("")
			if err == nil {
				st.caps.fgprofPieces = append(st.caps.fgprofPieces, buf.Bytes())
			}
			continue
		case req := <-st.r.reqs:
			interrupt = func() { st.serveTraceNow(ctx, req) }
		case <-st.loadDone:
		case <-ctx.Done():
		}
		cancel()
		<-done
		st.setCapture("")
		if interrupt == nil {
			return false
		}
		interrupt()
	}
	return true
}

func (st *runState) setCapture(s string) {
	st.mu.Lock()
	st.live.capture = s
	st.mu.Unlock()
}

// loadClock is t on the load's clock, in seconds.
func (st *runState) loadClock(t time.Time) float64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.tally.start.IsZero() {
		return 0
	}
	return t.Sub(st.tally.start).Seconds()
}

// traceWindow streams a trace window of win into name, as it arrives.
func (st *runState) traceWindow(ctx context.Context, name string, win time.Duration, kind rundir.TraceMode) error {
	start := time.Now()
	st.setCapture(fmt.Sprintf("trace window %.1f-%.1f s", st.loadClock(start), st.loadClock(start.Add(win))))
	defer st.setCapture("")
	err := st.stream(ctx, name, func(ctx context.Context, w io.Writer) error { return st.client.Trace(ctx, win, w) })
	if name == rundir.TraceFile {
		st.caps.trace = rundir.TraceCapture{Mode: kind, StartS: st.loadClock(start), EndS: st.loadClock(time.Now())}
		if kind == rundir.TraceWindow {
			st.caps.trace.Reason = fmt.Sprintf("window of %v at %.0f%% of the last steady phase", win, 100*st.r.cfg.TraceAt)
		}
	}
	if err != nil {
		st.missing("execution trace "+name, err)
	}
	return err
}

// snapshot writes the trace the run keeps when SnapshotWhen is set: the
// flight recorder's window, or a trace window from now when the target has
// no flight recorder. Only the first call captures.
func (st *runState) snapshot(ctx context.Context, reason string) {
	if st.caps.trace.Mode != "" || st.r.cfg.SnapshotWhen == "" {
		return
	}
	st.mu.Lock()
	st.live.notes = append(st.live.notes, rundir.Note{Kind: rundir.KindSnapshot, Text: "taking the snapshot: " + reason})
	st.mu.Unlock()
	a, ok := st.client.(*target.Agent)
	if !ok || a.Index() == nil || a.Index().FlightRecorder != "on" {
		st.traceWindow(ctx, rundir.TraceFile, st.r.cfg.TraceWindow, rundir.TraceWindow)
		st.caps.trace.Reason = reason + "; no flight recorder, so a window from then"
		return
	}
	st.setCapture("flight-recorder snapshot")
	defer st.setCapture("")
	err := st.stream(ctx, rundir.TraceFile, a.FlightRecorder)
	st.caps.trace = rundir.TraceCapture{Mode: rundir.TraceFlightRecorder, Reason: reason, EndS: st.loadClock(time.Now())}
	if err != nil {
		st.missing("flight-recorder snapshot", err)
	}
}

// serveTraceNow takes an extra trace window for Runner.TraceNow.
func (st *runState) serveTraceNow(ctx context.Context, req captureReq) {
	name := fmt.Sprintf("trace-%.0fs.out", st.loadClock(time.Now()))
	err := st.traceWindow(ctx, name, st.r.cfg.TraceWindow, "extra")
	req.reply <- captureReply{path: st.rd.Path(name), err: err}
}

// stream writes what capture streams (a trace window, a flight-recorder
// snapshot) into the run directory's file name as it arrives, and records
// it in the manifest.
func (st *runState) stream(ctx context.Context, name string, capture func(context.Context, io.Writer) error) error {
	f, err := os.Create(st.rd.Path(name))
	if err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	err = capture(ctx, f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("run directory: %w", cerr)
	}
	if fi, serr := os.Stat(st.rd.Path(name)); serr == nil && fi.Size() == 0 {
		os.Remove(st.rd.Path(name))
		return err
	}
	if rerr := st.rd.RecordFile(name, "Go execution trace (go tool trace / schedscope analyze)"); err == nil {
		err = rerr
	}
	return err
}

// takeProfiles fetches instant profiles into *into, keeping the last
// error of each that failed for writeProfiles. A profile not answered
// within the read limit ends the set: the others would wait as long.
func (st *runState) takeProfiles(ctx context.Context, names []string, into *map[string][]byte) {
	if *into == nil {
		*into = map[string][]byte{}
	}
	if st.caps.profErr == nil {
		st.caps.profErr = map[string]error{}
	}
	for _, name := range names {
		if _, done := (*into)[name]; done {
			continue
		}
		b, err := st.client.Profile(ctx, name)
		if err != nil {
			st.caps.profErr[name] = err // finishCaptures retries the end set; writeProfiles reports what is missing
			if target.NoAnswer(err) {
				st.skipProfiles(names, *into, fmt.Errorf("not asked: %s got no answer in time (%w)", name, err))
				return
			}
			continue
		}
		(*into)[name] = b
	}
}

// skipProfiles records why the profiles of names not in taken were not
// asked for.
func (st *runState) skipProfiles(names []string, taken map[string][]byte, why error) {
	for _, name := range names {
		if _, done := taken[name]; !done && st.caps.profErr[name] == nil {
			st.caps.profErr[name] = why
		}
	}
}

// finishCaptures runs when the load is over (or the run was cut): it takes
// the end profiles not taken yet and, in snapshot mode, the snapshot that
// has not happened, each bounded on its own so an interrupted run still
// gets them when the target is alive.
func (st *runState) finishCaptures(ctx context.Context) {
	if st.client.Source() == rundir.SourceNone {
		return
	}
	bound := finishTimeout
	if ctx.Err() != nil {
		bound = interruptedFinishTimeout
	}
	fin, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
	defer cancel()
	st.takeProfiles(fin, rundir.EndProfiles(), &st.caps.profEnd)
	if st.r.cfg.SnapshotWhen != "" && st.caps.trace.Mode == "" {
		reason := "end of the load"
		switch cs := st.r.snapshotWhen; len(cs) {
		case 0:
		case 1:
			reason = "end of the load: condition " + cs[0].String() + " never held"
		default:
			names := make([]string, len(cs))
			for i, c := range cs {
				names[i] = c.String()
			}
			reason = "end of the load: none of the conditions " + strings.Join(names, ", ") + " held"
		}
		st.snapshot(fin, reason)
	}
}

// writeProfiles turns the captured profiles into *.pb.gz files, each
// recorded in the manifest with the span it covers; what was not captured
// is recorded as missing. It returns the manifest write errors.
func (st *runState) writeProfiles() error {
	if st.client.Source() == rundir.SourceNone {
		return nil
	}
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	window := "at the end of the last steady phase"
	parse := func(b []byte) *profile.Profile {
		if b == nil {
			return nil
		}
		p, err := parseProfile(b)
		if err != nil {
			return nil
		}
		return p
	}
	write := func(name string, p *profile.Profile) error {
		b, err := encodeProfile(p)
		if err != nil {
			return err
		}
		return st.rd.WriteFile(rundir.ProfileFile(name), func(wr io.Writer) error { _, err := wr.Write(b); return err })
	}
	for _, name := range rundir.EndProfiles() {
		b := st.caps.profEnd[name]
		end, err := parseProfile(b)
		switch {
		case b == nil && st.caps.profErr[name] != nil:
			keep(st.rd.RecordMissing(name+" profile", st.caps.profErr[name]))
			continue
		case b == nil:
			keep(st.rd.RecordMissing(name+" profile", errors.New("not captured (target unreachable, or the run ended first)")))
			continue
		case err != nil:
			keep(st.rd.RecordMissing(name+" profile", err))
			continue
		}
		p, w := end, window
		cumulative := name == "block" || name == "mutex"
		if start := parse(st.caps.profStart[name]); start != nil && cumulative {
			if d, err := deltaProfile(start, end); err == nil {
				p, w = d, "delta over the last steady phase"
			}
		} else if cumulative {
			w = "cumulative since the target started (no start snapshot)"
		}
		if err := write(name, p); err != nil {
			keep(st.rd.RecordMissing(name+" profile", err))
			continue
		}
		keep(st.rd.RecordProfile(rundir.ProfileFile(name), name+" profile, "+w+" (go tool pprof)", w))
	}
	if st.client.Source() != rundir.SourceAgent {
		return errors.Join(errs...)
	}
	var pieces []*profile.Profile
	for _, b := range st.caps.fgprofPieces {
		if p := parse(b); p != nil {
			pieces = append(pieces, p)
		}
	}
	if len(pieces) == 0 {
		keep(st.rd.RecordMissing("fgprof profile", errors.New("no fgprof piece was captured (the steady phase was too short, or the run ended first)")))
		return errors.Join(errs...)
	}
	merged, err := profile.Merge(pieces)
	if err != nil {
		keep(st.rd.RecordMissing("fgprof profile", fmt.Errorf("merging %d pieces: %w", len(pieces), err)))
		return errors.Join(errs...)
	}
	if err := write("fgprof", merged); err != nil {
		keep(st.rd.RecordMissing("fgprof profile", err))
		return errors.Join(errs...)
	}
	w := "wall clock over part of the last steady phase, outside the trace window"
	keep(st.rd.RecordProfile(rundir.ProfileFile("fgprof"), "fgprof wall-clock profile, "+w+" (go tool pprof)", w))
	return errors.Join(errs...)
}

// sleepProbe runs the agent's sleep probe when the run asked for one, for
// SleepProbeLength or what is left of the phase before the end profiles,
// and writes its answer to rundir.SleepProbeFile; what stops it is recorded
// as missing. It runs after the trace window, so the trace holds none of the
// probe's goroutines, and under the same load. It returns false when the
// load ended or ctx is done.
func (st *runState) sleepProbe(ctx context.Context, phaseEnd time.Time) bool {
	sp := st.r.cfg.SleepProbe
	if sp.Goroutines == 0 {
		return true
	}
	const what = "sleep probe"
	a, ok := st.client.(*target.Agent)
	if !ok {
		st.missing(what, errors.New("it needs schedscope's agent in the target"))
		return true
	}
	dur := min(SleepProbeLength(sp.Sleep), time.Until(phaseEnd)-endMargin)
	if dur < 2*sp.Sleep || dur < minFgprofPiece {
		st.missing(what, fmt.Errorf("the last steady phase left %v after the trace window, too little for sleeps of %v", max(dur, 0).Round(time.Millisecond), sp.Sleep))
		return true
	}
	st.setCapture(what)
	raw, res, err := a.SleepProbe(ctx, sp.Goroutines, sp.Sleep, dur)
	st.setCapture("")
	if err != nil {
		st.missing(what, err)
	} else {
		st.keepWriteErr(st.rd.WriteFile(rundir.SleepProbeFile, func(w io.Writer) error { _, err := w.Write(raw); return err }))
		st.keepWriteErr(st.rd.RecordFile(rundir.SleepProbeFile, SleepProbeHeadline(res)))
	}
	select {
	case <-st.loadDone:
		return false
	case <-ctx.Done():
		return false
	default:
		return true
	}
}

// SleepProbeHeadline is a sleep probe's result in one line: how late
// time.Sleep woke up.
func SleepProbeHeadline(r *agent.ProbeResult) string {
	if r.Samples == 0 {
		return fmt.Sprintf("sleep probe: %d goroutines x time.Sleep(%v) for %v: no sleep finished (agent.ProbeResult)",
			r.Goroutines, r.Sleep, r.Duration.Round(time.Millisecond))
	}
	return fmt.Sprintf("sleep probe: %d goroutines x time.Sleep(%v) for %v, %d sleeps: woke late by p50 %v, p99 %v, max %v (agent.ProbeResult)",
		r.Goroutines, r.Sleep, r.Duration.Round(time.Millisecond), r.Samples, r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Max.Round(time.Microsecond))
}
