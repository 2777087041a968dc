// Package analyze reads Go execution traces and reports what the scheduler
// did: scheduling latency (with totals equal to `go tool trace -pprof=...`),
// time.Sleep wake-up overhead, goroutines pinning OS threads (locked
// goroutines, long cgo calls and syscalls), the goroutine lifecycle,
// threads, Ps, GC and blocking.
//
// Give it a trace and read the Report:
//
//	rep, err := analyze.TraceFile(ctx, "trace.out", analyze.Options{})
//	if err != nil { ... }
//	fmt.Println(rep.Sched.PercentilesNs.P99, len(rep.Pinned.LockedGoroutines))
//
// The trace can come from runtime/trace.Start, `go test -trace`,
// net/http/pprof's /debug/pprof/trace, a runtime/trace.FlightRecorder
// snapshot, or a `schedscope run` directory (FindTrace finds the trace in
// it). Trace takes any io.Reader instead of a file; WriteText renders a
// Report as text, and a Report marshals to JSON as it is. ParseCondition
// turns "locked>0" or "sched.p99>=5ms" into a test on a Report, for gates in
// CI.
//
// Analysis streams: one pass over golang.org/x/exp/trace's Reader, on the
// calling goroutine, hands batches of events to a goroutine of the
// analysis's own that feeds them to every accumulator, so that on two cores
// the analysis costs little more wall time than the reading (the batches
// are analyzed inline when GOMAXPROCS is 1). Memory grows with the number of
// live goroutines and distinct stacks, never with the number of events: a
// trace of gigabytes need not fit in memory. Options.Progress reports how
// far a long read has got.
//
// Bad input: a file that is not a trace returns an error wrapping
// ErrNotTrace. A trace that breaks off or is corrupt part-way returns the
// Report of everything before the damage together with a *TruncatedError,
// whose Loss (also Report.Loss) says how much was lost.
//
// Two annotations make the report more exact when the traced program writes
// them with runtime/trace.Log: SleepLogCategory with the requested duration
// in nanoseconds right before a time.Sleep (then the report has its overshoot), and
// LockLogCategory after runtime.LockOSThread (then a goroutine that locks,
// blocks once and unlocks is reported as locked, which inference cannot
// tell). schedscope's fixture and the agent's sleep probe write the first.
package analyze
