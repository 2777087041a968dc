package collect

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// ProfileSummary is the top of one profile, as analysis.json and
// summary.txt list it.
type ProfileSummary struct {
	Name string `json:"name"` // block, mutex, fgprof, goroutine
	File string `json:"file"` // in the run directory
	// Window says what the profile covers ("delta over the steady phase",
	// "instant at the end of the steady phase", ...).
	Window string `json:"window"`
	// SampleType is the value ranked ("delay/nanoseconds", "time/nanoseconds",
	// "goroutine/count").
	SampleType string  `json:"sample_type"`
	Total      float64 `json:"total"`
	// Top lists the biggest sites (block, mutex, goroutine: the first frame
	// outside the runtime and sync packages) or stacks (fgprof), biggest first.
	Top []ProfileSite `json:"top"`
	// Note explains an empty or partial profile.
	Note string `json:"note,omitempty"`
}

// ProfileSite is one site or stack of a profile.
type ProfileSite struct {
	// Site is "function file:line" of the frame the entry is grouped by.
	Site string `json:"site"`
	// Stack is the leaf-first stack of the biggest sample at this site,
	// cut to 8 frames, as "function file:line".
	Stack []string `json:"stack"`
	Value float64  `json:"value"`
	// Share is Value / Total.
	Share float64 `json:"share"`
	// Count is the first sample value (contentions, samples, goroutines) when
	// the ranked value is another one.
	Count float64 `json:"count,omitempty"`
}

// maxTop is how many sites a summary lists.
const maxTop = 10

// deltaProfile returns end minus start: what a cumulative profile (block,
// mutex) gathered between the two. A nil start returns end.
func deltaProfile(start, end *profile.Profile) (*profile.Profile, error) {
	if start == nil {
		return end, nil
	}
	neg := start.Copy()
	neg.Scale(-1)
	d, err := profile.Merge([]*profile.Profile{end, neg})
	if err != nil {
		return nil, fmt.Errorf("profile delta: %w", err)
	}
	d.Scale(1) // drops the samples that cancelled out
	d.TimeNanos = start.TimeNanos
	if end.TimeNanos > start.TimeNanos {
		d.DurationNanos = end.TimeNanos - start.TimeNanos
	}
	return d, nil
}

// encodeProfile writes p as a gzipped proto.
func encodeProfile(p *profile.Profile) ([]byte, error) {
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return nil, fmt.Errorf("encoding profile: %w", err)
	}
	return buf.Bytes(), nil
}

// summarize ranks p's samples by its last sample type (delay, time) or its
// only one. byStack groups by the whole stack (fgprof), else by the first
// frame outside runtime/sync.
func summarize(name, file, window string, p *profile.Profile, byStack bool) ProfileSummary {
	s := ProfileSummary{Name: name, File: file, Window: window}
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
		s.Top = append(s.Top, ProfileSite{Site: a.site, Stack: a.stack, Value: a.value, Share: a.value / s.Total, Count: a.cnt})
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
