package beacon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/attestantio/go-eth2-client/spec/gloas"

	"github.com/segdiff/segdiff/internal/beacon/beacontest"
)

func TestReadEpochHealth(t *testing.T) {
	const spe = 8
	tests := []struct {
		name            string
		mutate          func(c *beacontest.Chain)
		epoch           uint64
		wantFinalized   uint64
		wantCorrect     int
		wantBlocks      int
		wantExternal    int
		wantPresent     int
		wantNoVotesSlot uint64 // a slot whose block has no votes found; 0 = none
	}{
		{name: "healthy", epoch: 3, wantFinalized: 1, wantCorrect: 64, wantBlocks: 8, wantExternal: 8, wantPresent: 8},
		{name: "epoch 0: genesis slot empty, slot 1 carries no votes for it", epoch: 0, wantFinalized: 0, wantCorrect: 64, wantBlocks: 7, wantExternal: 7, wantPresent: 7},
		{name: "missed slot, self-built bid, withheld payload, low participation", epoch: 2,
			mutate: func(c *beacontest.Chain) {
				c.Miss(18)
				c.SelfBuild(20)
				c.Withhold(21)
				c.SetParticipation(2, 40, 64)
			},
			// slot 17's votes were in block 18, now missing.
			wantFinalized: 0, wantCorrect: 40, wantBlocks: 7, wantExternal: 6, wantPresent: 5, wantNoVotesSlot: 17},
		{name: "stalled finality", epoch: 3, mutate: func(c *beacontest.Chain) { c.Finalized = func(uint64) uint64 { return 0 } },
			wantFinalized: 0, wantCorrect: 64, wantBlocks: 8, wantExternal: 8, wantPresent: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain := beacontest.HealthyChain(time.Unix(1_700_000_000, 0), 5, spe)
			if tt.mutate != nil {
				tt.mutate(chain)
			}
			c := newClient(t, chain)
			ctx := context.Background()
			if got, err := c.SlotsPerEpoch(ctx); err != nil || got != spe {
				t.Fatalf("SlotsPerEpoch = %d, %v", got, err)
			}
			if head, err := c.HeadSlot(ctx); err != nil || head != 5*spe {
				t.Fatalf("HeadSlot = %d, %v; want %d", head, err, 5*spe)
			}
			h, err := c.EpochHealth(ctx, tt.epoch, spe)
			if err != nil {
				t.Fatal(err)
			}
			blocks, external, present := 0, 0, 0
			for _, s := range h.Slots {
				if s.Block {
					blocks++
				}
				if s.ExternalBuilder {
					external++
					if s.BuilderIndex != beacontest.HealthyBuilder {
						t.Errorf("slot %d builder index %d", s.Slot, s.BuilderIndex)
					}
				} else if s.Block && s.BuilderIndex != uint64(gloas.BuilderIndexSelfBuild) {
					t.Errorf("slot %d: not external but builder index %d", s.Slot, s.BuilderIndex)
				}
				if s.PayloadPresent() {
					present++
				}
				if s.Slot == tt.wantNoVotesSlot && s.VotesFound {
					t.Errorf("slot %d: votes found though the next block is missing", s.Slot)
				}
			}
			if len(h.Slots) != spe || h.Epoch != tt.epoch || h.FinalizedEpoch != tt.wantFinalized || h.Validators != 64 ||
				h.CorrectTarget != tt.wantCorrect || blocks != tt.wantBlocks || external != tt.wantExternal || present != tt.wantPresent {
				t.Errorf("got epoch %d: %d slots, finalized %d, %d/%d correct, %d blocks, %d external, %d present; want finalized %d, %d correct, %d blocks, %d external, %d present",
					h.Epoch, len(h.Slots), h.FinalizedEpoch, h.CorrectTarget, h.Validators, blocks, external, present,
					tt.wantFinalized, tt.wantCorrect, tt.wantBlocks, tt.wantExternal, tt.wantPresent)
			}
		})
	}
}

// TestReadEpochHealthFailsWithoutData: an epoch the node has not processed
// (no rewards yet) or a node without finality checkpoints is an error
// naming what is missing, not a healthy-looking zero.
func TestReadEpochHealthFailsWithoutData(t *testing.T) {
	for name, tt := range map[string]struct {
		mutate func(*beacontest.Chain)
		epoch  uint64
		want   string
	}{
		"rewards not yet available": {func(*beacontest.Chain) {}, 5, "read health of epoch 5: attestation rewards"},
		"no finality endpoint":      {func(c *beacontest.Chain) { c.Finalized = nil }, 3, "read health of epoch 3: finality at slot 31"},
	} {
		chain := beacontest.HealthyChain(time.Unix(1_700_000_000, 0), 5, 8)
		tt.mutate(chain)
		_, err := newClient(t, chain).EpochHealth(context.Background(), tt.epoch, 8)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tt.want)
		}
	}
}
