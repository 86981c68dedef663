//go:build !linux

package segdiff_test

import "syscall"

// childAttr: elsewhere the child shares this binary's process group, so a
// terminal's Ctrl-C reaches both directly.
func childAttr() *syscall.SysProcAttr { return nil }
