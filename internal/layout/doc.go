// Package layout holds no code, only tests of the repository's shape.
//
// TestImportsPointOneWay keeps schedscope's imports pointing one way: redact,
// regular and cgroup (which import nothing of schedscope) and analyze and
// load under rundir (the formats, which imports analyze, load and agent),
// then target, then a run, a sweep, derivation and reports, then the TUI,
// then the command. A package that imports upwards or sideways fails it.
//
// TestREADMEListsEveryPackage keeps README.md's Architecture list equal to
// `go list ./... ./collect/agent/... ./collect/agent/prom/...`, and
// TestMainPackageCommentNamesRealFolders checks that the folders
// cmd/schedscope's package comment names exist.
package layout
