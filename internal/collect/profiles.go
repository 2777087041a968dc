package collect

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/google/pprof/profile"

	"github.com/schedscope/schedscope/internal/regular"
	"github.com/schedscope/schedscope/internal/target"
)

// maxProfileProto bounds a captured profile once gunzipped: four times the
// largest gzipped profile a run takes (target.DefaultMaxProfile), so a
// small answer that inflates without end is refused before it is parsed.
const maxProfileProto = 4 * target.DefaultMaxProfile

// parseProfile parses a captured profile, gzipped or not, refusing one
// larger than maxProfileProto once gunzipped (profile.ParseData inflates
// without a bound).
func parseProfile(b []byte) (*profile.Profile, error) {
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		raw, err := io.ReadAll(io.LimitReader(zr, maxProfileProto+1))
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		if len(raw) > maxProfileProto {
			return nil, fmt.Errorf("profile: larger than its %s limit once gunzipped", regular.FormatBytes(maxProfileProto))
		}
		b = raw
	}
	p, err := profile.ParseData(b)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return p, nil
}

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
