package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// HLogEntry is one interval histogram of a log that HLog wrote, read back
// by ReadHLog.
type HLogEntry struct {
	// Phase indexes the run's plan; Name and Kind describe it, as the
	// log's phase comment says.
	Phase int
	Name  string
	Kind  PhaseKind
	// Tag is "" (latency from intended send), "service", "send-lag" or
	// "warmup".
	Tag string
	// Start and End bound the interval, as offsets from the run's start.
	Start, End time.Duration
	// Hist is the interval's histogram, in nanoseconds.
	Hist *hdrhistogram.Histogram
}

// ReadHLog reads an interval log that HLog wrote, every interval kept
// (ScanHLog says which line belongs to which phase, and what is an error).
// A last line cut short (a killed process) ends the log: cut reports it,
// and the intervals before it come back.
func ReadHLog(r io.Reader) (entries []HLogEntry, cut bool, err error) {
	cut, err = ScanHLog(r, func(e HLogEntry) error {
		entries = append(entries, e)
		return nil
	})
	return entries, cut, err
}

// ScanHLog reads an interval log that HLog wrote, calling each with every
// interval in file order, so that a reader merging them holds one
// histogram per phase and tag rather than the whole log. Each interval
// belongs to the phase named by the "#phase N NAME (KIND)" comment before
// it. A last line cut short (a killed process) ends the log: cut reports
// it, and the intervals before it were given to each. Any other malformed
// line is an error naming its line number; an error from each stops the
// scan and is returned.
func ScanHLog(r io.Reader, each func(HLogEntry) error) (cut bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	cur := HLogEntry{Phase: -1}
	var bad error // a malformed line: an error unless it is the last
	for n := 1; sc.Scan(); n++ {
		if bad != nil {
			return false, bad
		}
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "#phase "); ok {
			numText, nameKind, _ := strings.Cut(rest, " ")
			num, err := strconv.Atoi(numText)
			open := strings.LastIndex(nameKind, " (")
			if err != nil || open < 0 || !strings.HasSuffix(nameKind, ")") {
				return false, fmt.Errorf("line %d: malformed phase comment %q", n, line)
			}
			cur = HLogEntry{Phase: num, Name: nameKind[:open], Kind: PhaseKind(nameKind[open+2 : len(nameKind)-1])}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, `"`) {
			continue
		}
		e := cur
		if rest, ok := strings.CutPrefix(line, "Tag="); ok {
			tag, body, found := strings.Cut(rest, ",")
			if !found {
				bad = fmt.Errorf("line %d: malformed interval line", n)
				continue
			}
			e.Tag, line = tag, body
		}
		fields := strings.Split(line, ",")
		if len(fields) != 4 {
			bad = fmt.Errorf("line %d: an interval line has 4 fields, this one %d", n, len(fields))
			continue
		}
		start, err1 := strconv.ParseFloat(fields[0], 64)
		length, err2 := strconv.ParseFloat(fields[1], 64)
		h, err3 := hdrhistogram.Decode([]byte(fields[3]))
		if err := errors.Join(err1, err2, err3); err != nil {
			bad = fmt.Errorf("line %d: %v", n, err)
			continue
		}
		if e.Phase < 0 {
			return false, fmt.Errorf("line %d: an interval before any phase comment", n)
		}
		e.Start = time.Duration(start * 1e9).Round(time.Millisecond)
		e.End = time.Duration((start + length) * 1e9).Round(time.Millisecond)
		e.Hist = h
		if err := each(e); err != nil {
			return false, err
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	return bad != nil, nil
}
