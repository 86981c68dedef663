// Package elimport checks the execution side of a devnet's health: that
// every execution client imported each payload a builder revealed, found by
// the block hash the builder's bid committed to, within a budget after the
// reveal. The beacon side (reveals, PTC votes) says the payload was
// published; only the ELs say it became part of their chains.
package elimport

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/poll"
)

// HeaderReader is what the check needs of an EL (*ethclient.Client has it).
type HeaderReader interface {
	HeaderByHash(ctx context.Context, hash common.Hash) (*types.Header, error)
}

// EL is one execution client, named after its node.
type EL struct {
	Node, Link string
	Client     HeaderReader
}

// Payload is one revealed payload: its slot, the bid's block hash, and the
// time by which every EL must have it (reveal + budget).
type Payload struct {
	Slot     uint64
	Hash     common.Hash
	Deadline time.Time
}

// Check asks every EL for every payload's block, polling every interval until
// the EL has it or the payload's deadline has passed, and returns one
// sample per EL and payload: 1 when found, 0 when not. The check runs after
// the fact, so a block found at the first query counts as found in time
// even if the deadline has passed; only a block missing past its deadline
// is a 0. An EL that keeps failing (not "not found") until the deadline is
// an error naming it. Samples are sorted by node, then slot.
func Check(ctx context.Context, els []EL, payloads []Payload, interval time.Duration) ([]assertions.Sample, error) {
	if len(els) == 0 {
		return nil, errors.New("check EL imports: no execution clients")
	}
	if len(payloads) == 0 {
		return nil, errors.New("check EL imports: no payloads")
	}
	var out []assertions.Sample
	for _, el := range els {
		for _, p := range payloads {
			found, err := wait(ctx, el, p, interval)
			if err != nil {
				return nil, err
			}
			v := 0.0
			if found {
				v = 1
			}
			out = append(out, assertions.Sample{Node: el.Node, Link: el.Link, Slot: p.Slot, Value: v})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].Slot < out[j].Slot
	})
	return out, nil
}

// wait polls el for p's block until found (true) or p's deadline passes
// (false, or the error el kept returning instead of "not found").
func wait(ctx context.Context, el EL, p Payload, interval time.Duration) (bool, error) {
	err := poll.Until(ctx, p.Deadline, interval, func(ctx context.Context) error {
		h, err := el.Client.HeaderByHash(ctx, p.Hash)
		if err == nil && h == nil {
			return ethereum.NotFound
		}
		return err
	})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, poll.ErrTimeout) && errors.Is(err, ethereum.NotFound):
		return false, nil
	case errors.Is(err, poll.ErrTimeout):
		return false, fmt.Errorf("check EL imports: node %s: block %s of slot %d: %w", el.Node, p.Hash, p.Slot, err)
	}
	return false, fmt.Errorf("check EL imports: node %s, slot %d: %w", el.Node, p.Slot, err)
}
