package rundir

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/redact"
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
	// Lines are metrics.jsonl's lines up to the first corrupt one.
	Lines []MetricsLine
	// Analysis is analysis.json; nil before derivation.
	Analysis *Analysis
}

// ReadRun reads a run directory: manifest.json is required, the other files
// are read when present. A corrupt file is an error naming it, except
// metrics.jsonl, whose good lines before a cut or corrupt one are kept (a run
// killed mid-write). The manifest and the result's target come back
// redacted (Manifest.Redacted), so that a directory written before
// redaction existed passes no secret on to what is derived from it.
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
	lines, err := ReadMetrics(filepath.Join(dir, MetricsFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	r.Lines = lines
	var an Analysis
	switch err := ReadJSON(filepath.Join(dir, AnalysisFile), &an); {
	case err == nil:
		r.Analysis = &an
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return r, nil
}

// ReadJSON decodes the JSON file at path into v; its error names the file
// and wraps fs.ErrNotExist when it is absent.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err // *PathError names the file
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadMetrics reads metrics.jsonl, keeping every good line before a corrupt
// or truncated one (a run killed mid-write).
func ReadMetrics(path string) ([]MetricsLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []MetricsLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var l MetricsLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			break
		}
		out = append(out, l)
	}
	return out, nil
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
