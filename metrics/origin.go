package metrics

import (
	"fmt"
	"time"
)

// Origin names where a Snapshot's readings came from. The suite reads one
// typed record (Snapshot, Slot) from either source, and every verdict names
// the origin of the record it was computed on.
type Origin string

// The measurement sources.
const (
	// OriginContract: the node's own payload_diffusion_* series (a client
	// carrying segdiff's patches, or the embedded devnet).
	OriginContract Origin = "contract"
	// OriginStandardAPI: what an unpatched glamsterdam client already
	// offers: its beacon API event stream (/eth/v1/events), its envelope
	// endpoint and, where it exports one, a per-topic byte counter
	// (TopicBytesSeries). Times are taken where the suite receives the
	// event, so they carry the delivery's bias.
	OriginStandardAPI Origin = "standard API"
)

// String returns the origin's name, "contract" for the zero value (Parse's
// snapshots, which predate the label).
func (o Origin) String() string {
	if o == "" {
		return string(OriginContract)
	}
	return string(o)
}

// Event topics of the standard beacon API (/eth/v1/events) the standard
// source subscribes to (beacon-APIs eventstream; go-eth2-client v0.30.1
// decodes each).
const (
	TopicPayloadGossip    = "execution_payload_gossip"    // the envelope passed gossip (topic) validation
	TopicPayloadAvailable = "execution_payload_available" // payload and blobs available, ready for the PTC
	TopicBlockGossip      = "block_gossip"                // the beacon block passed gossip validation
	TopicBlock            = "block"                       // the beacon block was imported
)

// NamePayloadGossip names the one per-slot reading only the standard
// source has: when the node reported the slot's payload gossip-valid
// (execution_payload_gossip). The contract has no such series.
const NamePayloadGossip = "execution_payload_gossip"

// TopicBytesSeries is the per-topic byte counter the standard source reads
// as a byte source where a client exports it: Prysm's bytes of published
// messages received, by topic and whether the message was partial
// (p2p_pubsub_rpc_recv_pub_bytes_total{topic,is_partial}, message data
// only: no gossip control entries).
const TopicBytesSeries = "p2p_pubsub_rpc_recv_pub_bytes_total"

// PayloadTopics are the gossip topic names (the component between
// /eth2/<fork digest>/ and /ssz_snappy) that carry execution payloads:
// the whole envelope and format B's segments. TopicBytesSeries is summed
// over them.
var PayloadTopics = []string{"execution_payload", "execution_payload_segment"}

// StandardReading says what the standard source puts into one per-slot
// series of the record, and how.
type StandardReading struct {
	// Series is the record's series (the contract's name, the
	// distinguishing label in braces, or NamePayloadGossip).
	Series string
	// Reading names what the standard source reads for it, in messages.
	Reading string
	// Definition says how, for the documents.
	Definition string
}

// StandardReadings lists, in record order, every per-slot series the
// standard source fills; a series absent here stays absent on a
// standard-API node (and a check needing it fails closed naming it).
var StandardReadings = []StandardReading{
	{NameRevealTimestamp, "first " + TopicPayloadGossip + " event of the slot on any node",
		"the earliest time any node reported the payload gossip-valid, set on the builder's record (on a network without a builder node, the record of the node holding the slot's proposer, which built its own payload): the builder's hand-off plus at least one hop when its own node does not report its publish"},
	{NamePayloadSize + `{encoding="raw"}`, "signed execution payload envelope (GET /eth/v1/beacon/execution_payload_envelopes/{slot})",
		"SSZ size of the signed envelope, the message the execution_payload topic carries (the contract's raw size is the payload body's)"},
	{NamePayloadSize + `{encoding="compressed"}`, "signed execution payload envelope, snappy",
		"snappy (block format, as gossip sends it) size of that SSZ: one copy of the message on the wire"},
	{NameBlockArrivalTimestamp, TopicBlock + " event less " + ReceiveBlockSeries + "'s time for the block; else the " + TopicBlockGossip + " event",
		"where the client exports " + ReceiveBlockSeries + " (Prysm), the block event's receipt less the time ReceiveBlock took for the slot's block (the summary's sum and count at the slot's boundaries, read a twelfth of a slot before each; a slot in which it counted another number of blocks is a gap): every node has it for every block, its own proposal included; else the receipt of the node's block_gossip event (the block passed gossip validation), which a node does not emit for its own proposal"},
	{NameBlockInstalledTimestamp, TopicBlock + " event", "receipt of the node's block event (the block was imported)"},
	{NamePayloadGossip, TopicPayloadGossip + " event", "receipt of the node's execution_payload_gossip event (the envelope passed gossip validation)"},
	{NameCompletedTimestamp, TopicPayloadAvailable + " event", "receipt of the node's execution_payload_available event (payload and blobs available, ready for the PTC)"},
	{NameReceivedBytes + `{kind="data"}`, TopicBytesSeries + `{topic=~"execution_payload(_segment)?"} at slot boundaries`,
		"the counter summed over the payload topics, sampled at the slot's start and the next slot's start (each read sent a twelfth of a slot before, while the nodes are idle): message data received during the slot; no control bytes"},
}

// Reading names what origin o reads for series in messages: the series
// itself for the contract, the event, endpoint or counter for the
// standard source ("(none)" for a series it does not fill).
func (o Origin) Reading(series string) string {
	if o != OriginStandardAPI {
		return series
	}
	for _, r := range StandardReadings {
		if r.Series == series {
			return r.Reading
		}
	}
	return series + " (the standard API has no reading for it)"
}

// SetTime sets a per-slot time series (a contract name, or
// NamePayloadGossip) on s, marking it present: how a source other than an
// exposition (the standard source) fills the record. An unknown or
// non-time series is an error.
func (s *Slot) SetTime(series string, t time.Time) error {
	f, err := fieldOf(series)
	if err != nil {
		return err
	}
	switch f {
	case fReveal, fBlockArrival, fBlockInstalled, fFirstArrival, fCompleted, fGossip:
	default:
		return fmt.Errorf("set %s: not a time series", series)
	}
	if t.IsZero() {
		return fmt.Errorf("set %s: zero time", series)
	}
	*s.timeField(f) = t
	s.present[f] = true
	return nil
}

// SetCount sets a per-slot count series on s (with its distinguishing
// label, `payload_diffusion_received_bytes{kind="data"}`), marking it
// present. An unknown or non-count series is an error.
func (s *Slot) SetCount(series string, n uint64) error {
	f, err := fieldOf(series)
	if err != nil {
		return err
	}
	switch f {
	case fReveal, fBlockArrival, fBlockInstalled, fFirstArrival, fCompleted, fGossip:
		return fmt.Errorf("set %s: not a count series", series)
	}
	*s.countField(f) = n
	s.present[f] = true
	return nil
}

// fieldOf finds the one field series names.
func fieldOf(series string) (field, error) {
	for f, name := range fieldSeries {
		if name == series {
			return field(f), nil
		}
	}
	if fs, ok := nameFields[series]; ok && len(fs) == 1 {
		return fs[0], nil
	}
	return 0, fmt.Errorf("set %s: not one per-slot series of the record", series)
}

// NewSnapshot returns an empty snapshot of origin o, for a source that
// fills its slots with SetTime and SetCount.
func NewSnapshot(source string, o Origin) *Snapshot {
	return &Snapshot{Source: source, Origin: o, Slots: map[uint64]*Slot{},
		Totals: Totals{Rejected: map[string]uint64{}}, present: map[string]bool{}}
}

// AddSlot returns slot's record in s, creating it.
func (s *Snapshot) AddSlot(slot uint64) *Slot {
	st := s.Slots[slot]
	if st == nil {
		st = &Slot{Number: slot}
		s.Slots[slot] = st
	}
	return st
}
