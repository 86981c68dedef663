package beacon

import (
	"context"
	"fmt"

	eth2client "github.com/attestantio/go-eth2-client"
	eth2http "github.com/attestantio/go-eth2-client/http"
	"github.com/rs/zerolog"

	"github.com/segdiff/segdiff/internal/chainview"
)

// Node is what the readers need from a beacon node: genesis, spec, blocks,
// block roots, finality checkpoints and attestation rewards. go-eth2-client's
// HTTP service (and its mock.Service) implements it.
type Node interface {
	eth2client.GenesisProvider
	HealthNode
}

// Client reads timing and PTC votes from one beacon node. It is safe for
// concurrent use; go-eth2-client caches genesis and spec.
type Client struct {
	node       Node
	committees *Committees
}

// New connects to the beacon node at WithAddress. ctx bounds the lifetime of
// the underlying service's background refresh: cancel it when done with the
// Client. New fails if the node does not answer /eth/v1/node/syncing.
func New(ctx context.Context, params ...Parameter) (*Client, error) {
	p, err := parseAndCheckParameters(params...)
	if err != nil {
		return nil, fmt.Errorf("new beacon client: %w", err)
	}
	svc, err := eth2http.New(ctx,
		eth2http.WithAddress(p.address),
		eth2http.WithTimeout(p.timeout),
		eth2http.WithLogLevel(zerolog.WarnLevel),
		// Gloas payload attestations are read from JSON; the per-preset
		// bitvector width survives JSON decoding unchanged.
		eth2http.WithEnforceJSON(true),
	)
	if err != nil {
		return nil, fmt.Errorf("connect to beacon node %s: %w", p.address, err)
	}
	node, ok := svc.(Node)
	if !ok {
		return nil, fmt.Errorf("connect to beacon node %s: service %T lacks block/spec/finality/rewards providers", p.address, svc)
	}
	return &Client{node: node, committees: NewCommittees(node)}, nil
}

// Timing returns the node's slot clock; see ReadTiming.
func (c *Client) Timing(ctx context.Context) (chainview.Timing, error) {
	return ReadTiming(ctx, c.node, c.node)
}

// Proposer returns the validator index that proposed the block at slot;
// an empty slot is an error.
func (c *Client) Proposer(ctx context.Context, slot uint64) (uint64, error) {
	b, err := gloasBlock(ctx, c.node, slot)
	if err != nil {
		return 0, fmt.Errorf("proposer of slot %d: %w", slot, err)
	}
	if b == nil {
		return 0, fmt.Errorf("proposer of slot %d: no block at slot %d", slot, slot)
	}
	return uint64(b.Message.ProposerIndex), nil
}

// PTC returns the payload_present votes on slot's payload; see ReadPTC.
func (c *Client) PTC(ctx context.Context, slot uint64) (chainview.PTCVotes, error) {
	return ReadPTC(ctx, c.node, c.committees, slot)
}
