//go:build linux

package kurtosistest

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestLockEnginePort: the lock excludes every other taker until the test
// that holds it is done, then frees the name (taking it again would wait
// out the 2-minute deadline otherwise; other test processes may hold it
// meanwhile, which only delays the second take).
func TestLockEnginePort(t *testing.T) {
	for _, name := range []string{"first", "again"} {
		t.Run(name, func(t *testing.T) {
			LockEnginePort(t)
			if l, err := net.Listen("unix", engineLockName); !errors.Is(err, syscall.EADDRINUSE) {
				if l != nil {
					l.Close()
				}
				t.Fatalf("a second taker got the lock (err %v)", err)
			}
		})
	}
}
