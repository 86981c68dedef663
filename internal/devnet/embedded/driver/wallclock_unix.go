//go:build unix

package driver

import (
	"syscall"
	"time"
)

// wallNow reads the machine's clock. Inside a synctest bubble time.Now is
// the virtual clock, so the cost of a run (wall time per payload) has to be
// read from the kernel directly.
func wallNow() time.Time {
	var tv syscall.Timeval
	if err := syscall.Gettimeofday(&tv); err != nil {
		return time.Time{}
	}
	return time.Unix(tv.Unix())
}
