package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzAnalyze runs the whole analysis path (reader, accumulators, text and
// JSON output) on mutated traces: it must never panic, and it must either
// return a report or an error that says why not.
func FuzzAnalyze(f *testing.F) {
	files, _ := filepath.Glob("testdata/go1.*/*.trace")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) < 64<<10 {
			f.Add(data)
		}
	}
	f.Add([]byte("go 1.26 trace\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Trace(context.Background(), bytes.NewReader(data), Options{PinThreshold: 1})
		if errors.Is(err, errAnalyzerBug) {
			t.Fatal(err)
		}
		var te *TruncatedError
		switch {
		case err == nil, errors.As(err, &te):
			if r == nil {
				t.Fatalf("nil report with err %v", err)
			}
		case errors.Is(err, ErrNotTrace):
			if r != nil {
				t.Fatalf("report with ErrNotTrace")
			}
			return
		default:
			t.Fatalf("unexpected error kind: %v", err)
		}
		if err := WriteText(io.Discard, r, 5); err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
	})
}
