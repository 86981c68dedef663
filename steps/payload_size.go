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
	fill, fillSrc, err := envBudget("PAYLOAD_FILL", share, assertions.UnitShare)
	if err != nil {
		return err
	}
	size, sizeSrc, err := envBudget("PAYLOAD_BYTES", target, assertions.UnitBytes)
	if err != nil {
		return err
	}
	check := fmt.Sprintf("raw payload size of every warm slot (%s of %s)", assertions.UnitShare.Format(fill), assertions.UnitBytes.Format(size))
	samples, err := assertions.PayloadSizes(o.net, o.slots)
	if err != nil {
		return st.fail(check, assertions.UnitBytes, assertions.OpAtLeast, fill*size, err)
	}
	src := fillSrc
	if sizeSrc != fillSrc {
		src += " and " + sizeSrc
	}
	return st.record(assertions.EverySlotAtLeast(check, assertions.UnitBytes, samples, fill*size), src)
}
