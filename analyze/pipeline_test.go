package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"go.uber.org/goleak"
)

// Trace's analysis goroutine ends before Trace returns, whatever happened.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPipelineMatchesInline: analyzing on a goroutine of its own gives the
// same report and error, figure by figure, as analyzing each event on the
// reading goroutine (the sequential path), on whole traces, traces cut at
// several points, a corrupt trace on which golang.org/x/exp/trace panics,
// and a cancelled analysis.
func TestPipelineMatchesInline(t *testing.T) {
	if runtime.GOMAXPROCS(0) == 1 {
		t.Skip("GOMAXPROCS=1: Trace analyzes inline anyway")
	}
	files, _ := filepath.Glob("testdata/go1.*/*.trace")
	crashers, _ := filepath.Glob("testdata/fuzz/FuzzAnalyze/*")
	type input struct {
		name string
		data []byte
	}
	var inputs []input
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{f, data})
		for _, frac := range []int{3, 6, 9} {
			inputs = append(inputs, input{f + " cut", data[:len(data)*frac/10]})
		}
	}
	for _, f := range crashers {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The corpus file holds the input as a Go string literal.
		inputs = append(inputs, input{f, fuzzCorpusBytes(t, data)})
	}
	run := func(ctx context.Context, data []byte, inline bool) string {
		r, err := analyzeTrace(ctx, bytes.NewReader(data), Options{Size: int64(len(data))}, inline)
		j, jerr := json.Marshal(r)
		if jerr != nil {
			t.Fatal(jerr)
		}
		return string(j) + "\nerror: " + errString(err)
	}
	for _, in := range inputs {
		piped, inline := run(context.Background(), in.data, false), run(context.Background(), in.data, true)
		if piped != inline {
			t.Errorf("%s (%d bytes): the pipeline's report differs from the inline one:\n%.600s\n---\n%.600s", in.name, len(in.data), piped, inline)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data := inputs[0].data
	if piped, inline := run(ctx, data, false), run(ctx, data, true); piped != inline {
		t.Errorf("cancelled: the pipeline's report differs from the inline one:\n%.600s\n---\n%.600s", piped, inline)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// fuzzCorpusBytes decodes a `go test fuzz v1` file holding one []byte.
func fuzzCorpusBytes(t *testing.T, file []byte) []byte {
	t.Helper()
	lines := bytes.SplitN(file, []byte("\n"), 2)
	if len(lines) != 2 || !bytes.HasPrefix(lines[1], []byte("[]byte(")) {
		t.Fatalf("unexpected fuzz corpus file: %.80q", file)
	}
	lit := bytes.TrimSuffix(bytes.TrimSpace(lines[1]), []byte(")"))
	lit = bytes.TrimPrefix(lit, []byte("[]byte("))
	s, err := strconv.Unquote(string(lit))
	if err != nil {
		t.Fatalf("fuzz corpus literal: %v", err)
	}
	return []byte(s)
}
