//go:build unix && !linux

package kurtosistest

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/poll"
)

// LockEnginePort serializes, across test processes, the tests that need
// 127.0.0.1:9710 (the SDK's fixed engine address) either free or served by
// the fake: `go test ./...` runs packages in parallel processes. The lock is
// released at test cleanup. Its file stays in $TMPDIR: removing a flock'd
// file would let a waiter and a newcomer both hold the lock (Linux uses an
// abstract socket instead, lock_linux.go).
func LockEnginePort(t testing.TB) {
	t.Helper()
	path := filepath.Join(os.TempDir(), "segdiff-kurtosis-engine-port.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("lock engine port: %v", err)
	}
	err = poll.Until(context.Background(), time.Now().Add(2*time.Minute), 50*time.Millisecond, func(context.Context) error {
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	})
	if err != nil {
		f.Close()
		t.Fatalf("lock engine port %s within 2 min: %v", path, err)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}
