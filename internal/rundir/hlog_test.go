package rundir_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/rundir/rundirtest"
)

// ReadHLog splits a log's intervals by the phase comment before them, even
// when a phase's late intervals come back after the next phase began.
func TestReadHLogInterleaved(t *testing.T) {
	dir := rundirtest.Write(t, filepath.Join(t.TempDir(), "run"), rundirtest.Run{Phases: []rundirtest.Phase{
		{Rate: 100, Latencies: rundirtest.Spread(10*time.Millisecond, 10)},
		{Rate: 200, Latencies: rundirtest.Spread(20*time.Millisecond, 20)},
	}})
	path := filepath.Join(dir, rundir.HLogFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Move phase 1's block after phase 2's: the comment keeps them apart.
	text := string(b)
	i, j := strings.Index(text, "#phase 0"), strings.Index(text, "#phase 1")
	text = text[:i] + text[j:] + text[i:j]
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := rundir.ReadHLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Phases) != 2 || l.Phase(0).Latency.TotalCount() != 10 || l.Phase(1).Latency.TotalCount() != 20 {
		t.Fatalf("%d phases: %d and %d latencies, want 10 and 20", len(l.Phases), l.Phase(0).Latency.TotalCount(), l.Phase(1).Latency.TotalCount())
	}
}

// A load.hlog that is a named pipe is refused at once, not waited on: the
// run's readers all go through package regular.
func TestReadHLogRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), rundir.HLogFile)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := rundir.ReadHLog(path)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("ReadHLog on a FIFO: %v, want a refusal naming the named pipe", err)
		}
	case <-time.After(10 * time.Second):
		// Open the pipe's other end, so that the blocked reader returns.
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("ReadHLog on a FIFO blocked (waiting for a writer) instead of refusing it")
	}
}
