package beacon

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/attestantio/go-eth2-client/api"
	"github.com/attestantio/go-eth2-client/spec"
)

// ErrNoBlock is wrapped when a slot has no beacon block (a missed slot, or
// one the node has not seen yet).
var ErrNoBlock = errors.New("no beacon block at the slot")

// ReadBidBlockHash returns the execution block hash that the builder's bid
// in the beacon block of slot commits to (body.signed_execution_payload_bid
// .message.block_hash): the block the revealed payload must be, so every EL
// can be asked for it. A slot without a block wraps ErrNoBlock.
func ReadBidBlockHash(ctx context.Context, n Node, slot uint64) ([32]byte, error) {
	resp, err := n.SignedBeaconBlock(ctx, &api.SignedBeaconBlockOpts{Block: strconv.FormatUint(slot, 10)})
	if err != nil {
		if isNotFound(err) {
			return [32]byte{}, fmt.Errorf("read bid of slot %d: %w", slot, ErrNoBlock)
		}
		return [32]byte{}, fmt.Errorf("read bid of slot %d: %w", slot, err)
	}
	b := resp.Data
	if b == nil || b.Version != spec.DataVersionGloas || b.Gloas == nil || b.Gloas.Message == nil || b.Gloas.Message.Body == nil ||
		b.Gloas.Message.Body.SignedExecutionPayloadBid == nil || b.Gloas.Message.Body.SignedExecutionPayloadBid.Message == nil {
		return [32]byte{}, fmt.Errorf("read bid of slot %d: not a gloas block with a bid", slot)
	}
	if got := uint64(b.Gloas.Message.Slot); got != slot {
		return [32]byte{}, fmt.Errorf("read bid of slot %d: node returned slot %d", slot, got)
	}
	return b.Gloas.Message.Body.SignedExecutionPayloadBid.Message.BlockHash, nil
}

// BidBlockHash returns the bid's execution block hash of slot; see
// ReadBidBlockHash.
func (c *Client) BidBlockHash(ctx context.Context, slot uint64) ([32]byte, error) {
	return ReadBidBlockHash(ctx, c.node, slot)
}
