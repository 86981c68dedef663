package assertions

import (
	"fmt"
	"sort"

	"github.com/segdiff/segdiff/internal/devnet"
)

// The glamsterdam health checks judge a chain epoch by epoch from what the
// beacon API says (devnet.EpochHealth). Each returns one Verdict per epoch,
// in epoch order, so the report lists every epoch; WorstEpoch turns them
// into the step's error, naming the worst epoch (and its first offending
// slots). No epochs, or an epoch with nothing to count, fails.

// Names of the health checks (the per-epoch verdicts are "<name>, epoch N").
const (
	CheckFinalityLag     = "finality lag (epoch - finalized epoch)"
	CheckParticipation   = "validators attesting with the correct target"
	CheckCanonicalBlocks = "slots with a canonical block"
	CheckExternalBids    = "blocks whose bid came from an external builder"
	CheckRevealedBids    = "bids whose payload the PTC judged present"
)

// FinalityLag checks that in every epoch the finalized epoch (in the state
// at the epoch's last slot) is at most maxLag epochs behind: finality
// advances at least every maxLag epochs.
func FinalityLag(epochs []devnet.EpochHealth, maxLag float64) []Verdict {
	if len(epochs) == 0 {
		return []Verdict{noSamples(CheckFinalityLag, UnitEpochs, OpAtMost, maxLag)}
	}
	out := make([]Verdict, 0, len(epochs))
	for _, e := range epochs {
		v := epochVerdict(CheckFinalityLag, e, UnitEpochs, OpAtMost, maxLag)
		v.Samples = 1
		if e.FinalizedEpoch > e.Epoch {
			v.Reason = fmt.Sprintf("finalized epoch %d is after epoch %d (inconsistent node)", e.FinalizedEpoch, e.Epoch)
		} else {
			v.Measured = float64(e.Epoch - e.FinalizedEpoch)
			v.Pass = OpAtMost.holds(v.Measured, maxLag)
		}
		out = append(out, v)
	}
	return out
}

// Participation checks that in every epoch at least minShare of the
// validators the attestation rewards cover attested with the correct target.
func Participation(epochs []devnet.EpochHealth, minShare float64) []Verdict {
	return perEpochShare(CheckParticipation, epochs, minShare, func(e devnet.EpochHealth) (int, int, []Offender, Unit) {
		return e.CorrectTarget, e.Validators, nil, ""
	})
}

// CanonicalBlocks checks that in every epoch at least minShare of the slots
// have a canonical block; the missed slots are the offenders.
func CanonicalBlocks(epochs []devnet.EpochHealth, minShare float64) []Verdict {
	return perEpochShare(CheckCanonicalBlocks, epochs, minShare, func(e devnet.EpochHealth) (int, int, []Offender, Unit) {
		hit := 0
		var missed []Offender
		for _, s := range e.Slots {
			if s.Block {
				hit++
			} else {
				missed = append(missed, Offender{Slot: s.Slot})
			}
		}
		return hit, len(e.Slots), missed, UnitSlot
	})
}

// ExternalBids checks that in every epoch at least minShare of the blocks
// carry a bid from an external builder (not self-built); the self-built
// slots are the offenders.
func ExternalBids(epochs []devnet.EpochHealth, minShare float64) []Verdict {
	return perEpochShare(CheckExternalBids, epochs, minShare, func(e devnet.EpochHealth) (int, int, []Offender, Unit) {
		hit, blocks, self := blockShare(e, func(s devnet.SlotHealth) bool { return s.ExternalBuilder }, nil)
		return hit, blocks, self, UnitSlot
	})
}

// RevealedBids checks that in every epoch at least minShare of the bids
// (blocks) had their payload judged present by the PTC: more than half of
// the committee voted payload_present in the next slot's block. A bid
// whose votes no block carries was never judged present and counts
// against the share; the offenders are the bids with the fewest votes.
func RevealedBids(epochs []devnet.EpochHealth, minShare float64) []Verdict {
	return perEpochShare(CheckRevealedBids, epochs, minShare, func(e devnet.EpochHealth) (int, int, []Offender, Unit) {
		votes := func(s devnet.SlotHealth) float64 { return float64(s.PTC.PayloadPresent) }
		hit, bids, low := blockShare(e, devnet.SlotHealth.PayloadPresent, votes)
		sort.SliceStable(low, func(i, j int) bool { return low[i].Value < low[j].Value })
		return hit, bids, low, UnitVotes
	})
}

// blockShare counts the epoch's blocks and those for which ok holds; the
// others are the offenders, valued by value (nil: no value).
func blockShare(e devnet.EpochHealth, ok func(devnet.SlotHealth) bool, value func(devnet.SlotHealth) float64) (hit, blocks int, others []Offender) {
	for _, s := range e.Slots {
		if !s.Block {
			continue
		}
		blocks++
		if ok(s) {
			hit++
			continue
		}
		o := Offender{Slot: s.Slot}
		if value != nil {
			o.Value = value(s)
		}
		others = append(others, o)
	}
	return hit, blocks, others
}

// perEpochShare builds one share verdict per epoch from count, which
// returns the numerator, the denominator, the offenders (at most maxWorst
// are kept, in the order given) and their unit.
func perEpochShare(check string, epochs []devnet.EpochHealth, minShare float64,
	count func(devnet.EpochHealth) (hit, total int, worst []Offender, unit Unit)) []Verdict {
	if len(epochs) == 0 {
		return []Verdict{noSamples(check, UnitShare, OpAtLeast, minShare)}
	}
	out := make([]Verdict, 0, len(epochs))
	for _, e := range epochs {
		hit, total, worst, unit := count(e)
		v := epochVerdict(check, e, UnitShare, OpAtLeast, minShare)
		v.Samples = total
		if total == 0 {
			v.Reason = fmt.Sprintf("nothing to count in epoch %d", e.Epoch)
			out = append(out, v)
			continue
		}
		v.Measured = float64(hit) / float64(total)
		v.Pass = OpAtLeast.holds(v.Measured, minShare)
		if len(worst) > maxWorst {
			worst = worst[:maxWorst]
		}
		v.Worst, v.WorstUnit = worst, unit
		out = append(out, v)
	}
	return out
}

func epochVerdict(check string, e devnet.EpochHealth, u Unit, op Op, budget float64) Verdict {
	return Verdict{Check: fmt.Sprintf("%s, epoch %d", check, e.Epoch), Unit: u, Op: op, Budget: budget, Nodes: 1, Slots: len(e.Slots)}
}

// WorstEpoch returns nil when every per-epoch verdict passed, else an error
// naming how many epochs failed and the worst one (the largest distance
// from the budget; a verdict that could not be measured first).
func WorstEpoch(vs []Verdict) error {
	var failed []Verdict
	for _, v := range vs {
		if !v.Pass {
			failed = append(failed, v)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	margin := func(v Verdict) float64 {
		if v.Reason != "" {
			return 1e18
		}
		if v.Op == OpAtMost {
			return v.Measured - v.Budget
		}
		return v.Budget - v.Measured
	}
	worst := failed[0]
	for _, v := range failed[1:] {
		if margin(v) > margin(worst) {
			worst = v
		}
	}
	return fmt.Errorf("%d of %d epochs fail; worst: %s", len(failed), len(vs), worst)
}
