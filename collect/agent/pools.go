package agent

import (
	"database/sql"
	"io"
	"net/http"
	"net/http/httptrace"
	"runtime/trace"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// PoolStats is one reading of a pool's usage. Cumulative fields are totals
// since the pool was created; a field the pool cannot know is zero, and
// Known says which optional ones it filled.
type PoolStats struct {
	// Kind names the adapter: "sql.DB", "http.Transport" or "func".
	Kind string `json:"kind"`
	// Size is the pool's capacity (max open connections, workers); 0 means
	// unbounded.
	Size int `json:"size"`
	// InUse is how many members are busy now.
	InUse int `json:"in_use"`
	// Idle is how many are open but not busy now (connections); 0 when not applicable.
	Idle int `json:"idle"`
	// Waiting is how many callers are waiting for a member now. A *sql.DB
	// cannot tell; see Known.Waiting.
	Waiting int `json:"waiting"`
	// WaitCount and WaitDuration are the number of acquisitions that had to
	// wait and the total time they waited, cumulative.
	WaitCount    int64         `json:"wait_count"`
	WaitDuration time.Duration `json:"wait_ns"`
	// Waits is the distribution of those waits, when the adapter keeps one
	// (TransportPool does; database/sql counts only their number and total).
	Waits *WaitHistogram `json:"waits,omitempty"`
	// Acquired and HoldDuration are the number of acquisitions and the total
	// time members were held, cumulative; with them the mean hold time (and so
	// the Little's-law capacity Size / mean hold) needs no outside figure.
	Acquired     int64         `json:"acquired"`
	HoldDuration time.Duration `json:"hold_ns"`
	// Known says which optional fields the adapter could fill.
	Known Known `json:"known"`
}

// WaitHistogram is a distribution of pool waits: Counts[i] waits took at
// most Bounds[i] and more than Bounds[i-1]. Waits longer than the last
// bound are in PoolStats.WaitCount only.
type WaitHistogram struct {
	Bounds []time.Duration `json:"bounds_ns"`
	Counts []int64         `json:"counts"`
}

// WaitBounds returns the bounds of the wait histograms the adapters keep:
// 50 µs doubling up to about 6.6 s (18 buckets).
func WaitBounds() []time.Duration {
	b := make([]time.Duration, waitBuckets)
	for i := range b {
		b[i] = 50 * time.Microsecond << i
	}
	return b
}

// waitBuckets is len(WaitBounds()).
const waitBuckets = 18

// waitBucket is the index of the bucket holding a wait of d, waitBuckets
// when d is above the last bound.
func waitBucket(d time.Duration) int {
	for i := range waitBuckets {
		if d <= 50*time.Microsecond<<i {
			return i
		}
	}
	return waitBuckets
}

// Known says which optional PoolStats fields hold real values.
type Known struct {
	Waiting  bool `json:"waiting"`  // Waiting is the current number of waiters
	Acquired bool `json:"acquired"` // Acquired and HoldDuration are counted
}

// Pool is anything that can report its usage. Implementations must be safe
// for concurrent use: the agent calls PoolStats from request goroutines.
type Pool interface {
	PoolStats() PoolStats
}

// PoolFunc adapts a function to Pool, for any pool the adapters do not cover
// (a worker pool, a semaphore). The function should set Kind to "func" or
// leave it empty, in which case "func" is filled in.
type PoolFunc func() PoolStats

// PoolStats calls f.
func (f PoolFunc) PoolStats() PoolStats {
	s := f()
	if s.Kind == "" {
		s.Kind = "func"
	}
	return s
}

var _ Pool = PoolFunc(nil)

// DBPool adapts a *sql.DB: Size is SetMaxOpenConns (0: unbounded), InUse and
// Idle are its connections, WaitCount and WaitDuration its waits. database/sql
// counts neither current waiters nor hold times, so Known is all false;
// schedscope derives the mean number waiting from WaitDuration's rate and the
// mean hold from InUse and the request rate (Little's law).
func DBPool(db *sql.DB) Pool { return dbPool{db} }

type dbPool struct{ db *sql.DB }

func (p dbPool) PoolStats() PoolStats {
	s := p.db.Stats()
	return PoolStats{
		Kind:         "sql.DB",
		Size:         s.MaxOpenConnections,
		InUse:        s.InUse,
		Idle:         s.Idle,
		WaitCount:    s.WaitCount,
		WaitDuration: s.WaitDuration,
	}
}

// TransportPool measures the connections an *http.Transport hands out. Use it
// as the client's RoundTripper (client.Transport = tp): each request is traced
// with net/http/httptrace from asking for a connection (GetConn) to getting one
// (GotConn, the wait) and from then until its response body is closed or the
// round trip fails (the hold). Size is the transport's MaxConnsPerHost, so the
// figures are per host when the client talks to one host, which is the case
// a pool limit matters for. While an execution trace is being recorded, each
// round trip also marks its wait for a connection as Wait does, under the
// pool's name (see Named). It is safe for concurrent use.
type TransportPool struct {
	t    *http.Transport
	name string // set by Named; "" means "http"

	inUse, waiting       atomic.Int64
	waitCount, acquired  atomic.Int64
	waitNanos, holdNanos atomic.Int64
	// waits[i] counts waits in bucket i of WaitBounds; each is added after
	// waitCount, and read before it, so a reading's buckets never hold
	// more than its count.
	waits [waitBuckets]atomic.Int64
}

// NewTransportPool returns a TransportPool over t, named "http" (see Named).
// t must not be nil.
func NewTransportPool(t *http.Transport) *TransportPool { return &TransportPool{t: t} }

// Named sets the pool name under which RoundTrip marks its connection waits
// in an execution trace (region WaitRegionPrefix+name) and returns p, as in
// agent.NewTransportPool(t).Named("payments"). Give it the name the pool is
// registered under with Pools, so the analyzer's waits and the pool figures
// line up; the default, and an empty name, is "http". Call it before the
// first RoundTrip: it is not safe for use concurrently with one.
func (p *TransportPool) Named(name string) *TransportPool {
	p.name = name
	return p
}

// poolName is the name of p's wait regions.
func (p *TransportPool) poolName() string {
	if p.name == "" {
		return "http"
	}
	return p.name
}

var (
	_ Pool              = (*TransportPool)(nil)
	_ http.RoundTripper = (*TransportPool)(nil)
)

// Transport returns the underlying transport.
func (p *TransportPool) Transport() *http.Transport { return p.t }

// PoolStats reports the connections held by requests in flight.
func (p *TransportPool) PoolStats() PoolStats {
	waits := &WaitHistogram{Bounds: WaitBounds(), Counts: make([]int64, waitBuckets)}
	for i := range waits.Counts {
		waits.Counts[i] = p.waits[i].Load()
	}
	return PoolStats{
		Waits:        waits,
		Kind:         "http.Transport",
		Size:         p.t.MaxConnsPerHost,
		InUse:        int(p.inUse.Load()),
		Waiting:      int(p.waiting.Load()),
		WaitCount:    p.waitCount.Load(),
		WaitDuration: time.Duration(p.waitNanos.Load()),
		Acquired:     p.acquired.Load(),
		HoldDuration: time.Duration(p.holdNanos.Load()),
		Known:        Known{Waiting: true, Acquired: true},
	}
}

// RoundTrip sends req through the transport, counting its connection. While
// an execution trace is being recorded, the wait for the connection is a
// region of type WaitRegionPrefix+name under req's context, from the start
// of RoundTrip to the connection (httptrace's GotConn) or, when none came,
// to the transport's answer.
func (p *TransportPool) RoundTrip(req *http.Request) (*http.Response, error) {
	h := &heldConn{pool: p}
	if trace.IsEnabled() {
		// net/http calls GotConn on the goroutine that called RoundTrip, for
		// HTTP/1 (Transport.getConn) and HTTP/2 (http2Transport.RoundTripOpt)
		// alike, so the region ends on the goroutine that began it. (A round
		// tripper registered with Transport.RegisterProtocol gets the request
		// before net/http looks for a connection; GotConn then fires only if
		// it calls it, and the region ends when it returns.)
		h.waitRegion = trace.StartRegion(req.Context(), WaitRegionPrefix+p.poolName())
	}
	ctx := httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GetConn: h.getConn,
		GotConn: h.gotConn,
	})
	resp, err := p.t.RoundTrip(req.WithContext(ctx))
	h.endWait() // a no-op after GotConn; otherwise no connection came
	if err != nil {
		h.release()
		return nil, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, h: h}
	return resp, nil
}

// heldConn tracks one round trip's connection; its methods may run on the
// transport's goroutines, hence the mutex.
type heldConn struct {
	pool *TransportPool

	mu         sync.Mutex
	asked      time.Time // GetConn
	got        time.Time // GotConn
	released   bool
	waitRegion *trace.Region // nil when not traced or ended
}

// endWait ends the wait region, if one is open. Call it only on the
// goroutine that called RoundTrip.
func (h *heldConn) endWait() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.endWaitLocked()
}

func (h *heldConn) endWaitLocked() {
	if h.waitRegion != nil {
		h.waitRegion.End()
		h.waitRegion = nil
	}
}

// countWait counts one wait of d.
func (p *TransportPool) countWait(d time.Duration) {
	p.waitCount.Add(1)
	p.waitNanos.Add(int64(d))
	if i := waitBucket(d); i < waitBuckets {
		p.waits[i].Add(1)
	}
}

func (h *heldConn) getConn(string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.asked.IsZero() && !h.released {
		h.asked = time.Now()
		h.pool.waiting.Add(1)
	}
}

func (h *heldConn) gotConn(info httptrace.GotConnInfo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.endWaitLocked()
	if !h.got.IsZero() || h.released {
		return
	}
	h.got = time.Now()
	if !h.asked.IsZero() {
		h.pool.waiting.Add(-1)
		if wait := h.got.Sub(h.asked); wait > 50*time.Microsecond || !info.Reused {
			// A reused idle connection is handed over at once; anything else
			// (a dial, or a wait for MaxConnsPerHost) is a wait.
			h.pool.countWait(wait)
		}
	}
	h.pool.inUse.Add(1)
	h.pool.acquired.Add(1)
}

func (h *heldConn) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return
	}
	h.released = true
	switch {
	case !h.got.IsZero():
		h.pool.inUse.Add(-1)
		h.pool.holdNanos.Add(int64(time.Since(h.got)))
	case !h.asked.IsZero():
		h.pool.waiting.Add(-1) // gave up waiting
		h.pool.countWait(time.Since(h.asked))
	}
}

type releasingBody struct {
	io.ReadCloser
	h *heldConn
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.h.release()
	return err
}

// Pools is a registry of named pools. The zero value is empty and ready; it
// is safe for concurrent use.
type Pools struct {
	mu    sync.Mutex
	pools map[string]Pool
}

// Register adds p under name, replacing any pool of that name. A nil p
// removes the name.
func (r *Pools) Register(name string, p Pool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p == nil {
		delete(r.pools, name)
		return
	}
	if r.pools == nil {
		r.pools = make(map[string]Pool)
	}
	r.pools[name] = p
}

// Names returns the registered names, sorted.
func (r *Pools) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.pools))
	for n := range r.pools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Stats reads every registered pool. The pools are read outside the
// registry's lock, so a slow pool does not block registration.
func (r *Pools) Stats() map[string]PoolStats {
	r.mu.Lock()
	pools := make(map[string]Pool, len(r.pools))
	for n, p := range r.pools {
		pools[n] = p
	}
	r.mu.Unlock()
	out := make(map[string]PoolStats, len(pools))
	for n, p := range pools {
		out[n] = p.PoolStats()
	}
	return out
}
