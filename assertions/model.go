package assertions

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/metrics"
)

// Series names one per-slot series of the metrics contract in messages
// (package metrics' names, the distinguishing label in braces).
type Series string

// Per-slot series the assertions read.
const (
	SeriesReveal          Series = metrics.NameRevealTimestamp
	SeriesPayloadRaw      Series = metrics.NamePayloadSize + `{encoding="raw"}`
	SeriesPayloadSize     Series = metrics.NamePayloadSize + `{encoding="compressed"}`
	SeriesSegments        Series = metrics.NamePayloadSegments
	SeriesBlockArrival    Series = metrics.NameBlockArrivalTimestamp
	SeriesBlockInstalled  Series = metrics.NameBlockInstalledTimestamp
	SeriesFirstArrival    Series = metrics.NameFirstArrivalTimestamp
	SeriesCompleted       Series = metrics.NameCompletedTimestamp
	SeriesDataBytes       Series = metrics.NameReceivedBytes + `{kind="data"}`
	SeriesControlBytes    Series = metrics.NameReceivedBytes + `{kind="control"}`
	SeriesSegmentsRecv    Series = metrics.NameSegmentsReceived
	SeriesNetDataBytes    Series = metrics.NameNetworkCompletionBytes + `{kind="data"}`
	SeriesNetControlBytes Series = metrics.NameNetworkCompletionBytes + `{kind="control"}`
)

// series reads each Series from a slot: a time, or a count.
var series = map[Series]struct {
	time  func(*metrics.Slot) time.Time
	count func(*metrics.Slot) uint64
}{
	SeriesReveal:          {time: func(s *metrics.Slot) time.Time { return s.Reveal }},
	SeriesPayloadRaw:      {count: func(s *metrics.Slot) uint64 { return s.RawSize }},
	SeriesPayloadSize:     {count: func(s *metrics.Slot) uint64 { return s.CompressedSize }},
	SeriesSegments:        {count: func(s *metrics.Slot) uint64 { return s.SegmentCount }},
	SeriesBlockArrival:    {time: func(s *metrics.Slot) time.Time { return s.BlockArrival }},
	SeriesBlockInstalled:  {time: func(s *metrics.Slot) time.Time { return s.BlockInstalled }},
	SeriesFirstArrival:    {time: func(s *metrics.Slot) time.Time { return s.FirstArrival }},
	SeriesCompleted:       {time: func(s *metrics.Slot) time.Time { return s.Completed }},
	SeriesDataBytes:       {count: func(s *metrics.Slot) uint64 { return s.DataBytes }},
	SeriesControlBytes:    {count: func(s *metrics.Slot) uint64 { return s.ControlBytes }},
	SeriesSegmentsRecv:    {count: func(s *metrics.Slot) uint64 { return s.Segments }},
	SeriesNetDataBytes:    {count: func(s *metrics.Slot) uint64 { return s.DataBytesByNetworkCompletion }},
	SeriesNetControlBytes: {count: func(s *metrics.Slot) uint64 { return s.ControlBytesByNetworkCompletion }},
}

const (
	maxListedMissing = 8 // missing readings named in one error
	maxWorst         = 5 // offenders a verdict keeps
)

// Node is one node's record: who it is and its readings of every slot.
type Node struct {
	// ID names the node in verdicts (devnet.Node.ID).
	ID string
	// Link is the node's link class ("home", "datacenter", ...).
	Link string
	// Builder marks a node that reveals payloads; builders are not receivers.
	Builder bool
	// Role is the adversarial diffusion role the node plays (package role's
	// name), "" for the honest relay: verdicts cover honest receivers only.
	Role string
	// Slots holds the node's typed readings per slot (package metrics). A
	// slot absent here, or a series absent from its slot, is a missing
	// reading.
	Slots map[uint64]*metrics.Slot
	// Client names the node's implementation (devnet.Node.Client); errors
	// about the standard source name it.
	Client string
	// Origin is the source the readings came from (the network's).
	Origin metrics.Origin
	// Gaps are the slots the source could not watch whole on this node,
	// with why (metrics.Snapshot.Gaps): a reading missing from one is a
	// gap, not a clean absence.
	Gaps map[uint64]string
}

// Honest reports whether n plays no adversarial role.
func (n Node) Honest() bool { return n.Role == "" || n.Role == role.Relay.Name }

// reading returns n's slot when it carries series s, else a *MissingError
// (naming the gap when the source could not watch the slot whole).
func (n Node) reading(s Series, slot uint64) (*metrics.Slot, *MissingError) {
	st := n.Slots[slot]
	if st != nil && st.HasSeries(string(s)) {
		return st, nil
	}
	m := &MissingError{Node: n.ID, Series: s, Slot: slot, NoSeries: true, Origin: n.Origin, Client: n.Client}
	for _, other := range n.Slots {
		if other.HasSeries(string(s)) {
			m.NoSeries = false
			break
		}
	}
	if gap := n.Gaps[slot]; gap != "" {
		m.NoSeries, m.Gap, m.Detail = false, true, "gap: "+gap
	}
	return nil, m
}

// Time returns n's reading of time series s at slot, or a *MissingError.
func (n Node) Time(s Series, slot uint64) (time.Time, *MissingError) {
	st, miss := n.reading(s, slot)
	if miss != nil {
		return time.Time{}, miss
	}
	return series[s].time(st), nil
}

// times reads time series ss of n at slot; every one missing is added to
// miss, and ok is false unless all were read.
func (n Node) times(slot uint64, miss *MissingReadings, ss ...Series) (out []time.Time, ok bool) {
	out, ok = make([]time.Time, len(ss)), true
	for i, s := range ss {
		t, m := n.Time(s, slot)
		if m != nil {
			miss.Missing, ok = append(miss.Missing, *m), false
		}
		out[i] = t
	}
	return out, ok
}

// Count returns n's reading of count series s at slot, or a *MissingError.
func (n Node) Count(s Series, slot uint64) (uint64, *MissingError) {
	st, miss := n.reading(s, slot)
	if miss != nil {
		return 0, miss
	}
	return series[s].count(st), nil
}

// Network is one devnet's measurement record: every node's readings of
// every slot, and the PTC's votes where the source has them. The suite
// builds it from the nodes' metrics (FromSnapshots), the embedded devnet's
// simulation from the same metrics in process, so every figure is computed
// by this package from the one record.
type Network struct {
	// Origin is the source every node's readings came from; verdicts
	// computed on the record name it.
	Origin metrics.Origin
	Nodes  []Node
	// PTC holds the payload-timeliness committee's votes per slot (nil when
	// the source reads them separately, as the suite does from the beacon
	// API).
	PTC map[uint64]devnet.PTCVotes
}

// FromSnapshots builds the record of nodes from their metrics snapshots
// (by node id; a node without one has no readings, so every check that
// needs it fails naming it). The snapshots' origin is the record's; two
// origins in one record, or a node holding a role segdiff does not know,
// is an error (the second could not be counted as honest or not).
func FromSnapshots(nodes []devnet.Node, snaps map[string]*metrics.Snapshot) (Network, error) {
	net := Network{Nodes: make([]Node, 0, len(nodes)), Origin: metrics.OriginContract}
	first := true
	for _, n := range nodes {
		if snap := snaps[n.ID]; snap != nil {
			o := metrics.Origin(snap.Origin.String())
			if !first && o != net.Origin {
				return Network{}, fmt.Errorf("node %s's readings come from the %s, the others' from the %s: one record holds one source", n.ID, o, net.Origin)
			}
			net.Origin, first = o, false
		}
	}
	for _, n := range nodes {
		an := Node{ID: n.ID, Link: string(n.LinkClass), Builder: n.HasRole(devnet.RoleBuilder), Client: n.Client, Origin: net.Origin}
		for _, r := range n.Roles {
			switch {
			case !r.Known():
				return Network{}, fmt.Errorf("node %s holds role %q, which is neither a node function nor a diffusion role (%s)", n.ID, r, strings.Join(role.Names(), ", "))
			case r.Adversarial():
				an.Role = string(r)
			}
		}
		if snap := snaps[n.ID]; snap != nil {
			an.Slots, an.Gaps = snap.Slots, snap.Gaps
		}
		net.Nodes = append(net.Nodes, an)
	}
	return net, nil
}

// Reveal is a builder's publication of one slot's payload.
type Reveal struct {
	Slot    uint64
	Builder string // node id of the builder that revealed it
	At      time.Time
}

// Reveals returns every slot's reveal, read from the nodes' reveal series:
// a builder's, or, where proposers build their own payloads (self-build
// bids), the slot's proposer's. When two nodes report the same slot the
// earlier reveal wins, as the payload existed from then on. The node that
// revealed a slot is not a receiver of it (Network.Receives).
func (n Network) Reveals() map[uint64]Reveal {
	out := map[uint64]Reveal{}
	for _, node := range n.Nodes {
		for slot, st := range node.Slots {
			if !st.Has(metrics.NameRevealTimestamp) {
				continue
			}
			if r, ok := out[slot]; ok && !st.Reveal.Before(r.At) {
				continue
			}
			out[slot] = Reveal{Slot: slot, Builder: node.ID, At: st.Reveal}
		}
	}
	return out
}

// Receives reports whether node received slot's payload from the network:
// it did not reveal it (reveals is Reveals()).
func Receives(node Node, slot uint64, reveals map[uint64]Reveal) bool {
	return reveals[slot].Builder != node.ID
}

// ReceivingPairs counts the (receiver, slot) pairs of slots: every receiver
// and slot but a self-building proposer's own.
func (n Network) ReceivingPairs(slots []uint64) int {
	reveals := n.Reveals()
	pairs := 0
	for _, node := range n.Receivers() {
		for _, slot := range slots {
			if Receives(node, slot, reveals) {
				pairs++
			}
		}
	}
	return pairs
}

// Receivers returns the honest nodes that do not hold the builder role,
// sorted by id. A self-building proposer is one of them, except for the
// slots it revealed (Receives).
func (n Network) Receivers() []Node {
	var out []Node
	for _, node := range n.Nodes {
		if !node.Builder && node.Honest() {
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
	// Gap is set when the source could not watch the slot whole on the
	// node (Detail says why): a measurement gap, never a diffusion failure.
	Gap bool
	// Origin is the source the reading was wanted from; Client the node's
	// implementation. A standard-API reading is named by what that source
	// reads (an event, an endpoint, a client's counter) and its node by its
	// client too.
	Origin metrics.Origin
	Client string
}

// who names the node, with its client for a standard-API reading.
func (e *MissingError) who() string {
	if e.Origin == metrics.OriginStandardAPI && e.Client != "" {
		return fmt.Sprintf("node %s (%s)", e.Node, e.Client)
	}
	return "node " + e.Node
}

// what names the missing reading: the series, or what the standard source
// reads for it.
func (e *MissingError) what() string {
	if e.Origin == metrics.OriginStandardAPI {
		return "standard API reading " + e.Origin.Reading(string(e.Series))
	}
	return "series " + string(e.Series)
}

func (e *MissingError) Error() string {
	if e.Stranded {
		if e.Detail != "" {
			return fmt.Sprintf("%s never completed slot %d (%s)", e.who(), e.Slot, e.Detail)
		}
		return fmt.Sprintf("%s never completed slot %d", e.who(), e.Slot)
	}
	detail := ""
	if e.Detail != "" {
		detail = " (" + e.Detail + ")"
	}
	if e.NoSeries {
		return fmt.Sprintf("%s: %s missing (wanted slot %d%s)", e.who(), e.what(), e.Slot, detail)
	}
	return fmt.Sprintf("%s: %s has no value for slot %d%s", e.who(), e.what(), e.Slot, detail)
}

// MissingReadings lists every missing reading of one extraction.
type MissingReadings struct {
	What    string // what was being computed
	Missing []MissingError
}

// AllStranded reports whether every missing reading is a stranded node (a
// diffusion failure), none a metrics gap.
func (e *MissingReadings) AllStranded() bool {
	for _, m := range e.Missing {
		if !m.Stranded {
			return false
		}
	}
	return len(e.Missing) > 0
}

func (e *MissingReadings) Error() string {
	// Stranded nodes first (a diffusion failure: node, slots, parts held),
	// then metrics gaps; one clause per node and series, listing its slots.
	type key struct {
		who, what string
		noSeries  bool
		stranded  bool
	}
	var order []key
	slots := map[key][]string{}
	stranded, nodes := 0, map[string]bool{}
	for _, m := range e.Missing {
		k := key{m.who(), m.what(), m.NoSeries && !m.Stranded, m.Stranded}
		if m.Stranded {
			k.what = ""
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
			fmt.Fprintf(&b, "; %s never completed slot%s %s", k.who, plural, strings.Join(slots[k], ", "))
		case k.noSeries:
			fmt.Fprintf(&b, "; %s: %s missing (wanted slot%s %s)", k.who, k.what, plural, strings.Join(slots[k], ", "))
		default:
			fmt.Fprintf(&b, "; %s: %s has no value for slot%s %s", k.who, k.what, plural, strings.Join(slots[k], ", "))
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
