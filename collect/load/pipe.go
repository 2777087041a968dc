package load

import (
	"net"
	"sync"
	"time"
)

// pipeConn is an open-model connection of the lean client whose requests
// are written by the driver goroutine itself, at their send time, while the
// connection's own reader goroutine reads the responses. Compared with
// handing each request to a worker goroutine, this saves a goroutine
// wake-up and a channel hand-off per request, which is most of the cost of
// paced traffic.
//
// Ownership: the reader goroutine owns the leanConn (its bufio.Reader and
// the conn field). The driver only writes a request and sets the read
// deadline, on the conn it captured while claiming an idle pipeConn.
type pipeConn struct {
	r  *runner
	lc leanConn
	sh *shard

	mu    sync.Mutex
	state pipeState
	t     ticket // the request in flight, when busy
	sent  int64
}

type pipeState uint8

const (
	pipeIdle pipeState = iota // reader waiting, no request in flight
	pipeBusy                  // a request in flight; the reader owns its outcome
	pipeDead                  // closed; the reader has exited or is exiting
)

// claimIdle claims an idle connection for t, stamping its send time, and
// returns it with the conn to write on; nil when none is idle.
func (r *runner) claimIdle(t ticket) (*pipeConn, net.Conn, time.Time) {
	for {
		r.pipeMu.Lock()
		n := len(r.pipeIdle)
		if n == 0 {
			r.pipeMu.Unlock()
			return nil, nil, time.Time{}
		}
		c := r.pipeIdle[n-1]
		r.pipeIdle = r.pipeIdle[:n-1]
		r.pipeMu.Unlock()
		c.mu.Lock()
		if c.state == pipeIdle && c.lc.conn != nil {
			now := time.Now()
			c.state, c.t, c.sent = pipeBusy, t, int64(now.Sub(r.start))
			conn := c.lc.conn
			c.mu.Unlock()
			return c, conn, now
		}
		c.mu.Unlock() // died while idle: drop it
	}
}

// dispatchPipe sends t now, on an idle connection or, when none is idle, on
// a new one dialled by a new reader goroutine.
func (r *runner) dispatchPipe(t ticket) {
	c, conn, now := r.claimIdle(t)
	if c == nil {
		id := r.workers
		r.workers++
		c = &pipeConn{r: r, lc: leanConn{t: r.target}, sh: &r.shards[id%len(r.shards)], state: pipeBusy, t: t}
		r.wg.Add(1)
		go c.loop()
		return
	}
	// A failure here (the target closed the idle connection) also fails the
	// reader's pending read; the reader then retries once on a fresh
	// connection, so the request is not lost.
	if err := conn.SetReadDeadline(now.Add(r.timeout)); err != nil {
		r.conns.remove(conn)
		return
	}
	if _, err := conn.Write(r.target.request); err != nil {
		r.conns.remove(conn)
	}
}

// loop dials, sends the first request, then reads responses until the
// connection dies or the run stops.
func (c *pipeConn) loop() {
	r := c.r
	defer r.wg.Done()
	c.mu.Lock()
	t := c.t
	c.mu.Unlock()
	if !c.dialAndSend(t) {
		return
	}
	for {
		status, keep, started, err := c.lc.readResponse()
		c.mu.Lock()
		st, t, sent, reused := c.state, c.t, c.sent, c.lc.used
		if st == pipeIdle {
			c.state = pipeDead // a close or garbage while idle: no request lost
		}
		c.mu.Unlock()
		if st != pipeBusy {
			c.closeConn()
			return
		}
		ps := r.states[t.phase]
		if err != nil {
			c.closeConn()
			if reused && !started && !isTimeout(err) && !r.stopping() {
				// A stale keep-alive connection: retry once on a fresh one.
				if c.dialAndSend(t) {
					continue
				}
				return
			}
			c.markDead()
			r.finish(c.sh, ps, t.intended, sent, 0, err)
			return
		}
		c.lc.used = true
		if keep {
			if err := c.lc.conn.SetReadDeadline(time.Time{}); err != nil {
				keep = false
			}
		}
		if !keep {
			c.closeConn()
			c.markDead()
			r.finish(c.sh, ps, t.intended, sent, status, nil)
			return
		}
		c.mu.Lock()
		c.state = pipeIdle
		c.mu.Unlock()
		// Idle before the slot is released, so the driver finds this
		// connection instead of dialling another.
		r.pipeMu.Lock()
		r.pipeIdle = append(r.pipeIdle, c)
		r.pipeMu.Unlock()
		r.finish(c.sh, ps, t.intended, sent, status, nil)
	}
}

// closeConn closes the connection; c.lc.conn is written under c.mu because
// the driver reads it while claiming.
func (c *pipeConn) closeConn() {
	c.mu.Lock()
	c.lc.close()
	c.mu.Unlock()
}

// dialAndSend opens a connection and writes t's request on it, recording
// the failure and reporting false when that fails.
func (c *pipeConn) dialAndSend(t ticket) bool {
	r := c.r
	now := time.Now()
	sent := int64(now.Sub(r.start))
	c.mu.Lock()
	c.sent = sent
	c.mu.Unlock()
	deadline := now.Add(r.timeout)
	c.mu.Lock() // c is not in the idle list: the driver never waits here
	err := c.lc.dial(r.ctx, deadline)
	c.mu.Unlock()
	if err == nil {
		if err = c.lc.conn.SetReadDeadline(deadline); err == nil {
			_, err = c.lc.conn.Write(r.target.request)
		}
	}
	if err != nil {
		c.closeConn()
		c.markDead()
		r.finish(c.sh, r.states[t.phase], t.intended, sent, 0, err)
		return false
	}
	return true
}

func (c *pipeConn) markDead() {
	c.mu.Lock()
	c.state = pipeDead
	c.mu.Unlock()
}
