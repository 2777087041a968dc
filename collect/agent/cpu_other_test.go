//go:build !unix

package agent

// processCPU cannot read the process's CPU time here: ok is false.
func processCPU() (ns int64, ok bool) { return 0, false }
