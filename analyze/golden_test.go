package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGoldenReports pins the text and JSON reports of two generated traces:
// any change in what schedscope says about them shows up as a diff. Run
// `go test ./analyze -run TestGoldenReports -update` after an intended
// change (or after regenerating the traces) and review the diff.
func TestGoldenReports(t *testing.T) {
	for _, tc := range []struct{ trace, golden string }{
		{"testdata/go1.26/locked.trace", "testdata/locked.txt.golden"},
		{"testdata/go1.26/cgo.trace", "testdata/cgo.json.golden"},
	} {
		r, err := TraceFile(context.Background(), tc.trace, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if bytes.HasSuffix([]byte(tc.golden), []byte(".json.golden")) {
			enc := json.NewEncoder(&got)
			enc.SetIndent("", "  ")
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
		} else if err := WriteText(&got, r, 10); err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(tc.golden, got.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(tc.golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: report differs from %s (rerun with -update and review the diff):\n%s", tc.trace, tc.golden, got.String())
		}
	}
}
