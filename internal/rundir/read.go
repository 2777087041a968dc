package rundir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/redact"
	"github.com/schedscope/schedscope/internal/regular"
)

// EndProfiles returns the instant profiles a run takes at the end of its
// last steady phase (block and mutex also at its start, for a delta), in
// the order analysis.json lists them; fgprof's wall-clock profile follows.
func EndProfiles() []string { return []string{"block", "mutex", "goroutine", "threadcreate"} }

// Run is a run directory read back.
type Run struct {
	Dir      string
	Manifest Manifest
	// Result is results.json; nil when the run ended before writing it.
	Result *load.Result
	// Lines are metrics.jsonl's good lines; MetricsProblems the lines
	// skipped, where and why (ReadMetrics).
	Lines           []MetricsLine
	MetricsProblems MetricsProblems
	// Analysis is analysis.json; nil before derivation.
	Analysis *Analysis
}

// ReadRun reads a run directory: manifest.json is required, the other files
// are read when present. A corrupt file is an error naming it, except
// metrics.jsonl, whose good lines are kept and bad ones listed in
// MetricsProblems (a run killed mid-write cuts its last line). The manifest
// and the result's target come back redacted (Manifest.Redacted), so that a
// directory written before redaction existed passes no secret on to what is
// derived from it.
func ReadRun(dir string) (*Run, error) {
	r := &Run{Dir: dir}
	if err := ReadJSON(filepath.Join(dir, ManifestFile), &r.Manifest); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: not a run directory (no %s)", dir, ManifestFile)
		}
		return nil, err
	}
	r.Manifest = r.Manifest.Redacted()
	var res load.Result
	switch err := ReadJSON(filepath.Join(dir, ResultsFile), &res); {
	case err == nil:
		res.Target = redact.URL(res.Target)
		r.Result = &res
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	lines, problems, err := ReadMetrics(filepath.Join(dir, MetricsFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	r.Lines, r.MetricsProblems = lines, problems
	var an Analysis
	switch err := ReadJSON(filepath.Join(dir, AnalysisFile), &an); {
	case err == nil:
		r.Analysis = &an
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return r, nil
}

// MaxMetricsLine is the longest metrics.jsonl line ReadMetrics decodes; a
// longer one is skipped (a poll's line is a few kilobytes).
const MaxMetricsLine = 16 << 20

// MetricsProblem is a line of metrics.jsonl that ReadMetrics skipped.
type MetricsProblem struct {
	// Line is the line's number, from 1.
	Line int `json:"line"`
	// Reason says why it was skipped: not JSON, longer than MaxMetricsLine,
	// or cut short.
	Reason string `json:"reason"`
	// Cut: the file's last line ended without its newline and did not
	// decode: the run was killed mid-write. Normal for a killed run, and
	// nothing after it was lost.
	Cut bool `json:"cut,omitempty"`
}

// String is the problem as one line: "metrics.jsonl line 7 skipped: ...".
func (p MetricsProblem) String() string {
	if p.Cut {
		return fmt.Sprintf("%s line %d: %s", MetricsFile, p.Line, p.Reason)
	}
	return fmt.Sprintf("%s line %d skipped: %s", MetricsFile, p.Line, p.Reason)
}

// MetricsProblems are the lines ReadMetrics skipped, in file order.
type MetricsProblems []MetricsProblem

// Lines describes ps in at most max+1 lines: the first max problems one a
// line, then one line counting the rest (max <= 0: every problem).
func (ps MetricsProblems) Lines(max int) []string {
	var out []string
	for i, p := range ps {
		if max > 0 && i == max {
			rest := ps[i:]
			out = append(out, fmt.Sprintf("%s: %d more lines skipped (lines %d to %d)", MetricsFile, len(rest), rest[0].Line, rest[len(rest)-1].Line))
			break
		}
		out = append(out, p.String())
	}
	return out
}

// Lost reports whether ps lost anything beyond a last line cut by a killed
// run: a problem worth a warning rather than a note.
func (ps MetricsProblems) Lost() bool {
	for _, p := range ps {
		if !p.Cut {
			return true
		}
	}
	return false
}

// ReadMetrics reads metrics.jsonl. Every line is a poll of its own, so a
// line that does not decode (corrupt, longer than MaxMetricsLine) is
// skipped and the good lines after it are kept; each skipped line is a
// MetricsProblem saying where and why. A last line cut short without its
// newline is a run killed mid-write: it is reported with Cut set. The
// error is set only when the file cannot be opened or read; the lines read
// until then are returned with it.
func ReadMetrics(path string) ([]MetricsLine, MetricsProblems, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var (
		out      []MetricsLine
		problems MetricsProblems
	)
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, complete, err := readLine(br, MaxMetricsLine)
		if err != nil {
			return out, problems, fmt.Errorf("%s: line %d: %w", path, n, err)
		}
		if line == nil && !tooLong && complete {
			return out, problems, nil // end of file
		}
		switch {
		case tooLong:
			problems = append(problems, MetricsProblem{Line: n, Reason: fmt.Sprintf("longer than %d MB", MaxMetricsLine>>20)})
		case len(bytes.TrimSpace(line)) == 0:
			// A blank line holds nothing to lose.
		default:
			var l MetricsLine
			if err := json.Unmarshal(line, &l); err != nil {
				if !complete {
					problems = append(problems, MetricsProblem{Line: n, Cut: true,
						Reason: fmt.Sprintf("cut short after %d bytes (the run ended mid-write); the lines before it are kept", len(line))})
					break
				}
				problems = append(problems, MetricsProblem{Line: n, Reason: "not a metrics line: " + jsonReason(err)})
				break
			}
			out = append(out, l)
		}
		if !complete {
			return out, problems, nil
		}
	}
}

// readLine reads one line from br without its newline. A line longer than
// max is read through and dropped (tooLong). complete is false for a last
// line without a newline; line == nil, !tooLong and complete at the end of
// the file.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong, complete bool, err error) {
	var buf []byte
	got := false
	for {
		chunk, err := br.ReadSlice('\n')
		got = got || len(chunk) > 0
		if !tooLong {
			if len(buf)+len(chunk) > max+1 { // +1: the newline
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, true, true, nil
			}
			return buf[:len(buf)-1], false, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !got {
				return nil, false, true, nil
			}
			if tooLong || len(buf) > max {
				return nil, true, false, nil
			}
			return buf, false, false, nil
		default:
			return nil, false, false, err
		}
	}
}

// jsonReason shortens a JSON decoding error for a one-line problem.
func jsonReason(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%v (at byte %d)", syn, syn.Offset)
	}
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

// Open opens an existing run directory for writing more files into it (the
// derivation's analysis.json and summary.txt), with its manifest loaded.
func Open(dir string) (*Writer, error) {
	w := &Writer{dir: dir}
	if err := ReadJSON(filepath.Join(dir, ManifestFile), &w.manifest); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: not a run directory (no %s)", dir, ManifestFile)
		}
		return nil, err
	}
	// The files an earlier writer could not write are still unwritten
	// until this one writes them.
	for _, m := range w.manifest.Missing {
		if m.File != "" {
			w.unwritten = append(w.unwritten, m)
		}
	}
	return w, nil
}

// FindTrace returns the execution trace inside a run directory: the first
// of trace.out, trace.bin, trace or *.trace that exists.
func FindTrace(dir string) (string, error) {
	for _, name := range []string{TraceFile, "trace.bin", "trace"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	m, err := filepath.Glob(filepath.Join(dir, "*.trace"))
	if err != nil {
		return "", fmt.Errorf("run directory %s: %w", dir, err)
	}
	if len(m) == 0 {
		return "", fmt.Errorf("run directory %s: no execution trace (trace.out or *.trace)", dir)
	}
	slices.Sort(m)
	return m[0], nil
}
