package target

import (
	"errors"
	"fmt"
	"time"

	"github.com/schedscope/schedscope/internal/regular"
)

// The default Limits: what a read from a target may take when nothing else
// is asked. docs/readme-run.md lists them.
const (
	// DefaultMaxJSON bounds a JSON answer read whole: the agent's index, a
	// metrics snapshot, the answers to a GOMAXPROCS change and an arm. The
	// agent's index and snapshot are a few KiB (a snapshot's histograms
	// about 30 KiB).
	DefaultMaxJSON = 16 << 20
	// DefaultMaxProfile bounds a profile held in memory: an instant profile
	// (goroutine, block, mutex, threadcreate) read whole, or an fgprof
	// piece. Gzipped protos; a server with 100,000 goroutines on a few
	// thousand stacks gives a goroutine profile of a few MiB.
	DefaultMaxProfile = 64 << 20
	// DefaultMaxCapture bounds a capture streamed to a file as it arrives:
	// a trace window or a flight-recorder snapshot (a busy server's trace
	// is some MiB per second; the longest window is a minute).
	DefaultMaxCapture = 1 << 30
	// DefaultReadTimeout bounds each read of a whole answer, from sending
	// the request to the answer's last byte: a poll, a profile, a probe.
	DefaultReadTimeout = 5 * time.Second
	// DefaultCaptureMargin is how long a capture of a window (a trace
	// window, an fgprof piece) may run past the window, and how long a
	// flight-recorder snapshot, which has no window, may take in all.
	DefaultCaptureMargin = 10 * time.Second
)

// maxFirstLine bounds the first line of net/http/pprof's debug=1 text
// ("goroutine profile: total 1234"), the only part of it read.
const maxFirstLine = 64 << 10

// maxHeaderBytes bounds an answer's header block.
const maxHeaderBytes = 1 << 20

// Limits bound every read from a target, so that a target answering
// without end (an endless chunked body) or not at all costs a bounded
// amount of memory, disk and time. A read past a limit stops there and
// fails with a *LimitError naming it. Zero fields take the defaults above.
type Limits struct {
	// JSON bounds a JSON answer read whole; 0 means DefaultMaxJSON.
	JSON int64
	// Profile bounds a profile held in memory; 0 means DefaultMaxProfile.
	Profile int64
	// Capture bounds a trace window or flight-recorder snapshot, streamed
	// to its writer; what came before the limit is kept there. 0 means
	// DefaultMaxCapture.
	Capture int64
	// Read bounds each whole read; 0 means DefaultReadTimeout.
	Read time.Duration
	// Margin is a capture's time past its window; 0 means
	// DefaultCaptureMargin.
	Margin time.Duration
}

// withDefaults fills l's zero fields.
func (l Limits) withDefaults() Limits {
	set := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&l.JSON, DefaultMaxJSON)
	set(&l.Profile, DefaultMaxProfile)
	set(&l.Capture, DefaultMaxCapture)
	if l.Read <= 0 {
		l.Read = DefaultReadTimeout
	}
	if l.Margin <= 0 {
		l.Margin = DefaultCaptureMargin
	}
	return l
}

// Option configures a client made by NewAgent, NewPprof or Discover.
type Option func(*Limits)

// WithLimits bounds the client's reads by l (its zero fields keep the
// defaults).
func WithLimits(l Limits) Option {
	return func(to *Limits) { *to = l }
}

// LimitError is a read from a target stopped at one of its Limits: the
// answer was larger than Size bytes, or not complete within Time. Exactly
// one of Size and Time is set.
type LimitError struct {
	URL  string
	What string // the answer: "JSON answer", "profile", "trace window", ...
	Size int64
	Time time.Duration
}

func (e *LimitError) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("%s: the %s is larger than its %s limit", e.URL, e.What, regular.FormatBytes(e.Size))
	}
	return fmt.Sprintf("%s: the %s was not complete within its %v limit", e.URL, e.What, e.Time)
}

// NoAnswer reports whether err is a *LimitError of time: the target did
// not complete its answer within the limit, so another read would likely
// wait as long.
func NoAnswer(err error) bool {
	var le *LimitError
	return errors.As(err, &le) && le.Time > 0
}
