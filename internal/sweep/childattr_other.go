//go:build unix && !linux

package sweep

import "syscall"

// childAttr puts a cell in its own process group, stopped as a group.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
