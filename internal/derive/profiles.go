package derive

import (
	"fmt"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/schedscope/schedscope/internal/rundir"
)

// maxTop is how many sites a summary lists.
const maxTop = 10

// summarize ranks p's samples by its last sample type (delay, time) or its
// only one. byStack groups by the whole stack (fgprof), else by the first
// frame outside runtime/sync.
func summarize(name, file, window string, p *profile.Profile, byStack bool) rundir.ProfileSummary {
	s := rundir.ProfileSummary{Name: name, File: file, Window: window}
	if p == nil || len(p.SampleType) == 0 {
		s.Note = "no profile"
		return s
	}
	vi := len(p.SampleType) - 1
	s.SampleType = p.SampleType[vi].Type + "/" + p.SampleType[vi].Unit
	type acc struct {
		site       string
		stack      []string
		value, cnt float64
		biggest    float64
	}
	groups := map[string]*acc{}
	for _, smp := range p.Sample {
		v := float64(smp.Value[vi])
		if v <= 0 {
			continue
		}
		s.Total += v
		frames := sampleFrames(smp)
		key := siteOf(frames)
		if byStack {
			key = strings.Join(frames, "\n")
		}
		a := groups[key]
		if a == nil {
			a = &acc{site: siteOf(frames)}
			groups[key] = a
		}
		a.value += v
		if vi > 0 {
			a.cnt += float64(smp.Value[0])
		}
		if v > a.biggest {
			a.biggest, a.stack = v, frames[:min(len(frames), 8)]
		}
	}
	all := make([]*acc, 0, len(groups))
	for _, a := range groups {
		all = append(all, a)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].value != all[j].value {
			return all[i].value > all[j].value
		}
		return all[i].site < all[j].site
	})
	for _, a := range all[:min(len(all), maxTop)] {
		s.Top = append(s.Top, rundir.ProfileSite{Site: a.site, Stack: a.stack, Value: a.value, Share: a.value / s.Total, Count: a.cnt})
	}
	if s.Total == 0 {
		s.Note = "empty"
	}
	return s
}

// sampleFrames returns a sample's frames leaf-first as "function file:line",
// inlined frames included.
func sampleFrames(smp *profile.Sample) []string {
	var out []string
	for _, loc := range smp.Location {
		for _, ln := range loc.Line {
			if ln.Function == nil {
				continue
			}
			out = append(out, fmt.Sprintf("%s %s:%d", ln.Function.Name, shortFile(ln.Function.Filename), ln.Line))
		}
	}
	return out
}

// siteOf is the first frame not in the runtime, sync or internal packages:
// the code that blocked, rather than the primitive it blocked in.
func siteOf(frames []string) string {
	for _, f := range frames {
		if !isRuntimeFrame(f) {
			return f
		}
	}
	if len(frames) > 0 {
		return frames[0]
	}
	return "(no stack)"
}

func isRuntimeFrame(frame string) bool {
	for _, p := range []string{"runtime.", "runtime/", "sync.", "sync/", "internal/", "time.Sleep", "net.", "net/http.(*conn)", "io.", "bufio.", "os.", "syscall.", "database/sql."} {
		if strings.HasPrefix(frame, p) {
			return true
		}
	}
	return false
}

// shortFile keeps the last two path elements.
func shortFile(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		if j := strings.LastIndexByte(path[:i], '/'); j >= 0 {
			return path[j+1:]
		}
	}
	return path
}
