package analyze

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"golang.org/x/exp/trace"
)

// batchLen is how many events a batch holds (320 KB of trace.Event).
// Batches of 1,024 and 4,096 cost the same within the noise; 256 more.
const batchLen = 4096

// pipeDepth is how many full batches may wait for the analysis.
const pipeDepth = 4

// batch is a run of events handed from the reading goroutine to the
// analysis, with how many bytes of input had been read when each event
// came out of the reader (for Loss, when the analysis stops on a corrupt
// event).
type batch struct {
	events []trace.Event
	read   []int64
}

// pipeline runs an analyzer (decoder and accumulators) on a goroutine of
// its own, fed batches of events by the goroutine that reads the trace, so
// that reading, which is most of the work, and analysis overlap on two
// cores. Only the reading goroutine calls the trace.Reader; only the
// pipeline's goroutine touches the analyzer, until finish returns. Batches
// circulate between the two: memory stays at pipeDepth+1 batches, and the
// analysis is never more than those behind the reader. With a single P
// (GOMAXPROCS=1) nothing can overlap, and the pipeline analyzes each batch
// on the reading goroutine as it is handed over.
//
// Events are read on the pipeline's goroutine while the Reader goes on.
// That is safe because the Reader never changes what an event refers to
// once it has emitted it (a generation's string, stack and PC tables are
// complete before its first event), except the names of tasks it appends
// to the generation's extra strings, which the analyzers never read
// (golang.org/x/exp/trace order.go, addExtraString). The analyze tests run
// this path under the race detector.
type pipeline struct {
	a      *analyzer
	inline bool          // no goroutine: analyze batches as they are sent
	full   chan *batch   // to the analysis
	free   chan *batch   // back to the reader
	done   chan struct{} // closed when the analysis goroutine ends
	spare  *batch        // inline: the one batch

	// Set by the analysis before done closes (inline: before send or
	// finish returns).
	err   error // it stopped on a panic: corrupt data in the reader's tables, or a bug
	read  int64 // bytes read when the last event it took had been read
	valid int64 // bytes read when the last Sync it took had been read

	over bool // finish has run
}

func newBatch() *batch {
	return &batch{events: make([]trace.Event, 0, batchLen), read: make([]int64, 0, batchLen)}
}

// startPipeline starts the analysis of a's events: on its own goroutine,
// unless inline (or GOMAXPROCS is 1).
func startPipeline(a *analyzer, inline bool) *pipeline {
	if inline || runtime.GOMAXPROCS(0) == 1 {
		return &pipeline{a: a, inline: true, spare: newBatch(), done: make(chan struct{})}
	}
	p := &pipeline{a: a, full: make(chan *batch, pipeDepth), free: make(chan *batch, pipeDepth+1), done: make(chan struct{})}
	for range pipeDepth + 1 {
		p.free <- newBatch()
	}
	go p.run()
	return p
}

// run analyzes batches until the reader closes full, or one stops on a
// panic.
func (p *pipeline) run() {
	defer close(p.done)
	for b := range p.full {
		if !p.analyze(b) {
			return
		}
		p.free <- b
	}
}

// analyze feeds b's events to the analyzer and empties b. It reports false
// when an event panicked (golang.org/x/exp/trace panics on some corrupt
// data, found by FuzzAnalyze; anything else is a bug of ours), with p.err
// set.
func (p *pipeline) analyze(b *batch) (ok bool) {
	read, valid := p.read, p.valid // kept here, not in p, which the reader reads too
	defer func() {
		p.read, p.valid = read, valid
		v := recover()
		if v == nil {
			return
		}
		stack := debug.Stack()
		p.err = fmt.Errorf("trace reader failed on corrupt data: %v", v)
		if !panickedIn(stack, "golang.org/x/exp/trace.") {
			p.err = fmt.Errorf("%w: %v\n%s", errAnalyzerBug, v, stack)
		}
		ok = false
	}()
	for i := range b.events {
		ev := &b.events[i]
		read = b.read[i]
		if ev.Kind() == trace.EventSync {
			valid = read
		}
		p.a.Event(ev)
	}
	// The events are not cleared: the reader overwrites them soon, and
	// clearing them here made it fetch every line back from this core.
	b.events, b.read = b.events[:0], b.read[:0]
	return true
}

// next returns an empty batch, or nil when the analysis has stopped.
func (p *pipeline) next() *batch {
	if p.inline {
		return p.spare
	}
	select {
	case b := <-p.free:
		return b
	case <-p.done:
		return nil
	}
}

// send hands b to the analysis and returns an empty batch, or nil when the
// analysis has stopped.
func (p *pipeline) send(b *batch) *batch {
	if p.inline {
		if !p.analyze(b) {
			return nil
		}
		return b
	}
	select {
	case p.full <- b:
		return p.next()
	case <-p.done:
		return nil
	}
}

// finish hands over b (the batch being filled, nil for none), waits until
// the analysis has taken every event and returns the error it stopped on,
// if any. The analyzer is the caller's again afterwards.
func (p *pipeline) finish(b *batch) error {
	if p.over {
		return p.err
	}
	p.over = true
	if p.inline {
		if b != nil && p.err == nil {
			p.analyze(b)
		}
		return p.err
	}
	if b != nil && len(b.events) > 0 {
		select {
		case p.full <- b:
		case <-p.done:
		}
	}
	close(p.full)
	<-p.done
	return p.err
}
