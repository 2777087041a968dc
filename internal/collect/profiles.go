package collect

import (
	"bytes"
	"fmt"

	"github.com/google/pprof/profile"
)

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
