package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/schedscope/schedscope/internal/redact"
)

// RepeatFile is the file that makes a directory a repeat directory: the
// parent of the runs `schedscope run --repeat N` made of one configuration,
// one run directory each (RepeatRunDir), for `schedscope compare` to treat
// as one side with N samples.
const RepeatFile = "repeat.json"

// RepeatVersion is the version of repeat.json's layout.
const RepeatVersion = 1

// RepeatRunDir is the name of the i-th run's directory (1-based) inside a
// repeat directory: run-01, run-02, ...
func RepeatRunDir(i int) string { return fmt.Sprintf("run-%02d", i) }

// Repeat is repeat.json: the plan of a repeated run and how far it got.
type Repeat struct {
	Version int `json:"version"` // RepeatVersion
	// Count is how many runs were asked for.
	Count int `json:"count"`
	// Runs are the run directories written so far, relative to the repeat
	// directory, in order (RepeatRunDir).
	Runs []string `json:"runs"`
	// Args is the command line after "schedscope run", redacted.
	Args []string `json:"args,omitempty"`
	// FreshTarget is true when every run started its own target process
	// (--cmd); false when the runs loaded one target that outlived them
	// (--url, --pid), so the runs are not independent of each other's
	// after-effects (a warmer cache, a grown heap), which FreshNote says.
	FreshTarget bool      `json:"fresh_target"`
	FreshNote   string    `json:"fresh_note,omitempty"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end,omitzero"`
	// Status is StatusRunning, StatusComplete or StatusInterrupted, as in a
	// run's manifest; Reason says why the repeat stopped early.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// WriteRepeat writes r, its command line redacted, to dir's repeat.json
// atomically.
func WriteRepeat(dir string, r Repeat) error {
	r.Args = redact.Args(r.Args)
	r.Reason = redact.Text(r.Reason)
	return WriteJSONFile(filepath.Join(dir, RepeatFile), r)
}

// ReadRepeat reads a repeat directory's repeat.json. Its runs are not read;
// RunDirs gives their paths.
func ReadRepeat(dir string) (*Repeat, error) {
	b, err := ReadFile(filepath.Join(dir, RepeatFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: not a repeat directory (no %s)", dir, RepeatFile)
		}
		return nil, fmt.Errorf("repeat plan: %w", err)
	}
	var r Repeat
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("repeat plan %s: %w", filepath.Join(dir, RepeatFile), err)
	}
	if r.Version != RepeatVersion {
		return nil, fmt.Errorf("repeat plan %s: version %d, this schedscope reads %d", filepath.Join(dir, RepeatFile), r.Version, RepeatVersion)
	}
	if err := r.checkRuns(dir); err != nil {
		return nil, fmt.Errorf("repeat plan %s: %w", filepath.Join(dir, RepeatFile), err)
	}
	r.Args = redact.Args(r.Args)
	return &r, nil
}

// checkRuns refuses a plan whose runs leave dir (an absolute path, "..", a
// link out of it) or name one run twice, by any spelling: each would be
// read as one more run of this configuration.
func (r *Repeat) checkRuns(dir string) error {
	paths := make([]string, len(r.Runs))
	for i, name := range r.Runs {
		paths[i] = filepath.Clean(dir) + string(filepath.Separator) + name // name as written, for the message
		if !filepath.IsLocal(name) || !Within(paths[i], dir) {
			return fmt.Errorf("run %q is outside the repeat directory: its runs are %s, %s, ... inside it", name, RepeatRunDir(1), RepeatRunDir(2))
		}
	}
	return Distinct(paths)
}

// RunDirs returns the paths of the repeat's run directories that exist
// under dir, in order: a run the repeat was writing when it was killed is
// included (it holds what it measured), a run never started is not.
func (r *Repeat) RunDirs(dir string) []string {
	var out []string
	for _, name := range r.Runs {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(filepath.Join(p, ManifestFile)); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// CheckNewRepeatDir returns nil when `schedscope run --repeat` may make a
// repeat directory at dir: nothing is there, or an empty directory.
// Otherwise its error says what dir is (a run, sweep or repeat directory,
// or one holding other files), as CheckNewRunDir's does, so a repeat never
// writes into a directory of another kind nor over an earlier repeat.
func CheckNewRepeatDir(dir string) error {
	kind, err := DirKindOf(dir)
	if err != nil {
		return fmt.Errorf("repeat directory %s: %w", dir, err)
	}
	switch kind {
	case DirAbsent, DirEmpty:
		return nil
	case DirOther:
		return fmt.Errorf("repeat directory %s: exists and holds other files (%s): choose a new or empty directory", dir, SomeEntries(dir))
	case NotDir:
		return fmt.Errorf("repeat directory %s: exists and is not a directory", dir)
	}
	return fmt.Errorf("repeat directory %s: exists and is %s: choose a new or empty directory", dir, kind)
}
