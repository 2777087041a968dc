package figures

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HLog is a run's load.hlog read back: each steady phase's histograms,
// merged over its intervals, so its percentiles are exact (the same
// histograms results.json's were taken from).
type HLog struct {
	// Phases are the steady phases in the run's order.
	Phases []hlogPhase
}

// hlogPhase is one steady phase's merged histograms (ns); nil when the log
// has no interval of that kind.
type hlogPhase struct {
	latency, service, sendLag *hdrhistogram.Histogram
}

// phase returns the i-th steady phase, empty when the log lacks it (or l is
// nil).
func (l *HLog) phase(i int) hlogPhase {
	if l == nil || i >= len(l.Phases) {
		return hlogPhase{}
	}
	return l.Phases[i]
}

// Latency returns the i-th steady phase's latency histogram (ns, from
// intended send); nil when the log has none.
func (l *HLog) Latency(i int) *hdrhistogram.Histogram { return l.phase(i).latency }

// ReadHLog reads the HDR interval log load.HLog writes: a comment "#phase N
// NAME (KIND)" precedes every run of intervals of plan phase N (written
// again whenever the log switches phase, since a phase's late responses
// arrive during the next one), intervals are untagged (latency from
// intended send), "service" or "send-lag"; the warm-up's ("warmup") are
// skipped. A line cut by a killed run ends the log without an error; any
// other malformed line is an error naming its line number.
func ReadHLog(path string) (*HLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type acc struct{ lat, svc, lag *hdrhistogram.Histogram }
	byPlan := map[int]*acc{}
	cur, steady := -1, false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	// bad is a malformed interval line: an error unless it is the last
	// line, which a killed run may have cut short.
	var bad error
	for sc.Scan() {
		n++
		if bad != nil {
			return nil, bad
		}
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "#phase "); ok {
			num, kind, ok := parsePhaseComment(rest)
			if !ok {
				return nil, fmt.Errorf("%s:%d: malformed phase comment %q", path, n, line)
			}
			cur, steady = num, kind == "steady"
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, `"`) {
			continue
		}
		tag := ""
		if rest, ok := strings.CutPrefix(line, "Tag="); ok {
			i := strings.IndexByte(rest, ',')
			if i < 0 {
				bad = fmt.Errorf("%s:%d: malformed interval line", path, n)
				continue
			}
			tag, line = rest[:i], rest[i+1:]
		}
		fields := strings.Split(line, ",")
		if len(fields) != 4 {
			bad = fmt.Errorf("%s:%d: an interval line has 4 fields, this one %d", path, n, len(fields))
			continue
		}
		h, err := hdrhistogram.Decode([]byte(fields[3]))
		if err != nil {
			bad = fmt.Errorf("%s:%d: %v", path, n, err)
			continue
		}
		if cur < 0 || !steady || tag == "warmup" {
			continue
		}
		a := byPlan[cur]
		if a == nil {
			a = &acc{}
			byPlan[cur] = a
		}
		dst := map[string]**hdrhistogram.Histogram{"": &a.lat, "service": &a.svc, "send-lag": &a.lag}[tag]
		if dst == nil {
			continue
		}
		if *dst == nil {
			*dst = h
		} else {
			(*dst).Merge(h)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var plans []int
	for p := range byPlan {
		plans = append(plans, p)
	}
	slices.Sort(plans)
	l := &HLog{}
	for _, p := range plans {
		a := byPlan[p]
		l.Phases = append(l.Phases, hlogPhase{latency: a.lat, service: a.svc, sendLag: a.lag})
	}
	return l, nil
}

// parsePhaseComment reads "N NAME (KIND)".
func parsePhaseComment(s string) (num int, kind string, ok bool) {
	numText, rest, found := strings.Cut(s, " ")
	if !found {
		return 0, "", false
	}
	num, err := strconv.Atoi(numText)
	if err != nil || !strings.HasSuffix(rest, ")") {
		return 0, "", false
	}
	i := strings.LastIndex(rest, "(")
	if i < 0 {
		return 0, "", false
	}
	return num, rest[i+1 : len(rest)-1], true
}
