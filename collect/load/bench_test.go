package load

import (
	"bufio"
	"bytes"
	"testing"
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
		sh.record(0, outOK, 200, i, i+1000, i+1_000_000+i%1000)
	}
}
