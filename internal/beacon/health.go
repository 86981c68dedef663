package beacon

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	eth2client "github.com/attestantio/go-eth2-client"
	"github.com/attestantio/go-eth2-client/api"
	"github.com/attestantio/go-eth2-client/spec"
	"github.com/attestantio/go-eth2-client/spec/gloas"
	"github.com/attestantio/go-eth2-client/spec/phase0"

	"github.com/segdiff/segdiff/internal/chainview"
)

// HealthNode is what ReadEpochHealth needs: blocks and their roots, the
// finality checkpoints of a state, attestation rewards and the spec.
type HealthNode interface {
	eth2client.SpecProvider
	eth2client.BeaconStateProvider
	eth2client.SignedBeaconBlockProvider
	eth2client.BeaconBlockRootProvider
	eth2client.FinalityProvider
	eth2client.AttestationRewardsProvider
}

// SlotsPerEpoch reads SLOTS_PER_EPOCH from the node's spec.
func SlotsPerEpoch(ctx context.Context, n eth2client.SpecProvider) (uint64, error) {
	sp, err := n.Spec(ctx, &api.SpecOpts{})
	if err != nil {
		return 0, fmt.Errorf("read spec: %w", err)
	}
	v, ok, err := specUint(sp.Data, "SLOTS_PER_EPOCH")
	if err != nil {
		return 0, fmt.Errorf("read spec: %w", err)
	}
	if !ok || v == 0 {
		return 0, fmt.Errorf("read spec: %w: SLOTS_PER_EPOCH", ErrNoSpecValue)
	}
	return v, nil
}

// HeadSlot returns the slot of the node's head block.
func HeadSlot(ctx context.Context, n eth2client.SignedBeaconBlockProvider) (uint64, error) {
	resp, err := n.SignedBeaconBlock(ctx, &api.SignedBeaconBlockOpts{Block: "head"})
	if err != nil {
		return 0, fmt.Errorf("read head block: %w", err)
	}
	if resp.Data == nil {
		return 0, errors.New("read head block: empty response")
	}
	slot, err := resp.Data.Slot()
	if err != nil {
		return 0, fmt.Errorf("read head block: %w", err)
	}
	return uint64(slot), nil
}

// ReadEpochHealth reads epoch from n: the finalized epoch in the state at
// its last slot, its attestation rewards (available once epoch+1 has been
// processed, so call it for epochs at least two behind the head), and per
// slot the canonical block, whether its bid came from an external builder,
// and the PTC's votes on its payload from the next slot's block.
func ReadEpochHealth(ctx context.Context, n HealthNode, epoch, slotsPerEpoch uint64) (chainview.EpochHealth, error) {
	h := chainview.EpochHealth{Epoch: epoch}
	first, last := epoch*slotsPerEpoch, (epoch+1)*slotsPerEpoch-1
	fin, err := n.Finality(ctx, &api.FinalityOpts{State: strconv.FormatUint(last, 10)})
	if err != nil {
		return h, fmt.Errorf("read health of epoch %d: finality at slot %d: %w", epoch, last, err)
	}
	if fin.Data == nil || fin.Data.Finalized == nil {
		return h, fmt.Errorf("read health of epoch %d: finality at slot %d: no finalized checkpoint", epoch, last)
	}
	h.FinalizedEpoch = uint64(fin.Data.Finalized.Epoch)

	rewards, err := n.AttestationRewards(ctx, &api.AttestationRewardsOpts{Epoch: phase0.Epoch(epoch)})
	if err != nil {
		return h, fmt.Errorf("read health of epoch %d: attestation rewards: %w", epoch, err)
	}
	if rewards.Data == nil {
		return h, fmt.Errorf("read health of epoch %d: attestation rewards: empty response", epoch)
	}
	for _, r := range rewards.Data.TotalRewards {
		h.Validators++
		if r.Target >= 0 {
			h.CorrectTarget++
		}
	}

	committees := NewCommittees(n)
	// Blocks of the epoch and of the first slot after it (it carries the
	// votes on the epoch's last payload).
	blocks := map[uint64]*gloas.SignedBeaconBlock{}
	for slot := first; slot <= last+1; slot++ {
		b, err := gloasBlock(ctx, n, slot)
		if err != nil {
			return h, fmt.Errorf("read health of epoch %d: %w", epoch, err)
		}
		if b != nil {
			blocks[slot] = b
		}
	}
	for slot := first; slot <= last; slot++ {
		s := chainview.SlotHealth{Slot: slot}
		b := blocks[slot]
		if b == nil {
			h.Slots = append(h.Slots, s)
			continue
		}
		s.Block = true
		if bid := b.Message.Body.SignedExecutionPayloadBid; bid != nil && bid.Message != nil {
			s.BuilderIndex = uint64(bid.Message.BuilderIndex)
			s.ExternalBuilder = bid.Message.BuilderIndex != gloas.BuilderIndexSelfBuild
		}
		if next := blocks[slot+1]; next != nil {
			root, err := n.BeaconBlockRoot(ctx, &api.BeaconBlockRootOpts{Block: strconv.FormatUint(slot, 10)})
			if err != nil || root.Data == nil {
				return h, fmt.Errorf("read health of epoch %d: root of block %d: %w", epoch, slot, err)
			}
			committee, err := committees.Of(ctx, slot)
			if err != nil {
				return h, fmt.Errorf("read health of epoch %d: %w", epoch, err)
			}
			votes, err := CountPTC(next, phase0.Slot(slot), *root.Data, committee)
			switch {
			case err == nil:
				s.PTC, s.VotesFound = votes, true
			case !errors.Is(err, chainview.ErrNoVotes):
				return h, fmt.Errorf("read health of epoch %d: slot %d: %w", epoch, slot, err)
			}
		}
		h.Slots = append(h.Slots, s)
	}
	return h, nil
}

// gloasBlock returns the canonical block at slot, nil for an empty slot.
func gloasBlock(ctx context.Context, n eth2client.SignedBeaconBlockProvider, slot uint64) (*gloas.SignedBeaconBlock, error) {
	resp, err := n.SignedBeaconBlock(ctx, &api.SignedBeaconBlockOpts{Block: strconv.FormatUint(slot, 10)})
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("block %d: %w", slot, err)
	}
	b := resp.Data
	if b == nil || b.Version != spec.DataVersionGloas || b.Gloas == nil || b.Gloas.Message == nil || b.Gloas.Message.Body == nil {
		version := "unknown"
		if b != nil {
			version = b.Version.String()
		}
		return nil, fmt.Errorf("block %d is %s, want a gloas block (the health checks start after the Gloas fork)", slot, version)
	}
	return b.Gloas, nil
}

// EpochHealth reads one epoch; see ReadEpochHealth.
func (c *Client) EpochHealth(ctx context.Context, epoch, slotsPerEpoch uint64) (chainview.EpochHealth, error) {
	return ReadEpochHealth(ctx, c.node, epoch, slotsPerEpoch)
}

// SlotsPerEpoch reads SLOTS_PER_EPOCH; see the function of that name.
func (c *Client) SlotsPerEpoch(ctx context.Context) (uint64, error) {
	return SlotsPerEpoch(ctx, c.node)
}

// HeadSlot returns the head block's slot; see the function of that name.
func (c *Client) HeadSlot(ctx context.Context) (uint64, error) { return HeadSlot(ctx, c.node) }
