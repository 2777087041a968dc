package agent

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// nopDriver is the smallest database/sql driver: connections that do nothing.
type nopDriver struct{}

func (nopDriver) Open(string) (driver.Conn, error) { return nopConn{}, nil }

type nopConn struct{}

func (nopConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("nop driver") }
func (nopConn) Close() error                        { return nil }
func (nopConn) Begin() (driver.Tx, error)           { return nil, errors.New("nop driver") }

type nopConnector struct{}

func (nopConnector) Connect(context.Context) (driver.Conn, error) { return nopConn{}, nil }
func (nopConnector) Driver() driver.Driver                        { return nopDriver{} }

func TestDBPool(t *testing.T) {
	db := sql.OpenDB(nopConnector{})
	defer db.Close()
	db.SetMaxOpenConns(2)
	ctx := context.Background()
	c1, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error)
	go func() {
		c3, err := db.Conn(ctx) // waits for c1
		if err == nil {
			err = c3.Close()
		}
		waited <- err
	}()
	time.Sleep(20 * time.Millisecond)
	s := DBPool(db).PoolStats()
	if s.Kind != "sql.DB" || s.Size != 2 || s.InUse != 2 {
		t.Errorf("two conns held: %+v", s)
	}
	c1.Close()
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	c2.Close()
	s = DBPool(db).PoolStats()
	if s.InUse != 0 || s.WaitCount != 1 || s.WaitDuration < 10*time.Millisecond {
		t.Errorf("after the wait: %+v", s)
	}
}

func TestTransportPool(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	tr := &http.Transport{MaxConnsPerHost: 2}
	defer tr.CloseIdleConnections()
	tp := NewTransportPool(tr)
	client := &http.Client{Transport: tp}

	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Get(srv.URL)
			if err != nil {
				errs <- err
				return
			}
			io.Copy(io.Discard, resp.Body)
			errs <- resp.Body.Close()
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := tp.PoolStats()
		if s.InUse == 2 && s.Waiting == 2 {
			break
		}
		if time.Now().After(deadline) {
			close(release)
			wg.Wait()
			t.Fatalf("never saw 2 in use and 2 waiting: %+v", s)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := tp.PoolStats()
	if s.Size != 2 || s.InUse != 0 || s.Waiting != 0 || s.Acquired != 4 || s.WaitCount < 2 || s.HoldDuration < 10*time.Millisecond {
		t.Errorf("after the requests: %+v", s)
	}
	// Every wait is in the histogram (none is above its last bound), the
	// two that waited for a connection at 10 ms or more.
	var inBuckets, longWaits int64
	for i, c := range s.Waits.Counts {
		inBuckets += c
		if s.Waits.Bounds[i] > 10*time.Millisecond {
			longWaits += c
		}
	}
	if inBuckets != s.WaitCount || longWaits < 2 {
		t.Errorf("wait histogram %+v: %d waits, %d above 10 ms; want all %d, at least 2", s.Waits, inBuckets, longWaits, s.WaitCount)
	}
}

func TestWaitBuckets(t *testing.T) {
	bounds := WaitBounds()
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{0, 0}, {50 * time.Microsecond, 0}, {51 * time.Microsecond, 1}, {time.Millisecond, 5}, {bounds[len(bounds)-1], len(bounds) - 1}, {time.Minute, len(bounds)}} {
		if got := waitBucket(c.d); got != c.want {
			t.Errorf("waitBucket(%v) = %d, want %d", c.d, got, c.want)
		}
		if c.want < len(bounds) && (c.d > bounds[c.want] || c.want > 0 && c.d <= bounds[c.want-1]) {
			t.Errorf("%v is not in bucket %d's (%v, %v]", c.d, c.want, bounds[max(c.want-1, 0)], bounds[c.want])
		}
	}
}

func TestPoolsInSnapshot(t *testing.T) {
	a, base := startAgent(t, Options{FlightRecorder: FlightRecorderOptions{Disabled: true}})
	a.Pools().Register("workers", PoolFunc(func() PoolStats { return PoolStats{Size: 8, InUse: 3, Waiting: 1} }))
	a.Pools().Register("gone", PoolFunc(func() PoolStats { return PoolStats{} }))
	a.Pools().Register("gone", nil)
	_, body := do(t, "GET", base+"/metrics", "")
	var snap Snapshot
	if err := json.Unmarshal(body, &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Pools) != 1 {
		t.Fatalf("pools: %+v", snap.Pools)
	}
	if w := snap.Pools["workers"]; w.Kind != "func" || w.Size != 8 || w.InUse != 3 || w.Waiting != 1 {
		t.Errorf("workers: %+v", w)
	}
}

func TestHistogramSubAndQuantile(t *testing.T) {
	prev := Histogram{Lower: []float64{0, 1}, Upper: []float64{1, 2}, Counts: []uint64{5, 5}}
	cur := Histogram{Lower: []float64{0, 1, 2}, Upper: []float64{1, 2, math.MaxFloat64}, Counts: []uint64{5, 95, 10}}
	d := cur.Sub(prev)
	if d.Total() != 100 || len(d.Counts) != 2 {
		t.Fatalf("Sub: %+v", d)
	}
	if q := d.Quantile(0.5); q != 2 {
		t.Errorf("p50 = %v, want 2 (upper bound of [1,2))", q)
	}
	if q := d.Quantile(0.99); q != 2 {
		t.Errorf("p99 = %v, want 2 (lower bound of the unbounded bucket)", q)
	}
	if q := (Histogram{}).Quantile(0.5); q != 0 {
		t.Errorf("empty histogram p50 = %v", q)
	}
}

func TestOvershootBuckets(t *testing.T) {
	for _, v := range []int64{0, 1, 7, 8, 9, 15, 16, 17, 1000, 123456789, math.MaxInt64} {
		lo, hi := bucketBounds(bucketOf(v))
		if v < lo || (v >= hi && hi > lo) {
			t.Errorf("value %d in bucket [%d, %d)", v, lo, hi)
		}
		if v >= 8 && float64(hi-lo) > float64(lo)/8+1 {
			t.Errorf("bucket [%d, %d) wider than 12.5%%", lo, hi)
		}
	}
}
