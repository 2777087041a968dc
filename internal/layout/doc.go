// Package layout holds no code: its test keeps schedscope's imports
// pointing one way: the leaves (rundir, analyze, load, agent) at the
// bottom, then target, then a run, a sweep, derivation and reports, then
// the TUI, then the command. A package that imports upwards or sideways
// fails it.
package layout
