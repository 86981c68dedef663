package assertions

import (
	"fmt"
	"sort"
	"strings"
)

// Series names one per-slot series of the metrics contract. Series with a
// distinguishing label carry it in braces, as Prometheus prints them.
type Series string

// Per-slot series the assertions read.
const (
	SeriesReveal         Series = "payload_diffusion_reveal_timestamp_seconds"
	SeriesPayloadRaw     Series = `payload_diffusion_payload_size_bytes{encoding="raw"}`
	SeriesPayloadSize    Series = `payload_diffusion_payload_size_bytes{encoding="compressed"}`
	SeriesSegments       Series = "payload_diffusion_payload_segments"
	SeriesBlockArrival   Series = "payload_diffusion_block_arrival_timestamp_seconds"
	SeriesBlockInstalled Series = "payload_diffusion_block_installed_timestamp_seconds"
	SeriesFirstArrival   Series = "payload_diffusion_first_arrival_timestamp_seconds"
	SeriesCompleted      Series = "payload_diffusion_completed_timestamp_seconds"
	SeriesDataBytes      Series = `payload_diffusion_received_bytes{kind="data"}`
	SeriesControlBytes   Series = `payload_diffusion_received_bytes{kind="control"}`
	SeriesSegmentsRecv   Series = "payload_diffusion_segments_received"
	SeriesDuplicateRecv  Series = "payload_diffusion_duplicate_segments"
)

const (
	maxListedMissing = 8 // missing readings named in one error
	maxWorst         = 5 // offenders a verdict keeps
)

// Node is one node's per-slot readings.
type Node struct {
	// ID names the node in verdicts (devnet.Node.ID).
	ID string
	// Link is the node's link class ("home", "datacenter", ...).
	Link string
	// Builder marks a node that reveals payloads; builders are not receivers.
	Builder bool
	// Adversary marks a node holding a refusing role of the stress list
	// (withholder, silent, mute): verdicts cover honest receivers only.
	Adversary bool
	// Slots maps a series to its value per slot. A series absent from the
	// map, or a slot absent from a series, is a missing reading.
	Slots map[Series]map[uint64]float64
}

// Value returns n's reading of s at slot, or a *MissingError.
func (n Node) Value(s Series, slot uint64) (float64, error) {
	bySlot, ok := n.Slots[s]
	if !ok {
		return 0, &MissingError{Node: n.ID, Series: s, Slot: slot, NoSeries: true}
	}
	v, ok := bySlot[slot]
	if !ok {
		return 0, &MissingError{Node: n.ID, Series: s, Slot: slot}
	}
	return v, nil
}

// Network is every node's readings from one devnet.
type Network struct {
	Nodes []Node
}

// Reveal is a builder's publication of one slot's payload.
type Reveal struct {
	Slot    uint64
	Builder string  // node id of the builder that revealed it
	At      float64 // Unix seconds
}

// Reveals returns every slot's reveal, read from the builders' reveal series.
// When two builders report the same slot the earlier reveal wins, as the
// payload existed from then on.
func (n Network) Reveals() map[uint64]Reveal {
	out := map[uint64]Reveal{}
	for _, node := range n.Nodes {
		if !node.Builder {
			continue
		}
		for slot, at := range node.Slots[SeriesReveal] {
			if r, ok := out[slot]; ok && r.At <= at {
				continue
			}
			out[slot] = Reveal{Slot: slot, Builder: node.ID, At: at}
		}
	}
	return out
}

// Receivers returns the honest nodes that do not build, sorted by id.
func (n Network) Receivers() []Node {
	var out []Node
	for _, node := range n.Nodes {
		if !node.Builder && !node.Adversary {
			out = append(out, node)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (n Network) node(id string) (Node, bool) {
	for _, node := range n.Nodes {
		if node.ID == id {
			return node, true
		}
	}
	return Node{}, false
}

// MissingError is a reading the contract requires but the node did not
// export.
type MissingError struct {
	Node   string
	Series Series
	Slot   uint64
	// NoSeries is set when the node exports no value of the series at all.
	NoSeries bool
	// Detail says more about the gap, e.g. for a completion never reached
	// how many parts the node held ("holding 28 of 32 parts").
	Detail string
	// Stranded is set for a completion the node never reached although it
	// took part in the slot: a diffusion failure, not a metrics gap.
	Stranded bool
}

func (e *MissingError) Error() string {
	if e.Stranded {
		if e.Detail != "" {
			return fmt.Sprintf("node %s never completed slot %d (%s)", e.Node, e.Slot, e.Detail)
		}
		return fmt.Sprintf("node %s never completed slot %d", e.Node, e.Slot)
	}
	detail := ""
	if e.Detail != "" {
		detail = " (" + e.Detail + ")"
	}
	if e.NoSeries {
		return fmt.Sprintf("node %s: series %s missing (wanted slot %d%s)", e.Node, e.Series, e.Slot, detail)
	}
	return fmt.Sprintf("node %s: series %s has no value for slot %d%s", e.Node, e.Series, e.Slot, detail)
}

// MissingReadings lists every missing reading of one extraction.
type MissingReadings struct {
	What    string // what was being computed
	Missing []MissingError
}

func (e *MissingReadings) Error() string {
	// Stranded nodes first (a diffusion failure: node, slots, parts held),
	// then metrics gaps; one clause per node and series, listing its slots.
	type key struct {
		node     string
		series   Series
		noSeries bool
		stranded bool
	}
	var order []key
	slots := map[key][]string{}
	stranded, nodes := 0, map[string]bool{}
	for _, m := range e.Missing {
		k := key{m.Node, m.Series, m.NoSeries && !m.Stranded, m.Stranded}
		if m.Stranded {
			k.series = ""
			stranded++
			nodes[m.Node] = true
		}
		if _, ok := slots[k]; !ok {
			order = append(order, k)
		}
		slot := fmt.Sprint(m.Slot)
		if m.Detail != "" {
			slot += " (" + m.Detail + ")"
		}
		slots[k] = append(slots[k], slot)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].stranded && !order[j].stranded })
	var b strings.Builder
	switch {
	case stranded == len(e.Missing):
		fmt.Fprintf(&b, "%s: %d nodes never completed (%d node-slots)", e.What, len(nodes), stranded)
	case stranded > 0:
		fmt.Fprintf(&b, "%s: %d nodes never completed (%d node-slots), and %d readings missing", e.What, len(nodes), stranded, len(e.Missing)-stranded)
	default:
		fmt.Fprintf(&b, "%s: %d missing readings", e.What, len(e.Missing))
	}
	for i, k := range order {
		if i == maxListedMissing {
			fmt.Fprintf(&b, "; and %d more nodes or series", len(order)-i)
			break
		}
		plural := ""
		if len(slots[k]) > 1 {
			plural = "s"
		}
		switch {
		case k.stranded:
			fmt.Fprintf(&b, "; node %s never completed slot%s %s", k.node, plural, strings.Join(slots[k], ", "))
		case k.noSeries:
			fmt.Fprintf(&b, "; node %s: series %s missing (wanted slot%s %s)", k.node, k.series, plural, strings.Join(slots[k], ", "))
		default:
			fmt.Fprintf(&b, "; node %s: series %s has no value for slot%s %s", k.node, k.series, plural, strings.Join(slots[k], ", "))
		}
	}
	return b.String()
}

// Sample is one node's measurement for one slot.
type Sample struct {
	Node  string  `json:"node"`
	Link  string  `json:"link"`
	Slot  uint64  `json:"slot"`
	Value float64 `json:"value"`
}
