// Package layout holds no code: its test keeps schedscope's imports
// pointing one way: redact (which every writer may call) under the leaves
// (rundir, analyze, load, agent), then target, then a run, a sweep,
// derivation and reports, then the TUI, then the command. A package that
// imports upwards or sideways fails it.
package layout
