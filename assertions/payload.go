package assertions

import (
	"fmt"
	"sort"

	"github.com/segdiff/segdiff/internal/stats"
)

// PayloadSizes returns, for every slot, the raw (SSZ) size of the payload
// its builder revealed (payload_diffusion_payload_size_bytes{encoding="raw"}
// of the builder whose reveal the slot has). A slot without a reveal or
// without a size is a missing reading naming the builder and slot.
func PayloadSizes(n Network, slots []uint64) ([]Sample, error) {
	const what = "raw payload size"
	if len(n.Nodes) == 0 {
		return nil, fmt.Errorf("%s: network has no nodes", what)
	}
	if len(slots) == 0 {
		return nil, fmt.Errorf("%s: no slots selected", what)
	}
	miss := &MissingReadings{What: what}
	readings := builderReadings(n, slots, SeriesPayloadRaw, miss)
	out := make([]Sample, 0, len(readings))
	for _, slot := range slots {
		if r, ok := readings[slot]; ok {
			out = append(out, r)
		}
	}
	if len(miss.Missing) > 0 {
		return nil, miss
	}
	return out, nil
}

// EverySlotAtLeast checks that every sample is at least budget. Measured is
// the minimum; Worst lists the smallest samples below the budget, each with
// its node and slot (the smallest overall when none is below), so a failure
// names every short slot and its value, not only each node's worst.
func EverySlotAtLeast(check string, u Unit, samples []Sample, budget float64) Verdict {
	if len(samples) == 0 {
		return noSamples(check, u, OpAtLeast, budget)
	}
	v := Verdict{Check: check, Unit: u, Op: OpAtLeast, Budget: budget, Measured: stats.Quantile(values(samples), 0)}
	coverage(&v, samples)
	v.Pass = OpAtLeast.holds(v.Measured, budget)
	short := make([]Sample, 0, len(samples))
	for _, s := range samples {
		if !v.Pass && s.Value >= budget {
			continue
		}
		short = append(short, s)
	}
	sort.Slice(short, func(i, j int) bool {
		if short[i].Value != short[j].Value {
			return short[i].Value < short[j].Value
		}
		if short[i].Node != short[j].Node {
			return short[i].Node < short[j].Node
		}
		return short[i].Slot < short[j].Slot
	})
	for i, s := range short {
		if i == maxWorst {
			break
		}
		v.Worst = append(v.Worst, Offender(s))
	}
	return v
}

// builderReadings returns, by slot, the value of series s that the builder
// who revealed the slot reports; a slot without a reveal or without the
// value is added to miss instead.
func builderReadings(n Network, slots []uint64, s Series, miss *MissingReadings) map[uint64]Sample {
	reveals := n.Reveals()
	out := map[uint64]Sample{}
	for _, slot := range slots {
		r, ok := reveals[slot]
		if !ok {
			miss.Missing = append(miss.Missing, MissingError{Node: "(any builder)", Series: SeriesReveal, Slot: slot, Origin: n.Origin})
			continue
		}
		b, _ := n.node(r.Builder)
		v, m := b.Count(s, slot)
		if m != nil {
			miss.Missing = append(miss.Missing, *m)
			continue
		}
		out[slot] = Sample{Node: b.ID, Link: b.Link, Slot: slot, Value: float64(v)}
	}
	return out
}
