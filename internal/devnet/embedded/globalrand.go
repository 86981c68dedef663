package embedded

import (
	mathrand "math/rand"
)

// seedGlobalRand seeds math/rand's global source, which go-libp2p-pubsub
// draws its peer shuffles from, and reports whether the seed took: since Go
// 1.24 rand.Seed is a no-op unless the main package (or test) sets
// //go:debug randseednop=0, as cmd/segdiff and this package's tests do.
func seedGlobalRand(seed int64) bool {
	//lint:ignore SA1019 rand.Seed is the only way to seed the source pubsub uses.
	mathrand.Seed(seed)
	got := mathrand.Int63()
	want := mathrand.New(mathrand.NewSource(seed)).Int63()
	//lint:ignore SA1019 restart the stream the check consumed.
	mathrand.Seed(seed)
	return got == want
}
