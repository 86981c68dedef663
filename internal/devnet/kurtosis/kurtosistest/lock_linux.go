//go:build linux

package kurtosistest

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// engineLockName is an abstract Unix socket name: the kernel frees it when
// the holder exits, and it leaves no file behind (a lock file in $TMPDIR
// outlived every test run).
const engineLockName = "@segdiff-kurtosis-engine-port"

// LockEnginePort serializes, across test processes, the tests that need
// 127.0.0.1:9710 (the SDK's fixed engine address) either free or served by
// the fake: `go test ./...` runs packages in parallel processes, and other
// checkouts on the machine share the port. The lock is released at test
// cleanup.
func LockEnginePort(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		l, err := net.Listen("unix", engineLockName)
		if err == nil {
			t.Cleanup(func() { l.Close() })
			return
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			t.Fatalf("lock engine port: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("lock engine port: %s still held after 2 min", engineLockName)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
