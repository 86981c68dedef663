package beacon

import (
	"context"
	"fmt"
	"time"

	eth2client "github.com/attestantio/go-eth2-client"
	"github.com/attestantio/go-eth2-client/api"

	"github.com/segdiff/segdiff/internal/chainview"
)

// ReadTiming builds the slot clock from the node's genesis time and spec.
// The slot duration is SLOT_DURATION_MS when the spec has it (Gloas configs),
// else SECONDS_PER_SLOT. PayloadDueBPS is PAYLOAD_DUE_BPS, or 0 when the node
// does not expose it (callers then fall back to the devnet's configuration).
func ReadTiming(ctx context.Context, g eth2client.GenesisProvider, s eth2client.SpecProvider) (chainview.Timing, error) {
	gen, err := g.Genesis(ctx, &api.GenesisOpts{})
	if err != nil {
		return chainview.Timing{}, fmt.Errorf("read genesis: %w", err)
	}
	if gen.Data == nil || gen.Data.GenesisTime.IsZero() {
		return chainview.Timing{}, fmt.Errorf("read genesis: %w: genesis_time", ErrNoSpecValue)
	}
	sp, err := s.Spec(ctx, &api.SpecOpts{})
	if err != nil {
		return chainview.Timing{}, fmt.Errorf("read spec: %w", err)
	}
	slot, err := slotDuration(sp.Data)
	if err != nil {
		return chainview.Timing{}, fmt.Errorf("read spec: %w", err)
	}
	bps, _, err := specUint(sp.Data, "PAYLOAD_DUE_BPS")
	if err != nil {
		return chainview.Timing{}, fmt.Errorf("read spec: %w", err)
	}
	if bps > 10000 {
		return chainview.Timing{}, fmt.Errorf("read spec: PAYLOAD_DUE_BPS %d exceeds 10000", bps)
	}
	return chainview.Timing{Genesis: gen.Data.GenesisTime, SlotDuration: slot, PayloadDueBPS: bps}, nil
}

func slotDuration(spec map[string]any) (time.Duration, error) {
	ms, ok, err := specUint(spec, "SLOT_DURATION_MS")
	if err != nil {
		return 0, err
	}
	if ok && ms > 0 {
		return time.Duration(ms) * time.Millisecond, nil
	}
	// go-eth2-client parses SECONDS_PER_* values into time.Duration.
	switch v := spec["SECONDS_PER_SLOT"].(type) {
	case time.Duration:
		if v > 0 {
			return v, nil
		}
	case uint64:
		if v > 0 {
			return time.Duration(v) * time.Second, nil
		}
	}
	return 0, fmt.Errorf("%w: neither SLOT_DURATION_MS nor SECONDS_PER_SLOT is a positive number", ErrNoSpecValue)
}

// specUint reads a numeric spec value; ok is false when the key is absent.
func specUint(spec map[string]any, key string) (uint64, bool, error) {
	v, present := spec[key]
	if !present {
		return 0, false, nil
	}
	switch n := v.(type) {
	case uint64:
		return n, true, nil
	}
	return 0, false, fmt.Errorf("%w: %s has type %T (value %v), want a number", ErrNoSpecValue, key, v, v)
}
