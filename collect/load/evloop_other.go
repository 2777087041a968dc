//go:build !(linux && (amd64 || arm64))

package load

import "errors"

// evLoop is the Linux event loop (evloop_linux.go); elsewhere the runner
// uses a goroutine per connection.
type evLoop struct{}

func newEvLoop(*runner) (*evLoop, error) {
	return nil, errors.New("the event loop needs Linux on amd64 or arm64")
}

func (*evLoop) pace(*phaseState, int64, int64) {}
func (*evLoop) closedPace(*phaseState, int64)  {}
func (*evLoop) serveUntil(int64, bool)         {}
func (*evLoop) shutdown()                      {}
func (*evLoop) close()                         {}
