package load

import (
	"fmt"
	"io"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HLog writes intervals as an HdrHistogram interval log (format 1.3, values
// in nanoseconds), readable and mergeable by the standard HdrHistogram tools
// (HistogramLogProcessor, hdrhistogram-go's HistogramLogReader):
//
//   - steady phases' latency from intended send time: untagged, so the
//     tools' default output covers exactly the measured phases;
//   - steady phases' service time: tag "service"; send lag: tag "send-lag";
//   - the warm-up's latency: tag "warmup".
//
// Timestamps are seconds since the run's start, which the log's StartTime
// line gives. A comment line precedes each phase's first interval. HLog is
// safe for concurrent use; Write fits Config.Interval directly.
type HLog struct {
	mu      sync.Mutex
	w       *hdrhistogram.HistogramLogWriter
	started bool
	phase   int
	err     error
}

// NewHLog returns an HLog writing to w. Nothing is written until the first
// interval (or Close).
func NewHLog(w io.Writer) *HLog {
	return &HLog{w: hdrhistogram.NewHistogramLogWriter(w), phase: -1}
}

// Write appends iv's histograms. The first error is kept and returned by
// every later call; Write is a no-op after an error.
func (l *HLog) Write(iv Interval) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	startMS := iv.Latency.StartTimeMs() - iv.Start.Milliseconds()
	l.header(startMS)
	if iv.Phase != l.phase && l.err == nil {
		l.phase = iv.Phase
		l.err = l.w.OutputComment(fmt.Sprintf("phase %d %s (%s)", iv.Phase, iv.Name, iv.Kind))
	}
	type tagged struct {
		h   *hdrhistogram.Histogram
		tag string
	}
	var hs []tagged
	if iv.Kind == Warmup {
		hs = []tagged{{iv.Latency, "warmup"}}
	} else {
		hs = []tagged{{iv.Latency, ""}, {iv.Service, "service"}, {iv.SendLag, "send-lag"}}
	}
	for _, t := range hs {
		if l.err != nil {
			break
		}
		t.h.SetTag(t.tag)
		l.err = l.w.OutputIntervalHistogram(t.h)
	}
	if l.err != nil {
		l.err = fmt.Errorf("writing HDR interval log: %w", l.err)
	}
	return l.err
}

// header writes the log's header lines once; the caller holds mu.
func (l *HLog) header(startMS int64) {
	if l.started {
		return
	}
	l.started = true
	l.w.SetBaseTime(startMS)
	for _, f := range []func() error{
		l.w.OutputLogFormatVersion,
		func() error {
			return l.w.OutputComment("schedscope load: latency in nanoseconds; untagged = latency from intended send time")
		},
		func() error { return l.w.OutputStartTime(startMS) },
		l.w.OutputLegend,
	} {
		if l.err == nil {
			l.err = f()
		}
	}
}

// Close writes the header, with start as the log's StartTime, if no
// interval was written (so the file is a valid, empty log), and returns the
// first error met. It does not close the underlying writer.
func (l *HLog) Close(start time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started && l.err == nil {
		l.header(start.UnixMilli())
		if l.err != nil {
			l.err = fmt.Errorf("writing HDR interval log: %w", l.err)
		}
	}
	return l.err
}
