//go:build !(linux && (amd64 || arm64))

package load

import "errors"

// evLoops is the Linux event-loop engine (evloops_linux.go); elsewhere the
// runner uses a goroutine per connection.
type evLoops struct{}

func newEvLoops(*runner, int) (*evLoops, error) {
	return nil, errors.New("the event loop needs Linux on amd64 or arm64")
}

func (*evLoops) count() int                     { return 0 }
func (*evLoops) pace(*phaseState, int64, int64) {}
func (*evLoops) closedPace(*phaseState, int64)  {}
func (*evLoops) serveUntil(int64, bool)         {}
func (*evLoops) shutdown()                      {}
func (*evLoops) close()                         {}
