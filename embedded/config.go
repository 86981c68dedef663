package embedded

import (
	"errors"
	"fmt"
	"time"

	"github.com/segdiff/segdiff/devnet"
)

// Config describes one simulated network and the payloads it carries. The
// zero value is not valid; start from DefaultConfig or a Preset and override.
// A Config is plain data: the same Config (including Seed) builds the same
// topology, link classes, latency placement and PTC draws.
type Config struct {
	// Nodes in the network, builder included (node 0 is the builder).
	Nodes int `json:"nodes"`
	// Degree is the number of connections per node of the random regular
	// graph; it is clamped to Nodes-1, made even-compatible with Nodes and
	// must exceed the mesh's Dhi so non-mesh (gossip-only) peers exist.
	Degree int `json:"degree"`
	// MeshD is gossipsub's D; Dlo and Dhi follow Prysm's ratios (8 → 6/12).
	MeshD int `json:"mesh_d"`
	// GossipLazy (Dlazy) and GossipFactor set how many non-mesh peers get an
	// IHAVE each heartbeat: max(GossipLazy, GossipFactor × non-mesh peers).
	// Library defaults 6 and 0.25, which Prysm keeps; both 0 turns IHAVE,
	// and with it IWANT pulls, off (a diagnostic, not a client setting).
	GossipLazy   int     `json:"gossip_lazy"`
	GossipFactor float64 `json:"gossip_factor"`
	// Seed fixes the graph, link classes, latency placement, proposer
	// rotation and PTC draws.
	Seed int64 `json:"seed"`
	// Mode is the payload diffusion mode.
	Mode devnet.Mode `json:"mode"`
	// Payloads is how many slots carry a payload, one slot apart; the first
	// is the cold one and is reported separately from the warm ones.
	Payloads int `json:"payloads"`
	// PayloadSize is the raw (SSZ) body size in bytes.
	PayloadSize int `json:"payload_size"`
	// SegmentSize is the segment data size in bytes (segmented modes).
	SegmentSize int `json:"segment_size"`
	// NodeClass is the link class of ordinary nodes.
	NodeClass devnet.LinkClass `json:"node_class"`
	// DatacenterShare is the share (0..1) of non-builder nodes on datacenter
	// links: nodes 1..⌊share·(Nodes−1)⌋, as the prototype assigns them.
	DatacenterShare float64 `json:"datacenter_share"`
	// BuilderClass is the builder's (node 0's) link class.
	BuilderClass devnet.LinkClass `json:"builder_class"`
	// CustomUpMbps and CustomDownMbps are the rates of the "custom" class.
	CustomUpMbps   int `json:"custom_up_mbps,omitempty"`
	CustomDownMbps int `json:"custom_down_mbps,omitempty"`
	// Latency is "geo" (five regions, the prototype's matrix and jitter) or
	// "uniform" (UniformLatency one way between every pair).
	Latency        string        `json:"latency"`
	UniformLatency time.Duration `json:"uniform_latency"`
	// SlotDuration is the slot length (12 s).
	SlotDuration time.Duration `json:"slot_duration"`
	// InstallDelay is how long after a block arrives a node installs it.
	InstallDelay time.Duration `json:"install_delay"`
	// InstallTimeout bounds how long a payload message waits in the
	// validator for its block; after it the message is ignored.
	InstallTimeout time.Duration `json:"install_timeout"`
	// RevealOffset is when in the slot the builder publishes the payload.
	RevealOffset time.Duration `json:"reveal_offset"`
	// PayloadDueBPS is the payload deadline in basis points of the slot.
	PayloadDueBPS uint64 `json:"payload_due_bps"`
	// PTCSize is the payload-timeliness committee size.
	PTCSize int `json:"ptc_size"`
	// ValidatorsPerNode is how many validators each non-builder node runs.
	ValidatorsPerNode int `json:"validators_per_node"`
	// Window is the completion budget the summary counts against (3 s).
	Window time.Duration `json:"window"`
	// MeshSettleTimeout bounds the wait for every mesh to reach [Dlo, Dhi];
	// it must exceed gossipsub's PruneBackoff (1 min).
	MeshSettleTimeout time.Duration `json:"mesh_settle_timeout"`
	// InstallDelayOverrides maps a node index to its own install delay (tests use it
	// to hold one node's block back).
	InstallDelayOverrides map[int]time.Duration `json:"install_delay_overrides,omitempty"`
	// HeapProfile, when set, names a file that receives a heap profile at
	// the last payload's deadline, when the network holds the most state
	// (diagnostics; not part of the result).
	HeapProfile string `json:"-"`
}

// Preset names.
const (
	PresetCI       = "ci"
	PresetStudy500 = "study-500"
)

// DefaultConfig is the "ci" preset: small enough that a whole and a
// segmented network of the same seed both run in about a minute and a half
// on two cores.
func DefaultConfig() Config {
	return Config{
		Nodes:             32,
		Degree:            20,
		MeshD:             8,
		GossipLazy:        6,
		GossipFactor:      0.25,
		Seed:              7,
		Mode:              devnet.ModeSegmented,
		Payloads:          4,
		PayloadSize:       1 << 20,
		SegmentSize:       32 << 10,
		NodeClass:         devnet.LinkHome,
		BuilderClass:      devnet.LinkHome,
		Latency:           "geo",
		UniformLatency:    25 * time.Millisecond,
		SlotDuration:      12 * time.Second,
		InstallDelay:      200 * time.Millisecond,
		InstallTimeout:    4 * time.Second,
		RevealOffset:      3 * time.Second,
		PayloadDueBPS:     5000,
		PTCSize:           512,
		ValidatorsPerNode: 32,
		Window:            3 * time.Second,
		MeshSettleTimeout: 3 * time.Minute,
	}
}

// Preset returns the named configuration: "ci" (the default, also for "")
// or "study-500" (the published study: 500 home-linked nodes, degree 70,
// mesh 8, home builder, 1 MiB payload, geo latency, six payloads).
func Preset(name string) (Config, error) {
	c := DefaultConfig()
	switch name {
	case "", PresetCI:
		return c, nil
	case PresetStudy500:
		c.Nodes = 500
		c.Degree = 70
		c.Payloads = 6
		return c, nil
	}
	return Config{}, fmt.Errorf("unknown embedded preset %q (want %q or %q)", name, PresetCI, PresetStudy500)
}

// Dlo and Dhi are derived from MeshD with Prysm's ratios (D=8 → 6 and 12).
func (c Config) meshBounds() (dlo, dhi int) {
	dlo = c.MeshD * 3 / 4
	if dlo < 1 {
		dlo = 1
	}
	dhi = c.MeshD * 3 / 2
	if dhi < c.MeshD+1 {
		dhi = c.MeshD + 1
	}
	return dlo, dhi
}

// effectiveDegree applies the prototype's clamping: at most Nodes−1, one
// less when Nodes·Degree is odd, at least 2.
func (c Config) effectiveDegree() int {
	d := c.Degree
	if d > c.Nodes-1 {
		d = c.Nodes - 1
	}
	if c.Nodes*d%2 == 1 {
		d--
	}
	if d < 2 {
		d = 2
	}
	return d
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	var errs []error
	if c.Nodes < 3 {
		errs = append(errs, fmt.Errorf("nodes: %d, want at least 3", c.Nodes))
	}
	if c.MeshD < 2 {
		errs = append(errs, fmt.Errorf("mesh_d: %d, want at least 2", c.MeshD))
	}
	if c.GossipLazy < 0 {
		errs = append(errs, fmt.Errorf("gossip_lazy: %d, want >= 0", c.GossipLazy))
	}
	if c.GossipFactor < 0 || c.GossipFactor > 1 {
		errs = append(errs, fmt.Errorf("gossip_factor: %v, want 0..1", c.GossipFactor))
	}
	if _, err := devnet.ParseMode(string(c.Mode)); err != nil {
		errs = append(errs, fmt.Errorf("mode: %w", err))
	}
	if c.Payloads < 1 {
		errs = append(errs, fmt.Errorf("payloads: %d, want at least 1", c.Payloads))
	}
	if c.PayloadSize < 1 {
		errs = append(errs, fmt.Errorf("payload_size: %d, want > 0", c.PayloadSize))
	}
	if c.SegmentSize < 64 {
		errs = append(errs, fmt.Errorf("segment_size: %d, want at least 64", c.SegmentSize))
	}
	if c.DatacenterShare < 0 || c.DatacenterShare > 1 {
		errs = append(errs, fmt.Errorf("datacenter_share: %v, want 0..1", c.DatacenterShare))
	}
	for name, class := range map[string]devnet.LinkClass{"node_class": c.NodeClass, "builder_class": c.BuilderClass} {
		if _, err := c.linkRates(class); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	switch c.Latency {
	case "geo", "uniform":
	default:
		errs = append(errs, fmt.Errorf("latency: %q, want geo or uniform", c.Latency))
	}
	if c.SlotDuration <= 0 {
		errs = append(errs, fmt.Errorf("slot_duration: %v, want > 0", c.SlotDuration))
	}
	if c.RevealOffset < 0 || c.RevealOffset >= c.SlotDuration {
		errs = append(errs, fmt.Errorf("reveal_offset: %v, want within the slot (%v)", c.RevealOffset, c.SlotDuration))
	}
	if c.InstallDelay < 0 || c.InstallTimeout <= 0 {
		errs = append(errs, fmt.Errorf("install_delay/install_timeout: %v/%v, want >= 0 / > 0", c.InstallDelay, c.InstallTimeout))
	}
	if c.PayloadDueBPS == 0 || c.PayloadDueBPS > 10000 {
		errs = append(errs, fmt.Errorf("payload_due_bps: %d, want 1..10000", c.PayloadDueBPS))
	}
	if c.PTCSize < 1 || c.ValidatorsPerNode < 1 {
		errs = append(errs, fmt.Errorf("ptc_size/validators_per_node: %d/%d, want > 0", c.PTCSize, c.ValidatorsPerNode))
	}
	if c.Window <= 0 {
		errs = append(errs, fmt.Errorf("window: %v, want > 0", c.Window))
	}
	if c.MeshSettleTimeout <= 0 {
		errs = append(errs, fmt.Errorf("mesh_settle_timeout: %v, want > 0", c.MeshSettleTimeout))
	}
	if len(errs) == 0 {
		if _, dhi := c.meshBounds(); c.effectiveDegree() <= dhi {
			errs = append(errs, fmt.Errorf("degree: %d (effective %d) must exceed Dhi=%d so gossip-only peers exist", c.Degree, c.effectiveDegree(), dhi))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid embedded config: %w", err)
	}
	return nil
}
