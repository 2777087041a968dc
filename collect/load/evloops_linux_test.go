//go:build linux && (amd64 || arm64)

package load

import (
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A loop's thread runs with the loops' timer slack and gets its own back.
func TestLoopThreadSlack(t *testing.T) {
	runtime.LockOSThread() // onLoopThread's lock nests: the same thread throughout
	defer runtime.UnlockOSThread()
	slack := func() int {
		v, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := slack()
	var during int
	(&evLoops{slack: 1000}).onLoopThread(func() { during = slack() })
	if during != 1000 {
		t.Errorf("timer slack in the loop %d ns, want 1000", during)
	}
	if after := slack(); after != before {
		t.Errorf("timer slack after the loop %d ns, want the thread's own %d back", after, before)
	}
	(&evLoops{}).onLoopThread(func() { during = slack() })
	if during != before {
		t.Errorf("without a slack set the loop ran with %d ns, want the thread's own %d", during, before)
	}
}

// A response's completion is when the kernel received it, not when the
// loop got round to reading it: data that waited 30 ms in the socket is
// dated when it arrived.
func TestLoopReadsTheKernelsReceiveTime(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	f, err := client.(*net.TCPConn).File() // a blocking duplicate: read waits for the data
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		t.Skipf("SO_TIMESTAMPNS: %v", err)
	}
	l := &evLoop{r: &runner{start: time.Now()}, buf: make([]byte, 4096), stamp: true}
	l.setupRecv()
	now := time.Now()
	l.wallOff = now.UnixNano() - int64(now.Sub(l.r.start))
	// The first socket to ask for stamps turns them on for the whole
	// system through a work queue (net_enable_timestamp): data that arrives
	// before that is not stamped. Wait for a stamped byte.
	c := &evConn{fd: fd}
	for i := 0; ; i++ {
		if _, err := server.Write([]byte{'x'}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.read(c); err != nil {
			t.Fatal(err)
		}
		if c.rx != 0 {
			break
		}
		if i == 100 {
			t.Fatal("no receive time from the kernel after 100 tries")
		}
		time.Sleep(10 * time.Millisecond)
	}
	sent := l.r.nowNS()
	if _, err := server.Write([]byte("HTTP/1.1 200 OK\r\n")); err != nil {
		t.Fatal(err)
	}
	arrived := l.r.nowNS()
	time.Sleep(30 * time.Millisecond)
	n, err := l.read(c)
	if err != nil || n != 17 {
		t.Fatalf("read %d bytes, %v", n, err)
	}
	read := l.r.nowNS()
	if c.rx == 0 {
		t.Fatal("no receive time from the kernel")
	}
	// The kernel stamps the data inside the write, between sent and
	// arrived (the clocks' mapping within 1 ms): a busy machine widens that
	// bracket, it cannot push the stamp out of it (the check was once
	// against arrived alone, 1 ms before it to 10 ms after). The read came
	// 30 ms after arrived at least.
	if c.rx < sent-int64(time.Millisecond) || c.rx > arrived+int64(10*time.Millisecond) {
		t.Errorf("received %v after the write began (it returned after %v), read %v after it: want the receive time within the write",
			time.Duration(c.rx-sent), time.Duration(arrived-sent), time.Duration(read-sent))
	}
	if done := l.doneAt(c, sent); done != c.rx {
		t.Errorf("doneAt %d, want the receive time %d", done, c.rx)
	}
	if done := l.doneAt(c, c.rx+1); done < read { // a stamp before the send is not believed
		t.Errorf("doneAt with a stamp before the send: %d, want now (>= %d)", done, read)
	}
}

// rxStamp finds SCM_TIMESTAMPNS among other control messages and refuses
// truncated ones.
func TestRxStamp(t *testing.T) {
	msg := func(level, typ int32, data []byte) []byte {
		b := make([]byte, unix.CmsgSpace(len(data)))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = level, typ
		h.SetLen(unix.CmsgLen(len(data)))
		copy(b[unix.CmsgLen(0):], data)
		return b
	}
	ts := unix.NsecToTimespec(1764633600123456789)
	stamp := unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts))
	other := msg(unix.IPPROTO_IP, unix.IP_TTL, []byte{64, 0, 0, 0})
	both := append(append([]byte{}, other...), msg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, stamp)...)
	for _, tc := range []struct {
		name string
		oob  []byte
		want int64
	}{
		{"alone", msg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, stamp), 1764633600123456789},
		{"after another", both, 1764633600123456789},
		{"none", other, 0},
		{"empty", nil, 0},
		{"truncated", both[:len(both)-4], 0},
	} {
		if got := rxStamp(tc.oob); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A loop pacing sends under 1 ms apart sleeps to each send and reads the
// responses that came back meanwhile only then; their latency is still
// when the kernel received them, not when the loop read them (a send later).
// Each check is against a figure of the same run that noise moves alike:
//   - the naps against the waits (the times the loop had time to wait for a
//     send): a loop a busy machine keeps behind its schedule has neither,
//     so counting naps against the sends failed under load;
//   - each response's end against when the target wrote it (after its
//     flush, on the same clock): the kernel stamps the loopback's data
//     inside the target's write, so a kernel-dated end is never much
//     after it, however slow the machine, while a read-dated one is the
//     loop's next wake-up, most of a gap later (comparing the latency p50
//     with half the gap failed when the target itself was slow);
//   - the send lag against how late the loop's timed waits end (early,
//     the lateness the early wake-up compensates), where the loop was on
//     time to wait for 90 % of its sends, else skipped with the figures.
func TestDeferredReadsKeepTheKernelsTime(t *testing.T) {
	var mu sync.Mutex
	written := map[uint64]int64{} // by request seq: when the target's response was out
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		at := time.Now().UnixNano()
		if _, seq, _, err := parseTag(r.Header.Get(RequestHeader)); err == nil {
			mu.Lock()
			written[seq] = at
			mu.Unlock()
		}
	}))
	defer srv.Close()
	const rate = 1050 // sends 0.95 ms apart: within rawWait
	c, err := (&Config{URL: srv.URL, Rates: []float64{rate}, Duration: 2 * time.Second, RequestTag: "deferred", RecordRequests: true}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRunnerLoops(t.Context(), &c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.ev == nil {
		t.Skip("no event loop here")
	}
	res := r.run()
	srv.Close() // every handler has returned: written is complete
	p := res.Phases[len(res.Phases)-1]
	if res.ResponseTime != "kernel" {
		t.Fatalf("responses dated by %q, want kernel", res.ResponseTime)
	}
	l := r.ev.loops[0]
	if l.naps > l.waits {
		t.Fatalf("%d naps, more than the %d waits they are part of", l.naps, l.waits)
	}
	if l.naps < l.waits/2 {
		t.Errorf("the loop slept through %d of the %d waits for a send (%d sends), leaving responses unread: want most", l.naps, l.waits, p.Sent)
	}
	gap := time.Second / rate
	mu.Lock()
	var after []time.Duration // each response's end minus when the target wrote it
	for _, q := range res.Requests {
		if at, ok := written[q.Seq]; ok && q.Outcome == OutcomeOK {
			after = append(after, time.Duration(q.IntendedUnixNs+q.LatencyNs-at))
		}
	}
	mu.Unlock()
	if len(after) < int(p.OK)/2 {
		t.Fatalf("%d responses matched to the target's writes, of %d 2xx", len(after), p.OK)
	}
	slices.Sort(after)
	if med := after[len(after)/2]; med >= gap/2 {
		t.Errorf("responses end a median %v after the target wrote them (p10 %v, p90 %v), with sends %v apart: dated when read, not when received",
			med, after[len(after)/10], after[len(after)*9/10], gap)
	}
	// It wakes early by its timers' median lateness and spins the rest:
	// half its sends are on time (without it, the p50 of the send lag was
	// that lateness, 36-40 us on 2 vCPUs).
	early := time.Duration(l.early)
	lag := time.Duration(p.SendLag.P50 * float64(time.Millisecond))
	t.Logf("%d sends, %d waits, %d naps, woke %v early, send lag p50 %v, latency p50 %.3f ms p99 %.3f ms, end after the target's write p50 %v",
		p.Sent, l.waits, l.naps, early, lag, p.Latency.P50, p.Latency.P99, after[len(after)/2])
	// The control: how many sends the loop was on time to wait for. A
	// send it was behind for is late by however long the machine held the
	// loop, which no early wake-up can take back (here at load 14: 583
	// waits of 2,100 sends, send lag p50 9.8 ms).
	switch {
	case l.waits < int(p.Sent)*9/10:
		t.Skipf("send lag not compared: the loop was behind its schedule for %d of %d sends (it had time to wait for %d), so its send lag p50 %v measures the machine", int(p.Sent)-l.waits, p.Sent, l.waits, lag)
	case early == time.Duration(maxEarly):
		t.Logf("timers end over %v late here: early wake-up at its bound", early)
	case lag > max(10*time.Microsecond, early/2): // the bookkeeping before the write is 1 us, 5-7 under -race
		t.Errorf("send lag p50 %v, waking %v early: want the sends on time", lag, early)
	}
}

// The early wake-up follows the median of how late the timed waits end,
// ignores waits a signal ended early, and stays within maxEarly.
func TestOversleptTracksTheMedian(t *testing.T) {
	l := &evLoop{r: &runner{start: time.Now()}}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 { // lateness uniform over 20-60 us: median 40 us
		late := int64(20*time.Microsecond) + rng.Int64N(int64(40*time.Microsecond))
		l.overslept(l.r.nowNS() - late)
	}
	if got := time.Duration(l.early); got < 36*time.Microsecond || got > 44*time.Microsecond {
		t.Errorf("early %v after waits 20-60 us late, want about the median 40 us", got)
	}
	before := l.early
	l.overslept(l.r.nowNS() + int64(time.Millisecond)) // ended before its time
	if l.early != before {
		t.Errorf("a wait ended early moved the estimate from %d to %d", before, l.early)
	}
	for range 500 {
		l.overslept(l.r.nowNS() - int64(time.Millisecond))
	}
	if l.early != maxEarly {
		t.Errorf("early %v after waits 1 ms late, want the bound %v", time.Duration(l.early), time.Duration(maxEarly))
	}
}
