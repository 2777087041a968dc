package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/cmd/schedscope/internal/tour"
	"github.com/schedscope/schedscope/internal/rundir"
)

// TestDemoRederive runs a small demo through the CLI, then rebuilds each of
// its run directories' analysis.json and summary.txt with `analyze
// --rederive`: the files must come out byte for byte as the run wrote them,
// and the command must print the summary.
func TestDemoRederive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two short load runs")
	}
	dir := t.TempDir()
	code, stdout, errOut := runCLI(t, context.Background(), "demo", "--no-tui", "--workers", "10", "--sleep", "50ms",
		"--rates", "100,300", "--duration", "1500ms", "--pause", "200ms", "--warmup", "300ms", "--dir", dir)
	if code != 0 {
		t.Fatalf("demo: exit %d: %s\n%s", code, errOut, stdout)
	}
	dirs, err := filepath.Glob(filepath.Join(dir, "demo-*"))
	if err != nil || len(dirs) != 2 {
		t.Fatalf("run directories: %v %v", dirs, err)
	}
	// The plain end: no lone failure mark, and the last two lines are the
	// next commands on the real directories (the pool's, the goroutine's).
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "✗" {
			t.Errorf("stdout line %d is a lone ✗ on a run where nothing failed", i+1)
		}
	}
	pool, gor := dirs[1], dirs[0] // sorted: goroutine before pool
	if n := len(lines); n < 3 || lines[n-3] != "try next:" || !strings.Contains(lines[n-2], " analyze --tui "+pool+" ") ||
		!strings.Contains(lines[n-1], " report "+gor+" ") {
		t.Errorf("stdout does not end with the next commands on %s and %s:\n%s", pool, gor, strings.Join(lines[max(0, len(lines)-6):], "\n"))
	}
	for _, d := range dirs {
		names := []string{rundir.AnalysisFile, rundir.SummaryFile, rundir.ManifestFile}
		before := map[string][]byte{}
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(d, n))
			if err != nil {
				t.Fatal(err)
			}
			before[n] = b
		}
		code, stdout, errOut := runCLI(t, context.Background(), "analyze", "--rederive", d)
		if code != 0 {
			t.Fatalf("analyze --rederive %s: exit %d: %s", d, code, errOut)
		}
		if stdout != string(before[rundir.SummaryFile]) {
			t.Errorf("%s: analyze --rederive printed something else than summary.txt", d)
		}
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(d, n))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, before[n]) {
				t.Errorf("%s: %s rederived differs from what the run wrote", d, n)
			}
		}
		if !strings.Contains(string(before[rundir.SummaryFile]), "== findings") {
			t.Errorf("%s: summary without findings:\n%s", d, before[rundir.SummaryFile])
		}
	}
	code, _, errOut = runCLI(t, context.Background(), "analyze", "--rederive", filepath.Join(dir, "nope"))
	if code != 2 || strings.Count(errOut, "\n") != 1 {
		t.Errorf("--rederive on a missing directory: exit %d, %q", code, errOut)
	}
}

func TestSelfCommand(t *testing.T) {
	for arg0, want := range map[string]string{
		"/tmp/go-build3141592/b001/exe/schedscope":                                                               "go run ./cmd/schedscope",
		"/root/.cache/go-build/bf/bf173bf608f36c451092dfd7a6ad989f004025d465cf3ce117d7cc00d05bffcb-d/schedscope": "go run ./cmd/schedscope",
		`C:\Users\me\AppData\Local\go-build\bf\bf17-d\schedscope.exe`:                                            "go run ./cmd/schedscope",
		"schedscope":                     "schedscope",
		"./schedscope":                   "./schedscope",
		"/usr/local/bin/schedscope":      "/usr/local/bin/schedscope",
		"/tmp/go-build-cache/schedscope": "/tmp/go-build-cache/schedscope",
		"":                               "schedscope",
	} {
		if got := selfCommand(arg0); got != want {
			t.Errorf("selfCommand(%q) = %q, want %q", arg0, got, want)
		}
	}
}

// TestDemoIntroFirstLine: the plain output's first line says what is about
// to happen and how long it takes.
func TestDemoIntroFirstLine(t *testing.T) {
	cfg, err := tour.New(tour.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	demoIntro(&b, cfg.Config())
	first, _, _ := strings.Cut(b.String(), "\n")
	for _, want := range []string{"about 35 s", "pool of 200 workers", "goroutine"} {
		if !strings.Contains(first, want) {
			t.Errorf("first line %q lacks %q", first, want)
		}
	}
}
