//go:build !linux

package target

import "syscall"

// procAttr puts a started target in its own process group. Only Linux can
// tie its life to its parent's (Pdeathsig): elsewhere a killed schedscope
// leaves its target running.
func procAttr(syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
