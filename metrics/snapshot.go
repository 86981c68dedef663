package metrics

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Snapshot is one node's contract series at one scrape, typed. Build it with
// Parse or FromSamples; it is not safe for concurrent mutation, but may be
// read concurrently.
type Snapshot struct {
	// Source names where the series came from (a URL, a file, "node-3 via
	// prometheus"); errors use it.
	Source string
	// Origin is the measurement source the readings came from; Parse and
	// FromSamples read the contract ("" reads as OriginContract).
	Origin Origin
	Info   Info
	// Slots holds every slot that has at least one per-slot series.
	Slots  map[uint64]*Slot
	Totals Totals
	// Unknown lists series names with the contract namespace that the
	// contract does not define (typos in a client patch show up here), sorted.
	Unknown []string
	// TopicBytes is TopicBytesSeries summed over PayloadTopics and both
	// values of is_partial, when the exposition has it (HasTopicBytes): a
	// counter of the node's lifetime, not of one slot.
	TopicBytes    uint64
	HasTopicBytes bool
	// ReceiveBlockMillis and ReceiveBlocks are ReceiveBlockSeries's sum and
	// count when the exposition has it (HasReceiveBlock): the node's
	// lifetime, not one slot's.
	ReceiveBlockMillis float64
	ReceiveBlocks      uint64
	HasReceiveBlock    bool
	// Gaps holds the slots the source could not watch whole, each with why
	// (an event stream that was down for part of the slot): a reading
	// missing from such a slot is reported as a gap, never as a clean
	// absence. Nil for an exposition.
	Gaps map[uint64]string

	present map[string]bool // non-slot contract names seen
}

// Info is the payload_diffusion_info series.
type Info struct {
	Mode, Format, Client string
	Present              bool
}

// Totals are the series not labelled by slot.
type Totals struct {
	DataBytes    uint64            // payload_diffusion_received_bytes_total{kind="data"}
	ControlBytes uint64            // payload_diffusion_received_bytes_total{kind="control"}
	Rejected     map[string]uint64 // payload_diffusion_segments_rejected_total by reason
	Deferred     uint64            // payload_diffusion_segments_deferred_total
	InstallDelay Histogram         // payload_diffusion_block_install_delay_seconds
}

// Histogram is a classic Prometheus histogram.
type Histogram struct {
	Count   uint64
	Sum     float64
	Buckets []Bucket // finite upper bounds, ascending; cumulative counts
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// Slot is one slot's per-slot series on one node. A time is zero and a count
// is 0 when its series is absent; Has tells absent from zero.
type Slot struct {
	Number uint64

	Reveal         time.Time // builder only
	RawSize        uint64    // builder only, bytes
	CompressedSize uint64    // builder only, bytes
	SegmentCount   uint64    // builder only, K

	BlockArrival   time.Time
	BlockInstalled time.Time
	FirstArrival   time.Time
	Completed      time.Time
	DataBytes      uint64
	ControlBytes   uint64
	Segments       uint64 // distinct valid segments received
	Duplicates     uint64 // copies beyond the first
	// DataBytesByNetworkCompletion and ControlBytesByNetworkCompletion are
	// DataBytes and ControlBytes as they stood when the last honest node
	// completed the slot (the embedded devnet only).
	DataBytesByNetworkCompletion    uint64
	ControlBytesByNetworkCompletion uint64
	// GossipValid is when the node reported the payload gossip-valid
	// (NamePayloadGossip): the standard source only.
	GossipValid time.Time

	present [numFields]bool
}

// field is one per-slot series (a name plus, where the contract has one, the
// value of its second label).
type field uint8

const (
	fReveal field = iota
	fRawSize
	fCompressedSize
	fSegmentCount
	fBlockArrival
	fBlockInstalled
	fFirstArrival
	fCompleted
	fDataBytes
	fControlBytes
	fSegments
	fDuplicates
	fNetDataBytes
	fNetControlBytes
	fGossip
	numFields
)

// fieldSeries names each field's series in messages.
var fieldSeries = [numFields]string{
	fReveal:          NameRevealTimestamp,
	fRawSize:         NamePayloadSize + `{encoding="raw"}`,
	fCompressedSize:  NamePayloadSize + `{encoding="compressed"}`,
	fSegmentCount:    NamePayloadSegments,
	fBlockArrival:    NameBlockArrivalTimestamp,
	fBlockInstalled:  NameBlockInstalledTimestamp,
	fFirstArrival:    NameFirstArrivalTimestamp,
	fCompleted:       NameCompletedTimestamp,
	fDataBytes:       NameReceivedBytes + `{kind="data"}`,
	fControlBytes:    NameReceivedBytes + `{kind="control"}`,
	fSegments:        NameSegmentsReceived,
	fDuplicates:      NameDuplicateSegments,
	fNetDataBytes:    NameNetworkCompletionBytes + `{kind="data"}`,
	fNetControlBytes: NameNetworkCompletionBytes + `{kind="control"}`,
	fGossip:          NamePayloadGossip,
}

// nameFields maps each per-slot name to the fields it carries.
var nameFields = map[string][]field{
	NameRevealTimestamp:         {fReveal},
	NamePayloadSize:             {fRawSize, fCompressedSize},
	NamePayloadSegments:         {fSegmentCount},
	NameBlockArrivalTimestamp:   {fBlockArrival},
	NameBlockInstalledTimestamp: {fBlockInstalled},
	NameFirstArrivalTimestamp:   {fFirstArrival},
	NameCompletedTimestamp:      {fCompleted},
	NameReceivedBytes:           {fDataBytes, fControlBytes},
	NameSegmentsReceived:        {fSegments},
	NameDuplicateSegments:       {fDuplicates},
	NameNetworkCompletionBytes:  {fNetDataBytes, fNetControlBytes},
	NamePayloadGossip:           {fGossip},
}

// Has reports whether every series of the per-slot contract name is present
// for this slot (both encodings of payload_size_bytes, both kinds of
// received_bytes). An unknown name is never present.
func (s *Slot) Has(name string) bool {
	fs, ok := nameFields[name]
	if !ok {
		return false
	}
	for _, f := range fs {
		if !s.present[f] {
			return false
		}
	}
	return true
}

// HasSeries reports whether one series is present for this slot: a
// per-slot name, or a name with its distinguishing label as errors spell
// it (`payload_diffusion_received_bytes{kind="control"}`). A name with two
// series is present when both are, as Has.
func (s *Slot) HasSeries(series string) bool {
	for f, name := range fieldSeries {
		if name == series {
			return s.present[f]
		}
	}
	return s.Has(series)
}

// InstallDelay returns BlockInstalled − BlockArrival; false when either is absent.
func (s *Slot) InstallDelay() (time.Duration, bool) {
	if !s.present[fBlockArrival] || !s.present[fBlockInstalled] {
		return 0, false
	}
	return s.BlockInstalled.Sub(s.BlockArrival), true
}

// CompletionFrom returns Completed − reveal (the builder's reveal time, from
// the builder's snapshot); false when Completed is absent or reveal is zero.
func (s *Slot) CompletionFrom(reveal time.Time) (time.Duration, bool) {
	if !s.present[fCompleted] || reveal.IsZero() {
		return 0, false
	}
	return s.Completed.Sub(reveal), true
}

// ReceivedBytes returns data + control bytes.
func (s *Slot) ReceivedBytes() uint64 { return s.DataBytes + s.ControlBytes }

// Has reports whether the non-slot contract series name (info, the counters,
// the histogram) was present. For per-slot names use Slot.Has.
func (s *Snapshot) Has(name string) bool { return s.present[name] }

// Slot returns slot's series, or nil when the snapshot has none for it.
func (s *Snapshot) Slot(slot uint64) *Slot { return s.Slots[slot] }

// SlotNumbers returns the slots present, ascending.
func (s *Snapshot) SlotNumbers() []uint64 {
	out := make([]uint64, 0, len(s.Slots))
	for n := range s.Slots {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Require checks that every per-slot series of names is present for slot
// and returns an ErrMissing error naming each absent series (and, as a hint,
// any unknown payload_diffusion_ series the exposition had). A name that is
// not a per-slot contract series is an error too.
func (s *Snapshot) Require(slot uint64, names ...string) error {
	var missing []string
	st := s.Slots[slot]
	for _, name := range names {
		fs, ok := nameFields[name]
		if !ok {
			return fmt.Errorf("require %s: not a per-slot contract series", name)
		}
		for _, f := range fs {
			if st == nil || !st.present[f] {
				missing = append(missing, fieldSeries[f])
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	err := fmt.Errorf("%s: %w for slot %d: %s", s.Source, ErrMissing, slot, strings.Join(missing, ", "))
	if st == nil {
		err = fmt.Errorf("%w (no series for slot %d; slots present: %s)", err, slot, slotRange(s.SlotNumbers()))
	}
	if len(s.Unknown) > 0 {
		err = fmt.Errorf("%w (exposition has unknown series %s)", err, strings.Join(s.Unknown, ", "))
	}
	return err
}

func slotRange(slots []uint64) string {
	switch len(slots) {
	case 0:
		return "none"
	case 1:
		return fmt.Sprint(slots[0])
	}
	return fmt.Sprintf("%d..%d (%d slots)", slots[0], slots[len(slots)-1], len(slots))
}
