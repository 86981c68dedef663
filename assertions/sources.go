package assertions

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/segdiff/segdiff/metrics"
)

// CheckSourcesAgree names the agreement of the two sources in verdicts.
const CheckSourcesAgree = "contract completion vs " + metrics.TopicPayloadAvailable + ", every node and warm slot"

// SourcesAgree checks that, on every receiver both records hold, the
// contract's completion time and the standard source's
// execution_payload_available time of each slot differ by at most
// tolerance (seconds). Both are instants on one host's clock in a Kurtosis
// enclave; the standard one also carries the event's delivery. Measured is
// the largest difference, Worst the nodes with the largest. A reading
// either record lacks fails closed, naming it; so do records without a
// common receiver.
func SourcesAgree(contract, standard Network, slots []uint64, tolerance float64) Verdict {
	v := Verdict{Check: CheckSourcesAgree, Unit: UnitSeconds, Op: OpAtMost, Budget: tolerance}
	if contract.Origin == metrics.OriginStandardAPI || standard.Origin != metrics.OriginStandardAPI {
		v.Reason = fmt.Sprintf("needs a contract record and a standard API record, got %s and %s", contract.Origin, standard.Origin)
		return v
	}
	receivers, err := checkInputs(contract, slots, CheckSourcesAgree)
	if err != nil {
		v.Reason = err.Error()
		return v
	}
	miss := &MissingReadings{What: CheckSourcesAgree}
	var samples []Sample
	for _, c := range receivers {
		s, ok := standard.node(c.ID)
		if !ok {
			continue
		}
		for _, slot := range slots {
			ct, ok1 := c.times(slot, miss, SeriesCompleted)
			st, ok2 := s.times(slot, miss, SeriesCompleted)
			if ok1 && ok2 {
				samples = append(samples, Sample{Node: c.ID, Link: c.Link, Slot: slot, Value: math.Abs(st[0].Sub(ct[0]).Seconds())})
			}
		}
	}
	if len(miss.Missing) > 0 {
		v.Reason = miss.Error()
		return v
	}
	if len(samples) == 0 {
		v.Reason = "no receiver is in both records"
		return v
	}
	return AllAtMost(CheckSourcesAgree, UnitSeconds, samples, tolerance)
}

// Populations splits samples by the population of their node (of maps a
// node id to its population); a node of no population is an error naming
// it.
func Populations(samples []Sample, of map[string]string) (map[string][]Sample, error) {
	out := map[string][]Sample{}
	for _, s := range samples {
		p, ok := of[s.Node]
		if !ok {
			return nil, fmt.Errorf("node %s belongs to no population", s.Node)
		}
		out[p] = append(out[p], s)
	}
	return out, nil
}

// GapNote lists the gaps of slots on n's nodes ("" when none): what a
// verdict over those slots reports beside its figure, so that a slot the
// source could not watch whole is never passed over silently.
func GapNote(n Network, slots []uint64) string {
	var parts []string
	for _, node := range n.Nodes {
		for _, slot := range slots {
			if g := node.Gaps[slot]; g != "" {
				parts = append(parts, fmt.Sprintf("node %s slot %d: %s", node.ID, slot, g))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	sort.Strings(parts)
	return fmt.Sprintf("%s gaps in the measured slots (readings there may be late or lost): %s", n.Origin, strings.Join(parts, "; "))
}
