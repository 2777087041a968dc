package analyze

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// Options configures Analyze. The zero value is ready to use.
type Options struct {
	// PinThreshold is the shortest span reported in pinned.events: a
	// goroutine holding an OS thread without running Go code (a cgo call,
	// a syscall, a blocked locked goroutine). Zero means 20 ms, JFR's
	// default for jdk.VirtualThreadPinned.
	PinThreshold time.Duration
	// Sleep is the duration every time.Sleep in the trace requested, when
	// known (schedscope's fixture and probe annotate each sleep in the
	// trace instead). Zero means unknown.
	Sleep time.Duration
	// MinLockedWakeups is how many starts after a wake-up, all on one
	// thread that ran nothing else, make a goroutine count as locked to
	// its thread without other evidence. Zero means 3 (2 flagged a
	// net/http backgroundRead goroutine in a pool-model fixture run); 1 flags every
	// goroutine that happened to resume once on the thread it blocked on
	// (see the pitfall in docs/readme-analyze.md). A single wake-up is
	// enough when the trace shows the P hand-off into the locked thread.
	MinLockedWakeups int
	// TimelineStep is the Report.Timeline resolution before it coarsens
	// (it doubles whenever the timeline would exceed 2048 points). Zero
	// means 10 ms.
	TimelineStep time.Duration
	// Progress, when set, is called about every megabyte with the bytes
	// read so far and the input's total size (0 when unknown), on the
	// goroutine that called Analyze.
	Progress func(read, total int64)
	// Size is the input's total size in bytes for Progress and Loss, when
	// known. TraceFile sets it from the file.
	Size int64
	// RequestTag is the tag of the generator's request ids in this run
	// (collect/load's Config.RequestTag): only requests carrying it are
	// joined (their intended send time taken, and Client's record); an id
	// with another tag is left out (IDsLeftOut.ForeignTag), as any client
	// can send one. "" (a trace without its run) joins every id.
	RequestTag string
	// Client is the generator's record of each request, by sequence
	// number: with it the request anatomy splits the time before the
	// handler into the generator's send lag and the wait in the socket,
	// and knows the time after the handler.
	Client map[int64]ClientRequest
	// IntendedFrom and IntendedTo bound, in Unix ns, the intended send
	// times of the run's requests (its load's start and the run's end): an
	// id intended outside them is left out of the join
	// (IDsLeftOut.OutsideWindow). Zero leaves that end open.
	IntendedFrom, IntendedTo int64
}

func (o Options) withDefaults() Options {
	if o.PinThreshold <= 0 {
		o.PinThreshold = 20 * time.Millisecond
	}
	if o.MinLockedWakeups <= 0 {
		o.MinLockedWakeups = 3
	}
	if o.TimelineStep <= 0 {
		o.TimelineStep = 10 * time.Millisecond
	}
	return o
}

// ClientRequest is the load generator's record of one request.
type ClientRequest struct {
	// IntendedUnixNs is when it should have been sent, as its id says; an
	// id of the same number with another intended time is not this
	// request's (IDsLeftOut.NotTheRecord). 0 unknown: not compared.
	IntendedUnixNs int64
	SentUnixNs     int64 // when it was sent
	LatencyNs      int64 // from its intended send to its response's end; 0 unknown
}

// ErrNotTrace is returned (wrapped) when the input is not a Go execution
// trace of a supported version (Go 1.22 or later), or is empty.
var ErrNotTrace = errors.New("not a Go execution trace")

// TruncatedError reports a trace that broke off or was corrupt part-way.
// Analyze returns it together with the Report of everything before the
// damage; Report.Loss holds the same figures.
type TruncatedError struct {
	Loss Loss  // how much of the input could not be used
	Err  error // the parser's error where the damage began
}

// Error says how many generations were kept, how much of the input was
// lost, and the parser's error.
func (e *TruncatedError) Error() string {
	if e.Loss.TotalBytes > 0 {
		return fmt.Sprintf("trace damaged: kept %d complete generations up to byte %d of %d, lost %.1f%% of the bytes and the generation being read: %v",
			e.Loss.Generations, e.Loss.ValidBytes, e.Loss.TotalBytes, e.Loss.LostPct, e.Err)
	}
	return fmt.Sprintf("trace damaged: kept %d complete generations up to byte %d, lost the rest: %v", e.Loss.Generations, e.Loss.ValidBytes, e.Err)
}

// Unwrap returns the parser's error, Err.
func (e *TruncatedError) Unwrap() error { return e.Err }

// countingReader counts bytes and reports progress.
type countingReader struct {
	r        io.Reader
	n        int64
	total    int64
	next     int64
	progress func(read, total int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil && c.n >= c.next {
		c.progress(c.n, c.total)
		c.next = c.n + 1<<20
	}
	return n, err
}

// analyzer holds every accumulator of one analysis, and the decoder that
// turns trace events into the records they read.
type analyzer struct {
	opts   Options
	dec    *decoder   // events to records; interns stacks
	stacks stackInfos // every stack the decoder interned, by id
	gidx   *goIndex
	compat *compatAcc
	gor    *goAcc
	procs  *procAcc
	anat   *anatomyAcc

	events      int64
	generations int
	first, last trace.Time
	seen        bool
}

func newAnalyzer(opts Options) *analyzer {
	opts = opts.withDefaults()
	a := &analyzer{opts: opts, dec: newDecoder(opts.RequestTag), gidx: newGoIndex(), procs: newProcAcc()}
	a.compat = newCompatAcc(a.gidx)
	a.gor = newGoAcc(&a.opts, &a.stacks, a.gidx)
	a.anat = newAnatomyAcc(&a.opts, a.dec, &a.stacks, a.gidx, a.gor)
	return a
}

// Event decodes one event and feeds it to every accumulator.
func (a *analyzer) Event(ev *trace.Event) {
	a.clock(ev.Time(), ev.Thread())
	var r record
	a.dec.decode(ev, &r)
	if len(a.dec.stacks.fresh) > 0 {
		a.stacks = a.dec.stacks.takeNew(a.stacks)
	}
	a.apply(&r)
}

// clock notes every event's time and thread, before it is decoded (so an
// event the reader cannot decode still counts, as far as it was read).
func (a *analyzer) clock(t trace.Time, th trace.ThreadID) {
	a.events++
	if !a.seen {
		a.first, a.seen = t, true
	}
	a.last = t
	a.gor.clock(t)
	a.procs.clock(t, th)
	a.anat.clock(t)
}

// apply feeds one decoded event to the accumulators that want it.
func (a *analyzer) apply(r *record) {
	switch r.kind {
	case recSync:
		a.generations++
	case recGo:
		id := trace.GoID(r.id)
		slot, fresh := a.gidx.get(id)
		a.compat.transition(r, slot, fresh)
		a.gor.transition(r, slot, fresh)
		a.anat.transition(r, slot, fresh)
		if trace.GoState(r.to) == trace.GoNotExist {
			a.gidx.release(id, slot)
		}
	case recProc:
		a.procs.procTransition(r)
		a.gor.procTransition(r)
	case recSleepLog, recLockLog:
		a.gor.log(r)
	case recGOMAXPROCS:
		a.procs.event(r)
	case recRangeBegin, recRangeActive, recRangeEnd:
		a.procs.event(r)
		a.anat.event(r)
	case recHandlerBegin, recHandlerEnd, recWaitBegin, recWaitEnd, recRegionBegin, recRegionEnd, recReqLog:
		a.anat.event(r)
	}
}

// Result builds the Report; call it once, after the last Event.
func (a *analyzer) Result() *Report {
	r := &Report{Schema: SchemaVersion, Events: a.events, PinThreshNs: int64(a.opts.PinThreshold)}
	// The reader emits a Sync before each generation and one at the end.
	r.Generations = max(a.generations-1, 0)
	if a.generations == 1 {
		r.Generations = 1 // cut before the final Sync
	}
	if a.seen {
		r.DurationNs = int64(a.last - a.first)
	}
	c := a.compat.Result()
	r.Sched.Compat = c[compatSched]
	r.Syscall.Compat = c[compatSyscall]
	r.Sync.Compat = c[compatSync]
	r.Net.Compat = c[compatNet]
	a.gor.result(r)
	a.procs.result(r)
	a.anat.result(r, a.last, a.dec.poolNames)
	return r
}

// Trace reads one execution trace from r and reports on it.
//
// Errors: an input that is empty, not a trace, or of an unsupported version
// returns a nil Report and an error wrapping ErrNotTrace. A trace damaged
// part-way returns the Report of what came before and a *TruncatedError.
// When ctx is cancelled, Trace stops and returns the Report so far with
// ctx's error. Trace is safe to call concurrently on different inputs.
//
// Trace reads on the calling goroutine and analyzes on one goroutine of
// its own (unless GOMAXPROCS is 1), which has ended when Trace returns.
func Trace(ctx context.Context, r io.Reader, opts Options) (*Report, error) {
	return analyzeTrace(ctx, r, opts, false)
}

// analyzeTrace is Trace; inline analyzes on the calling goroutine too.
func analyzeTrace(ctx context.Context, r io.Reader, opts Options, inline bool) (rep *Report, err error) {
	cr := &countingReader{r: r, total: opts.Size, progress: opts.Progress}
	var (
		a          *analyzer
		p          *pipeline
		b          *batch // being filled
		events     int64  // read so far
		validBytes int64  // read when the last Sync was
	)
	// golang.org/x/exp/trace can panic on corrupt input (an index out of
	// range in its tables, found by FuzzAnalyze): turn that into the
	// damaged-trace error, keeping what came before. (The analysis
	// recovers its own panics: pipeline.analyze.)
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		stack := debug.Stack()
		perr := fmt.Errorf("trace reader failed on corrupt data: %v", v)
		if !panickedIn(stack, "golang.org/x/exp/trace.") {
			perr = fmt.Errorf("%w: %v\n%s", errAnalyzerBug, v, stack)
		}
		if a == nil || p == nil {
			rep, err = nil, fmt.Errorf("%w: %w", ErrNotTrace, perr)
			return
		}
		if aerr := p.finish(b); aerr != nil {
			rep, err = a.broken(p.read, p.valid, opts.Size, aerr)
			return
		}
		rep, err = a.broken(cr.n, validBytes, opts.Size, perr)
	}()
	tr, err := trace.NewReader(cr)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("stopped after %d bytes, before the trace's header: %w", cr.n, cerr)
		}
		if cr.n == 0 || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: empty or too short (%d bytes)", ErrNotTrace, cr.n)
		}
		return nil, fmt.Errorf("%w: %v", ErrNotTrace, err)
	}
	a = newAnalyzer(opts)
	p = startPipeline(a, inline)
	b = p.next()
	for {
		if events&4095 == 0 {
			if cerr := ctx.Err(); cerr != nil {
				if aerr := p.finish(b); aerr != nil {
					return a.broken(p.read, p.valid, opts.Size, aerr)
				}
				rep = a.Result()
				rep.Bytes = cr.n
				return rep, fmt.Errorf("analysis stopped after %d events: %w", a.events, cerr)
			}
		}
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			if aerr := p.finish(b); aerr != nil {
				return a.broken(p.read, p.valid, opts.Size, aerr)
			}
			if a.events == 0 {
				return nil, fmt.Errorf("%w: damaged before its first complete generation: %v", ErrNotTrace, err)
			}
			return a.damaged(cr.n, validBytes, opts.Size, err)
		}
		if ev.Kind() == trace.EventSync {
			validBytes = cr.n
		}
		events++
		b.events = append(b.events, ev)
		b.read = append(b.read, cr.n)
		if len(b.events) == batchLen {
			if b = p.send(b); b == nil { // the analysis stopped
				return a.broken(p.read, p.valid, opts.Size, p.finish(nil))
			}
		}
	}
	if aerr := p.finish(b); aerr != nil {
		return a.broken(p.read, p.valid, opts.Size, aerr)
	}
	if a.events <= int64(a.generations) {
		return nil, fmt.Errorf("%w: no events", ErrNotTrace)
	}
	if cr.progress != nil {
		cr.progress(cr.n, cr.total)
	}
	rep = a.Result()
	rep.Bytes = cr.n
	return rep, nil
}

// broken returns what Trace returns when the analysis stopped on err (a
// panic): the damaged report, or ErrNotTrace when no event was analyzed.
// read and valid are the bytes read when the analysis took its last event
// and its last Sync.
func (a *analyzer) broken(read, valid, size int64, err error) (*Report, error) {
	if a.events == 0 {
		return nil, fmt.Errorf("%w: %w", ErrNotTrace, err)
	}
	return a.damaged(read, valid, size, err)
}

// damaged returns the partial report of a trace that broke off after read
// bytes; validBytes had been read when the last complete generation began.
func (a *analyzer) damaged(read, validBytes, size int64, err error) (*Report, error) {
	rep := a.Result()
	rep.Generations = a.generations // no final Sync: every one seen was complete
	rep.Bytes = read
	total := max(size, read)
	loss := Loss{Error: err.Error(), ValidBytes: validBytes, TotalBytes: total, Generations: rep.Generations}
	if total > 0 {
		loss.LostPct = 100 * float64(total-validBytes) / float64(total)
	}
	rep.Loss = &loss
	return rep, &TruncatedError{Loss: loss, Err: err}
}

// errAnalyzerBug marks a panic in schedscope's own code, recovered so the
// CLI never crashes; tests treat it as a failure.
var errAnalyzerBug = errors.New("internal error in the trace analyzers (please report)")

// panickedIn reports whether the first non-runtime frame below the panic in
// a debug.Stack dump belongs to a function with prefix.
func panickedIn(stack []byte, prefix string) bool {
	lines := strings.Split(string(stack), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "panic(") {
			continue
		}
		for _, f := range lines[i+1:] {
			if f == "" || strings.HasPrefix(f, "\t") || strings.HasPrefix(f, "runtime.") {
				continue
			}
			return strings.HasPrefix(f, prefix)
		}
	}
	return false
}

// TraceFile is Trace on a file; path "-" reads standard input.
// Report.Source is set to path, and errors name it. A path that is not a
// regular file (a named pipe, a device) is refused before it is opened: its
// reads could block past ctx. Pipe such an input to standard input instead.
func TraceFile(ctx context.Context, path string, opts Options) (*Report, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("trace %s: %s, not a regular file: read it from standard input instead (- < %s)", path, fileType(fi.Mode()), path)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", path, err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && opts.Size == 0 {
			opts.Size = fi.Size()
		}
		r = f
	}
	rep, err := Trace(ctx, r, opts)
	if rep != nil {
		rep.Source = path
	}
	if err != nil {
		return rep, fmt.Errorf("trace %s: %w", path, err)
	}
	return rep, nil
}

// fileType names a non-regular file mode's type for an error. (It repeats
// internal/regular.Describe: analyze is a public leaf and imports nothing of
// schedscope's, internal/layout's test says so.)
func fileType(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "a device"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDir != 0:
		return "a directory"
	}
	return "a special file"
}
