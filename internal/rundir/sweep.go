package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/schedscope/schedscope/internal/redact"
	"github.com/schedscope/schedscope/internal/regular"
)

// The files of a sweep directory.
const (
	// SweepFile is the sweep's plan and the machine it ran on, written first.
	SweepFile = "sweep.json"
	// StepsDir holds one JSON file per finished step, written when the step
	// ends (to a temporary name, then renamed), so an interrupted sweep keeps
	// every finished step.
	StepsDir = "steps"
	// LogsDir holds each target process's stdout and stderr.
	LogsDir = "logs"
)

// SweepVersion is the version of the sweep directory format.
const SweepVersion = 1

// SweepPlan is what a sweep measures and how; it is written to sweep.json before
// any load is sent and is authoritative when a sweep is resumed.
type SweepPlan struct {
	Version int `json:"version"`
	// Command is the target's shell command line ("" with Argv or --live
	// on a running target).
	Command string   `json:"command,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	// Fixture is the --fixture shorthand, when used ("sleep --model pool").
	Fixture string `json:"fixture,omitempty"`
	URL     string `json:"url"`
	// Agent is the in-target agent's base URL, "" when none.
	Agent string `json:"agent,omitempty"`
	// AgentOptional: an agent that does not answer is ignored (the
	// fixture's, which a build may not mount).
	AgentOptional bool `json:"agent_optional,omitempty"`
	// Live: one process, GOMAXPROCS changed through the agent.
	Live bool `json:"live,omitempty"`
	// Scenario and Model describe a fixture target ("sleep", "pool").
	Scenario string `json:"scenario,omitempty"`
	Model    string `json:"model,omitempty"`
	// ConcurrencyLimit is the target's known cap on requests in service
	// (a pool's workers); 0 when unknown.
	ConcurrencyLimit int `json:"concurrency_limit,omitempty"`

	GOMAXPROCS []int     `json:"gomaxprocs"`
	Rates      []float64 `json:"rates"`
	Iterations int       `json:"iterations"`
	WarmupS    float64   `json:"warmup_s"`
	DurationS  float64   `json:"duration_s"`
	PauseS     float64   `json:"pause_s"`
	// Pinned says targets are pinned with taskset when the machine has
	// enough CPUs for their GOMAXPROCS.
	Pinned bool `json:"pinned"`
	// TargetCPUs is the CPU list targets were pinned within ("" = every
	// CPU the sweep could use).
	TargetCPUs string `json:"target_cpus,omitempty"`

	Machine Machine   `json:"machine"`
	Started time.Time `json:"started"`
}

// Warmup, Duration and Pause return the plan's durations.
func (p *SweepPlan) Warmup() time.Duration   { return seconds(p.WarmupS) }
func (p *SweepPlan) Duration() time.Duration { return seconds(p.DurationS) }
func (p *SweepPlan) Pause() time.Duration    { return seconds(p.PauseS) }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Steps returns every step of the plan in run order: iterations outermost,
// then GOMAXPROCS, then rates, so each GOMAXPROCS value sees the machine at
// every stage of the sweep.
func (p *SweepPlan) Steps() []StepKey {
	var keys []StepKey
	for it := 1; it <= p.Iterations; it++ {
		for _, g := range p.GOMAXPROCS {
			for _, r := range p.Rates {
				keys = append(keys, StepKey{GOMAXPROCS: g, Iteration: it, Rate: r})
			}
		}
	}
	return keys
}

// StepKey names one step: a rate offered at one GOMAXPROCS in one iteration.
type StepKey struct {
	GOMAXPROCS int     `json:"gomaxprocs"`
	Iteration  int     `json:"iteration"` // 1-based
	Rate       float64 `json:"offered_rate"`
}

// File is the step's file name inside StepsDir.
func (k StepKey) File() string {
	return fmt.Sprintf("gomaxprocs-%03d_iter-%02d_rate-%g.json", k.GOMAXPROCS, k.Iteration, k.Rate)
}

// SweepStep is one finished step: what the load generator measured at one offered
// rate, and what the target used meanwhile.
type SweepStep struct {
	StepKey
	// TargetPID is the target process; Pinned its taskset list ("" unpinned).
	TargetPID int       `json:"target_pid,omitempty"`
	Pinned    string    `json:"pinned,omitempty"`
	Start     time.Time `json:"start"`
	DurationS float64   `json:"duration_s"`

	Sent     int64 `json:"sent"`
	OK       int64 `json:"ok"`
	Errors   int64 `json:"errors"`   // every non-2xx outcome, timeouts included
	Timeouts int64 `json:"timeouts"` // of Errors, requests that timed out
	NotSent  int64 `json:"not_sent"`
	// OKPerSec is the load generator's 2xx/s: the rate at which the target
	// answered the phase's requests with 2xx (first to last completion), so
	// a saturated target shows its ceiling.
	OKPerSec float64 `json:"ok_per_s"`
	// AnsweredPerSec is the phase's requests answered 2xx, whenever the
	// answer came, per second of the phase: it reaches the offered rate
	// when every request was served, even in a short phase.
	AnsweredPerSec float64 `json:"answered_per_s"`
	P50MS          float64 `json:"p50_ms"`
	P99MS          float64 `json:"p99_ms"`
	// ServiceP50MS is the median time from each request's actual send to
	// its response: the target's own latency, without the send lag.
	ServiceP50MS float64 `json:"service_p50_ms"`
	MaxMS        float64 `json:"max_ms"`

	// GeneratorVerdict is true when the generator judged itself a limit
	// (its generator-bound verdict, for any reason). GeneratorBound is true
	// when that was material (see MaterialGeneratorBound): such steps are
	// not used for the knee. GeneratorNote says why.
	GeneratorVerdict bool     `json:"generator_verdict"`
	GeneratorBound   bool     `json:"generator_bound"`
	GeneratorNote    string   `json:"generator_note,omitempty"`
	Verdicts         []string `json:"verdicts,omitempty"`
	// GeneratorCPUCores is the generator's CPU use during the step, in cores.
	GeneratorCPUCores float64 `json:"generator_cpu_cores,omitempty"`

	// TargetCPUS is the target's user+system CPU during the step, seconds;
	// CPUPerRequestUS is that divided by OK, microseconds. Zero when /proc
	// was unreadable.
	TargetCPUS float64 `json:"target_cpu_s"`
	// TargetCPUCores is TargetCPUS over the wall time between the two
	// readings (the phase and its stragglers): the cores the target used.
	TargetCPUCores  float64 `json:"target_cpu_cores,omitempty"`
	CPUPerRequestUS float64 `json:"cpu_per_request_us"`
	// RSSBytes is the target's resident set at the end of the step;
	// PeakRSSBytes its high-water mark so far; Threads its OS threads.
	RSSBytes     int64 `json:"rss_bytes"`
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	Threads      int   `json:"threads,omitempty"`
	// MachineBusy is the share of all the machine's CPUs that was busy
	// during the step (/proc/stat), whoever used it; 0 when unknown.
	MachineBusy float64 `json:"machine_busy,omitempty"`

	// Agent is the in-target agent's figures at the end of the step.
	Agent *AgentFigures `json:"agent,omitempty"`
}

// AgentFigures are the scheduler figures read from the in-target agent.
type AgentFigures struct {
	GOMAXPROCS float64 `json:"gomaxprocs"`
	Goroutines float64 `json:"goroutines"`
	Threads    float64 `json:"threads"`
	// GoroutinesCreated is the count created during the step.
	GoroutinesCreated float64 `json:"goroutines_created,omitempty"`
}

// Sweep is a loaded sweep directory.
type Sweep struct {
	Dir   string
	Plan  SweepPlan
	Steps []SweepStep // in the plan's order; missing steps are absent
}

// Done returns the set of steps already in s.
func (s *Sweep) Done() map[StepKey]bool {
	done := make(map[StepKey]bool, len(s.Steps))
	for _, st := range s.Steps {
		done[st.StepKey] = true
	}
	return done
}

// Remaining returns the plan's steps not yet finished.
func (s *Sweep) Remaining() []StepKey {
	done := s.Done()
	var out []StepKey
	for _, k := range s.Plan.Steps() {
		if !done[k] {
			out = append(out, k)
		}
	}
	return out
}

// ReadSweep reads a sweep directory: its plan, redacted (SweepPlan.Redacted),
// and every finished step. It returns an error naming the file when the
// plan is missing or a file is corrupt.
func ReadSweep(dir string) (*Sweep, error) {
	var s Sweep
	s.Dir = dir
	b, err := regular.Read(filepath.Join(dir, SweepFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: not a sweep directory (no %s)", dir, SweepFile)
		}
		return nil, fmt.Errorf("sweep plan: %w", err)
	}
	if err := json.Unmarshal(b, &s.Plan); err != nil {
		return nil, fmt.Errorf("sweep plan %s: %w", filepath.Join(dir, SweepFile), err)
	}
	if s.Plan.Version != SweepVersion {
		return nil, fmt.Errorf("sweep plan %s: version %d, this schedscope reads %d", filepath.Join(dir, SweepFile), s.Plan.Version, SweepVersion)
	}
	s.Plan = s.Plan.Redacted()
	entries, err := os.ReadDir(filepath.Join(dir, StepsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sweep steps: %w", err)
	}
	order := map[StepKey]int{}
	for i, k := range s.Plan.Steps() {
		order[k] = i
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, StepsDir, e.Name())
		b, err := regular.Read(path)
		if err != nil {
			return nil, fmt.Errorf("sweep step: %w", err)
		}
		var st SweepStep
		if err := json.Unmarshal(b, &st); err != nil {
			return nil, fmt.Errorf("sweep step %s: %w", path, err)
		}
		s.Steps = append(s.Steps, st)
	}
	sort.SliceStable(s.Steps, func(i, j int) bool {
		oi, iok := order[s.Steps[i].StepKey]
		oj, jok := order[s.Steps[j].StepKey]
		if iok != jok {
			return iok
		}
		return oi < oj
	})
	return &s, nil
}

// Redacted returns p with the secrets in its target (the command, argv,
// the --fixture shorthand, the URLs) replaced by redact.Marker, so that a
// sweep directory can be shared. WriteSweepPlan writes plans this way; a
// resumed sweep takes the secrets again from the command line (see
// package sweep).
func (p SweepPlan) Redacted() SweepPlan {
	p.Command = redact.Text(p.Command)
	p.Argv = redact.Args(p.Argv)
	p.Fixture = redact.Text(p.Fixture)
	p.URL = redact.URL(p.URL)
	p.Agent = redact.URL(p.Agent)
	return p
}

// WriteSweepPlan writes p, redacted, to dir's sweep.json.
func WriteSweepPlan(dir string, p SweepPlan) error {
	return WriteJSONFile(filepath.Join(dir, SweepFile), p.Redacted())
}

// WriteJSONFile writes v to path atomically: a temporary file in the same
// directory, synced, then renamed over path.
func WriteJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(append(b, '\n'))
	merr := f.Chmod(0o644) // CreateTemp makes it 0600
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, merr, serr, cerr); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
