package steps

import (
	"context"
	"fmt"

	"github.com/segdiff/segdiff/assertions"
)

// payloadAtLeast fails unless every warm slot's payload (the builder's
// payload_diffusion_payload_size_bytes{encoding="raw"}) is at least share of
// target bytes: a devnet without load carries payloads of a few kilobytes,
// one segment each, and no completion or copies budget means anything on
// them. Scenarios assert it before their diffusion budgets.
func (s *Suite) payloadAtLeast(ctx context.Context, share, target string) error {
	st, o, err := single(ctx)
	if err != nil {
		return err
	}
	fill, err := envBudget("PAYLOAD_FILL", share)
	if err != nil {
		return err
	}
	size, err := envBudget("PAYLOAD_BYTES", target)
	if err != nil {
		return err
	}
	check := fmt.Sprintf("raw payload size of every warm slot (%s of %s)", assertions.UnitShare.Format(fill.value), assertions.UnitBytes.Format(size.value))
	samples, err := assertions.PayloadSizes(o.net, o.slots)
	if err != nil {
		return st.fail(check, assertions.UnitBytes, assertions.OpAtLeast, fill.value*size.value, err)
	}
	return st.record(assertions.EverySlotAtLeast(check, assertions.UnitBytes, samples, fill.value*size.value), fill, size)
}
