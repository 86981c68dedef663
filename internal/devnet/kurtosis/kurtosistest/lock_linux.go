//go:build linux

package kurtosistest

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/poll"
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
	var l net.Listener
	err := poll.Until(context.Background(), time.Now().Add(2*time.Minute), 50*time.Millisecond, func(context.Context) error {
		var err error
		if l, err = net.Listen("unix", engineLockName); err != nil && !errors.Is(err, syscall.EADDRINUSE) {
			return poll.Stop(err)
		}
		return err
	})
	if err != nil {
		t.Fatalf("lock engine port %s within 2 min: %v", engineLockName, err)
	}
	t.Cleanup(func() { l.Close() })
}
