// Package result holds what the embedded driver saw of a run — per node,
// per slot — beyond the metrics contract: bytes sent and dropped, IWANTs,
// install and first-send times, wall time, and each node's registry. The
// run's figures are not computed here: they come from the nodes' metrics,
// the one measurement record (embedded.Result.Record, package assertions).
package result

import (
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/segdiff/segdiff/internal/devnet"
)

// Run is what one simulation measured. Times are on the bubble's virtual
// clock (synctest starts it at 2000-01-01T00:00:00Z).
type Run struct {
	Nodes []NodeInfo `json:"nodes"`
	// Builder is the index of the node that reveals every payload.
	Builder int `json:"builder"`
	// Edges is the number of connections dialled.
	Edges int `json:"edges"`
	// Timing is the slot clock: slot s starts at Genesis + s·SlotDuration;
	// payloads ride slots 1..Payloads.
	Timing devnet.Timing `json:"timing"`
	// Setup is the virtual time spent dialling and settling the mesh.
	Setup time.Duration `json:"setup"`
	// SetupWall is the machine time the setup took; SlotWall the machine
	// time of each payload slot (slot start to next slot start). They are
	// what a run costs, not what it simulates.
	SetupWall time.Duration   `json:"setup_wall_ns"`
	SlotWall  []time.Duration `json:"slot_wall_ns"`
	Slots     []SlotResult    `json:"slots"`
	// Deferred counts, per node, payload messages its validator held until
	// their block was installed.
	Deferred []int64 `json:"deferred"`
	// Registries holds every node's metrics, by node index, for serving
	// after the run.
	Registries []*prometheus.Registry `json:"-"`
}

// NodeInfo is one node's identity.
type NodeInfo struct {
	Index      int              `json:"index"`
	ID         string           `json:"id"`
	PeerID     string           `json:"peer_id"`
	LinkClass  devnet.LinkClass `json:"link_class"`
	Region     string           `json:"region,omitempty"`
	Roles      []devnet.Role    `json:"roles"`
	Validators int              `json:"validators"`
}

// NodeID is the stable name of node i ("node-007").
func NodeID(i int) string { return fmt.Sprintf("node-%03d", i) }

// SlotResult is one payload's diffusion.
type SlotResult struct {
	Slot uint64 `json:"slot"`
	// Warm is false for the first payload on a fresh network.
	Warm           bool      `json:"warm"`
	Proposer       int       `json:"proposer"`
	Builder        int       `json:"builder"`
	Reveal         time.Time `json:"reveal"`
	RawSize        int       `json:"raw_size"`
	CompressedSize int       `json:"compressed_size"`
	Segments       int       `json:"segments"`
	// Completion per node from the reveal; -1 when the node never held the
	// verified payload. The builder's entry is 0.
	Completion []time.Duration `json:"completion_ns"`
	// DataBytes and ControlBytes received per node for this payload, over
	// the whole slot.
	DataBytes    []int64 `json:"data_bytes"`
	ControlBytes []int64 `json:"control_bytes"`
	// DataBytesAtCompletion and ControlBytesAtCompletion are the same counts
	// read when the last node completed (nil when some node never did):
	// the design's accounting, without the late duplicates after network
	// completion. NetworkCompletion is when that was, from the reveal (-1:
	// never).
	DataBytesAtCompletion    []int64       `json:"data_bytes_at_completion,omitempty"`
	ControlBytesAtCompletion []int64       `json:"control_bytes_at_completion,omitempty"`
	NetworkCompletion        time.Duration `json:"network_completion_ns"`
	// SentBytes and DroppedBytes are payload data bytes each node queued to
	// peers and dropped from full queues: Σ received = Σ sent − Σ dropped.
	SentBytes    []int64 `json:"sent_bytes"`
	DroppedBytes []int64 `json:"dropped_bytes"`
	// InstalledAt is when each node installed the slot's block and
	// FirstSentAt when it first queued a payload message to a peer (zero:
	// never).
	InstalledAt []time.Time `json:"installed_at"`
	// IWantSent counts the payload message ids each node requested with
	// IWANT (gossip-driven copies on top of mesh forwarding).
	IWantSent []int64 `json:"iwant_sent"`
	// Honest is false for nodes holding an adversarial role (withholder,
	// silent, mute): figures cover honest receivers only. Nil: all honest.
	Honest      []bool          `json:"honest,omitempty"`
	FirstSentAt []time.Time     `json:"first_sent_at"`
	PTC         devnet.PTCVotes `json:"ptc"`
}

// Receiver reports whether node i is one the figures cover: an honest node
// other than the builder.
func (s SlotResult) Receiver(i int) bool {
	return i != s.Builder && (s.Honest == nil || s.Honest[i])
}

// Stranded returns the honest receivers that never completed.
func (s SlotResult) Stranded() []int {
	var out []int
	for i, c := range s.Completion {
		if s.Receiver(i) && c < 0 {
			out = append(out, i)
		}
	}
	return out
}

// Warm returns the warm payloads (all but the first); the only one if there
// is a single payload.
func (r *Run) Warm() []SlotResult {
	if len(r.Slots) <= 1 {
		return r.Slots
	}
	return r.Slots[1:]
}

// Cold returns the first payload, if any.
func (r *Run) Cold() []SlotResult {
	if len(r.Slots) == 0 {
		return nil
	}
	return r.Slots[:1]
}

// MedianSlotWall is the median machine time of one payload slot
// (nearest-rank).
func (r *Run) MedianSlotWall() time.Duration {
	if len(r.SlotWall) == 0 {
		return 0
	}
	w := slices.Clone(r.SlotWall)
	slices.Sort(w)
	return w[(len(w)+1)/2-1]
}
