package assertions_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet"
)

// healthyEpochs are epochs 2..5 of 4 slots: every slot a block from an
// external builder whose payload 400 of 512 PTC members voted present, 64
// of 64 validators correct, finality two epochs behind.
func healthyEpochs() []devnet.EpochHealth {
	var out []devnet.EpochHealth
	for e := uint64(2); e <= 5; e++ {
		h := devnet.EpochHealth{Epoch: e, FinalizedEpoch: e - 2, Validators: 64, CorrectTarget: 64}
		for s := e * 4; s < e*4+4; s++ {
			h.Slots = append(h.Slots, devnet.SlotHealth{Slot: s, Block: true, ExternalBuilder: true, BuilderIndex: 3,
				PTC: devnet.PTCVotes{Slot: s, Size: 512, PayloadPresent: 400}, VotesFound: true})
		}
		out = append(out, h)
	}
	return out
}

func TestHealthChecks(t *testing.T) {
	type check func([]devnet.EpochHealth) []assertions.Verdict
	finality := func(es []devnet.EpochHealth) []assertions.Verdict { return assertions.FinalityLag(es, 3) }
	participation := func(es []devnet.EpochHealth) []assertions.Verdict { return assertions.Participation(es, 0.95) }
	canonical := func(es []devnet.EpochHealth) []assertions.Verdict { return assertions.CanonicalBlocks(es, 0.75) }
	external := func(es []devnet.EpochHealth) []assertions.Verdict { return assertions.ExternalBids(es, 0.75) }
	revealed := func(es []devnet.EpochHealth) []assertions.Verdict { return assertions.RevealedBids(es, 0.75) }
	tests := []struct {
		name    string
		check   check
		mutate  func([]devnet.EpochHealth)
		wantErr string // substring; "" = all epochs pass
	}{
		{"finality healthy", finality, nil, ""},
		{"finality stalled from epoch 3", finality, func(es []devnet.EpochHealth) {
			for i := range es {
				es[i].FinalizedEpoch = 1
			}
		}, "1 of 4 epochs fail; worst: finality lag (epoch - finalized epoch), epoch 5 = 4 epochs, budget <= 3 epochs"},
		{"finality ahead of the epoch", finality, func(es []devnet.EpochHealth) { es[1].FinalizedEpoch = 9 },
			"worst: finality lag (epoch - finalized epoch), epoch 3: finalized epoch 9 is after epoch 3"},
		{"participation healthy", participation, nil, ""},
		{"participation low in epoch 4", participation, func(es []devnet.EpochHealth) {
			es[1].CorrectTarget, es[2].CorrectTarget = 60, 30
		}, "2 of 4 epochs fail; worst: validators attesting with the correct target, epoch 4 = 46.9%, budget >= 95.0%"},
		{"no validators", participation, func(es []devnet.EpochHealth) { es[0].Validators, es[0].CorrectTarget = 0, 0 },
			"epoch 2: nothing to count in epoch 2"},
		{"canonical healthy", canonical, nil, ""},
		{"two missed slots in epoch 3", canonical, func(es []devnet.EpochHealth) { es[1].Slots[1].Block, es[1].Slots[3].Block = false, false },
			"1 of 4 epochs fail; worst: slots with a canonical block, epoch 3 = 50.0%, budget >= 75.0%: FAILED (4 samples over 1 nodes x 4 slots); worst: slot 13, slot 15"},
		{"external healthy", external, nil, ""},
		{"self-built bids in epoch 5", external, func(es []devnet.EpochHealth) {
			for i := range es[3].Slots[:2] {
				es[3].Slots[i].ExternalBuilder = false
			}
		}, "worst: blocks whose bid came from an external builder, epoch 5 = 50.0%, budget >= 75.0%: FAILED (4 samples over 1 nodes x 4 slots); worst: slot 20, slot 21"},
		{"missed slots do not count as self-built", external, func(es []devnet.EpochHealth) { es[0].Slots[0].Block, es[0].Slots[0].ExternalBuilder = false, false }, ""},
		{"revealed healthy", revealed, nil, ""},
		{"a run of unrevealed bids", revealed, func(es []devnet.EpochHealth) {
			for i := 0; i < 3; i++ {
				es[2].Slots[i].PTC.PayloadPresent = 10 * i
			}
		}, "1 of 4 epochs fail; worst: bids whose payload the PTC judged present, epoch 4 = 25.0%, budget >= 75.0%: FAILED (4 samples over 1 nodes x 4 slots); worst: slot 16 0 votes, slot 17 10 votes, slot 18 20 votes"},
		{"exactly half is not present", revealed, func(es []devnet.EpochHealth) {
			for i := range es[0].Slots {
				es[0].Slots[i].PTC.PayloadPresent = 256
			}
		}, "epoch 2 = 0.0%"},
		{"votes never carried count against", revealed, func(es []devnet.EpochHealth) {
			for i := 0; i < 2; i++ {
				es[1].Slots[i].VotesFound = false
			}
		}, "epoch 3 = 50.0%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := healthyEpochs()
			if tt.mutate != nil {
				tt.mutate(es)
			}
			vs := tt.check(es)
			if len(vs) != len(es) {
				t.Fatalf("%d verdicts for %d epochs", len(vs), len(es))
			}
			for i, v := range vs {
				if want := es[i].Epoch; !strings.HasSuffix(v.Check, ", epoch "+strconv.FormatUint(want, 10)) {
					t.Errorf("verdict %d is %q, want epoch %d", i, v.Check, want)
				}
			}
			err := assertions.WorstEpoch(vs)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected failure: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestHealthChecksNoEpochsFail(t *testing.T) {
	for name, vs := range map[string][]assertions.Verdict{
		"finality":      assertions.FinalityLag(nil, 3),
		"participation": assertions.Participation(nil, 0.9),
		"revealed":      assertions.RevealedBids(nil, 0.9),
	} {
		if err := assertions.WorstEpoch(vs); err == nil || !strings.Contains(err.Error(), "no samples") {
			t.Errorf("%s over no epochs: %v, want a no-samples failure", name, err)
		}
	}
}
