package rundir

import (
	"fmt"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/regular"
)

// HLog is a run's load.hlog read back: each steady phase's histograms,
// merged over its intervals, so its percentiles are exact (the same
// histograms results.json's were taken from).
type HLog struct {
	// Phases are the steady phases in the run's order.
	Phases []HLogPhase
	// Cut: the log's last line was cut short (a killed run) and dropped.
	Cut bool
}

// HLogPhase is one steady phase of load.hlog, its intervals merged (ns);
// a histogram is nil when the log has no interval of that tag.
type HLogPhase struct {
	// Plan is the phase's index in the run's plan (the warm-up counts);
	// Name its name.
	Plan int
	Name string
	// Latency is from intended send (the untagged intervals), Service
	// from the actual send, SendLag the lag between the two.
	Latency, Service, SendLag *hdrhistogram.Histogram
}

// Phase returns the i-th steady phase (from 0); the zero HLogPhase when
// the log lacks it or l is nil.
func (l *HLog) Phase(i int) HLogPhase {
	if l == nil || i < 0 || i >= len(l.Phases) {
		return HLogPhase{}
	}
	return l.Phases[i]
}

// ReadHLog reads a run's HDR interval log (load.HLog's format, read by
// load.ScanHLog) at path, a regular file (package regular, so a named pipe
// is refused rather than waited on), merging each steady phase's
// intervals as it goes: a long run's log is never held whole. The
// warm-up's intervals are skipped. A last line cut by a killed run ends
// the log (Cut); any other malformed line is an error naming the file and
// the line, and wraps fs.ErrNotExist when the file is absent.
func ReadHLog(path string) (*HLog, error) {
	type acc struct {
		name          string
		lat, svc, lag *hdrhistogram.Histogram
	}
	byPlan := map[int]*acc{}
	cut, err := ScanHLog(path, func(e load.HLogEntry) error {
		if e.Kind != load.Steady || e.Tag == "warmup" {
			return nil
		}
		a := byPlan[e.Phase]
		if a == nil {
			a = &acc{name: e.Name}
			byPlan[e.Phase] = a
		}
		var dst **hdrhistogram.Histogram
		switch e.Tag {
		case "":
			dst = &a.lat
		case "service":
			dst = &a.svc
		case "send-lag":
			dst = &a.lag
		default:
			return nil
		}
		if *dst == nil {
			*dst = e.Hist
		} else {
			(*dst).Merge(e.Hist)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	plans := make([]int, 0, len(byPlan))
	for p := range byPlan {
		plans = append(plans, p)
	}
	slices.Sort(plans)
	l := &HLog{Cut: cut}
	for _, p := range plans {
		a := byPlan[p]
		l.Phases = append(l.Phases, HLogPhase{Plan: p, Name: a.name, Latency: a.lat, Service: a.svc, SendLag: a.lag})
	}
	return l, nil
}

// ScanHLog reads the HDR interval log at path, a regular file (package
// regular), giving each interval to each in file order (load.ScanHLog,
// whose cut it returns). Its errors name the file, and wrap fs.ErrNotExist
// when it is absent.
func ScanHLog(path string, each func(load.HLogEntry) error) (cut bool, err error) {
	f, err := regular.Open(path)
	if err != nil {
		return false, err // names the file
	}
	defer f.Close()
	cut, err = load.ScanHLog(f, each)
	if err != nil {
		return cut, fmt.Errorf("%s: %w", path, err)
	}
	return cut, nil
}

// HLogMismatch is a steady phase whose count of latencies in load.hlog is
// not the count results.json's percentiles cover: the two files disagree
// (a log cut short, or a results.json of another run), so the figures
// taken from one are not the other's.
type HLogMismatch struct {
	// Phase is the steady phase's index (from 0), Name its name.
	Phase int    `json:"phase"`
	Name  string `json:"name"`
	// HLog is how many latencies load.hlog holds for it (0 when it lacks
	// the phase); Results how many results.json's latency percentiles
	// cover (load.Percentiles.Count).
	HLog    int64 `json:"hlog_count"`
	Results int64 `json:"results_count"`
}

// String says the disagreement in one line.
func (m HLogMismatch) String() string {
	return fmt.Sprintf("%s holds %d latencies of steady phase %d (%s), %s %d: the two files disagree",
		HLogFile, m.HLog, m.Phase+1, m.Name, ResultsFile, m.Results)
}

// CheckHLog compares each steady phase's count of latencies in l with the
// count res's percentiles cover and returns the phases where they differ,
// in order; nil when they agree, or when either is nil (nothing to
// compare).
func CheckHLog(l *HLog, res *load.Result) []HLogMismatch {
	if l == nil || res == nil {
		return nil
	}
	var out []HLogMismatch
	for i, ph := range res.Phases {
		var n int64
		if h := l.Phase(i).Latency; h != nil {
			n = h.TotalCount()
		}
		if n != ph.Latency.Count {
			out = append(out, HLogMismatch{Phase: i, Name: ph.Name, HLog: n, Results: ph.Latency.Count})
		}
	}
	for i := len(res.Phases); i < len(l.Phases); i++ {
		if h := l.Phases[i].Latency; h != nil && h.TotalCount() > 0 {
			out = append(out, HLogMismatch{Phase: i, Name: l.Phases[i].Name, HLog: h.TotalCount()})
		}
	}
	return out
}
