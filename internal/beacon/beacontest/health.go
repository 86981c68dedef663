package beacontest

import (
	"fmt"
	"time"

	apiv1 "github.com/attestantio/go-eth2-client/api/v1"
	"github.com/attestantio/go-eth2-client/spec/gloas"
	"github.com/attestantio/go-eth2-client/spec/phase0"
)

// Healthy parameters of HealthyChain.
const (
	HealthyPTCVotes   = 400 // of PTC_SIZE 512 vote payload_present
	HealthyBuilder    = 3   // builder_index of every bid (an external builder)
	HealthyValidators = 64
)

// HealthyChain returns a Gloas-from-genesis chain of epochs full epochs of
// slotsPerEpoch slots plus the first slot of the next epoch: a block in
// every slot after genesis whose bid comes from an external builder, the
// next block carrying HealthyPTCVotes payload_present votes on it, every
// validator attesting with the correct target, and finality two epochs
// behind (the finalized epoch in the state at the last slot of epoch E is
// E-2).
func HealthyChain(genesis time.Time, epochs, slotsPerEpoch uint64) *Chain {
	c := NewChain(genesis)
	c.Spec["SLOTS_PER_EPOCH"] = fmt.Sprint(slotsPerEpoch)
	c.Finalized = func(slot uint64) uint64 { return max(slot/slotsPerEpoch, 2) - 2 }
	for slot := uint64(1); slot <= epochs*slotsPerEpoch; slot++ {
		att := Attestation(slot-1, Root(slot-1), true, 512, Positions(HealthyPTCVotes)...)
		if slot == 1 {
			att = nil // genesis has no payload to vote on
		}
		b := Block(slot, Root(slot-1))
		if att != nil {
			b.Message.Body.PayloadAttestations = []*gloas.PayloadAttestation{att}
		}
		b.Message.Body.SignedExecutionPayloadBid.Message.BuilderIndex = HealthyBuilder
		c.Put(b, Root(slot))
	}
	for e := range epochs {
		c.SetParticipation(e, HealthyValidators, HealthyValidators)
	}
	return c
}

// SetParticipation makes correct of validators validators attest with the
// correct target in epoch (the others are penalised).
func (c *Chain) SetParticipation(epoch uint64, correct, validators int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rewards := make([]apiv1.ValidatorAttestationRewards, validators)
	for i := range rewards {
		rewards[i] = apiv1.ValidatorAttestationRewards{ValidatorIndex: phase0.ValidatorIndex(i), Head: 1000, Target: 2000, Source: 1000}
		if i >= correct {
			rewards[i].Head, rewards[i].Target, rewards[i].Source = 0, -2000, -1000
		}
	}
	c.Rewards[epoch] = rewards
}

// Miss removes the block of slot (an empty slot).
func (c *Chain) Miss(slot uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.blocks, slot)
	delete(c.roots, slot)
}

// SelfBuild marks the bid of slot's block as self-built.
func (c *Chain) SelfBuild(slot uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.blocks[slot]; b != nil {
		b.Message.Body.SignedExecutionPayloadBid.Message.BuilderIndex = gloas.BuilderIndexSelfBuild
	}
}

// Withhold makes the PTC vote slot's payload absent (the builder did not
// reveal it), in the block of slot+1.
func (c *Chain) Withhold(slot uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if next := c.blocks[slot+1]; next != nil {
		for _, pa := range next.Message.Body.PayloadAttestations {
			if pa.Data.Slot == phase0.Slot(slot) {
				pa.Data.PayloadPresent, pa.Data.BlobDataAvailable = false, false
			}
		}
	}
}

// SetBidBlockHash makes the bid of slot's block commit to the execution
// block hash h.
func (c *Chain) SetBidBlockHash(slot uint64, h phase0.Hash32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.blocks[slot]; b != nil {
		b.Message.Body.SignedExecutionPayloadBid.Message.BlockHash = h
	}
}
