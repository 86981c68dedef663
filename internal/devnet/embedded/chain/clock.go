package chain

import (
	"time"

	"github.com/segdiff/segdiff/internal/devnet/embedded/seeds"
)

// FirstSlotStart picks when slot 1 starts: the first instant at or after
// now at which the reveal (revealOffset into the slot) falls a seeded phase
// into the routers' heartbeat period, which every router started at
// routersStart. Where the reveal lands in that period decides when the
// first IHAVEs for the payload go out; tying it to how long the mesh took
// to settle made the same seed give medians tens of percent apart. Later
// slots move through the period by slot mod heartbeat each (12 s mod
// 700 ms = 100 ms), as they would on a real chain.
func FirstSlotStart(seed int64, heartbeat, revealOffset time.Duration, routersStart, now time.Time) time.Time {
	phase := time.Duration(seeds.HeartbeatPhase(seed).Int64N(int64(heartbeat)))
	t := routersStart.Add(phase - revealOffset)
	if t.Before(now) {
		k := (now.Sub(t) + heartbeat - 1) / heartbeat
		t = t.Add(k * heartbeat)
	}
	return t
}

// Proposers draws the proposer of each of slots 1..payloads from
// candidates (every node but the builder), uniformly and independently.
func Proposers(seed int64, payloads int, candidates []int) []int {
	rng := seeds.Proposers(seed)
	out := make([]int, payloads)
	for i := range out {
		out[i] = candidates[rng.IntN(len(candidates))]
	}
	return out
}
