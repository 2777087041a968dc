package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/redact"
)

// File names in a run directory.
const (
	ManifestFile = "manifest.json" // Manifest
	ResultsFile  = "results.json"  // the load generator's load.Result
	HLogFile     = "load.hlog"     // the load generator's HdrHistogram interval log (ns)
	MetricsFile  = "metrics.jsonl" // one MetricsLine per poll, on the load's clock
	TraceFile    = "trace.out"     // the execution trace (window or flight-recorder snapshot)
	RequestsFile = "requests.tsv"  // the load generator's record of each request around the trace (RequestLog)
	AnalysisFile = "analysis.json" // Analysis
	SummaryFile  = "summary.txt"   // the human summary
	// MergeFile is `schedscope merge`'s summary of the shards it merged.
	MergeFile = "merge.txt"
	// SleepProbeFile is the agent's sleep probe result (agent.ProbeResult),
	// when schedscope run --sleep-probe asked for it.
	SleepProbeFile = "sleepprobe.json"
	// Profiles: ProfileFile(name) = name + ".pb.gz", for goroutine, block,
	// mutex, threadcreate and fgprof.
)

// ProfileFile is the file name of a profile in a run directory.
func ProfileFile(name string) string { return name + ".pb.gz" }

// Run status values in Manifest.Status.
const (
	// StatusRunning: the run is in progress, or its process was killed before
	// it could say otherwise (treat it as interrupted when nothing runs).
	StatusRunning = "running"
	// StatusComplete: the plan ran to its end and every file was written.
	StatusComplete = "complete"
	// StatusInterrupted: Ctrl-C, a target that died, or a failure stopped the
	// run early; every file holds what was measured until then.
	StatusInterrupted = "interrupted"
	// StatusIncomplete: the plan ran to its end, but files could not be
	// written whole (a full disk): Manifest.Missing names each, with its
	// File set, and Reason lists them.
	StatusIncomplete = "incomplete"
)

// Writer writes a run directory. Every file is either appended as measured
// (metrics.jsonl, load.hlog, trace.out while it streams) or written whole
// through WriteFileAtomic, so a reader never sees half a JSON document. A
// file that could not be written (or appended to the end) is remembered,
// and every manifest written after says so: a Missing entry naming the
// file, and StatusIncomplete in place of StatusComplete, so that the
// manifest, written last, never calls complete a directory that lacks a
// file. Its methods are safe for concurrent use.
type Writer struct {
	dir string

	mu       sync.Mutex
	manifest Manifest
	// unwritten are the files whose last write failed, by name, in the
	// order they failed.
	unwritten []Missing
}

// Create creates the run directory dir (it must not exist, or be empty:
// CheckNewRunDir) and returns its Writer. Nothing is written until the
// first call.
func Create(dir string) (*Writer, error) {
	if err := CheckNewRunDir(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run directory %s: %w", dir, err)
	}
	return &Writer{dir: dir}, nil
}

// Path returns the path of the file name inside the directory.
func (d *Writer) Path(name string) string { return filepath.Join(d.dir, name) }

// Dir returns the directory.
func (d *Writer) Dir() string { return d.dir }

// WriteFile writes name whole (WriteFileAtomic). A failure is remembered
// for the manifests written after (see Writer); a later success forgets it.
func (d *Writer) WriteFile(name string, write func(io.Writer) error) error {
	err := WriteFileAtomic(d.Path(name), write)
	d.noteWrite(name, err)
	if err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	return nil
}

// noteWrite remembers whether name's last write failed (err != nil).
func (d *Writer) noteWrite(name string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.unwritten = slices.DeleteFunc(d.unwritten, func(m Missing) bool { return m.File == name })
	if err != nil {
		// The system's reason alone ("no space left on device") when
		// there is one: the manifest that says it may have to fit in the
		// old one's bytes (UpdateManifest on a full disk).
		why := err.Error()
		var errno syscall.Errno
		if errors.As(err, &errno) {
			why = errno.Error()
		}
		d.unwritten = append(d.unwritten, Missing{What: name, File: name, Why: "not written: " + why})
	}
}

// withUnwritten returns m saying what d could not write: its Missing
// entries for files are d.unwritten's, and a complete status becomes
// StatusIncomplete (and back, once every file is written); the caller
// holds mu.
func (d *Writer) withUnwritten(m Manifest) Manifest {
	missing := slices.DeleteFunc(slices.Clone(m.Missing), func(x Missing) bool { return x.File != "" })
	m.Missing = append(missing, d.unwritten...)
	if len(m.Missing) == 0 {
		m.Missing = nil
	}
	switch {
	case len(d.unwritten) > 0 && (m.Status == StatusComplete || m.Status == StatusIncomplete):
		names := make([]string, len(d.unwritten))
		for i, x := range d.unwritten {
			names[i] = x.File
		}
		m.Status, m.Reason = StatusIncomplete, "the plan ran to its end, but these files could not be written: "+strings.Join(names, ", ")
	case len(d.unwritten) == 0 && m.Status == StatusIncomplete:
		m.Status, m.Reason = StatusComplete, ""
	}
	return m
}

// WriteJSON writes v as indented JSON to name, whole (WriteFile).
func (d *Writer) WriteJSON(name string, v any) error {
	return d.WriteFile(name, encodeJSON(v))
}

// encodeJSON writes v as indented JSON.
func encodeJSON(v any) func(io.Writer) error {
	return func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
}

// UpdateManifest applies change and rewrites manifest.json, redacted (see
// Manifest.Redacted): the manifest, in memory as on disk, holds no secret.
func (d *Writer) UpdateManifest(change func(m *Manifest)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	change(&d.manifest)
	d.manifest = d.withUnwritten(d.manifest).Redacted()
	sort.Slice(d.manifest.Files, func(i, j int) bool { return d.manifest.Files[i].Name < d.manifest.Files[j].Name })
	// Not through WriteFile: the manifest is what says which files failed.
	err := WriteFileAtomic(d.Path(ManifestFile), encodeJSON(d.manifest))
	if errors.Is(err, syscall.ENOSPC) {
		// A full disk has no room for the new manifest beside the old
		// one, and the old one may say complete while files are missing:
		// write it over the old one, compact, when it fits in the old
		// one's bytes (which needs no new block).
		if b, merr := json.Marshal(d.manifest); merr == nil && overwriteWithin(d.Path(ManifestFile), append(b, '\n')) == nil {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	return nil
}

// overwriteWithin writes b over the file at path from its start and cuts
// the file to len(b), when b is no longer than the file is: the disk
// needs no new block for it (the disk being full). Unlike WriteFileAtomic
// it is not atomic: a crash in the middle leaves a cut file, the price of
// saying what is missing at all on a full disk.
func overwriteWithin(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && int64(len(b)) > fi.Size() {
		err = fmt.Errorf("%s: %d bytes do not fit in the %d of the file", path, len(b), fi.Size())
	}
	if err == nil {
		_, err = f.WriteAt(b, 0)
	}
	if err == nil {
		err = f.Truncate(int64(len(b)))
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// RecordFile adds (or replaces) a file's entry in the manifest, with its
// size now.
func (d *Writer) RecordFile(name, what string) error {
	return d.record(FileEntry{Name: name, What: what})
}

// RecordProfile records a profile file with the span it covers.
func (d *Writer) RecordProfile(name, what, window string) error {
	return d.record(FileEntry{Name: name, What: what, Window: window})
}

func (d *Writer) record(e FileEntry) error {
	if fi, err := os.Stat(d.Path(e.Name)); err == nil {
		e.Bytes = fi.Size()
	}
	return d.UpdateManifest(func(m *Manifest) {
		for i := range m.Files {
			if m.Files[i].Name == e.Name {
				m.Files[i] = e
				return
			}
		}
		m.Files = append(m.Files, e)
	})
}

// RecordMissing records something the run could not collect, and why.
func (d *Writer) RecordMissing(what string, err error) error {
	return d.UpdateManifest(func(m *Manifest) {
		m.Missing = append(m.Missing, Missing{What: what, Why: err.Error()})
	})
}

// Appender is a file written line by line as measured. Each line is
// written with one write call to an unbuffered file, so a killed run leaves
// whole lines (the last may be cut only if the machine itself stopped).
type Appender struct {
	mu  sync.Mutex
	f   *os.File
	err error
	// failed tells the directory's Writer of the first error (nil for
	// none), so its manifests say the file was cut short.
	failed func(error)
}

// CreateAppender creates name (truncating it) for appending.
func (d *Writer) CreateAppender(name string) (*Appender, error) {
	f, err := os.OpenFile(d.Path(name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	return &Appender{f: f, failed: func(err error) { d.noteWrite(name, err) }}, nil
}

// Write appends p; after the first error every call returns it.
func (a *Appender) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.f.Write(p)
	if err != nil {
		a.err = fmt.Errorf("writing %s: %w", a.f.Name(), err)
		if a.failed != nil {
			a.failed(fmt.Errorf("cut short: %w", a.err))
		}
	}
	return n, a.err
}

// Line appends v as one JSON line.
func (a *Appender) Line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding a line of %s: %w", a.f.Name(), err)
	}
	_, err = a.Write(append(b, '\n'))
	return err
}

// Close closes the file, returning the first error met.
func (a *Appender) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.f.Close()
	if a.err != nil {
		return a.err
	}
	if err != nil && !errors.Is(err, os.ErrClosed) {
		a.err = fmt.Errorf("closing %s: %w", a.f.Name(), err)
		if a.failed != nil {
			a.failed(a.err)
		}
		return a.err
	}
	return nil
}

// Source names what a run could read inside the target.
type Source string

const (
	// SourceAgent: schedscope's agent (collect/agent) answered.
	SourceAgent Source = "agent"
	// SourcePprof: only net/http/pprof answered; fewer figures.
	SourcePprof Source = "pprof"
	// SourceNone: nothing inside the target answered; load and /proc only.
	SourceNone Source = "none"
)

// Manifest returns a copy of the manifest as last written.
func (d *Writer) Manifest() Manifest {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.manifest
	m.Files = append([]FileEntry(nil), m.Files...)
	m.Missing = append([]Missing(nil), m.Missing...)
	return m
}

// Manifest is manifest.json: what ran, where, when, and how it ended.
type Manifest struct {
	Schema    int    `json:"schema"`     // ManifestSchema
	Tool      string `json:"tool"`       // "schedscope"
	Version   string `json:"version"`    // schedscope's module version ("(devel)" from a checkout)
	GoVersion string `json:"go_version"` // the generator's runtime.Version()
	// Args is the command line after "schedscope run", when run from the CLI.
	Args []string `json:"args,omitempty"`
	// Config is the run's configuration as used (defaults applied).
	Config ManifestConfig `json:"config"`
	// Machine is where the generator ran.
	Machine Machine `json:"machine"`
	// Generator and Target describe the two processes.
	Generator ProcessInfo `json:"generator"`
	Target    TargetInfo  `json:"target"`
	Start     time.Time   `json:"start"`
	// LoadStart is the load's clock origin (load.Result.Start): every t_s
	// in metrics.jsonl and every offset in results.json is from it.
	LoadStart time.Time `json:"load_start,omitzero"`
	End       time.Time `json:"end,omitzero"`
	// Status is StatusRunning, StatusComplete or StatusInterrupted;
	// Reason says why a run was interrupted.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Trace says what trace.out holds; nil when no trace was captured.
	Trace *TraceCapture `json:"trace,omitempty"`
	// RequestTag is the tag of every request the load generator sent
	// (load.Config.RequestTag, in each request's load.RequestHeader) and of
	// requests.tsv; "" for a run made before requests were tagged.
	RequestTag string `json:"request_tag,omitempty"`
	// Shard is the share of a sharded run this directory holds, as the
	// generator knew it at the start (`schedscope load --shard --out`), so
	// that `schedscope merge` can name a shard that died before writing
	// results.json; nil otherwise.
	Shard *load.ShardRun `json:"shard,omitempty"`
	// MergedFrom lists the shards' directories, by shard index, when
	// `schedscope merge` made this directory; results.json's merged part
	// (load.Result.Merged) says what each held.
	MergedFrom []string `json:"merged_from,omitempty"`
	// Files lists the files written so far, with what each holds.
	Files []FileEntry `json:"files"`
	// Missing lists what could not be collected, and why.
	Missing []Missing `json:"missing,omitempty"`
}

// Redacted returns m with the secrets in what it records of the command
// line and the target (Args, the URLs, the command, the reasons) replaced
// by redact.Marker, so that a run directory can be shared: token flags'
// values, credential headers, URL and DSN passwords. Writer applies it to
// every manifest it writes.
func (m Manifest) Redacted() Manifest {
	m.Args = redact.Args(m.Args)
	m.Config.TargetURL = redact.URL(m.Config.TargetURL)
	m.Config.AgentURL = redact.URL(m.Config.AgentURL)
	m.Config.PprofURL = redact.URL(m.Config.PprofURL)
	m.Config.Command = redact.Text(m.Config.Command)
	m.Reason = redact.Text(m.Reason)
	if m.Shard != nil {
		sh := *m.Shard
		sh.Plan = redact.Text(sh.Plan)
		m.Shard = &sh
	}
	if m.Missing != nil {
		missing := make([]Missing, len(m.Missing))
		for i, x := range m.Missing {
			missing[i] = Missing{What: x.What, Why: redact.Text(x.Why), File: x.File}
		}
		m.Missing = missing
	}
	return m
}

// ManifestSchema is the version of the manifest's layout: 2 added Trace
// and FileEntry.Window, which derivation reads instead of the run's memory;
// 3 added RequestTag (and requests.tsv, which the analyzer joins with the
// trace's requests); 4 added Shard and MergedFrom (sharded load and its
// merge).
const ManifestSchema = 4

// ManifestConfig is the part of Config worth keeping with the results.
type ManifestConfig struct {
	TargetURL    string  `json:"target_url"`
	AgentURL     string  `json:"agent_url,omitempty"`
	PprofURL     string  `json:"pprof_url,omitempty"`
	TraceAt      float64 `json:"trace_at"`       // fraction of the last steady phase
	TraceWindowS float64 `json:"trace_window_s"` // seconds
	SnapshotWhen string  `json:"snapshot_when,omitempty"`
	PID          int     `json:"pid,omitempty"`
	Command      string  `json:"command,omitempty"`
	PollEveryS   float64 `json:"poll_every_s"`
}

// Machine describes the machine a run or a sweep ran on.
type Machine struct {
	CPUs int `json:"cpus"` // runtime.NumCPU
	// AllowedCPUs is the measuring process's CPU affinity, as a taskset list.
	AllowedCPUs string `json:"allowed_cpus,omitempty"`
	CPUModel    string `json:"cpu_model,omitempty"`
	Kernel      string `json:"kernel,omitempty"`
	GOOS        string `json:"goos"`
	GOARCH      string `json:"goarch"`
	// GoVersion is the measuring binary's runtime.Version().
	GoVersion string `json:"go_version,omitempty"`
	// LoadAverage is /proc/loadavg's first three fields at the start.
	LoadAverage string `json:"load_average,omitempty"`
}

// ProcessInfo describes the generator process.
type ProcessInfo struct {
	PID        int    `json:"pid"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
}

// TargetInfo describes the target as seen at the start of the run.
type TargetInfo struct {
	// Source is what answered inside the target: agent, pprof or none.
	Source     Source `json:"source"`
	PID        int    `json:"pid,omitempty"` // when local (--pid, --cmd)
	GoVersion  string `json:"go_version,omitempty"`
	GOMAXPROCS int    `json:"gomaxprocs,omitempty"`
	NumCPU     int    `json:"num_cpu,omitempty"`
	// FlightRecorder is the agent's flight-recorder state ("on", "off" or why not).
	FlightRecorder string   `json:"flight_recorder,omitempty"`
	Pools          []string `json:"pools,omitempty"`
}

// FileEntry is one file of a run directory.
type FileEntry struct {
	Name  string `json:"name"`
	What  string `json:"what"`
	Bytes int64  `json:"bytes"`
	// Window says what span a profile covers ("delta over the last steady
	// phase", "at the end of the last steady phase", ...); empty for other
	// files.
	Window string `json:"window,omitempty"`
}

// TraceCapture describes the execution trace of a run (Manifest.Trace).
type TraceCapture struct {
	// Mode is TraceWindow or TraceFlightRecorder.
	Mode TraceMode `json:"mode"`
	// Reason says why it was taken when (the trace-at point, the
	// condition that held, the end of the load).
	Reason string `json:"reason"`
	// StartS and EndS bound it on the load's clock (a flight-recorder
	// snapshot ends at EndS; its start is approximate).
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
}

// TraceMode is how a run's trace was captured.
type TraceMode string

const (
	// TraceWindow: a window of /debug/pprof/trace (or the agent's) during
	// the last steady phase.
	TraceWindow TraceMode = "window"
	// TraceFlightRecorder: a snapshot of the agent's flight recorder.
	TraceFlightRecorder TraceMode = "flight-recorder"
)

// Missing is one thing a run could not collect.
type Missing struct {
	What string `json:"what"`
	Why  string `json:"why"`
	// File is set when what is missing is a file of the directory that
	// could not be written whole (a full disk): its name.
	File string `json:"file,omitempty"`
}
