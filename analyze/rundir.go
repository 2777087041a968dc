package analyze

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// FindTrace returns the execution trace inside a run directory: the first
// of trace.out, trace.bin, trace or *.trace that exists.
func FindTrace(dir string) (string, error) {
	for _, name := range []string{"trace.out", "trace.bin", "trace"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	m, err := filepath.Glob(filepath.Join(dir, "*.trace"))
	if err != nil {
		return "", fmt.Errorf("run directory %s: %w", dir, err)
	}
	if len(m) == 0 {
		return "", fmt.Errorf("run directory %s: no execution trace (trace.out or *.trace)", dir)
	}
	slices.Sort(m)
	return m[0], nil
}
