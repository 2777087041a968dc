// Package tui holds schedscope's terminal user interfaces, built on
// bubbletea v2: the live dashboard shown during `schedscope run` and
// `schedscope demo` (Dashboard, fed with Frames), the offline trace browser of
// `schedscope analyze --tui` (Browser), and the sweep progress view (Sweep).
//
// Every model takes its data as constructor arguments (a channel of
// snapshots, an analysis function, a report) and keeps Update pure: reading
// the feed, running an analysis or taking a trace window happens in tea.Cmds
// whose results come back as messages. So tests drive Update as a function
// and render golden screens at a pinned size and colour profile.
package tui
