package chain

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/segdiff/segdiff/internal/devnet/embedded/seeds"
)

// Balance constants of compute_balance_weighted_selection (Gloas): every
// simulated validator has the 32 ETH effective balance of a mainnet
// validator, accepted against MAX_EFFECTIVE_BALANCE_ELECTRA.
const (
	effectiveBalanceGwei = 32_000_000_000
	maxEffectiveBalance  = 2048_000_000_000
	maxRandomValue       = 1<<16 - 1
	slotsPerEpoch        = 32
)

// PTCCommittee draws slot's payload-timeliness committee of size members
// from validators 0..total−1 as the spec does: the slot's candidates are its
// beacon committees (a seeded shuffle of all validators, 1/32 of them per
// slot), then compute_balance_weighted_selection with shuffle_indices=False
// walks the candidates cyclically and accepts candidate i when
// effective_balance·0xffff ≥ MAX_EFFECTIVE_BALANCE_ELECTRA·r, r being
// 16-bit values of SHA-256(seed ‖ i/16). Members may repeat (the walk
// wraps), exactly as on chain. It returns validator indices.
func PTCCommittee(seed int64, slot uint64, total, size int) []int {
	rng := seeds.PTC(seed, slot)
	perm := rng.Perm(total)
	n := max(total/slotsPerEpoch, 1)
	candidates := perm[:n]
	var sseed [16]byte
	binary.LittleEndian.PutUint64(sseed[:], uint64(seed))
	binary.LittleEndian.PutUint64(sseed[8:], slot)
	committee := make([]int, 0, size)
	var rnd [32]byte
	for i := 0; len(committee) < size; i++ {
		if i%16 == 0 {
			var buf [24]byte
			copy(buf[:], sseed[:])
			binary.LittleEndian.PutUint64(buf[16:], uint64(i/16))
			rnd = sha256.Sum256(buf[:])
		}
		r := uint64(binary.LittleEndian.Uint16(rnd[i%16*2:]))
		if effectiveBalanceGwei*maxRandomValue >= maxEffectiveBalance*r {
			committee = append(committee, candidates[i%n])
		}
	}
	return committee
}
