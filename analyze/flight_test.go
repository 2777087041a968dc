package analyze

import (
	"bytes"
	"context"
	"runtime/trace"
	"sync"
	"testing"
	"time"
)

// TestFlightRecorderSnapshot analyzes a snapshot from runtime/trace's flight
// recorder, taken in this process.
func TestFlightRecorderSnapshot(t *testing.T) {
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: time.Second, MaxBytes: 4 << 20})
	if err := fr.Start(); err != nil {
		t.Skipf("flight recorder unavailable: %v", err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				trace.Log(context.Background(), SleepLogCategory, "2000000")
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	var buf bytes.Buffer
	_, err := fr.WriteTo(&buf)
	fr.Stop()
	if err != nil {
		t.Fatalf("flight recorder snapshot: %v", err)
	}
	r, err := Trace(context.Background(), &buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Every sleep is in the snapshot; the annotation of a goroutine's first
	// sleep may fall before the snapshot's first complete generation, so
	// allow one unannotated call per goroutine.
	var calls, annotated int64
	for _, s := range r.Sleep.Sites {
		if s.Func != "github.com/schedscope/schedscope/analyze.TestFlightRecorderSnapshot.func1" {
			continue
		}
		calls += s.Count
		if s.Overshoot != nil {
			annotated += s.Overshoot.Count
		}
	}
	t.Logf("%d sleeps, %d annotated", calls, annotated)
	if calls != 20 || annotated < 16 || r.Goroutines.Created < 4 {
		t.Errorf("snapshot: %d sleeps (want 20), %d annotated (want >= 16), %d goroutines created", calls, annotated, r.Goroutines.Created)
	}
}
