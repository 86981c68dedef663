package embedded

import "syscall"

// childAttr makes the kernel kill a simulation whose parent (the test
// binary or the godog runner) dies without closing it, so that no
// simulation outlives the run that started it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
