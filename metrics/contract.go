// Package metrics is the segdiff metrics contract: the Prometheus series every
// node of an EIP-8411 devnet exports (Recorder), and a typed reader of a
// node's /metrics exposition (Parse, FromSamples) that the suite's assertions
// use.
//
// The contract is data: Definitions lists every series once, and both the
// Recorder's registration and the check of client-patches/METRICS.md derive
// from it.
package metrics

import (
	"slices"

	"github.com/segdiff/segdiff/diffusion/mode"
)

// Metric names of the contract (namespace "payload_diffusion_").
const (
	NameInfo                    = "payload_diffusion_info"
	NameRevealTimestamp         = "payload_diffusion_reveal_timestamp_seconds"
	NamePayloadSize             = "payload_diffusion_payload_size_bytes"
	NamePayloadSegments         = "payload_diffusion_payload_segments"
	NameBlockArrivalTimestamp   = "payload_diffusion_block_arrival_timestamp_seconds"
	NameBlockInstalledTimestamp = "payload_diffusion_block_installed_timestamp_seconds"
	NameBlockInstallDelay       = "payload_diffusion_block_install_delay_seconds"
	NameFirstArrivalTimestamp   = "payload_diffusion_first_arrival_timestamp_seconds"
	NameCompletedTimestamp      = "payload_diffusion_completed_timestamp_seconds"
	NameReceivedBytes           = "payload_diffusion_received_bytes"
	NameSegmentsReceived        = "payload_diffusion_segments_received"
	NameDuplicateSegments       = "payload_diffusion_duplicate_segments"
	NameNetworkCompletionBytes  = "payload_diffusion_received_bytes_by_network_completion"
	NameReceivedBytesTotal      = "payload_diffusion_received_bytes_total"
	NameSegmentsRejectedTotal   = "payload_diffusion_segments_rejected_total"
	NameSegmentsDeferredTotal   = "payload_diffusion_segments_deferred_total"
)

// Namespace is the prefix every contract series carries.
const Namespace = "payload_diffusion_"

// Label names of the contract.
const (
	LabelSlot     = "slot"     // decimal slot number
	LabelKind     = "kind"     // data | control
	LabelEncoding = "encoding" // raw | compressed
	LabelReason   = "reason"   // one of Reasons
	LabelMode     = "mode"     // one of package mode's names
	LabelFormat   = "format"   // wire format id, e.g. "segdiff/1"
	LabelClient   = "client"   // client name
)

// Values of the encoding label.
const (
	EncodingRaw        = "raw"        // SSZ-encoded payload body
	EncodingCompressed = "compressed" // after snappy; the unit of "copies"
)

// Diffusion modes, the values of the info series' mode label (package mode
// holds the full list).
const (
	ModeWhole          = string(mode.Whole)
	ModeSegmented      = string(mode.Segmented)
	ModeSegmentedBatch = string(mode.SegmentedBatch)
)

// Rejection reasons, the values of the reason label of
// payload_diffusion_segments_rejected_total.
const (
	ReasonIndexRange     = "index_range"     // segment index ≥ K
	ReasonSize           = "size"            // segment longer than allowed
	ReasonProof          = "proof"           // Merkle proof does not match the bid's commitment
	ReasonGroupMismatch  = "group_mismatch"  // segment names another payload than its group
	ReasonDecode         = "decode"          // undecodable message
	ReasonInstallTimeout = "install_timeout" // its block was not installed in time
)

// Reasons lists every rejection reason, in contract order.
var Reasons = []string{ReasonIndexRange, ReasonSize, ReasonProof, ReasonGroupMismatch, ReasonDecode, ReasonInstallTimeout}

// Type is a Prometheus metric type as the contract uses it.
type Type string

// Metric types of the contract.
const (
	TypeGauge     Type = "gauge"
	TypeCounter   Type = "counter"
	TypeHistogram Type = "histogram"
)

// Exporter says which nodes export a series.
type Exporter string

// Exporters of the contract. A builder is also a node, so it exports both.
const (
	ExportEveryNode Exporter = "every node"
	ExportBuilder   Exporter = "builder"
	// ExportReference marks a series only the embedded reference network
	// exports: it needs a view of the whole network no client has.
	ExportReference Exporter = "embedded devnet"
)

// Definition is one series of the contract.
type Definition struct {
	Name     string
	Type     Type
	Labels   []string // label names, in exposition order; nil for none
	Unit     string   // "seconds", "bytes", "segments" or "" (dimensionless)
	Exporter Exporter
	Help     string
}

// PerSlot reports whether the series is labelled by slot and therefore
// subject to retention.
func (d Definition) PerSlot() bool { return slices.Contains(d.Labels, LabelSlot) }

// InstallDelayBuckets are the upper bounds (seconds) of
// payload_diffusion_block_install_delay_seconds.
var InstallDelayBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4}

// Definitions is the contract, one entry per series, in document order.
// Callers must not modify it.
var Definitions = []Definition{
	{NameInfo, TypeGauge, []string{LabelMode, LabelFormat, LabelClient}, "", ExportEveryNode,
		"Always 1; labels carry the diffusion mode, the wire format id and the client name."},
	{NameRevealTimestamp, TypeGauge, []string{LabelSlot}, "seconds", ExportBuilder,
		"Unix time the builder handed the slot's payload (first segment or whole message) to gossip."},
	{NamePayloadSize, TypeGauge, []string{LabelSlot, LabelEncoding}, "bytes", ExportBuilder,
		"Size of the slot's payload: SSZ body (raw) and after snappy (compressed)."},
	{NamePayloadSegments, TypeGauge, []string{LabelSlot}, "segments", ExportBuilder,
		"Segment count K of the slot's payload (1 in whole mode)."},
	{NameBlockArrivalTimestamp, TypeGauge, []string{LabelSlot}, "seconds", ExportEveryNode,
		"Unix time the slot's beacon block was first received."},
	{NameBlockInstalledTimestamp, TypeGauge, []string{LabelSlot}, "seconds", ExportEveryNode,
		"Unix time the slot's beacon block was validated and applied."},
	{NameBlockInstallDelay, TypeHistogram, nil, "seconds", ExportEveryNode,
		"Block install delay (installed minus first received) across slots."},
	{NameFirstArrivalTimestamp, TypeGauge, []string{LabelSlot}, "seconds", ExportEveryNode,
		"Unix time the first segment (or the whole message) of the slot's payload was received."},
	{NameCompletedTimestamp, TypeGauge, []string{LabelSlot}, "seconds", ExportEveryNode,
		"Unix time the complete, verified payload of the slot was held."},
	{NameReceivedBytes, TypeGauge, []string{LabelSlot, LabelKind}, "bytes", ExportEveryNode,
		"Bytes received for the slot's payload: message data of every copy (data) and gossip control entries naming its message ids (control)."},
	{NameSegmentsReceived, TypeGauge, []string{LabelSlot}, "segments", ExportEveryNode,
		"Distinct valid segments of the slot's payload received (whole mode: 1 when received)."},
	{NameDuplicateSegments, TypeGauge, []string{LabelSlot}, "segments", ExportEveryNode,
		"Copies of the slot's segments received beyond the first."},
	{NameNetworkCompletionBytes, TypeGauge, []string{LabelSlot, LabelKind}, "bytes", ExportReference,
		"Bytes received for the slot's payload (as received_bytes) by the time the last honest node completed it: the design's accounting, without the duplicates that arrive later. Only a simulation that sees every node knows that moment."},
	{NameReceivedBytesTotal, TypeCounter, []string{LabelKind}, "bytes", ExportEveryNode,
		"All payload-topic bytes received, all slots."},
	{NameSegmentsRejectedTotal, TypeCounter, []string{LabelReason}, "segments", ExportEveryNode,
		"Segments rejected by validation, by reason."},
	{NameSegmentsDeferredTotal, TypeCounter, nil, "segments", ExportEveryNode,
		"Segments held by the validator until their block was installed."},
}

// Lookup returns the definition of name, if it is part of the contract.
func Lookup(name string) (Definition, bool) {
	for _, d := range Definitions {
		if d.Name == name {
			return d, true
		}
	}
	return Definition{}, false
}

// Names returns every contract series name, in document order.
func Names() []string {
	names := make([]string, len(Definitions))
	for i, d := range Definitions {
		names[i] = d.Name
	}
	return names
}
