package assertions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/segdiff/segdiff/internal/devnet"
)

// PTCTimely checks that in every slot more than half of the payload-timeliness
// committee's positions voted payload_present (PAYLOAD_TIMELY_THRESHOLD =
// PTC_SIZE/2, strictly exceeded), counted as the Gloas fork choice counts
// them: a member's vote sets every position it holds (devnet.PTCVotes).
// votes maps slot to the committee's count; a slot without an entry fails
// naming the slot. Measured is the lowest count, Budget the threshold, Worst
// the slots with the fewest votes; the Note says how many validators held the
// positions where fewer than PTC_SIZE did (a small network).
func PTCTimely(slots []uint64, votes map[uint64]devnet.PTCVotes) Verdict {
	const check = "PTC payload_present votes by committee position per warm slot"
	if len(slots) == 0 {
		return noSamples(check, UnitVotes, OpAbove, 0)
	}
	var missing []string
	var got []devnet.PTCVotes
	for _, s := range slots {
		v, ok := votes[s]
		if !ok {
			missing = append(missing, fmt.Sprint(s))
			continue
		}
		got = append(got, v)
	}
	if len(missing) > 0 {
		return Verdict{Check: check, Unit: UnitVotes, Op: OpAbove, Slots: len(slots),
			Reason: "no PTC votes for slots " + strings.Join(missing, ", ")}
	}
	sort.Slice(got, func(i, j int) bool {
		if got[i].PayloadPresent != got[j].PayloadPresent {
			return got[i].PayloadPresent < got[j].PayloadPresent
		}
		return got[i].Slot < got[j].Slot
	})
	v := Verdict{Check: check, Unit: UnitVotes, Op: OpAbove, Slots: len(got), Samples: len(got),
		Measured: float64(got[0].PayloadPresent), Budget: float64(got[0].Size / 2), Pass: true}
	for _, g := range got {
		if g.Size <= 0 {
			v.Pass, v.Reason = false, fmt.Sprintf("slot %d: committee size %d from %s", g.Slot, g.Size, g.Source)
			return v
		}
		if !g.Timely() {
			v.Pass = false
		}
		// Committee sizes agree on one devnet; take the strictest threshold.
		if t := float64(g.Size / 2); t > v.Budget {
			v.Budget = t
		}
	}
	if low := got[0]; low.Members > 0 && low.Members < low.Size {
		v.Note = fmt.Sprintf("fork choice counts positions: in slot %d, %d of the committee's %d members voted, holding %d of its %d positions",
			low.Slot, low.Voters, low.Members, low.PayloadPresent, low.Size)
	}
	for i, g := range got {
		if i == maxWorst {
			break
		}
		v.Worst = append(v.Worst, Offender{Slot: g.Slot, Value: float64(g.PayloadPresent)})
	}
	return v
}
