// Package target is the schedscope side of talking to a target: the Go
// server a run or a sweep measures.
//
//   - Its process: Start runs a target as its own process group, WaitReady
//     waits until it answers, Process.Stop ends it (SIGTERM, then SIGKILL).
//   - Its /proc: ReadUsage and Process.Usage read the CPU time, RSS and
//     threads of a process or of a started target's process group.
//   - Its agent or net/http/pprof: Discover finds what answers inside the
//     target; Agent talks to schedscope's in-target agent (package
//     collect/agent), Pprof to net/http/pprof's handlers.
//   - Its polls: Point turns two raw readings into a poll's figures.
//   - This machine: DescribeMachine, the CPUs this process may run on, the
//     machine's busy share (ReadMachineCPU) and a free loopback address.
//
// It is Linux-first: what reads /proc fails elsewhere with an error.
package target
