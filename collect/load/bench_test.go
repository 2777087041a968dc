package load

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"testing"
	"time"
)

// BenchmarkReadResponse is the lean client's per-response parsing cost
// (no network): it must not allocate.
func BenchmarkReadResponse(b *testing.B) {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: Mon, 30 Nov 2026 01:00:00 GMT\r\nContent-Length: 6\r\n\r\nhello\n")
	rd := bytes.NewReader(resp)
	c := &leanConn{t: &target{}, br: bufio.NewReaderSize(rd, 4096)}
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(resp)
		c.br.Reset(rd)
		if status, _, _, err := c.readResponse(); err != nil || status != 200 {
			b.Fatal(status, err)
		}
	}
}

// BenchmarkShardRecord is the cost of recording one outcome (lock, three
// HdrHistogram records, counters).
func BenchmarkShardRecord(b *testing.B) {
	sh := &shard{recs: []*phaseRec{{lat: newHist(), svc: newHist(), lag: newHist()}}}
	b.ReportAllocs()
	var i int64
	for b.Loop() {
		i++
		sh.record(0, OutcomeOK, 200, i, i+1000, i+1_000_000+i%1000, 999_000+i%1000, nil)
	}
}

// benchServer answers every request on a connection with a fixed response,
// reading request heads line by line without allocating (requests have no
// body), so that a benchmark measures the client.
func benchServer(b *testing.B) string {
	b.Helper()
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
	return connServer(b, func(c net.Conn) {
		br := bufio.NewReaderSize(c, 4096)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) == 2 && line[0] == '\r' {
				if _, err := c.Write(resp); err != nil {
					return
				}
			}
		}
	})
}

// BenchmarkLeanRequestTag is the lean client's cost per request with and
// without Config.RequestTag, measured in the same run by alternating the
// two over loopback (the goroutine engine's requester, leanConn.do):
// plain-ns/req, tagged-ns/req and their ratio, tagged/plain.
func BenchmarkLeanRequestTag(b *testing.B) {
	url := benchServer(b)
	plain := leanWith(b, Config{URL: url, Rate: 1})
	tagged := leanWith(b, Config{URL: url, Rate: 1, RequestTag: "bench.0a1b2c3d"})
	defer plain.close()
	defer tagged.close()
	// Odd requests are plain, even ones tagged: index 0 and 1 below.
	var spent [2]time.Duration
	var n [2]int
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		k, c := 0, plain
		if i%2 == 0 {
			k, c = 1, tagged
		}
		t0 := time.Now()
		if status, err := c.do(ctx, t0.Add(5*time.Second), requestID{seq: uint64(i), intended: t0.UnixNano()}); err != nil || status != 200 {
			b.Fatal(status, err)
		}
		spent[k] += time.Since(t0)
		n[k]++
	}
	if n[0] > 0 && n[1] > 0 {
		plainNS, taggedNS := float64(spent[0])/float64(n[0]), float64(spent[1])/float64(n[1])
		b.ReportMetric(plainNS, "plain-ns/req")
		b.ReportMetric(taggedNS, "tagged-ns/req")
		b.ReportMetric(taggedNS/plainNS, "tagged/plain")
	}
}

// BenchmarkEventLoopRequestTag runs the default engine (the event loop on
// Linux; goroutines elsewhere) closed-model, 4 users against a loopback
// server in this process: each iteration is an untagged and a tagged run
// of 100 ms, in alternating order. It reports the completed requests per
// second of each and their ratio, tagged/plain (below 1: tagging costs
// throughput). Run it with -benchtime 20x or more: the runs' throughput
// varies with the machine's other load.
func BenchmarkEventLoopRequestTag(b *testing.B) {
	url := benchServer(b)
	var done [2]int64
	var took [2]float64
	for i := range b.N {
		for j := range 2 {
			k := (i + j) % 2 // 0: plain, 1: tagged
			tag := ""
			if k == 1 {
				tag = "bench.0a1b2c3d"
			}
			res, err := Run(context.Background(), Config{URL: url, Users: 4, Duration: 100 * time.Millisecond, RequestTag: tag})
			if err != nil {
				b.Fatal(err)
			}
			p := res.Phases[0]
			if p.OK != p.Sent {
				b.Fatalf("iteration %d: sent %d ok %d", i, p.Sent, p.OK)
			}
			done[k] += p.Completed
			took[k] += p.DurationS
		}
	}
	plain, tagged := float64(done[0])/took[0], float64(done[1])/took[1]
	b.ReportMetric(plain, "plain-req/s")
	b.ReportMetric(tagged, "tagged-req/s")
	b.ReportMetric(tagged/plain, "tagged/plain")
}
