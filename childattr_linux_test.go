package segdiff_test

import "syscall"

// childAttr puts a child suite in a process group of its own, so that a
// terminal's Ctrl-C reaches only this binary, which forwards exactly one
// signal (a second one would make the child exit before it cleaned up), and
// makes the kernel stop it cleanly (SIGTERM) if this binary dies first.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
