package embedded

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/segdiff/segdiff/devnet"
)

// Result is what one simulation measured. Times are on the bubble's virtual
// clock (synctest starts it at 2000-01-01T00:00:00Z).
type Result struct {
	Config Config     `json:"config"`
	Nodes  []NodeInfo `json:"nodes"`
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

// SlotResult is one payload's diffusion.
type SlotResult struct {
	Slot uint64 `json:"slot"`
	// Warm is false for the first payload on a fresh network.
	Warm           bool      `json:"warm"`
	Proposer       int       `json:"proposer"`
	Reveal         time.Time `json:"reveal"`
	RawSize        int       `json:"raw_size"`
	CompressedSize int       `json:"compressed_size"`
	Segments       int       `json:"segments"`
	// Completion per node from the reveal; -1 when the node never held the
	// verified payload. The builder's entry is 0.
	Completion []time.Duration `json:"completion_ns"`
	// DataBytes and ControlBytes received per node for this payload.
	DataBytes    []int64 `json:"data_bytes"`
	ControlBytes []int64 `json:"control_bytes"`
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
	IWantSent   []int64         `json:"iwant_sent"`
	FirstSentAt []time.Time     `json:"first_sent_at"`
	PTC         devnet.PTCVotes `json:"ptc"`
}

// NodeID is the stable name of node i ("node-007").
func NodeID(i int) string { return fmt.Sprintf("node-%03d", i) }

// receivers returns the completion times of every node but the builder,
// sorted, with not-completed nodes (−1) mapped to +Inf at the end.
func (s SlotResult) receivers() []time.Duration {
	out := make([]time.Duration, 0, len(s.Completion))
	for i, c := range s.Completion {
		if i == 0 {
			continue
		}
		if c < 0 {
			c = time.Duration(math.MaxInt64)
		}
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Quantile returns the p-quantile of receivers' completion times the
// prototype's way (index ⌈p·n⌉−1 of the sorted times); ok is false when that
// node never completed.
func (s SlotResult) Quantile(p float64) (time.Duration, bool) {
	r := s.receivers()
	if len(r) == 0 {
		return 0, false
	}
	i := int(math.Ceil(p*float64(len(r)))) - 1
	i = min(max(i, 0), len(r)-1)
	if r[i] == time.Duration(math.MaxInt64) {
		return 0, false
	}
	return r[i], true
}

// Within returns the share of receivers complete within d of the reveal.
func (s SlotResult) Within(d time.Duration) float64 {
	r := s.receivers()
	if len(r) == 0 {
		return 0
	}
	n := 0
	for _, c := range r {
		if c <= d {
			n++
		}
	}
	return float64(n) / float64(len(r))
}

// Copies returns payload copies received per node ((data + control) ÷
// compressed size), mean and median over all nodes, builder included as the
// prototype's rx/node is.
func (s SlotResult) Copies() (mean, median float64) {
	if len(s.DataBytes) == 0 || s.CompressedSize == 0 {
		return 0, 0
	}
	c := make([]float64, len(s.DataBytes))
	var sum float64
	for i := range c {
		c[i] = float64(s.DataBytes[i]+s.ControlBytes[i]) / float64(s.CompressedSize)
		sum += c[i]
	}
	slices.Sort(c)
	return sum / float64(len(c)), c[len(c)/2]
}

// DataCopies is the prototype's figure: data bytes only, mean per node.
func (s SlotResult) DataCopies() float64 {
	if len(s.DataBytes) == 0 || s.CompressedSize == 0 {
		return 0
	}
	var sum int64
	for _, b := range s.DataBytes {
		sum += b
	}
	return float64(sum) / float64(len(s.DataBytes)) / float64(s.CompressedSize)
}

// Warm returns the warm payloads (all but the first); the only one if there
// is a single payload.
func (r *Result) Warm() []SlotResult {
	if len(r.Slots) <= 1 {
		return r.Slots
	}
	return r.Slots[1:]
}

// MedianSlotWall is the median machine time of one payload slot (the mean
// of the middle two for an even count).
func (r *Result) MedianSlotWall() time.Duration {
	n := len(r.SlotWall)
	if n == 0 {
		return 0
	}
	w := slices.Clone(r.SlotWall)
	slices.Sort(w)
	if n%2 == 1 {
		return w[n/2]
	}
	return (w[n/2-1] + w[n/2]) / 2
}
