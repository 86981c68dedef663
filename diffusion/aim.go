package diffusion

import (
	"math/rand/v2"
	"slices"

	"github.com/libp2p/go-libp2p/core/peer"
)

// aimCandidate is a peer a new part may be pushed to, as the
// furthest-behind rule sees it.
type aimCandidate struct {
	peer peer.ID
	// held counts the parts the peer is known to hold (with projection,
	// those already queued to it too).
	held int
	// demoted: the peer took pushes but reported nothing, or nothing but
	// what we wrote to it, within the grace period (safer form only).
	demoted bool
}

// aimTargets picks up to k of cands to push a new part to, furthest behind
// first (tier 4's card 16):
//
//   - plain: the k holding fewest parts (ties at random). A tailored
//     under-reporter, which tells each pusher it holds only what that
//     pusher sent, always looks furthest behind and draws every contested
//     push;
//   - safer: k at random among the lower half of the ranking of the peers
//     not demoted, then (if that is too few) from the rest in ranking
//     order, demoted peers last.
//
// cands is reordered.
func aimTargets(cands []aimCandidate, k int, form Aim, rng *rand.Rand) []peer.ID {
	if k <= 0 || len(cands) == 0 {
		return nil
	}
	// Shuffle first so that the stable sort breaks ties at random.
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	slices.SortStableFunc(cands, func(a, b aimCandidate) int {
		if form == AimSafer && a.demoted != b.demoted {
			if a.demoted {
				return 1
			}
			return -1
		}
		return a.held - b.held
	})
	out := make([]peer.ID, 0, min(k, len(cands)))
	if form != AimSafer {
		for _, c := range cands[:min(k, len(cands))] {
			out = append(out, c.peer)
		}
		return out
	}
	fresh := len(cands)
	for i, c := range cands {
		if c.demoted {
			fresh = i
			break
		}
	}
	half := (fresh + 1) / 2
	lower := cands[:half]
	rng.Shuffle(len(lower), func(i, j int) { lower[i], lower[j] = lower[j], lower[i] })
	for _, c := range cands {
		if len(out) == k {
			break
		}
		out = append(out, c.peer)
	}
	return out
}
