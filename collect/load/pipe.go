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

// maxDials bounds the connections being dialled at once. Without a bound,
// a burst of arrivals that finds no idle connection (a cold start at 20,000
// req/s, or a target that briefly stalls) dials one connection per
// request: the dials eat the CPU the responses need, fewer connections come
// back idle, more are dialled, and the generator ends with thousands of
// connections and a send lag of seconds. With the bound, a request due
// while maxDials dials are under way waits in a FIFO for the first
// connection that comes free (its send lag says how long), as an HTTP/1.1
// client's connection pool does.
const maxDials = 8

// claim takes an idle connection for t, stamping its send time, and
// returns it with the conn to write on. When none is idle it returns nil
// and either starts a dial for t (dial true) or queues t for the next
// connection that comes free (dial false).
func (r *runner) claim(t ticket) (c *pipeConn, conn net.Conn, now time.Time, dial bool) {
	r.pipeMu.Lock()
	for {
		n := len(r.pipeIdle)
		if n == 0 {
			break
		}
		c := r.pipeIdle[n-1]
		r.pipeIdle = r.pipeIdle[:n-1]
		c.mu.Lock()
		if c.state == pipeIdle && c.lc.conn != nil {
			r.pipeMu.Unlock()
			now := time.Now()
			c.state, c.t, c.sent = pipeBusy, t, int64(now.Sub(r.start))
			conn := c.lc.conn
			c.mu.Unlock()
			return c, conn, now, false
		}
		c.mu.Unlock() // died while idle: drop it
	}
	defer r.pipeMu.Unlock()
	if r.dialing < maxDials {
		r.dialing++
		return nil, nil, time.Time{}, true
	}
	r.pipePending = append(r.pipePending, t)
	return nil, nil, time.Time{}, false
}

// ticketQueue holds the requests that fell due while no connection was
// idle and maxDials were being dialled, oldest first. Both engines keep
// one; it is not safe for concurrent use.
type ticketQueue []ticket

// pop removes and returns the oldest request.
func (q *ticketQueue) pop() (ticket, bool) {
	if len(*q) == 0 {
		return ticket{}, false
	}
	t := (*q)[0]
	(*q)[0] = ticket{}
	*q = (*q)[1:]
	if len(*q) == 0 {
		*q = (*q)[:0:0] // let the backing array go
	}
	return t, true
}

// drop releases the in-flight slots of the queued requests when the run
// stops: they were never sent, so they have no outcome.
func (q *ticketQueue) drop(r *runner) {
	for _, t := range *q {
		r.states[t.phase].inflight.Add(-1)
		r.inflight.Add(-1)
	}
	*q = nil
}

// dispatchPipe sends t now: on an idle connection, on a new one dialled by
// a new reader goroutine, or, when maxDials dials are under way, on the
// first connection that comes free.
func (r *runner) dispatchPipe(t ticket) {
	c, conn, now, dial := r.claim(t)
	if c == nil {
		if !dial {
			return // queued
		}
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
	if err := r.target.write(conn, &r.pipeOut, r.requestID(t)); err != nil {
		r.conns.remove(conn)
	}
}

// loop dials, sends the first request, then reads responses until the
// connection dies or the run stops. Between responses it sends the oldest
// queued request itself before it goes idle; when its connection dies
// while requests are queued, it dials again for the oldest one.
func (c *pipeConn) loop() {
	r := c.r
	defer r.wg.Done()
	c.mu.Lock()
	t := c.t
	c.mu.Unlock()
	for {
		if c.dial(t) {
			c.serve()
		}
		var ok bool
		if t, ok = r.takeForDial(); !ok {
			return
		}
		c.mu.Lock()
		c.state, c.t = pipeBusy, t
		c.mu.Unlock()
	}
}

// takeForDial pops the oldest queued request for a goroutine whose
// connection died, counting the dial it is about to make, unless the run
// is stopping or maxDials dials are already under way (they serve the
// queue).
func (r *runner) takeForDial() (ticket, bool) {
	r.pipeMu.Lock()
	defer r.pipeMu.Unlock()
	if r.stopping() || r.dialing >= maxDials {
		return ticket{}, false
	}
	t, ok := r.pipePending.pop()
	if ok {
		r.dialing++
	}
	return t, ok
}

// serve reads responses on c's open connection, whose request is in
// flight, until the connection dies; the outcome of every request sent on
// it is recorded.
func (c *pipeConn) serve() {
	r := c.r
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
			r.finish(c.sh, ps, t, sent, 0, err)
			return
		}
		c.lc.used = true
		if keep {
			// No deadline while idle (the driver sets one when it claims c).
			if err := c.lc.conn.SetReadDeadline(time.Time{}); err != nil {
				keep = false
			}
		}
		if !keep {
			c.closeConn()
			c.markDead()
			r.finish(c.sh, ps, t, sent, status, nil)
			return
		}
		next, ok := c.idleOrNext()
		r.finish(c.sh, ps, t, sent, status, nil)
		if ok && !c.send(next) {
			return
		}
	}
}

// idleOrNext, after a response, takes the oldest queued request for c or,
// when none is queued, puts c on the idle list. It runs before the
// response's in-flight slot is released, so the driver finds c instead of
// dialling another connection.
func (c *pipeConn) idleOrNext() (ticket, bool) {
	r := c.r
	r.pipeMu.Lock()
	defer r.pipeMu.Unlock()
	if t, ok := r.pipePending.pop(); ok {
		c.mu.Lock()
		c.t = t
		c.mu.Unlock()
		return t, true
	}
	c.mu.Lock()
	c.state = pipeIdle
	c.mu.Unlock()
	r.pipeIdle = append(r.pipeIdle, c)
	return ticket{}, false
}

// send writes queued request t on c's open connection, recording the
// failure and reporting false when that fails.
func (c *pipeConn) send(t ticket) bool { return c.write(t, false) }

// dial makes a new connection's first dial and write, which r.dialing
// counted.
func (c *pipeConn) dial(t ticket) bool {
	ok := c.dialAndSend(t)
	c.r.pipeMu.Lock()
	c.r.dialing--
	c.r.pipeMu.Unlock()
	return ok
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
func (c *pipeConn) dialAndSend(t ticket) bool { return c.write(t, true) }

// write stamps t's send time and writes its request, dialling first when
// dial is set; on failure it closes c and records t's outcome.
func (c *pipeConn) write(t ticket, dial bool) bool {
	r := c.r
	now := time.Now()
	sent := int64(now.Sub(r.start))
	deadline := now.Add(r.timeout)
	var err error
	c.mu.Lock()
	c.sent = sent
	if dial { // c is not in the idle list: the driver never waits here
		err = c.lc.dial(r.ctx, deadline)
	}
	c.mu.Unlock()
	if err == nil {
		if err = c.lc.conn.SetReadDeadline(deadline); err == nil {
			err = r.target.write(c.lc.conn, &c.lc.out, r.requestID(t)) // c.lc.out: the reader's own
		}
	}
	if err != nil {
		c.closeConn()
		c.markDead()
		r.finish(c.sh, r.states[t.phase], t, sent, 0, err)
		return false
	}
	return true
}

func (c *pipeConn) markDead() {
	c.mu.Lock()
	c.state = pipeDead
	c.mu.Unlock()
}
