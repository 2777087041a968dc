package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
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

// SweepVersion is the version of the sweep directory format this
// schedscope writes. Version 2 added the closed-model, model and fixture-flag
// axes (SweepPlan.Users, Models, Sets; StepKey.Users, Model, Set) and
// SweepStep.P95MS; every field it added is optional, so a version 1
// directory reads as a version 2 one whose only axes are GOMAXPROCS and the
// rates. Version 3 added the CPU-limit axis and an auto GOMAXPROCS (0)
// (SweepPlan.CPULimits, StepKey.CPULimit, SweepStep.Throttle and
// RuntimeGOMAXPROCS), also optional. ReadSweep reads all three; an older
// schedscope refuses a newer version.
const SweepVersion = 3

// sweepVersionsRead are the versions ReadSweep accepts.
var sweepVersionsRead = [...]int{1, 2, 3}

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

	// GOMAXPROCS is the GOMAXPROCS axis; 0 is "auto": GOMAXPROCS left
	// unset, so the target's runtime chooses (Go >= 1.25 follows the
	// cgroup's CPU limit), and each step records what it chose
	// (SweepStep.RuntimeGOMAXPROCS).
	GOMAXPROCS []int `json:"gomaxprocs"`
	// CPULimits is the CPU-limit axis, in CPUs (each target process starts
	// in a fresh cgroup with a quota of L x 100 ms per 100 ms); empty when
	// not swept. CgroupVersion (1 or 2) is the hierarchy the quotas used.
	CPULimits     []float64 `json:"cpu_limits,omitempty"`
	CgroupVersion int       `json:"cgroup_version,omitempty"`
	// LimitOnParent says each quota was set on a cgroup above the target's
	// own (the target in a child cgroup without one), as a pod-level limit
	// with an unlimited container would be: the Go runtime reads only its
	// own cgroup's limit (golang/go#81180), so GOMAXPROCS auto does not
	// follow it.
	LimitOnParent bool `json:"limit_on_parent,omitempty"`
	// TargetP99MS (optional) is the p99 latency the report sizes the CPU
	// limit for: the smallest limit that carries each load within it.
	TargetP99MS float64 `json:"target_p99_ms,omitempty"`
	// Arrivals is the open model's arrivals: "" (uniform, evenly spaced)
	// or "poisson" (exponential gaps from the load generator's default seed).
	Arrivals string `json:"arrivals,omitempty"`
	// Rates is the open-model load axis (req/s); Users the closed-model one
	// (users, each sending its next request ThinkS after the last answer).
	// Exactly one of them is set.
	Rates  []float64 `json:"rates"`
	Users  []int     `json:"users,omitempty"`
	ThinkS float64   `json:"think_s,omitempty"`
	// Models is the fixture's concurrency-model axis (each value passed as
	// --model to the fixture); Sets the fixture-flag axes (each value
	// passed as --NAME=VALUE). Empty when not swept.
	Models     []string  `json:"models,omitempty"`
	Sets       []SetAxis `json:"sets,omitempty"`
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

// SetAxis is one swept fixture setting: a fixture flag (--NAME=VALUE for
// each value in turn) or, when Name starts with QueryAxis, the scenario's
// query parameter (?NAME=VALUE on the load's URL).
type SetAxis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// QueryAxis prefixes a --set axis over the scenario's query parameter
// rather than a fixture flag: --set '?mode=serial,parallel' loads
// /split?mode=serial on one line and /split?mode=parallel on the other,
// each against a fresh fixture process.
const QueryAxis = "?"

// QueryParam returns the query parameter an axis named name sweeps, and
// whether it is one (false for a fixture flag).
func QueryParam(name string) (string, bool) { return strings.CutPrefix(name, QueryAxis) }

// Closed reports whether the plan's load axis is closed-model users.
func (p *SweepPlan) Closed() bool { return len(p.Users) > 0 }

// Think returns the closed model's think time.
func (p *SweepPlan) Think() time.Duration { return seconds(p.ThinkS) }

// Warmup, Duration and Pause return the plan's durations.
func (p *SweepPlan) Warmup() time.Duration   { return seconds(p.WarmupS) }
func (p *SweepPlan) Duration() time.Duration { return seconds(p.DurationS) }
func (p *SweepPlan) Pause() time.Duration    { return seconds(p.PauseS) }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Steps returns every step of the plan in run order: iterations outermost,
// then the lines (models, then CPU limits, then GOMAXPROCS, then each --set axis in the
// plan's order), then the load axis (rates or users), so every line sees
// the machine at every stage of the sweep. A version 1 plan (GOMAXPROCS and
// rates only) gives the steps it always gave.
func (p *SweepPlan) Steps() []StepKey {
	var keys []StepKey
	for it := 1; it <= p.Iterations; it++ {
		for _, line := range p.Lines() {
			k := line.stepKey(it)
			if p.Closed() {
				for _, u := range p.Users {
					k.Users = u
					keys = append(keys, k)
				}
				continue
			}
			for _, r := range p.Rates {
				k.Rate = r
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// Lines returns every combination of the plan's non-load axes, in run
// order: models, then CPU limits, then GOMAXPROCS, then the --set axes.
func (p *SweepPlan) Lines() []Line {
	models := p.Models
	if len(models) == 0 {
		models = []string{""}
	}
	limits := p.CPULimits
	if len(limits) == 0 {
		limits = []float64{0}
	}
	sets := []Settings{{}}
	for _, ax := range p.Sets {
		var next []Settings
		for _, s := range sets {
			for _, v := range ax.Values {
				next = append(next, s.With(ax.Name, v))
			}
		}
		sets = next
	}
	var out []Line
	for _, m := range models {
		for _, lim := range limits {
			for _, g := range p.GOMAXPROCS {
				for _, s := range sets {
					out = append(out, Line{GOMAXPROCS: g, Model: m, CPULimit: lim, Set: s})
				}
			}
		}
	}
	return out
}

// Line is one combination of a sweep's non-load axes: a line of its plots,
// whose x axis is the load (rates or users). Model and Set are empty when
// not swept; GOMAXPROCS 0 is auto; CPULimit is the target's CPU quota in
// CPUs, 0 when none. Line is comparable.
type Line struct {
	GOMAXPROCS int
	Model      string
	CPULimit   float64
	Set        Settings
}

func (l Line) stepKey(iteration int) StepKey {
	return StepKey{GOMAXPROCS: l.GOMAXPROCS, Iteration: iteration, Model: l.Model, CPULimit: l.CPULimit, Set: l.Set}
}

// Label names the line for people: "pool, GOMAXPROCS 2, workers=20", or
// "GOMAXPROCS 2" in a GOMAXPROCS-only sweep. cpus, when > 0, is the CPU
// count targets could use: a GOMAXPROCS above it is labelled so
// ("GOMAXPROCS 4 (> 2 CPUs)").
func (l Line) Label(cpus int) string { return l.LabelRuntime(cpus, 0) }

// LabelRuntime is Label with an auto GOMAXPROCS's value as the runtime
// chose it, when runtime > 0: "limit 1 CPU, GOMAXPROCS auto (2)".
func (l Line) LabelRuntime(cpus, runtime int) string {
	var parts []string
	if l.Model != "" {
		parts = append(parts, l.Model)
	}
	if l.CPULimit > 0 {
		parts = append(parts, CPULimitLabel(l.CPULimit))
	}
	g := GOMAXPROCSLabel(l.GOMAXPROCS, cpus)
	if l.GOMAXPROCS == 0 && runtime > 0 {
		g += fmt.Sprintf(" (%d)", runtime)
	}
	parts = append(parts, g)
	for _, kv := range l.Set.Pairs() {
		parts = append(parts, kv[0]+"="+kv[1])
	}
	return strings.Join(parts, ", ")
}

// GOMAXPROCSLabel is "GOMAXPROCS n", with " (> c CPUs)" when n exceeds
// cpus > 0; "GOMAXPROCS auto" for 0.
func GOMAXPROCSLabel(n, cpus int) string {
	if n == 0 {
		return "GOMAXPROCS auto"
	}
	if cpus > 0 && n > cpus {
		return fmt.Sprintf("GOMAXPROCS %d (> %d CPUs)", n, cpus)
	}
	return fmt.Sprintf("GOMAXPROCS %d", n)
}

// DefaultGOMAXPROCS is the GOMAXPROCS the Go runtime (1.25 and later)
// chooses by default for a process with cpus CPUs (sched_getaffinity) in a
// cgroup whose own CPU limit is limitCores (0: none): the smaller of cpus
// and the limit rounded up, the limit never below 2 (runtime/cgroup_linux.go,
// adjustCgroupGOMAXPROCS).
func DefaultGOMAXPROCS(cpus int, limitCores float64) int {
	if limitCores <= 0 {
		return cpus
	}
	return min(cpus, max(2, int(math.Ceil(limitCores))))
}

// CPULimitLabel is "limit 0.5 CPU", "limit 2 CPUs".
func CPULimitLabel(limit float64) string {
	if limit > 1 {
		return fmt.Sprintf("limit %g CPUs", limit)
	}
	return fmt.Sprintf("limit %g CPU", limit)
}

// Line returns the step's line (the key without iteration and load).
func (k StepKey) Line() Line {
	return Line{GOMAXPROCS: k.GOMAXPROCS, Model: k.Model, CPULimit: k.CPULimit, Set: k.Set}
}

// StepKey names one step: a load (a rate, or a number of closed-model
// users) offered on one line (GOMAXPROCS, model, fixture flags) in one
// iteration. It is comparable.
type StepKey struct {
	GOMAXPROCS int     `json:"gomaxprocs"`
	Iteration  int     `json:"iteration"` // 1-based
	Rate       float64 `json:"offered_rate"`
	// Users is the closed-model load (Rate is then 0).
	Users int `json:"users,omitempty"`
	// Model is the fixture's --model, "" when not swept.
	Model string `json:"model,omitempty"`
	// CPULimit is the target's CPU quota in CPUs, 0 when not swept.
	CPULimit float64 `json:"cpu_limit,omitempty"`
	// Set holds the swept fixture flags' values, empty when none.
	Set Settings `json:"set,omitzero"`
}

// File is the step's file name inside StepsDir. A version 1 key (no users,
// model or set) keeps its version 1 name,
// gomaxprocs-GGG_iter-II_rate-R.json; the other axes add _model-M,
// _cpu-L and _NAME=VALUE before _iter, users replace the rate (_users-U),
// and an auto GOMAXPROCS is gomaxprocs-auto.
func (k StepKey) File() string {
	var b strings.Builder
	if k.GOMAXPROCS == 0 {
		b.WriteString("gomaxprocs-auto")
	} else {
		fmt.Fprintf(&b, "gomaxprocs-%03d", k.GOMAXPROCS)
	}
	if k.Model != "" {
		b.WriteString("_model-" + k.Model)
	}
	if k.CPULimit > 0 {
		fmt.Fprintf(&b, "_cpu-%g", k.CPULimit)
	}
	for _, kv := range k.Set.Pairs() {
		// A query axis ("?mode") is written "q-mode": no "?" in a file name.
		b.WriteString("_" + strings.Replace(kv[0], "?", "q-", 1) + "=" + kv[1])
	}
	fmt.Fprintf(&b, "_iter-%02d", k.Iteration)
	if k.Users > 0 {
		fmt.Fprintf(&b, "_users-%d.json", k.Users)
	} else {
		fmt.Fprintf(&b, "_rate-%g.json", k.Rate)
	}
	return b.String()
}

// LogFile is the name, inside LogsDir, of the log of the target process
// that ran the step's line in its iteration.
func (k StepKey) LogFile() string {
	name := k.File()
	return name[:strings.LastIndex(name, "_iter-")+len("_iter-00")] + ".log"
}

// Settings is a set of fixture flag values, NAME -> VALUE, kept as one
// canonical string ("a=1,b=2", names sorted) so that StepKey stays
// comparable; in JSON it is an object. Names and values must not hold ','
// or '=' (package sweep allows letters, digits and . : + - only).
type Settings struct{ s string }

// With returns s with name set to value.
func (s Settings) With(name, value string) Settings {
	m := s.Map()
	m[name] = value
	return settingsOf(m)
}

// Get returns name's value.
func (s Settings) Get(name string) (string, bool) {
	v, ok := s.Map()[name]
	return v, ok
}

// IsZero reports whether s holds nothing.
func (s Settings) IsZero() bool { return s.s == "" }

// String is the canonical form, "a=1,b=2".
func (s Settings) String() string { return s.s }

// Pairs returns the name, value pairs, names sorted.
func (s Settings) Pairs() [][2]string {
	if s.s == "" {
		return nil
	}
	var out [][2]string
	for _, kv := range strings.Split(s.s, ",") {
		n, v, _ := strings.Cut(kv, "=")
		out = append(out, [2]string{n, v})
	}
	return out
}

// Map returns a new map of s.
func (s Settings) Map() map[string]string {
	m := map[string]string{}
	for _, kv := range s.Pairs() {
		m[kv[0]] = kv[1]
	}
	return m
}

func settingsOf(m map[string]string) Settings {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + m[n]
	}
	return Settings{strings.Join(parts, ",")}
}

// MarshalJSON writes s as an object.
func (s Settings) MarshalJSON() ([]byte, error) { return json.Marshal(s.Map()) }

// UnmarshalJSON reads an object of strings.
func (s *Settings) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("fixture settings: %w", err)
	}
	for n, v := range m {
		if n == "" || strings.ContainsAny(n+v, ",=") {
			return fmt.Errorf("fixture setting %q=%q: names and values must be non-empty and hold no ',' or '='", n, v)
		}
	}
	*s = settingsOf(m)
	return nil
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
	// P95MS is 0 in sweeps written before version 2.
	P95MS float64 `json:"p95_ms,omitempty"`
	P99MS float64 `json:"p99_ms"`
	// MeanMS is the mean latency (0 before version 2): the closed model's
	// Little's-law figure, users / (think + mean latency).
	MeanMS float64 `json:"mean_ms,omitempty"`
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
	// RuntimeGOMAXPROCS is the GOMAXPROCS the target's runtime reported
	// (through the agent) on an auto line; 0 when not auto or unknown.
	RuntimeGOMAXPROCS int `json:"runtime_gomaxprocs,omitempty"`

	// Throttle is the CPU quota's cpu.stat over the step (a CPU-limit
	// line); nil when there was no quota.
	Throttle *Throttle `json:"throttle,omitempty"`
}

// Throttle is a cgroup's CPU-quota enforcement over a step, from its
// cpu.stat read at the step's start and end.
type Throttle struct {
	// Periods is the 100 ms enforcement periods in which the target had
	// runnable threads; Throttled those in which it ran out of quota.
	Periods   int64 `json:"periods"`
	Throttled int64 `json:"throttled"`
	// ThrottledS is the time its threads waited for the next period,
	// summed over threads, seconds.
	ThrottledS float64 `json:"throttled_s"`
	// QuotaUse is the target's CPU use over its quota: TargetCPUCores /
	// the limit (1 means it used all of it); 0 when unknown.
	QuotaUse float64 `json:"quota_use,omitempty"`
}

// Share is Throttled / Periods, 0 without periods.
func (t *Throttle) Share() float64 {
	if t == nil || t.Periods == 0 {
		return 0
	}
	return float64(t.Throttled) / float64(t.Periods)
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
	b, err := ReadFile(filepath.Join(dir, SweepFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: not a sweep directory (no %s)", dir, SweepFile)
		}
		return nil, fmt.Errorf("sweep plan: %w", err)
	}
	if err := json.Unmarshal(b, &s.Plan); err != nil {
		return nil, fmt.Errorf("sweep plan %s: %w", filepath.Join(dir, SweepFile), err)
	}
	if !slices.Contains(sweepVersionsRead[:], s.Plan.Version) {
		return nil, fmt.Errorf("sweep plan %s: version %d, this schedscope reads %d to %d", filepath.Join(dir, SweepFile), s.Plan.Version, sweepVersionsRead[0], SweepVersion)
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
		b, err := regular.ReadAtMost(path, MaxSweepStepBytes)
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

// WriteJSONFile writes v as indented JSON to path atomically
// (WriteFileAtomic).
func WriteJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}
