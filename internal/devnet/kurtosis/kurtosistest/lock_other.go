//go:build !unix

package kurtosistest

import "testing"

// LockEnginePort is a no-op where flock is unavailable; run the packages
// that use it with -p 1 there.
func LockEnginePort(t testing.TB) { t.Helper() }
