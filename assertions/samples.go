package assertions

import (
	"errors"
	"fmt"
	"sort"

	"github.com/segdiff/segdiff/metrics"
)

// ErrNoBuilder is returned when no node holds the builder role or reports a
// reveal, so no reveal
// can anchor a measurement.
var ErrNoBuilder = errors.New("no node holds the builder role or reports a reveal")

// ErrNoReceivers is returned when every node is a builder.
var ErrNoReceivers = errors.New("no receiving (non-builder) nodes")

// WarmSlots returns the slots with a builder reveal except the first, sorted
// ascending. Fewer than one warm slot is an error naming the reveal series.
func WarmSlots(n Network) ([]uint64, error) {
	if len(n.Nodes) == 0 {
		return nil, errors.New("select warm slots: network has no nodes")
	}
	reveals := n.Reveals()
	hasBuilder := len(reveals) > 0
	for _, node := range n.Nodes {
		hasBuilder = hasBuilder || node.Builder
	}
	if !hasBuilder {
		return nil, fmt.Errorf("select warm slots: %w", ErrNoBuilder)
	}
	slots := make([]uint64, 0, len(reveals))
	for s := range reveals {
		slots = append(slots, s)
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i] < slots[j] })
	if len(slots) < 2 {
		return nil, fmt.Errorf("select warm slots: series %s holds %d slots, need at least 2 (the first is cold)", SeriesReveal, len(slots))
	}
	return slots[1:], nil
}

// Completion returns, for every receiving node and slot, the node's
// completion time minus the builder's reveal of that slot, in seconds.
func Completion(n Network, slots []uint64) ([]Sample, error) {
	return fromReveal(n, slots, SeriesCompleted, "completion from reveal")
}

func fromReveal(n Network, slots []uint64, s Series, what string) ([]Sample, error) {
	receivers, err := checkInputs(n, slots, what)
	if err != nil {
		return nil, err
	}
	reveals := n.Reveals()
	miss := &MissingReadings{What: what}
	for _, slot := range slots {
		if _, ok := reveals[slot]; !ok {
			miss.Missing = append(miss.Missing, MissingError{Node: "(any builder)", Series: SeriesReveal, Slot: slot, Origin: n.Origin})
		}
	}
	var out []Sample
	for _, node := range receivers {
		for _, slot := range slots {
			r, ok := reveals[slot]
			if !ok || !Receives(node, slot, reveals) {
				continue
			}
			at, m := node.Time(s, slot)
			if m != nil {
				if s == SeriesCompleted && !m.Gap {
					// A node that received parts of the slot implements the
					// contract: it is stranded, whether or not it completed
					// any other slot.
					if d, ok := partsHeld(n, node, r); ok {
						m.Detail, m.Stranded = d, true
					} else if !m.NoSeries {
						m.Stranded = true
					}
				}
				miss.Missing = append(miss.Missing, *m)
				continue
			}
			out = append(out, Sample{Node: node.ID, Link: node.Link, Slot: slot, Value: at.Sub(r.At).Seconds()})
		}
	}
	if len(miss.Missing) > 0 {
		return out, miss
	}
	return out, nil
}

// CopiesDefinition says which bytes a copies figure counts. Every copies
// figure names its definition: the two differ by the duplicates that
// arrive after the last node completed (tier 3 at 100 nodes: 2.1–2.3 by
// network completion, 2.8–3.1 over the slot).
type CopiesDefinition int

// The definitions of copies.
const (
	// CopiesOverSlot counts every byte of the slot's payload a node
	// received, late duplicates included: what the metrics contract's
	// per-slot received_bytes carry on any client.
	CopiesOverSlot CopiesDefinition = iota
	// CopiesByNetworkCompletion counts the bytes received by the time the
	// last honest node completed the slot: the design's accounting, known
	// only to the embedded devnet (received_bytes_by_network_completion).
	CopiesByNetworkCompletion
	// CopiesDataOverSlot counts the message data of the payload topics a
	// node received during the slot, without gossip control bytes: what
	// the standard source reads from a client's per-topic byte counter
	// (metrics.TopicBytesSeries).
	CopiesDataOverSlot
)

// String names the definition as figures label it.
func (d CopiesDefinition) String() string {
	switch d {
	case CopiesByNetworkCompletion:
		return "by network completion"
	case CopiesDataOverSlot:
		return "over the slot (message data only)"
	}
	return "over the slot"
}

// CopiesFor is the over-the-slot definition origin o can count: data and
// control bytes from the contract, message data only from the standard
// source.
func CopiesFor(o metrics.Origin) CopiesDefinition {
	if o == metrics.OriginStandardAPI {
		return CopiesDataOverSlot
	}
	return CopiesOverSlot
}

// Copies returns, for every receiving node and slot, the bytes received for
// the slot's payload (data + control) as def counts them, divided by the
// payload's compressed size as the builder reported it.
func Copies(n Network, slots []uint64, def CopiesDefinition) ([]Sample, error) {
	what := "payload copies received " + def.String()
	receivers, err := checkInputs(n, slots, what)
	if err != nil {
		return nil, err
	}
	miss := &MissingReadings{What: what}
	readings := builderReadings(n, slots, SeriesPayloadSize, miss)
	size := map[uint64]float64{}
	for _, slot := range slots {
		r, ok := readings[slot]
		if !ok {
			continue
		}
		if r.Value <= 0 {
			return nil, fmt.Errorf("%s: node %s reports %s = %g for slot %d, want > 0", what, r.Node, SeriesPayloadSize, r.Value, slot)
		}
		size[slot] = r.Value
	}
	bytes := []Series{SeriesDataBytes, SeriesControlBytes}
	switch def {
	case CopiesByNetworkCompletion:
		bytes = []Series{SeriesNetDataBytes, SeriesNetControlBytes}
	case CopiesDataOverSlot:
		bytes = []Series{SeriesDataBytes}
	}
	var out []Sample
	reveals := n.Reveals()
	for _, node := range receivers {
		for _, slot := range slots {
			sz, ok := size[slot]
			if !ok || !Receives(node, slot, reveals) {
				continue
			}
			var sum uint64
			complete := true
			for _, s := range bytes {
				b, m := node.Count(s, slot)
				if m != nil && !receivedNothing(node, s, slot, m) {
					miss.Missing = append(miss.Missing, *m)
					complete = false
					continue
				}
				sum += b
			}
			if complete {
				out = append(out, Sample{Node: node.ID, Link: node.Link, Slot: slot, Value: float64(sum) / sz})
			}
		}
	}
	if len(miss.Missing) > 0 {
		return out, miss
	}
	return out, nil
}

// receivedNothing reports whether byte reading s, missing for slot, means
// the node received none of it. The contract's received_bytes are added as
// bytes arrive, so a node that never completed the slot, exports the
// series for other slots and was watched whole lacks the value because
// nothing came (a node stranded with no part of the payload). A node that
// completed the slot received its bytes: their absence stays a gap.
func receivedNothing(node Node, s Series, slot uint64, m *MissingError) bool {
	if m.NoSeries || m.Gap || (s != SeriesDataBytes && s != SeriesControlBytes) {
		return false
	}
	_, notDone := node.Time(SeriesCompleted, slot)
	return notDone != nil
}

// InstallDelay returns, for every node (builders included: they install the
// block too) and slot, block installed minus block arrival, in seconds.
func InstallDelay(n Network, slots []uint64) ([]Sample, error) {
	const what = "block install delay"
	if _, err := checkInputs(n, slots, what); err != nil && !errors.Is(err, ErrNoReceivers) {
		return nil, err
	}
	nodes := append([]Node(nil), n.Nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	miss := &MissingReadings{What: what}
	var out []Sample
	for _, node := range nodes {
		for _, slot := range slots {
			if t, ok := node.times(slot, miss, SeriesBlockArrival, SeriesBlockInstalled); ok {
				out = append(out, Sample{Node: node.ID, Link: node.Link, Slot: slot, Value: t[1].Sub(t[0]).Seconds()})
			}
		}
	}
	if len(miss.Missing) > 0 {
		return out, miss
	}
	return out, nil
}

func checkInputs(n Network, slots []uint64, what string) ([]Node, error) {
	if len(n.Nodes) == 0 {
		return nil, fmt.Errorf("%s: network has no nodes", what)
	}
	if len(slots) == 0 {
		return nil, fmt.Errorf("%s: no slots selected", what)
	}
	r := n.Receivers()
	if len(r) == 0 {
		return nil, fmt.Errorf("%s: %w", what, ErrNoReceivers)
	}
	return r, nil
}

// partsHeld says how many of the revealed payload's parts a node that never
// completed it held (a stranded node is reported with what it lacked);
// false when the node reports no parts received for the slot.
func partsHeld(n Network, node Node, r Reveal) (string, bool) {
	held, m := node.Count(SeriesSegmentsRecv, r.Slot)
	if m != nil {
		return "", false
	}
	b, _ := n.node(r.Builder)
	total, m := b.Count(SeriesSegments, r.Slot)
	if m != nil {
		return fmt.Sprintf("holding %d parts", held), true
	}
	return fmt.Sprintf("holding %d of %d parts", held, total), true
}
