package kurtosis

import (
	"context"
	"fmt"

	"github.com/segdiff/segdiff/internal/devnet"
)

var _ devnet.Execution = (*kurtosisDevnet)(nil)

// BidBlockHash reads the bid of slot's block from the attached beacon node.
func (d *kurtosisDevnet) BidBlockHash(ctx context.Context, slot uint64) ([32]byte, error) {
	h, err := d.beacon.BidBlockHash(ctx, slot)
	if err != nil {
		return h, fmt.Errorf("bid from node %s: %w", d.beaconNode, err)
	}
	return h, nil
}

// ELRPCURLs returns the endpoints file's el_rpc_url of every node with one.
func (d *kurtosisDevnet) ELRPCURLs(context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range d.endpoints.Nodes {
		if n.ELRPCURL != "" {
			out[n.ID] = n.ELRPCURL
		}
	}
	return out, nil
}
