package sweep

import "syscall"

// childAttr puts a cell in its own process group (stopped as a group) and
// makes the kernel kill it if the sweep dies without stopping it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
