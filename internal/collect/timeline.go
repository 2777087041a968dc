package collect

import (
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

func loadPoint(p load.Progress) rundir.LoadPoint {
	return rundir.LoadPoint{
		Phase: p.Name, Kind: p.Kind, Step: p.Step, OfferedRate: p.OfferedRate, Users: p.Users,
		Sent: p.Sent, NotSent: p.NotSent, Completed: p.Completed, OK: p.OK, Errors: p.Errors.Total(),
		InFlight: p.InFlight, OKPerS: p.OKPerS,
		P50MS: durMS(p.IntervalP50), P99MS: durMS(p.IntervalP99),
	}
}

func durMS(d time.Duration) float64 { return float64(d) / 1e6 }

// Live is one moment of a run for a live dashboard (the TUI): the load
// generator's latest progress with the latest poll of the target. Run sends
// one with each load progress snapshot (about 4 a second) and one after each
// poll. It is a value; the receiver may keep it.
type Live struct {
	// Load is the load generator's latest snapshot (load.Progress:
	// phase, offered rate, sent/not-sent/2xx/errors, in flight, interval and
	// phase p50/p99, 2xx/s).
	Load load.Progress
	// At is the time on the load's clock.
	At time.Duration
	// Target is the latest poll's figures: goroutines by state, threads,
	// GOMAXPROCS, sched-latency p99 (sampled histogram), GC pauses, pools
	// (in use / size / waiting), target CPU per request and RSS. Its Has*
	// flags are false before the first poll or without an agent / local PID.
	Target rundir.TargetPoint
	// PolledAt is the load-clock time of the poll behind Target; -1 before any.
	PolledAt time.Duration
	// Source is what answers inside the target (agent, pprof, none).
	Source rundir.Source
	// Capture says what is being captured now ("trace window 12.0-17.0 s",
	// "fgprof", ...), empty when nothing is.
	Capture string
	// Notes are the live conclusions that hold, each typed by its kind:
	// a saturated pool (rundir.KindPoolSaturated, one per such pool in
	// Target.Pools), a target that stopped answering (KindTargetGone), the
	// snapshot condition holding (KindSnapshotCondition), the snapshot being
	// taken (KindSnapshot).
	Notes []rundir.Note
}
