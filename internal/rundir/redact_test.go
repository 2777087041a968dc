package rundir

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/collect/load"
)

// secretManifest records secrets in every field that holds a command
// line, a URL or an error.
func secretManifest() Manifest {
	return Manifest{
		Schema: ManifestSchema, Tool: "schedscope", Status: StatusInterrupted,
		Args: []string{"--token", "zq-tok", "-H", "Authorization: Bearer zq-hdr", "http://u:zq-pass@127.0.0.1:1/x?password=zq-q"},
		Config: ManifestConfig{
			TargetURL: "http://u:zq-pass@127.0.0.1:1/x?password=zq-q",
			AgentURL:  "http://u:zq-pass@127.0.0.1:1/debug/schedscope/",
			Command:   "PGPASSWORD=zq-pg ./server --db-dsn postgres://app:zq-dsn@db/app",
		},
		Reason:  `target "./server --api-key zq-key": exited`,
		Missing: []Missing{{What: "trace", Why: "GET http://u:zq-pass@127.0.0.1:1/debug/pprof/trace: refused"}},
	}
}

// noSecret fails the test when b holds one of secretManifest's secrets.
func noSecret(t *testing.T, what string, b []byte) {
	t.Helper()
	for _, s := range []string{"zq-tok", "zq-hdr", "zq-pass", "zq-q", "zq-pg", "zq-dsn", "zq-key"} {
		if strings.Contains(string(b), s) {
			t.Errorf("%s holds %q:\n%s", what, s, b)
		}
	}
}

func TestWriterRedactsTheManifest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UpdateManifest(func(m *Manifest) { *m = secretManifest() }); err != nil {
		t.Fatal(err)
	}
	if err := w.RecordMissing("profile", errors.New("agent http://a:zq-pass@h/: HTTP 401")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	noSecret(t, ManifestFile, b)
	m, _ := json.Marshal(w.Manifest())
	noSecret(t, "the manifest in memory", m)
	var got Manifest
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if want := []string{"--token", "REDACTED", "-H", "Authorization: Bearer REDACTED", "http://u:REDACTED@127.0.0.1:1/x?password=REDACTED"}; strings.Join(got.Args, "|") != strings.Join(want, "|") {
		t.Errorf("args %q, want %q", got.Args, want)
	}
	if got.Config.Command != "PGPASSWORD=REDACTED ./server --db-dsn postgres://app:REDACTED@db/app" {
		t.Errorf("command %q", got.Config.Command)
	}
}

// TestReadRunRedactsOlderDirectories: a directory written before redaction
// (secrets in its manifest and results) reads back without them, so what
// is derived from it (summary, report) holds none.
func TestReadRunRedactsOlderDirectories(t *testing.T) {
	dir := t.TempDir()
	if err := WriteJSONFile(filepath.Join(dir, ManifestFile), secretManifest()); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSONFile(filepath.Join(dir, ResultsFile), load.Result{Target: "http://u:zq-pass@127.0.0.1:1/x"}); err != nil {
		t.Fatal(err)
	}
	r, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(r.Manifest)
	noSecret(t, "the manifest read back", m)
	if r.Result.Target != "http://u:REDACTED@127.0.0.1:1/x" {
		t.Errorf("result target %q", r.Result.Target)
	}
}

func TestSweepPlanRedacted(t *testing.T) {
	dir := t.TempDir()
	p := SweepPlan{
		Version: SweepVersion, Command: "API_TOKEN=zq-tok ./server", URL: "http://u:zq-pass@127.0.0.1:1/x?password=zq-q",
		Argv:    []string{"/bin/schedscope", "fixture", "--db-dsn", "postgres://a:zq-dsn@db/a"},
		Fixture: "db --db-dsn postgres://a:zq-dsn@db/a", Agent: "http://u:zq-pass@127.0.0.1:1/debug/schedscope/",
		GOMAXPROCS: []int{1}, Rates: []float64{10}, Iterations: 1,
	}
	if err := WriteSweepPlan(dir, p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, SweepFile))
	if err != nil {
		t.Fatal(err)
	}
	noSecret(t, SweepFile, b)
	if p.Command != "API_TOKEN=zq-tok ./server" {
		t.Errorf("WriteSweepPlan changed its argument: %q", p.Command)
	}
	// An older sweep.json, written with its secrets, reads back without.
	if err := WriteJSONFile(filepath.Join(dir, SweepFile), p); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(s.Plan)
	noSecret(t, "the plan read back", b)
}
