package analyze

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
)

func TestBadInputIsNotATrace(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"text", []byte("hello, this is not a trace\n")},
		{"future version", []byte("go 1.99 trace\x00\x00\x00\x01\x02\x03")},
		{"header only", []byte("go 1.26 trace\x00\x00\x00")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Trace(context.Background(), bytes.NewReader(tc.data), Options{})
			if !errors.Is(err, ErrNotTrace) || r != nil {
				t.Fatalf("got report %v, err %v; want nil and ErrNotTrace", r != nil, err)
			}
			t.Logf("%v", err)
		})
	}
}

func TestTruncatedTraceKeepsTheGoodPart(t *testing.T) {
	data, err := os.ReadFile("testdata/go1.26/mixed.trace")
	if err != nil {
		t.Fatal(err)
	}
	full, err := Trace(context.Background(), bytes.NewReader(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cut := data[:len(data)*6/10]
	r, err := Trace(context.Background(), bytes.NewReader(cut), Options{Size: int64(len(cut))})
	var te *TruncatedError
	if !errors.As(err, &te) || r == nil || r.Loss == nil {
		t.Fatalf("err %v (report %v): want a *TruncatedError with a partial report", err, r != nil)
	}
	if r.Generations == 0 || r.Events == 0 || r.Events >= full.Events || r.Sched.Count == 0 {
		t.Errorf("partial report: %d generations, %d events (full %d), %d wake-ups", r.Generations, r.Events, full.Events, r.Sched.Count)
	}
	if te.Loss.ValidBytes <= 0 || te.Loss.ValidBytes > int64(len(cut)) || te.Loss.LostPct < 0 || te.Loss.LostPct >= 100 || te.Loss.Generations != r.Generations {
		t.Errorf("loss %+v", te.Loss)
	}
	t.Logf("%v", err)
}

func TestCancelledKeepsPartialReport(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := TraceFile(ctx, "testdata/go1.26/mixed.trace", Options{})
	if !errors.Is(err, context.Canceled) || r == nil {
		t.Fatalf("err %v report %v: want context.Canceled and a (partial) report", err, r != nil)
	}
}

func TestProgressReachesTheEnd(t *testing.T) {
	var last, total int64
	calls := 0
	_, err := TraceFile(context.Background(), "testdata/go1.26/mixed.trace", Options{Progress: func(read, tot int64) {
		calls++
		last, total = read, tot
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != total || total == 0 {
		t.Errorf("progress: %d calls, last %d of %d", calls, last, total)
	}
}

func TestTraceFileMissing(t *testing.T) {
	_, err := TraceFile(context.Background(), "testdata/nope.trace", Options{})
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err %v, want not-exist", err)
	}
}
