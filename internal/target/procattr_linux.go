package target

import "syscall"

// procAttr puts a started target in its own process group and has the
// kernel send it death when its parent (the thread that started it) dies.
func procAttr(death syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: death}
}
