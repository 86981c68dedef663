package eip8411_test

import (
	"math/rand/v2"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

var (
	testSlot = uint64(1234567)
	testRoot = [32]byte{0xb1, 0x0c, 0x4b, 0x00, 0x7e}
)

// newRand returns a deterministic RNG for seed.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5e6d1ff)) }

// mustBody returns a synthetic body of rawSize SSZ bytes.
func mustBody(t testing.TB, seed uint64, rawSize int) *eip8411.Body {
	t.Helper()
	b, err := eip8411.SyntheticBody(newRand(seed), rawSize)
	if err != nil {
		t.Fatalf("SyntheticBody(%d): %v", rawSize, err)
	}
	return b
}

// mustGroup builds a group of a synthetic body.
func mustGroup(t testing.TB, seed uint64, rawSize int, opts ...eip8411.Option) (*eip8411.Body, *eip8411.Group) {
	t.Helper()
	body := mustBody(t, seed, rawSize)
	g, err := eip8411.NewGroup(body, opts...)
	if err != nil {
		t.Fatalf("NewGroup(%d bytes): %v", rawSize, err)
	}
	return body, g
}

// randomBytes returns n uniformly random (incompressible) bytes.
func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
