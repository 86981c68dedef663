package beacon

import (
	"context"
	"fmt"
	"strconv"

	eth2client "github.com/attestantio/go-eth2-client"
	"github.com/attestantio/go-eth2-client/api"
	"github.com/golang/snappy"
)

// PayloadSize is the size of one slot's execution payload message as the
// standard API gives it: the signed envelope the execution_payload topic
// carries, SSZ-encoded (Raw) and snappy-compressed in the block format
// gossip sends (Compressed).
type PayloadSize struct {
	Raw, Compressed int
}

// ReadPayloadSize reads slot's signed execution payload envelope
// (GET /eth/v1/beacon/execution_payload_envelopes/{slot}) and measures it.
func ReadPayloadSize(ctx context.Context, p eth2client.ExecutionPayloadProvider, slot uint64) (PayloadSize, error) {
	resp, err := p.SignedExecutionPayloadEnvelope(ctx, &api.SignedExecutionPayloadEnvelopeOpts{Block: strconv.FormatUint(slot, 10)})
	if err != nil {
		return PayloadSize{}, fmt.Errorf("read execution payload envelope of slot %d: %w", slot, err)
	}
	if resp == nil || resp.Data == nil || resp.Data.Gloas == nil || resp.Data.Gloas.Message == nil {
		return PayloadSize{}, fmt.Errorf("read execution payload envelope of slot %d: empty response", slot)
	}
	raw, err := resp.Data.Gloas.MarshalSSZ()
	if err != nil {
		return PayloadSize{}, fmt.Errorf("encode execution payload envelope of slot %d: %w", slot, err)
	}
	return PayloadSize{Raw: len(raw), Compressed: len(snappy.Encode(nil, raw))}, nil
}

// PayloadSize reads slot's payload size from the node; see ReadPayloadSize.
func (c *Client) PayloadSize(ctx context.Context, slot uint64) (PayloadSize, error) {
	p, ok := c.node.(eth2client.ExecutionPayloadProvider)
	if !ok {
		return PayloadSize{}, fmt.Errorf("read execution payload envelope of slot %d: service %T has no envelope provider", slot, c.node)
	}
	return ReadPayloadSize(ctx, p, slot)
}
