//go:build linux && (amd64 || arm64)

package load

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// evLoop is one event loop of the engine for plain-HTTP targets with the
// lean client, in both models (evLoops runs n of them, each on its own
// goroutine, each a shard of the schedule). A loop owns its connections.
// It paces its arrivals (or runs its closed-model users), writes each
// request at its send time, and reads every response,
// waiting in epoll_pwait2 with a nanosecond timeout for whichever comes
// first: the next send, a response, or a request's deadline. This is wrk's
// design. Compared with a goroutine per
// connection it saves, per request, a goroutine wake-up, a netpoller
// hand-off, a futex wake of an idle thread and a read that finds nothing;
// on a 2-core machine shared with its target those were most of the
// generator's CPU and of its send lag (bench/README.md has the figures).
//
// The loop needs Linux 5.11 (epoll_pwait2); newEvLoop fails on older
// kernels and the runner falls back to a goroutine per connection. A loop
// is used by one goroutine at a time.
type evLoop struct {
	r      *runner
	id, n  int // the loop's index among the run's n loops; it records into r.shards[id]
	ep     int // epoll
	wake   int // eventfd written when the run's context is cancelled
	sa     unix.Sockaddr
	family int

	conns   []*evConn   // by fd
	idle    []*evConn   // keep-alive connections with nothing in flight, newest last
	pending ticketQueue // due while nothing was idle and maxDials were being dialled
	dialing int         // connections being dialled
	dials   int         // the most dialled at once: the loop's share of maxDials, at least 1
	// owned counts the requests this loop has taken and not finished: on
	// its connections or in pending.
	owned   int
	expiry  []expiry // deadlines in send order (every request has the same timeout)
	expHead int

	events []unix.EpollEvent
	buf    []byte // one read buffer: the loop reads one connection at a time
	out    []byte // one buffer for tagged requests: each is written whole at once

	// msg, iov and oob are recvmsg's arguments, set up once: the read
	// buffer and room for the kernel's receive timestamp.
	msg unix.Msghdr
	iov unix.Iovec
	oob [64]byte
	// stamp is set when responses are dated by the kernel's receive time
	// (the open model, see receiveStamped); wallOff is the wall clock's
	// reading at the run clock's zero, read after every wait: the kernel
	// stamps received data on the wall clock.
	stamp   bool
	wallOff int64
	// stamped is set while the responses read carry the kernel's stamp
	// (the kernel turns stamping on a little after the first socket asks);
	// precise is set when the loop's thread has precise timers
	// (loopTimerSlack). Only with both may pace leave responses unread
	// until its next send (mayDefer).
	stamped bool
	precise bool
	naps    int // the times pace slept to a send, leaving responses unread
	// waits counts the times pace had time to wait for a send under
	// rawWait away (naps are the ones it slept through with mayDefer):
	// a loop behind its schedule has none.
	waits int
	// early is how long before a send a loop with precise timers wakes,
	// to spin the rest of the way (overslept): the median lateness of its
	// timed waits, at most maxEarly.
	early int64

	closed *closedRun // the closed-model phase being run; nil in the open model

	wakeMu     sync.Mutex
	wakeClosed bool
	stopWake   func() bool
}

// evConn is one connection of the loop.
type evConn struct {
	fd      int
	rx      int64 // when the kernel received the data last read, on the run clock; 0: unknown
	state   evState
	t       ticket  // the request in flight, when busy or dialling
	sent    int64   // when t was sent (for a new connection: when its dial began)
	seq     uint64  // bumped at every send and close: stale expiry entries don't match
	used    bool    // a response arrived on it: a reused connection
	retried bool    // t is already a retry of a request that met a stale connection
	user    *evUser // the closed-model user sending on it; nil in the open model
	p       respParser
}

// evUser is a closed-model user: it sends, waits for the response, thinks,
// and sends again, on its own keep-alive connection.
type evUser struct {
	c  *evConn // its connection; nil between a failure and the next dial
	at int64   // when it sends next, while thinking
	i  int     // its index in the thinking heap
}

type evState uint8

const (
	evDialing evState = iota
	evBusy
	evIdle
	evClosed
)

type expiry struct {
	c   *evConn
	seq uint64
	at  int64
}

var (
	errShortWrite = errors.New("short write of the request")
	errClosedRun  = errors.New("run stopped")
)

// newEvLoop resolves the target and sets up loop id of n; an error means
// the runner uses goroutines instead.
func newEvLoop(r *runner, id, n int) (*evLoop, error) {
	addr, err := net.ResolveTCPAddr("tcp", r.target.addr)
	if err != nil {
		return nil, err
	}
	l := &evLoop{r: r, id: id, n: n, dials: (maxDials + n - 1) / n, ep: -1, wake: -1,
		events: make([]unix.EpollEvent, 256), buf: make([]byte, 64<<10), stamp: receiveStamped(r.cfg)}
	l.setupRecv()
	if ip4 := addr.IP.To4(); ip4 != nil {
		l.sa, l.family = &unix.SockaddrInet4{Port: addr.Port, Addr: [4]byte(ip4)}, unix.AF_INET
	} else {
		sa := &unix.SockaddrInet6{Port: addr.Port, Addr: [16]byte(addr.IP.To16())}
		if addr.Zone != "" {
			if ifi, err := net.InterfaceByName(addr.Zone); err == nil {
				sa.ZoneId = uint32(ifi.Index)
			}
		}
		l.sa, l.family = sa, unix.AF_INET6
	}
	if l.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	if l.wake, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		l.close()
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if err := l.ctl(unix.EPOLL_CTL_ADD, l.wake, unix.EPOLLIN); err != nil {
		l.close()
		return nil, err
	}
	if _, err := l.wait(0); err != nil { // epoll_pwait2 is there (Linux 5.11)
		l.close()
		return nil, err
	}
	l.stopWake = context.AfterFunc(r.ctx, l.signal)
	return l, nil
}

// signal wakes the loop (from the context's AfterFunc).
func (l *evLoop) signal() {
	l.wakeMu.Lock()
	defer l.wakeMu.Unlock()
	if !l.wakeClosed {
		var one = [8]byte{1}
		_, _ = unix.Write(l.wake, one[:])
	}
}

// close releases the loop's descriptors; shutdown has closed the
// connections.
func (l *evLoop) close() {
	if l.stopWake != nil {
		l.stopWake()
	}
	l.wakeMu.Lock()
	l.wakeClosed = true
	if l.wake >= 0 {
		unix.Close(l.wake)
	}
	l.wakeMu.Unlock()
	if l.ep >= 0 {
		unix.Close(l.ep)
	}
}

func (l *evLoop) ctl(op, fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	if err := unix.EpollCtl(l.ep, op, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// rawWait is the longest wait made without telling the runtime. A wait
// announced by Syscall6 lets the runtime hand the loop's P to other
// goroutines, at a price: sysmon polls the P in its system call every
// 20 us to 10 ms, and the loop, back from the call, often resumes on
// another thread. A loop sending a few thousand requests a second waits
// that often for at most a few hundred microseconds; measured at 2,500
// req/s on 2 vCPUs (bench/README.md), announcing each wait cost 4,300-4,500
// wake-ups of sysmon a second and 88-95 us of CPU per request, against
// 200-290 wake-ups and 63-78 us unannounced. The P is held meanwhile, for at most rawWait: the other
// goroutines (the collector, a cancellation) wait that long at worst, and
// the runtime's preemption signal ends the wait early (epoll_pwait2 is
// never restarted after a signal: EINTR).
const rawWait = int64(time.Millisecond)

// wait is epoll_pwait2 with a timeout of d (0: return at once).
func (l *evLoop) wait(d int64) (int, error) {
	d = max(d, 0)
	ts := unix.NsecToTimespec(d)
	call := unix.Syscall6
	if d <= rawWait {
		call = unix.RawSyscall6
	}
	n, _, errno := call(unix.SYS_EPOLL_PWAIT2, uintptr(l.ep),
		uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
	switch errno {
	case 0:
		return int(n), nil
	case unix.EINTR:
		return 0, nil
	default:
		return 0, fmt.Errorf("epoll_pwait2: %w", errno)
	}
}

// pace runs the loop's share of an open phase: it sends each of its
// arrivals (the phase's k-th arrival when k mod n is its id) at its
// intended time from start to end, serving responses in between.
func (l *evLoop) pace(ps *phaseState, start, end int64) {
	r := l.r
	pc := newLoopSchedule(newPacer(r.cfg, ps.plan, start), l.id, l.n)
	limit := int64(r.cfg.MaxInflight)
	phase := int32(ps.plan.index)
	due := pc.next()
	// sendDue sends every request due by now.
	sendDue := func() {
		if due > r.nowNS() {
			return
		}
		now := r.nowNS()
		for due <= now && due < end {
			ps.planned.Add(1)
			if !acquireSlot(&r.inflight, limit) {
				ps.notSent.Add(1)
			} else {
				l.owned++
				ps.inflight.Add(1)
				ps.sent.Add(1)
				l.dispatch(ticket{phase: phase, intended: due, seq: r.seq.Add(1)})
			}
			due = pc.next()
		}
	}
	for r.ctx.Err() == nil {
		sendDue()
		now := r.nowNS()
		if due >= end && now >= end {
			return
		}
		l.expire(now)
		until := min(due, end, l.nextExpiry())
		if until != due || !l.precise {
			l.poll(until-r.nowNS(), sendDue)
			continue
		}
		// Wake l.early before the send (the timer's usual lateness) and
		// spin the rest of the way.
		if wake := due - l.early; wake > now {
			if due-now <= rawWait {
				l.waits++
			}
			if due-now > rawWait || !l.mayDefer(limit) {
				if l.poll(wake-now, sendDue) == 0 {
					l.overslept(wake)
				}
				continue
			}
			// Sleep to the next send, then send and read what came back
			// meanwhile: one wake-up per request, not one for the send
			// and one for its response. The responses keep the
			// kernel's receive time, so their latency does not change.
			nap(wake - now)
			l.naps++
			l.overslept(wake)
			l.spinUntil(due)
			sendDue()
			l.poll(0, sendDue)
			continue
		}
		l.spinUntil(due)
	}
}

// maxEarly bounds how long before a send a loop wakes (evLoop.early), and
// so how long it may spin.
const maxEarly = int64(100 * time.Microsecond)

// overslept updates l.early from a timed wait that was to end at wake: a
// running estimate of the median of how late such waits end (the timer's
// slack, the machine's wake-up latency), moved 1 us towards each one.
// Measured on 2 vCPUs (bench/README.md): with 1 us of slack a 400-us sleep
// ended 26, 44 and 62 us late at its 10th, 50th and 90th percentiles, and
// that lateness was the p50 of the send lag.
func (l *evLoop) overslept(wake int64) {
	late := l.r.nowNS() - wake
	switch {
	case late < 0: // ended early, by a signal
	case late < l.early:
		l.early = max(l.early-int64(time.Microsecond), 0)
	default:
		l.early = min(l.early+int64(time.Microsecond), maxEarly)
	}
}

// spinUntil returns at t on the run's clock, at most maxEarly away.
func (l *evLoop) spinUntil(t int64) {
	for l.r.nowNS() < t {
	}
}

// mayDefer says whether pace may leave responses unread until its next
// send, at most rawWait away: they are dated by the kernel's receive time
// (the last one read carried it), the loop's timers are precise (with the
// default 50-us slack the wake-ups that responses gave for free would
// become late sends), no dial is under way (its completion would wait
// too, and the requests queued behind it), and fewer than half of the
// in-flight cap are taken (a response read late holds its slot longer).
// Measured on 2 vCPUs (bench/README.md): at 2,500 req/s a loop woke 2.1
// times per request without it and 1.3 with it, for 23 % less CPU.
func (l *evLoop) mayDefer(limit int64) bool {
	return l.precise && l.stamped && l.dialing == 0 && len(l.pending) == 0 && l.r.inflight.Load() < limit/2
}

// nap sleeps d ns (at most rawWait) without handing off the loop's P, as
// wait does for short waits; a signal ends it early.
func nap(d int64) {
	ts := unix.NsecToTimespec(max(d, 0))
	_, _, _ = unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, 0,
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
}

// serveUntil serves responses until end on the run's clock, or until
// none of the loop's requests is in flight when untilIdle is set, or the
// context is cancelled.
func (l *evLoop) serveUntil(end int64, untilIdle bool) {
	r := l.r
	for r.ctx.Err() == nil {
		now := r.nowNS()
		l.expire(now)
		if now >= end || (untilIdle && l.owned == 0) {
			return
		}
		l.poll(min(end, l.nextExpiry())-now, nil)
	}
}

// poll waits up to d for events and handles them, and returns how many
// there were. When between is set it is called after every few events:
// the open model sends what fell due meanwhile, so a burst of responses
// does not delay the sends behind it.
func (l *evLoop) poll(d int64, between func()) int {
	n, err := l.wait(d)
	if err != nil { // EBADF/EINVAL: nothing to wait on; don't spin
		time.Sleep(time.Duration(max(d, 0)))
		return 0
	}
	if l.stamp && n > 0 {
		now := time.Now()
		l.wallOff = now.UnixNano() - int64(now.Sub(l.r.start))
	}
	for i, ev := range l.events[:n] {
		if between != nil && i > 0 && i%4 == 0 {
			between()
		}
		fd := int(ev.Fd)
		if fd == l.wake {
			var b [8]byte
			_, _ = unix.Read(l.wake, b[:])
			continue
		}
		if fd >= len(l.conns) || l.conns[fd] == nil {
			continue
		}
		// An event can outlive its connection within one batch: a
		// connection closed while handling an earlier event frees its
		// descriptor, which a new dial may reuse. Only a write, error or
		// hang-up event completes a dial, and connected checks the peer;
		// a stale read event finds nothing to read.
		c := l.conns[fd]
		if c.state == evDialing {
			if ev.Events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				l.connected(c, ev.Events)
			}
			continue
		}
		l.readable(c)
	}
	return n
}

// dispatch sends t on an idle connection, on a new one, or, when the
// loop's share of maxDials dials are under way, on the first connection
// that comes free.
func (l *evLoop) dispatch(t ticket) {
	for len(l.idle) > 0 {
		c := l.idle[len(l.idle)-1]
		l.idle = l.idle[:len(l.idle)-1]
		if c.state == evIdle {
			l.send(c, t, l.r.nowNS())
			return
		}
	}
	if l.dialing < l.dials {
		l.dial(t, false)
		return
	}
	l.pending = append(l.pending, t)
}

// refill dials for queued requests while dials are free.
func (l *evLoop) refill() {
	for l.dialing < l.dials && !l.r.stopping() {
		t, ok := l.pending.pop()
		if !ok {
			return
		}
		l.dial(t, false)
	}
}

// dial opens a non-blocking connection for t, returning nil (t's outcome
// recorded) when that fails at once.
func (l *evLoop) dial(t ticket, retried bool) *evConn {
	r := l.r
	now := r.nowNS()
	fd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		l.finish(t, now, 0, os.NewSyscallError("socket", err))
		return nil
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if l.stamp {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) // without it, doneAt takes the read's time
	}
	c := &evConn{fd: fd, state: evDialing, t: t, sent: now, retried: retried, p: respParser{head: r.target.head}}
	err = unix.Connect(fd, l.sa)
	switch {
	case err == nil || err == unix.EINPROGRESS:
		if cerr := l.ctl(unix.EPOLL_CTL_ADD, fd, unix.EPOLLIN|unix.EPOLLOUT|unix.EPOLLRDHUP); cerr != nil {
			unix.Close(fd)
			l.finish(t, now, 0, cerr)
			return nil
		}
	default:
		unix.Close(fd)
		l.finish(t, now, 0, os.NewSyscallError("connect", err))
		return nil
	}
	for fd >= len(l.conns) {
		l.conns = append(l.conns, nil)
	}
	l.conns[fd] = c
	l.dialing++
	c.seq++
	l.expiry = append(l.expiry, expiry{c: c, seq: c.seq, at: now + int64(r.timeout)})
	return c
}

// connected completes c's dial and writes its first request.
func (l *evLoop) connected(c *evConn, events uint32) {
	soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = unix.Errno(soerr)
	}
	if err == nil {
		if _, perr := unix.Getpeername(c.fd); perr == unix.ENOTCONN {
			if events&(unix.EPOLLERR|unix.EPOLLHUP) == 0 {
				return // still connecting: a stale event
			}
			err = perr // hung up without an error to report
		}
	}
	if err == unix.EINPROGRESS || err == unix.EALREADY {
		return
	}
	if err != nil {
		l.fail(c, os.NewSyscallError("connect", err)) // closeConn counts the dial done
		return
	}
	l.dialing--
	c.state = evBusy
	if err := l.ctl(unix.EPOLL_CTL_MOD, c.fd, unix.EPOLLIN|unix.EPOLLRDHUP); err != nil {
		l.fail(c, err)
		return
	}
	l.write(c)
	l.refill()
}

// send writes t on idle connection c.
func (l *evLoop) send(c *evConn, t ticket, now int64) {
	c.t, c.sent = t, now
	c.seq++
	l.expiry = append(l.expiry, expiry{c: c, seq: c.seq, at: now + int64(l.r.timeout)})
	l.write(c)
}

// write writes c's request; c.t, c.sent and its expiry are set.
func (l *evLoop) write(c *evConn) {
	c.state = evBusy
	c.p.reset()
	t := l.r.target
	req := t.request
	if t.tag != "" { // newRunner saw that the tagged request fits maxPipelinedRequest
		l.out = t.appendTagged(l.out[:0], l.r.requestID(c.t), true)
		req = l.out
	}
	n, err := unix.Write(c.fd, req)
	switch {
	case err != nil:
		l.fail(c, os.NewSyscallError("write", err))
	case n < len(req):
		l.fail(c, errShortWrite)
	}
}

// readable reads what arrived on c.
func (l *evLoop) readable(c *evConn) {
	n, err := l.read(c)
	if err == unix.EAGAIN || err == unix.EINTR {
		return
	}
	if c.state != evBusy { // a close or garbage while idle: no request lost
		l.closeConn(c)
		return
	}
	switch {
	case err != nil:
		l.fail(c, os.NewSyscallError("read", err))
	case n == 0:
		if c.p.eof() {
			l.complete(c, false)
			return
		}
		if c.p.started {
			l.fail(c, io.ErrUnexpectedEOF)
		} else {
			l.fail(c, io.EOF)
		}
	default:
		done, _, perr := c.p.feed(l.buf[:n])
		switch {
		case perr != nil:
			l.fail(c, perr)
		case done:
			l.complete(c, c.p.keep)
		}
	}
}

// setupRecv points recvmsg's arguments at l.buf and l.oob.
func (l *evLoop) setupRecv() {
	l.iov.Base = &l.buf[0]
	l.iov.SetLen(len(l.buf))
	l.msg.Iov, l.msg.Iovlen = &l.iov, 1
	l.msg.Control = &l.oob[0]
}

// read reads into l.buf what arrived on c, and sets c.rx to when the
// kernel received its last byte (SO_TIMESTAMPNS), or to 0 when it did not
// say.
func (l *evLoop) read(c *evConn) (int, error) {
	if !l.stamp {
		c.rx = 0
		return unix.Read(c.fd, l.buf)
	}
	l.msg.Controllen = uint64(len(l.oob))
	n, _, errno := unix.Syscall(unix.SYS_RECVMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&l.msg)), 0)
	if errno != 0 {
		return 0, errno
	}
	c.rx = 0
	if wall := rxStamp(l.oob[:min(l.msg.Controllen, uint64(len(l.oob)))]); wall > 0 {
		c.rx = wall - l.wallOff
	}
	if n > 0 {
		l.stamped = c.rx > 0
	}
	return int(n), nil
}

// rxStamp is the receive time in the control messages of a recvmsg (wall
// clock, ns), or 0 when they carry none.
func rxStamp(oob []byte) int64 {
	const hdr = unix.SizeofCmsghdr
	for len(oob) >= hdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if h.Len < hdr || h.Len > uint64(len(oob)) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && h.Len >= hdr+uint64(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&oob[hdr]))
			return ts.Nano()
		}
		next := (h.Len + 7) &^ 7 // CMSG_ALIGN on 64-bit Linux
		if next > uint64(len(oob)) {
			return 0
		}
		oob = oob[next:]
	}
	return 0
}

// doneAt is when c's response completed on the run clock: when the kernel
// received its last byte, if it said and that falls between the send and
// now, else now. The kernel's time leaves out the generator's own delay in
// reading the response (a wake-up, a busy thread): it is the target's
// latency, not the generator's.
func (l *evLoop) doneAt(c *evConn, sent int64) int64 {
	now := l.r.nowNS()
	if c.rx >= sent && c.rx <= now {
		return c.rx
	}
	return now
}

// complete records c's response and reuses or closes c.
func (l *evLoop) complete(c *evConn, keep bool) {
	r := l.r
	t, sent, status := c.t, c.sent, c.p.status
	done := l.doneAt(c, sent)
	c.used = true
	c.retried = false
	c.seq++
	if u := c.user; u != nil {
		if keep {
			c.state = evIdle
		} else {
			l.closeConn(c)
			u.c = nil
		}
		o := l.finishAt(t, sent, done, status)
		l.userDone(u, o)
		return
	}
	if keep {
		if next, ok := l.pending.pop(); ok {
			l.finishAt(t, sent, done, status)
			l.send(c, next, r.nowNS())
			return
		}
		c.state = evIdle
		l.idle = append(l.idle, c)
	} else {
		l.closeConn(c)
	}
	l.finishAt(t, sent, done, status)
	if !keep {
		l.refill()
	}
}

// fail closes c and records err as its request's outcome, or retries the
// request once on a fresh connection when a reused connection failed
// before any byte of the response (the server closed it while idle).
func (l *evLoop) fail(c *evConn, err error) {
	r := l.r
	t, sent := c.t, c.sent
	stale := c.used && !c.p.started && !c.retried && !isTimeout(err) && !r.stopping()
	l.closeConn(c)
	u := c.user
	if u != nil {
		u.c = nil
	}
	if stale {
		nc := l.dial(t, true)
		if u == nil {
			return
		}
		if nc != nil {
			nc.user, u.c = u, nc
			return
		}
		l.userDone(u, OutcomeConnection) // the redial failed at once: recorded
		return
	}
	o := l.finish(t, sent, 0, err)
	if u != nil {
		l.userDone(u, o)
		return
	}
	l.refill()
}

// closeConn closes c's descriptor; its request, if any, is the caller's.
func (l *evLoop) closeConn(c *evConn) {
	if c.state == evClosed {
		return
	}
	if c.state == evDialing {
		l.dialing--
	}
	c.state = evClosed
	c.seq++
	l.conns[c.fd] = nil
	unix.Close(c.fd)
}

// finish records the outcome of the loop's request t, sent at sent.
func (l *evLoop) finish(t ticket, sent int64, status int, err error) Outcome {
	l.owned--
	return l.r.finish(&l.r.shards[l.id], l.r.states[t.phase], t, sent, status, err)
}

// finishAt records t's response, completed at done on the run clock.
func (l *evLoop) finishAt(t ticket, sent, done int64, status int) Outcome {
	l.owned--
	return l.r.finishAt(&l.r.shards[l.id], l.r.states[t.phase], t, sent, done, status, nil)
}

// expire fails every request whose deadline has passed.
func (l *evLoop) expire(now int64) {
	for l.expHead < len(l.expiry) {
		e := l.expiry[l.expHead]
		live := e.seq == e.c.seq && (e.c.state == evBusy || e.c.state == evDialing)
		if live && e.at > now {
			break
		}
		l.expiry[l.expHead] = expiry{}
		l.expHead++
		if live {
			l.fail(e.c, os.ErrDeadlineExceeded)
		}
	}
	if l.expHead > 1024 && l.expHead*2 > len(l.expiry) {
		n := copy(l.expiry, l.expiry[l.expHead:])
		clear(l.expiry[n:])
		l.expiry = l.expiry[:n]
		l.expHead = 0
	}
}

// nextExpiry is the earliest live deadline, or far in the future.
func (l *evLoop) nextExpiry() int64 {
	for l.expHead < len(l.expiry) {
		e := l.expiry[l.expHead]
		if e.seq == e.c.seq && (e.c.state == evBusy || e.c.state == evDialing) {
			return e.at
		}
		l.expiry[l.expHead] = expiry{}
		l.expHead++
	}
	return 1<<63 - 1
}

// shutdown closes every connection; the requests in flight and queued get
// no outcome (the run is stopping) and release their slots.
func (l *evLoop) shutdown() {
	r := l.r
	for _, c := range l.conns {
		if c == nil {
			continue
		}
		busy := c.state == evBusy || c.state == evDialing
		t, sent := c.t, c.sent
		l.closeConn(c)
		if busy {
			l.finish(t, sent, 0, errClosedRun)
		}
	}
	l.pending.drop(r)
	l.idle, l.expiry, l.expHead, l.owned = nil, nil, 0, 0
}

// closedRun is a closed-model phase on the loop.
type closedRun struct {
	ps       *phaseState
	end      int64
	active   int      // users that have not stopped
	thinking userHeap // users waiting to send, soonest first
}

// closedPace runs the loop's share of ps's users (user u runs on loop u
// mod n) until end: each sends, waits for its response, thinks
// (Config.Think; after a connection error at least closedBackoff) and
// repeats, on its own connection. It returns when every user has stopped:
// its next send would fall after end.
func (l *evLoop) closedPace(ps *phaseState, end int64) {
	r := l.r
	users := loopShare(ps.plan.users, l.id, l.n)
	cr := &closedRun{ps: ps, end: end, active: users}
	l.closed = cr
	defer func() { l.closed = nil }()
	for range users {
		u := &evUser{i: -1}
		for len(l.idle) > 0 { // the previous phase's connections
			c := l.idle[len(l.idle)-1]
			l.idle = l.idle[:len(l.idle)-1]
			if c.state == evIdle {
				u.c, c.user = c, u
				break
			}
		}
		l.userSend(u)
	}
	for r.ctx.Err() == nil && cr.active > 0 {
		now := r.nowNS()
		for len(cr.thinking) > 0 && cr.thinking[0].at <= now {
			l.userSend(heap.Pop(&cr.thinking).(*evUser))
		}
		l.expire(now)
		if cr.active == 0 {
			return
		}
		wake := l.nextExpiry()
		if len(cr.thinking) > 0 {
			wake = min(wake, cr.thinking[0].at)
		}
		l.poll(wake-r.nowNS(), nil)
	}
}

// userSend sends u's next request now, or stops u when the phase is over.
// A closed-model request is intended when it is sent: its send lag is the
// time to write it (or start its dial).
func (l *evLoop) userSend(u *evUser) {
	r, cr := l.r, l.closed
	now := r.nowNS()
	if now >= cr.end {
		cr.active--
		if u.c != nil && u.c.state == evIdle {
			u.c.user = nil
			l.idle = append(l.idle, u.c) // for the next phase
		}
		return
	}
	ps := cr.ps
	ps.planned.Add(1)
	ps.sent.Add(1)
	ps.inflight.Add(1)
	r.inflight.Add(1)
	l.owned++
	t := ticket{phase: int32(ps.plan.index), intended: now, seq: r.seq.Add(1)}
	if u.c != nil && u.c.state == evIdle {
		l.send(u.c, t, now)
		return
	}
	u.c = l.dial(t, false)
	if u.c == nil {
		l.userDone(u, OutcomeConnection)
		return
	}
	u.c.user = u
}

// userDone schedules u's next request after an outcome.
func (l *evLoop) userDone(u *evUser, o Outcome) {
	pause := l.r.cfg.Think
	if o >= OutcomeConnection {
		pause = max(pause, closedBackoff)
	}
	if pause <= 0 {
		l.userSend(u)
		return
	}
	u.at = l.r.nowNS() + int64(pause)
	heap.Push(&l.closed.thinking, u)
}

// userHeap orders thinking users by their next send.
type userHeap []*evUser

func (h userHeap) Len() int           { return len(h) }
func (h userHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h userHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i, h[j].i = i, j
}
func (h *userHeap) Push(x any) {
	u := x.(*evUser)
	u.i = len(*h)
	*h = append(*h, u)
}
func (h *userHeap) Pop() any {
	old := *h
	u := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	u.i = -1
	return u
}
