package rundir

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/schedscope/schedscope/internal/regular"
)

// Bounds on the files the readers read whole, so that a corrupt or hostile
// directory (a sparse results.json of gigabytes) is refused with an error
// naming the file and its bound, before its size is allocated. Each is
// well over what a real run writes: a manifest is a few KiB (a merge of
// load.MaxShards shards names each one's directory: about 1 MiB), a
// steady phase's results some KiB (a ladder of a thousand steps, or a
// merge's table of every shard's phases, some MiB), analysis.json a few
// hundred KiB per trace (its tables are cut to their top rows), a sweep's
// plan and each step a few KiB.
const (
	MaxManifestBytes  = 16 << 20  // manifest.json
	MaxResultsBytes   = 256 << 20 // results.json
	MaxAnalysisBytes  = 256 << 20 // analysis.json
	MaxSweepPlanBytes = 16 << 20  // sweep.json
	MaxSweepStepBytes = 16 << 20  // each of steps/*.json
	MaxRepeatBytes    = 16 << 20  // repeat.json
	// MaxJSONBytes bounds any other JSON file ReadJSON reads.
	MaxJSONBytes = 64 << 20
)

// MaxFileBytes returns the bound on the file name (a base name) that
// ReadFile and ReadJSON apply.
func MaxFileBytes(name string) int64 {
	switch name {
	case ManifestFile:
		return MaxManifestBytes
	case ResultsFile:
		return MaxResultsBytes
	case AnalysisFile:
		return MaxAnalysisBytes
	case SweepFile:
		return MaxSweepPlanBytes
	case RepeatFile:
		return MaxRepeatBytes
	}
	return MaxJSONBytes
}

// ReadFile reads a directory's file whole: a regular file (package
// regular) within its bound (MaxFileBytes of its base name). Its error
// names the file and wraps fs.ErrNotExist when it is absent.
func ReadFile(path string) ([]byte, error) {
	return regular.ReadAtMost(path, MaxFileBytes(filepath.Base(path)))
}

// ReadJSON decodes the JSON file at path into v, read by ReadFile; its
// error names the file and wraps fs.ErrNotExist when it is absent.
func ReadJSON(path string, v any) error {
	return readJSONAtMost(path, MaxFileBytes(filepath.Base(path)), v)
}

// readJSONAtMost decodes the JSON file at path, of at most limit bytes,
// into v.
func readJSONAtMost(path string, limit int64, v any) error {
	b, err := regular.ReadAtMost(path, limit)
	if err != nil {
		return err // names the file
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
