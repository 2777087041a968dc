package pintest

import "time"

// WithBlindControl replaces the positive control with one that claims the
// kinds it was given but pins nothing, so tests can see the helper refuse
// to pass when the detector misses the control.
func WithBlindControl(kinds ...string) Option {
	return func(c *config) {
		c.control = func(time.Duration) []string { return kinds }
	}
}
