package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// ClockProbePath is the path the clock probe asks the target for: one that
// no server is expected to serve, so that each probe costs the target a
// cheap "404 Not Found", whose Date header is all the probe reads.
const ClockProbePath = "/.well-known/schedscope-clock-probe"

// Clock probe bounds: the probe asks at most every clockProbeEvery, for at
// most clockProbeFor (a second's edge always falls within it), and runs
// only when the shared start leaves clockProbeLead for it.
const (
	clockProbeEvery = time.Millisecond
	clockProbeFor   = 1100 * time.Millisecond
	clockProbeLead  = 1500 * time.Millisecond
)

// TargetClock is a shard's clock compared with the target's, the one clock
// every shard talks to, so that shards on different hosts can be put on
// one time line. The target's HTTP Date header counts whole seconds: the
// probe asks for it about every millisecond until it changes, and the
// instant the target's clock reached that second lies between the sending
// of the last request that saw the old second and the answer to the first
// that saw the new one.
type TargetClock struct {
	// OffsetMS is this host's clock less the target's, in milliseconds,
	// at the middle of that bracket; UncertaintyMS is half the bracket.
	// Both are zero when Error says why there is no estimate.
	OffsetMS      float64 `json:"offset_ms"`
	UncertaintyMS float64 `json:"uncertainty_ms"`
	// Requests is how many probe requests it took.
	Requests int `json:"requests"`
	// Error says why no estimate was made (no Date header, no time left
	// before the start, the target unreachable); "" when one was.
	Error string `json:"error,omitempty"`
}

// probeTargetClock estimates this host's clock offset to the target's
// from the target's Date headers (TargetClock), before a shared start. It
// sends at most clockProbeFor / clockProbeEvery requests to
// ClockProbePath, one at a time, with cfg's headers (Host among them),
// and gives up at ctx's end.
func probeTargetClock(ctx context.Context, cfg *Config) TargetClock {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return TargetClock{Error: err.Error()}
	}
	probe := url.URL{Scheme: u.Scheme, Host: u.Host, User: u.User, Path: ClockProbePath}
	tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: cfg.InsecureTLS}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	type sample struct {
		sent, answered time.Time
		date           time.Time
	}
	ask := func() (sample, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, probe.String(), nil)
		if err != nil {
			return sample{}, err
		}
		for _, h := range cfg.Header {
			if http.CanonicalHeaderKey(h.Name) == "Host" {
				req.Host = h.Value
			} else {
				req.Header.Add(h.Name, h.Value)
			}
		}
		s := sample{sent: time.Now()}
		resp, err := client.Do(req)
		if err != nil {
			return s, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		s.answered = time.Now()
		if s.date, err = http.ParseTime(resp.Header.Get("Date")); err != nil {
			return s, fmt.Errorf("the target's answer has no Date header to compare clocks with (%q)", resp.Header.Get("Date"))
		}
		return s, nil
	}
	var tc TargetClock
	prev, err := ask()
	tc.Requests = 1
	deadline := time.Now().Add(clockProbeFor)
	wait := time.NewTimer(clockProbeEvery)
	defer wait.Stop()
	for err == nil {
		if time.Now().After(deadline) {
			err = errors.New("the target's Date header did not change within 1.1 s")
			break
		}
		wait.Reset(clockProbeEvery)
		select {
		case <-ctx.Done():
			err = ctx.Err()
			continue
		case <-wait.C:
		}
		s, askErr := ask()
		tc.Requests++
		if askErr != nil {
			err = askErr
			break
		}
		if s.date.After(prev.date) {
			// The target's clock read s.date at some instant in [prev.sent, s.answered].
			lo, hi := prev.sent, s.answered
			mid := lo.Add(hi.Sub(lo) / 2)
			tc.OffsetMS = float64(mid.Sub(s.date)) / 1e6
			tc.UncertaintyMS = float64(hi.Sub(lo)) / 2e6
			return tc
		}
		prev = s
	}
	tc.Error = "clock probe: " + err.Error()
	return tc
}
