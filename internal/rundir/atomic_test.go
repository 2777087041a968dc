package rundir_test

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/schedscope/schedscope/internal/rundir"
	"github.com/schedscope/schedscope/internal/rundir/rundirtest"
)

// failingWrite writes part of a file, then fails as a full disk does.
func failingWrite(w io.Writer) error {
	if _, err := io.WriteString(w, `{"half": "a docu`); err != nil {
		return err
	}
	return syscall.ENOSPC
}

// A write that fails leaves the file as it was (here: absent, or the old
// content) and no temporary file beside it.
func TestWriteFileAtomicFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "latency.png")
	err := rundir.WriteFileAtomic(path, failingWrite)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v, want ENOSPC naming %s", err, path)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed write left %v", entries)
	}
	if err := rundir.WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "old"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteFileAtomic(path, failingWrite); err == nil {
		t.Fatal("the failing write succeeded")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "old" {
		t.Errorf("after a failed rewrite: %q, %v; want the old file whole", b, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed rewrite left %v", entries)
	}
}

// The manifest, written after a file that could not be written, says the
// run is incomplete and which file is missing, however the caller set the
// status; once the file is written (by a later writer too), it is complete
// again.
func TestManifestSaysWhichFilesAreMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(rundir.AnalysisFile, failingWrite); err == nil {
		t.Fatal("the failing write succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.AnalysisFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed write left %s: %v", rundir.AnalysisFile, err)
	}
	if err := w.UpdateManifest(func(m *rundir.Manifest) {
		m.Status = rundir.StatusComplete
		m.Missing = append(m.Missing, rundir.Missing{What: "fgprof profile", Why: "too short"})
	}); err != nil {
		t.Fatal(err)
	}
	read := func() rundir.Manifest {
		t.Helper()
		var m rundir.Manifest
		b, err := os.ReadFile(filepath.Join(dir, rundir.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := read()
	if m.Status != rundir.StatusIncomplete || !strings.Contains(m.Reason, rundir.AnalysisFile) {
		t.Errorf("status %q reason %q, want %q naming %s", m.Status, m.Reason, rundir.StatusIncomplete, rundir.AnalysisFile)
	}
	if len(m.Missing) != 2 || m.Missing[1].File != rundir.AnalysisFile || !strings.Contains(m.Missing[1].Why, "no space left") {
		t.Errorf("missing %+v, want the fgprof profile and %s", m.Missing, rundir.AnalysisFile)
	}
	// A later derivation (its own Writer) writes the file: complete again.
	w2, err := rundir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.WriteJSON(rundir.AnalysisFile, map[string]int{"schema": 1}); err != nil {
		t.Fatal(err)
	}
	if err := w2.RecordFile(rundir.AnalysisFile, "analysis"); err != nil {
		t.Fatal(err)
	}
	if m := read(); m.Status != rundir.StatusComplete || m.Reason != "" || len(m.Missing) != 1 {
		t.Errorf("after the file was written: status %q reason %q missing %+v; want complete, the fgprof profile alone missing", m.Status, m.Reason, m.Missing)
	}
}

// On a disk so full that no new file fits, the manifest written after a
// file that failed still says the run is incomplete and what is missing:
// it is written over the old one. It needs a small tmpfs, so it runs as
// root only, where mounting one works.
func TestManifestOnAFullDisk(t *testing.T) {
	mnt := rundirtest.SmallDisk(t, "64k")
	dir := filepath.Join(mnt, "run")
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UpdateManifest(func(m *rundir.Manifest) {
		// As a run's manifest before its end: a dozen files.
		m.Status = rundir.StatusRunning
		for _, name := range []string{"block.pb.gz", "goroutine.pb.gz", "mutex.pb.gz", "threadcreate.pb.gz", rundir.HLogFile,
			rundir.MetricsFile, rundir.RequestsFile, rundir.ResultsFile, rundir.TraceFile} {
			m.Files = append(m.Files, rundir.FileEntry{Name: name, What: "what the file holds, in a line of some length", Bytes: 12345})
		}
	}); err != nil {
		t.Fatal(err)
	}
	// Fill the disk.
	fill, err := os.Create(filepath.Join(mnt, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := fill.Write(make([]byte, 1024)); err != nil {
			break
		}
	}
	fill.Close()
	if err := w.WriteFile(rundir.AnalysisFile, func(w io.Writer) error {
		_, err := w.Write(make([]byte, 8<<10))
		return err
	}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writing on a full disk: %v, want ENOSPC", err)
	}
	if err := w.UpdateManifest(func(m *rundir.Manifest) { m.Status, m.Reason = rundir.StatusComplete, "" }); err != nil {
		t.Fatalf("the final manifest on a full disk: %v", err)
	}
	var m rundir.Manifest
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.ManifestFile), &m); err != nil {
		t.Fatal(err)
	}
	if m.Status != rundir.StatusIncomplete || len(m.Missing) != 1 || m.Missing[0].File != rundir.AnalysisFile {
		t.Errorf("status %q missing %+v, want %q with %s missing", m.Status, m.Missing, rundir.StatusIncomplete, rundir.AnalysisFile)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the run directory holds %v, want the manifest alone", entries)
	}
}
