package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/internal/redact"
)

// MaxShards bounds Shard.Count.
const MaxShards = 10_000

// MaxStartLate is how far in the past Config.StartAt may be when Run is
// called: a shard that starts later than that would send a burst of the
// requests it should have sent already, so Run refuses it instead.
const MaxStartLate = time.Second

// Shard is one share of an open-model schedule that several generators
// send together, each on its own machine: shard Index of Count sends
// exactly the requests of the single-generator schedule whose index (0, 1,
// 2, ... in order of intended send time, counted per phase) is Index mod
// Count. Every shard generates the whole schedule (Poisson arrivals from
// the same seed) and deals itself its share, so the shards' requests
// together are the single generator's schedule, request for request. The
// zero value is the whole schedule.
type Shard struct {
	// Index is this shard's number, from 0.
	Index int `json:"index"`
	// Count is how many shards share the schedule; 0 or 1 is the whole.
	Count int `json:"count"`
}

// String renders the shard as "i/N", the form ParseShard reads.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// sharded reports whether s is a share of the schedule rather than all of it.
func (s Shard) sharded() bool { return s.Count > 1 }

// check reports whether s is a valid shard.
func (s Shard) check() error {
	switch {
	case s.Count == 0 && s.Index == 0:
		return nil
	case s.Count < 1 || s.Count > MaxShards:
		return fmt.Errorf("shard %s: the count must be in [1, %d]", s, MaxShards)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard %s: the index must be in [0, %d]", s, s.Count-1)
	}
	return nil
}

// owns reports whether the schedule's k-th request (from 0) is this shard's.
func (s Shard) owns(k int64) bool {
	return !s.sharded() || k%int64(s.Count) == int64(s.Index)
}

// ParseShard reads "i/N": shard i (from 0) of N. The error is one line.
func ParseShard(v string) (Shard, error) {
	i, n, ok := strings.Cut(v, "/")
	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	count, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want i/N, shard i (from 0) of N, e.g. 0/4", v)
	}
	s := Shard{Index: index, Count: count}
	if count < 1 {
		return s, fmt.Errorf("shard %q: the count must be in [1, %d]", v, MaxShards)
	}
	return s, s.check()
}

// Scheduler environment variables ShardFromEnv reads.
const (
	// EnvJobCompletionIndex is a Kubernetes Indexed Job's pod index.
	EnvJobCompletionIndex = "JOB_COMPLETION_INDEX"
	// EnvSlurmProcID and EnvSlurmNTasks are an srun task's rank and the
	// step's task count.
	EnvSlurmProcID = "SLURM_PROCID"
	EnvSlurmNTasks = "SLURM_NTASKS"
	// EnvSlurmStepID is set in a step srun started, and not in the batch
	// script itself, which has SLURM_PROCID 0 of the job's SLURM_NTASKS
	// too: only srun's tasks are shards.
	EnvSlurmStepID = "SLURM_STEP_ID"
	// EnvSlurmArrayID is a Slurm job array task's index.
	EnvSlurmArrayID = "SLURM_ARRAY_TASK_ID"
	// EnvSlurmArrayCount is a job array's task count; its indices are taken
	// to run from SLURM_ARRAY_TASK_MIN.
	EnvSlurmArrayCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmArrayMin   = "SLURM_ARRAY_TASK_MIN"
)

// ShardFromEnv reads the shard from a scheduler's environment, for a
// generator started without an explicit shard: a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX with count (the Job's completions, which the pod
// does not see: --shards N), else Slurm's SLURM_PROCID of SLURM_NTASKS
// in a step of more than one task (srun -n N; not in the batch script,
// where SLURM_STEP_ID is unset), else a Slurm job
// array's SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN) of count, or of
// SLURM_ARRAY_TASK_COUNT when count is 0. found is false when none of
// them is set; source names the variables used. getenv is os.LookupEnv
// outside tests.
func ShardFromEnv(getenv func(string) (string, bool), count int) (s Shard, source string, found bool, err error) {
	num := func(name string) (int, bool, error) {
		v, ok := getenv(name)
		if !ok || strings.TrimSpace(v) == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return 0, true, fmt.Errorf("$%s=%q: want a non-negative integer", name, v)
		}
		return n, true, nil
	}
	if idx, ok, err := num(EnvJobCompletionIndex); err != nil || ok {
		if err != nil {
			return Shard{}, "", true, err
		}
		if count < 1 {
			return Shard{}, "", true, fmt.Errorf("$%s=%d set by a Kubernetes Indexed Job: give the Job's completions as --shards N", EnvJobCompletionIndex, idx)
		}
		s = Shard{Index: idx, Count: count}
		return s, "$" + EnvJobCompletionIndex, true, s.check()
	}
	rank, okRank, err1 := num(EnvSlurmProcID)
	tasks, okTasks, err2 := num(EnvSlurmNTasks)
	if err := errors.Join(err1, err2); err != nil {
		return Shard{}, "", true, err
	}
	_, inStep := getenv(EnvSlurmStepID)
	if okRank && okTasks && tasks > 1 && inStep {
		if count > 0 && count != tasks {
			return Shard{}, "", true, fmt.Errorf("--shards %d but $%s=%d: srun started %d tasks", count, EnvSlurmNTasks, tasks, tasks)
		}
		s = Shard{Index: rank, Count: tasks}
		return s, "$" + EnvSlurmProcID + " of $" + EnvSlurmNTasks, true, s.check()
	}
	if id, ok, err := num(EnvSlurmArrayID); err != nil || ok {
		if err != nil {
			return Shard{}, "", true, err
		}
		lo, _, err := num(EnvSlurmArrayMin)
		if err != nil {
			return Shard{}, "", true, err
		}
		n := count
		if n == 0 {
			if n, _, err = num(EnvSlurmArrayCount); err != nil {
				return Shard{}, "", true, err
			}
		}
		if n < 1 {
			return Shard{}, "", true, fmt.Errorf("$%s=%d: give the array's size as --shards N", EnvSlurmArrayID, id)
		}
		s = Shard{Index: id - lo, Count: n}
		return s, "$" + EnvSlurmArrayID + " of the array", true, s.check()
	}
	return Shard{}, "", false, nil
}

// ParseStartAt reads a shared start instant: an RFC 3339 time
// ("2026-12-01T21:00:00Z", fractional seconds allowed), or "+D@FILE", D
// (a Go duration, e.g. 30s) after the modification time of FILE, a file
// every shard can see (a shared volume, the Slurm job's submit directory).
// now is the caller's clock, to refuse an instant more than MaxStartLate
// in the past or more than MaxWait ahead. The error is one line.
func ParseStartAt(v string, now time.Time, stat func(string) (os.FileInfo, error)) (time.Time, error) {
	var at time.Time
	if rest, ok := strings.CutPrefix(v, "+"); ok {
		ds, file, ok := strings.Cut(rest, "@")
		if !ok || file == "" {
			return time.Time{}, fmt.Errorf("start %q: +D needs the shared file it counts from: +%s@FILE", v, rest)
		}
		d, err := time.ParseDuration(ds)
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("start %q: %q is not a non-negative duration such as 30s", v, ds)
		}
		fi, err := stat(file)
		if err != nil {
			return time.Time{}, fmt.Errorf("start %q: %w", v, err)
		}
		at = fi.ModTime().Add(d)
	} else {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("start %q: want an RFC 3339 time such as 2026-12-01T21:00:00Z, or +30s@FILE", v)
		}
		at = t
	}
	if late := now.Sub(at); late > MaxStartLate {
		return time.Time{}, fmt.Errorf("start %s is %v in the past: more than %v, so this shard would start out of step with the others", at.UTC().Format(time.RFC3339Nano), late.Round(time.Millisecond), MaxStartLate)
	}
	if ahead := at.Sub(now); ahead > MaxWait {
		return time.Time{}, fmt.Errorf("start %s is %v ahead: at most %v", at.UTC().Format(time.RFC3339Nano), ahead.Round(time.Second), MaxWait)
	}
	return at, nil
}

// ShardRun is what a shard's Result says of the shard, for merging: who it
// was, where it ran, which build, which plan, and when it actually began.
type ShardRun struct {
	Shard
	// Plan describes the whole schedule the shard took its share of (rates,
	// phases, arrivals, seed, target, method, in-flight cap): shards of one
	// run have the same Plan, which merging checks.
	Plan string `json:"plan"`
	// Build identifies the generator's binary (its module version, and its
	// VCS revision when built from a checkout); shards of one run have the
	// same Build.
	Build string `json:"build"`
	// Host is the generator's host name.
	Host string `json:"host"`
	// StartAt is the shared start instant (Config.StartAt); zero when the
	// shard started at once.
	StartAt time.Time `json:"start_at,omitzero"`
	// StartLateMS is how long after StartAt, by this host's clock, the
	// shard's first phase began: what a shard itself can know of the start
	// skew. Across hosts, each clock's own error adds to it (Clock).
	// 0 when the run was interrupted before it began.
	StartLateMS float64 `json:"start_late_ms"`
	// Clock is this host's clock discipline at the start.
	Clock ClockSync `json:"clock"`
	// TargetClock is this host's clock compared with the target's, measured
	// while waiting for StartAt; nil when there was no shared start.
	TargetClock *TargetClock `json:"target_clock,omitempty"`
}

// ClockSync is what the kernel says of the host's clock: whether a time
// daemon (NTP, chrony, PTP) keeps it synchronized, and its own estimate of
// the offset from true time. Shards on one host share a clock, so their
// start skew is measured exactly; across hosts the skew is known only to
// within the sum of the two clocks' errors.
type ClockSync struct {
	// Source is "adjtimex" when read from the kernel, else why not.
	Source string `json:"source"`
	// Synchronized is the kernel's view: a daemon disciplines the clock.
	Synchronized bool `json:"synchronized"`
	// EstErrorMS and MaxErrorMS are the kernel's estimated and maximum
	// error of the clock, in milliseconds.
	EstErrorMS float64 `json:"est_error_ms"`
	MaxErrorMS float64 `json:"max_error_ms"`
}

// buildVersion identifies the running binary: its main module's version,
// and the VCS revision (with "+dirty" for a modified checkout) when the
// build recorded one.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v
}

// planText describes c's whole schedule (defaults applied) for ShardRun.Plan.
func planText(c *Config) string {
	rates := make([]string, len(c.Rates))
	for i, r := range c.Rates {
		rates[i] = strconv.FormatFloat(r, 'g', -1, 64)
	}
	return fmt.Sprintf("%s %s, rates %s req/s (whole schedule), %s arrivals seed %d, warm-up %v, %v each, pause %v, max in-flight %d per shard, timeout %v, %d shards",
		c.Method, redact.URL(c.URL), strings.Join(rates, ","), c.Arrivals, c.Seed, c.Warmup, c.Duration, c.Pause, c.MaxInflight, c.Timeout, max(c.Shard.Count, 1))
}

// startClock sets the run's clock (start, startUnix) and, with
// Config.StartAt, waits for it: the clock's zero is then the shared
// instant, read on this host's wall clock and kept on its monotonic one,
// and startLate is how long after it the wait ended.
func (r *runner) startClock() {
	now := time.Now()
	if r.cfg.StartAt.IsZero() {
		r.start, r.startUnix = now, now.UnixNano()
		return
	}
	r.clock = readClockSync()
	if r.cfg.StartAt.Sub(now) >= clockProbeLead {
		probeCtx, cancel := context.WithDeadline(r.ctx, r.cfg.StartAt.Add(-clockProbeLead/4))
		tc := probeTargetClock(probeCtx, r.cfg)
		cancel()
		r.targetClock = &tc
	} else {
		r.targetClock = &TargetClock{Error: fmt.Sprintf("clock probe: the start left %v, less than the %v it needs", r.cfg.StartAt.Sub(now).Round(time.Millisecond), clockProbeLead)}
	}
	now = time.Now()
	r.start = now.Add(r.cfg.StartAt.Sub(now)) // keeps now's monotonic reading
	r.startUnix = r.cfg.StartAt.UnixNano()
	if r.sleepUntil(0, true) {
		r.startLate = r.nowNS()
	} // else interrupted while waiting: it never started, and is not late
}

// phaseStart is when phase p begins on the run's clock. A shard's phase
// (or one of a run with a shared start) begins at its planned offset,
// waiting for it when early, so that every shard's phases, and each
// phase's arrivals, keep the shared schedule: a phase's setup (its
// recorders, a CPU and GC reading) then delays no arrival, and a due
// arrival is sent late, with its send lag counted. Other phases begin
// now, the closed model's after the last user of the phase before has
// finished.
func (r *runner) phaseStart(p phasePlan) int64 {
	if r.cfg.Users > 0 || (!r.cfg.Shard.sharded() && r.cfg.StartAt.IsZero()) {
		return r.nowNS()
	}
	at := int64(p.offset)
	if r.nowNS() < at {
		r.sleepUntil(at, true)
	}
	return at
}

// shardRun is the Result's account of the shard.
func (r *runner) shardRun() *ShardRun {
	sr := shardRunOf(r.cfg)
	sr.StartLateMS, sr.Clock, sr.TargetClock = float64(r.startLate)/1e6, r.clock, r.targetClock
	if sr.Clock.Source == "" {
		sr.Clock = readClockSync()
	}
	return sr
}

// ShardRun describes the shard c will run (its share, plan, build, host
// and shared start) before it runs, for a record written at the start
// (a results directory's manifest), so that a shard whose process dies
// can still be named. The clock and lateness are known only after the
// start: Result.Shard has them. A bad Config is an error (ErrConfig).
func (c Config) ShardRun() (*ShardRun, error) {
	d, err := c.withDefaults()
	if err != nil {
		return nil, &configError{err}
	}
	return shardRunOf(&d), nil
}

// shardRunOf is ShardRun for a Config with defaults applied.
func shardRunOf(d *Config) *ShardRun {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown (" + err.Error() + ")"
	}
	return &ShardRun{Shard: d.Shard, Plan: planText(d), Build: buildVersion(), Host: host, StartAt: d.StartAt}
}
