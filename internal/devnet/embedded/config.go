package embedded

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/segdiff/segdiff/diffusion"
	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/eip8411"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
	"github.com/segdiff/segdiff/internal/devnet/embedded/node"
	"github.com/segdiff/segdiff/internal/devnet/embedded/seeds"
	"github.com/segdiff/segdiff/internal/stress"
)

// Config is the run spec: one simulated network and the payloads it
// carries. The zero value is not valid; start from DefaultConfig or a
// Preset and override. A Config is plain data, read and written as JSON
// (the suite's backend hands it to the simulation process as a file, a
// sweep cell stores it), and every settable field is a key (Keys) that
// `segdiff sim` offers as a flag and a sweep grid names: its name is the
// field's `flag` tag, else its JSON key with dashes, and its `doc` tag is
// the flag's usage. Validate is the one check. The same Config (including
// Seed) builds the same topology, link classes, latency placement and PTC
// draws.
type Config struct {
	Nodes   int `json:"nodes" doc:"nodes including the builder"`
	Builder int `json:"builder" doc:"index of the builder node"`
	// Degree: at most Nodes−1, Nodes·Degree even, and above the mesh's
	// Dhi so that non-mesh (gossip-only) peers exist.
	Degree int `json:"degree" doc:"connections per node of the random regular graph (at most nodes-1, nodes×degree even)"`
	// MeshD: Dlo and Dhi follow Prysm's ratios (8 → 6/12).
	MeshD int `json:"mesh_d" doc:"gossipsub D (Dlo, Dhi follow: 8 → 6/12)"`
	// GossipLazy (Dlazy) and GossipFactor set how many non-mesh peers get an
	// IHAVE each heartbeat: max(GossipLazy, GossipFactor × non-mesh peers).
	// Library defaults 6 and 0.25, which Prysm keeps; both 0 turns IHAVE,
	// and with it IWANT pulls, off (a diagnostic, not a client setting).
	GossipLazy   int     `json:"gossip_lazy" flag:"dlazy" doc:"gossipsub Dlazy: the least number of non-mesh peers sent IHAVE each heartbeat"`
	GossipFactor float64 `json:"gossip_factor" doc:"gossipsub gossip factor: the share of non-mesh peers sent IHAVE each heartbeat; --dlazy 0 --gossip-factor 0 turns IHAVE/IWANT off"`
	// Seed fixes the graph, link classes, latency placement, proposer
	// rotation and PTC draws.
	Seed int64       `json:"seed" doc:"seed: fixes topology, link classes and placement"`
	Mode devnet.Mode `json:"mode" doc:"diffusion mode"`
	// Payloads: the first is the cold one and is reported separately from
	// the warm ones.
	Payloads    int `json:"payloads" doc:"payloads, one slot apart; the first (cold) is summarised apart from the warm ones"`
	PayloadSize int `json:"payload_size" doc:"raw payload body size in bytes (the stress list's payload-size)"`
	SegmentSize int `json:"segment_size" doc:"segment size in bytes"`
	// SegmentOrder: "compress-then-cut" (segdiff/1: snappy the whole body,
	// cut every SegmentSize bytes) or "cut-then-compress" (the study's
	// default arm: cut the raw body, snappy each segment alone; segdiff/2
	// shards). Whole payloads are compressed whole either way.
	SegmentOrder string `json:"segment_order" doc:"how segment modes cut a payload: compress-then-cut (segdiff/1) or cut-then-compress (the study's arm; segdiff/2 shards)"`
	ParityShards int    `json:"parity_shards,omitempty" doc:"parity shards of the erasure code in coded modes (tier3); 0: as many as data shards"`
	PushWidth    int    `json:"push_width,omitempty" doc:"mesh peers each new segment is pushed to eagerly in the phase-forwarding modes (0: the policy's default)"`
	// PullWindow, PullDelay and PullBan are the disciplined-pull rules of
	// the modes that have them (zero: diffusion.DefaultPullRules).
	PullWindow time.Duration `json:"pull_window,omitempty" doc:"disciplined pulls: how long a request may stay unanswered before the next announcer is asked (0: the policy's default)"`
	PullDelay  time.Duration `json:"pull_delay,omitempty" doc:"disciplined pulls: wait after the first announcement of a missing segment before asking (0: the policy's default; -1ns: at once)"`
	PullBan    time.Duration `json:"pull_ban,omitempty" doc:"disciplined pulls: how long a peer whose request lapsed is not asked (0: the policy's default)"`
	// Without, Aim, FlightWindow, WindowRTT, AckTimeout, PaceTick and
	// CappedSource are tier 4's rules (diffusion.StateRules; zero: the
	// policy's defaults); whole-paced reads the window, the
	// acknowledgement timeout and the pace tick.
	Without      string           `json:"without,omitempty" doc:"tier 4: cards switched off, comma-separated (cancel, rarest, decode-claim, push-budget, projection, stripe, window, pace, aim, fast-push)"`
	Aim          string           `json:"aim,omitempty" doc:"tier 4: the furthest-behind rule's form, safer or plain (empty: safer)"`
	FlightWindow int              `json:"flight_window,omitempty" doc:"tier 4: parts in flight per node (0: sized from the node's uplink and window-rtt); whole-paced: copies in flight (0: three)"`
	WindowRTT    time.Duration    `json:"window_rtt,omitempty" doc:"tier 4: the typical round trip the window is sized for (0: the policy's default)"`
	AckTimeout   time.Duration    `json:"ack_timeout,omitempty" doc:"tier 4 and whole-paced: how long a copy in flight waits for its acknowledgement (0: the policy's default)"`
	PaceTick     time.Duration    `json:"pace_tick,omitempty" doc:"tier 4 and whole-paced: the interval between two paced announcements (0: the policy's default: 20 ms in tier 4, one copy's time at the node's uplink in whole-paced)"`
	CappedSource bool             `json:"capped_source,omitempty" doc:"tier 4: the builder pushes its first copies and announces to nobody"`
	NodeClass    devnet.LinkClass `json:"node_class" group:"network" doc:"link class of ordinary nodes: home (50/100 Mbps), datacenter (1 Gbps), custom"`
	// DatacenterShare: the first ⌊share·(Nodes−1)⌋ non-builder nodes by
	// index, as the prototype assigns them.
	DatacenterShare float64          `json:"datacenter_share" group:"network" doc:"share of non-builder nodes on 1 Gbps datacenter links (0..1)"`
	BuilderClass    devnet.LinkClass `json:"builder_class" group:"network" doc:"link class of the builder: home, datacenter, custom"`
	// Stress holds the conditions of the design's stress list the network
	// runs under, by package stress's names: each adversarial role's share
	// of the non-builder nodes (placed by the seed; verdicts and summaries
	// cover the honest nodes), lost deliveries and requests, parts the
	// builder omits, spread uplinks. Each condition is a key of its own
	// (Keys); payload-size is PayloadSize.
	Stress         stress.Set `json:"stress,omitempty" flag:"-"`
	CustomUpMbps   int        `json:"custom_up_mbps,omitempty" flag:"custom-up" group:"network" doc:"uplink of the custom class, Mbps"`
	CustomDownMbps int        `json:"custom_down_mbps,omitempty" flag:"custom-down" group:"network" doc:"downlink of the custom class, Mbps (0: twice the uplink)"`
	// Latency: "geo" (five regions, the prototype's matrix and jitter) or
	// "uniform" (UniformLatency one way between every pair).
	Latency        string        `json:"latency" group:"network" doc:"latency model: geo (five regions, mean ≈56 ms one way) or uniform"`
	UniformLatency time.Duration `json:"uniform_latency" group:"network" doc:"one-way latency of the uniform model"`
	// NetModel: "packets" (QUIC on simnet, the reference; also the empty
	// value, which the JSON leaves out, so a spec written before the key
	// existed keeps its meaning and its sweep hash) or "flows" (package
	// flownet: in-memory streams through fair-shared links, validated
	// against packets for tiers 2-4 and some stresses: ModelCaveat;
	// embedded/README.md).
	NetModel     string        `json:"net_model,omitempty" doc:"network model: packets (QUIC on simnet, the reference; the default), flows (in-memory streams through fair-shared links; validated against packets for tiers 2-4, warm payloads), flows-cc (flows with a congestion window per connection; see embedded/README.md), flows-cc-simnet (flows-cc with simnet's CoDel rule; validated for no mode), flows-cc-simnet-fq (and simnet's 128 FQ-CoDel buckets a link; validated for segmented, tier3 and tier4), flows-cc-simnet-drops (and drops with retransmission in place of marks; validated for no mode) or flows-cc-simnet-fq-packed (flows-cc-simnet-fq whose writes return once in flight, as quic-go's; validated for segmented-batch, tier2, tier3 and tier4)"`
	SlotDuration time.Duration `json:"slot_duration" flag:"slot" doc:"slot duration"`
	InstallDelay time.Duration `json:"install_delay" doc:"block install delay after arrival"`
	// InstallTimeout: after it a payload message waiting for its block is
	// ignored.
	InstallTimeout    time.Duration `json:"install_timeout" doc:"how long a payload message waits for its block"`
	RevealOffset      time.Duration `json:"reveal_offset" doc:"builder reveal time into the slot"`
	PayloadDueBPS     uint64        `json:"payload_due_bps" doc:"payload deadline, basis points of the slot"`
	PTCSize           int           `json:"ptc_size" doc:"payload-timeliness committee size"`
	ValidatorsPerNode int           `json:"validators_per_node" doc:"validators on each non-builder node"`
	Window            time.Duration `json:"window" doc:"completion budget the summary counts against"`
	// MeshSettleTimeout must exceed gossipsub's PruneBackoff (1 min).
	MeshSettleTimeout time.Duration `json:"mesh_settle_timeout" doc:"bound on the wait for every mesh to reach [Dlo, Dhi]"`
	// InstallDelayOverrides maps a node index to its own install delay
	// (tests use it to hold one node's block back).
	InstallDelayOverrides map[int]time.Duration `json:"install_delay_overrides,omitempty" flag:"-"`
	// HeapProfile, when set, names a file that receives a heap profile at
	// the last payload's deadline, when the network holds the most state
	// (diagnostics; not part of the run spec).
	HeapProfile string `json:"-"`
}

// Preset names.
const (
	PresetCI       = "ci"
	PresetStudy500 = "study-500"
	// The design's two other 500-node networks: a fifth of the non-builder
	// nodes on 1 Gbps datacenter links, with a home builder and with a
	// datacenter builder.
	PresetStudy500DC20    = "study-500-dc20"
	PresetStudy500DC20DCB = "study-500-dc20-dcb"
)

// Presets lists the preset names, the default first.
var Presets = []string{PresetCI, PresetStudy500, PresetStudy500DC20, PresetStudy500DC20DCB}

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
		Mode:              mode.Default,
		Payloads:          4,
		PayloadSize:       1 << 20,
		SegmentSize:       32 << 10,
		SegmentOrder:      OrderCompressThenCut,
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

// Preset returns the named configuration: "ci" (the default, also for ""),
// "study-500" (the published study: 500 home-linked nodes, degree 70, mesh
// 8, home builder, 1 MiB payload, geo latency, six payloads), and the same
// network with a fifth of the non-builder nodes in datacenters and a home
// builder ("study-500-dc20") or a datacenter builder ("study-500-dc20-dcb").
func Preset(name string) (Config, error) {
	c := DefaultConfig()
	study := func() {
		c.Nodes = 500
		c.Degree = 70
		c.Payloads = 6
		c.SegmentOrder = OrderCutThenCompress // the study's default arm
	}
	switch name {
	case "", PresetCI:
		return c, nil
	case PresetStudy500:
		study()
		return c, nil
	case PresetStudy500DC20, PresetStudy500DC20DCB:
		study()
		c.DatacenterShare = 0.2
		if name == PresetStudy500DC20DCB {
			c.BuilderClass = devnet.LinkDatacenter
		}
		return c, nil
	}
	return Config{}, fmt.Errorf("unknown embedded preset %q (want one of %s)", name, strings.Join(Presets, ", "))
}

// Segment orders (Config.SegmentOrder).
const (
	OrderCompressThenCut = "compress-then-cut"
	OrderCutThenCompress = "cut-then-compress"
)

// order is SegmentOrder as eip8411 names it.
func (c Config) order() eip8411.Order {
	if c.SegmentOrder == OrderCutThenCompress {
		return eip8411.OrderCutThenCompress
	}
	return eip8411.OrderCompressThenCut
}

// Bounds of a run, checked before anything starts.
const (
	// MaxNodes bounds Nodes: beyond it the latency matrix alone takes
	// gigabytes, and the memory estimate refuses far sooner on any machine.
	MaxNodes = 20000
	// MinPayloadSize is the smallest raw payload body: its fixed part.
	MinPayloadSize = 8
)

// FieldError is one invalid Config field, by its JSON key.
type FieldError struct {
	Key string
	Err error
}

func (e *FieldError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// ValidationError lists every invalid field of a Config.
type ValidationError struct{ Fields []*FieldError }

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		msgs[i] = f.Error()
	}
	return "invalid embedded config: " + strings.Join(msgs, "; ")
}

// Unwrap gives errors.Is and errors.As every field's error.
func (e *ValidationError) Unwrap() []error {
	out := make([]error, len(e.Fields))
	for i, f := range e.Fields {
		out[i] = f
	}
	return out
}

// Validate reports every invalid field, each naming its key, as a
// *ValidationError.
func (c Config) Validate() error {
	var fields []*FieldError
	bad := func(key, format string, args ...any) {
		fields = append(fields, &FieldError{Key: key, Err: fmt.Errorf(format, args...)})
	}
	switch {
	case c.Nodes < 3:
		bad("nodes", "%d, want 3..%d", c.Nodes, MaxNodes)
	case c.Nodes > MaxNodes:
		need, how := c.MemoryEstimate()
		bad("nodes", "%d, want 3..%d (%d nodes would need an estimated %s: %s)", c.Nodes, MaxNodes, c.Nodes, FormatBytes(need), how)
	}
	if c.Builder < 0 || c.Builder >= c.Nodes {
		bad("builder", "node %d, want 0..%d (nodes-1)", c.Builder, c.Nodes-1)
	}
	if c.MeshD < 2 {
		bad("mesh_d", "%d, want at least 2", c.MeshD)
	}
	_, dhi := node.MeshBounds(c.MeshD)
	switch {
	case c.Degree <= dhi:
		bad("degree", "%d must exceed the mesh's Dhi=%d (mesh_d %d), so that gossip-only peers exist", c.Degree, dhi, c.MeshD)
	case c.Nodes >= 3 && c.Degree > c.Nodes-1:
		bad("degree", "%d, but %d nodes allow at most %d connections per node", c.Degree, c.Nodes, c.Nodes-1)
	case c.Nodes*c.Degree%2 == 1:
		bad("degree", "%d nodes × degree %d is odd; a regular graph needs it even (use degree %d or %d)", c.Nodes, c.Degree, c.Degree-1, c.Degree+1)
	}
	if c.GossipLazy < 0 {
		bad("gossip_lazy", "%d, want >= 0", c.GossipLazy)
	}
	if c.GossipFactor < 0 || c.GossipFactor > 1 {
		bad("gossip_factor", "%v, want 0..1", c.GossipFactor)
	}
	if _, err := mode.Parse(string(c.Mode)); err != nil {
		bad("mode", "%w", err)
	} else if _, err := c.policy(); err != nil {
		// The policy checks its own options (segment size, push width,
		// pulls) and whether the mode has one.
		var oe *diffusion.OptionError
		if errors.As(err, &oe) {
			bad(policyOptionKeys[oe.Option], "%v", oe.Err)
		} else {
			bad("mode", "%w", err)
		}
	}
	if c.Payloads < 1 || c.Payloads > 1000 {
		bad("payloads", "%d, want 1..1000", c.Payloads)
	}
	if c.PayloadSize < MinPayloadSize || c.PayloadSize > eip8411.MaxBodySize {
		bad("payload_size", "%d, want %d..%d bytes", c.PayloadSize, MinPayloadSize, eip8411.MaxBodySize)
	}
	if c.SegmentSize <= 0 {
		// 0 would be the policy's default; a run spec names its size.
		bad("segment_size", "%d, want a size in bytes (the policy bounds it)", c.SegmentSize)
	}
	switch c.SegmentOrder {
	case OrderCompressThenCut, OrderCutThenCompress:
	default:
		bad("segment_order", "%q, want %s or %s", c.SegmentOrder, OrderCompressThenCut, OrderCutThenCompress)
	}
	if c.DatacenterShare < 0 || c.DatacenterShare > 1 {
		bad("datacenter_share", "%v, want 0..1", c.DatacenterShare)
	}
	for _, f := range []struct {
		key   string
		class devnet.LinkClass
	}{{"node_class", c.NodeClass}, {"builder_class", c.BuilderClass}} {
		if _, err := netmodel.ClassRates(f.class, c.custom()); err != nil {
			bad(f.key, "%w", err)
		}
	}
	if err := c.Stress.Check(); err != nil {
		bad("stress", "%w", err)
	} else if _, ok := c.Stress[stress.PayloadSize.Name]; ok {
		bad("stress", "%s is the spec's payload_size, not a stress entry", stress.PayloadSize.Name)
	} else if name, ok := c.unapplied(); ok {
		bad("stress", "%s: package stress registers this condition, but the embedded devnet does not apply it (it has no entry in conditionEffects, internal/devnet/embedded/simulate.go)", name)
	} else if info, _ := mode.Lookup(c.Mode); c.omit() > 0 && info.OneMessage {
		bad("stress", "omit=%d in mode %s, whose payload is one message: want 0", c.omit(), c.Mode)
	} else if r, why, ok := c.meaninglessRole(info); ok {
		bad("stress", "%s=%v in mode %s: %s", r, c.Stress[r], c.Mode, why)
	}
	if c.CustomUpMbps < 0 || c.CustomDownMbps < 0 {
		bad("custom_up_mbps", "%d up / %d down, want >= 0", c.CustomUpMbps, c.CustomDownMbps)
	}
	switch c.Latency {
	case netmodel.LatencyGeo:
	case netmodel.LatencyUniform:
		if c.UniformLatency <= 0 {
			bad("uniform_latency", "%v, want > 0", c.UniformLatency)
		}
	default:
		bad("latency", "%q, want %s or %s", c.Latency, netmodel.LatencyGeo, netmodel.LatencyUniform)
	}
	if c.NetModel != "" && !slices.Contains(netmodel.Models, c.NetModel) {
		bad("net_model", "%q, want one of %s", c.NetModel, strings.Join(netmodel.Models, ", "))
	}
	if c.SlotDuration <= 0 {
		bad("slot_duration", "%v, want > 0", c.SlotDuration)
	}
	if c.RevealOffset < 0 || c.RevealOffset >= c.SlotDuration {
		bad("reveal_offset", "%v, want within the slot (%v)", c.RevealOffset, c.SlotDuration)
	}
	if c.InstallDelay < 0 {
		bad("install_delay", "%v, want >= 0", c.InstallDelay)
	}
	if c.InstallTimeout <= 0 {
		bad("install_timeout", "%v, want > 0", c.InstallTimeout)
	}
	for i, d := range c.InstallDelayOverrides {
		if i < 0 || i >= c.Nodes || d < 0 {
			bad("install_delay_overrides", "node %d: %v, want a node 0..%d and a delay >= 0", i, d, c.Nodes-1)
		}
	}
	if c.PayloadDueBPS == 0 || c.PayloadDueBPS > 10000 {
		bad("payload_due_bps", "%d, want 1..10000", c.PayloadDueBPS)
	}
	if c.PTCSize < 1 {
		bad("ptc_size", "%d, want > 0", c.PTCSize)
	}
	if c.ValidatorsPerNode < 1 {
		bad("validators_per_node", "%d, want > 0", c.ValidatorsPerNode)
	}
	if c.Window <= 0 {
		bad("window", "%v, want > 0", c.Window)
	}
	if c.MeshSettleTimeout <= 0 {
		bad("mesh_settle_timeout", "%v, want > 0", c.MeshSettleTimeout)
	}
	if len(fields) == 0 && c.omit() > 0 {
		// The part count follows from the payload, its order and code: cut
		// the first payload (milliseconds) so an impossible omit is named
		// before any network starts.
		if parts, err := c.partsPerPayload(); err != nil {
			bad("stress", "omit: cannot count the payload's parts: %v", err)
		} else if c.omit() >= parts {
			bad("stress", "omit=%d, but each payload has %d parts (%s): the builder must send at least one", c.omit(), parts, c.Mode)
		}
	}
	if len(fields) > 0 {
		return &ValidationError{Fields: fields}
	}
	return nil
}

func (c Config) custom() netmodel.CustomRates {
	return netmodel.CustomRates{UpMbps: c.CustomUpMbps, DownMbps: c.CustomDownMbps}
}

// Memory model of a run, fitted to measured peaks (internal/devnet/embedded/README.md:
// 32 nodes ≈1.0 GiB, 64 / 200 / 500 nodes at degree 63–70 ≈1.6 / 5.2 /
// 11.9 GiB segmented, 10.6 GiB whole at 200): QUIC connection state and
// buffers dominate, about 360 KiB per connection end, 1.6 times that when
// whole payloads sit in pooled 1 MiB buffers at both ends of transfers.
const (
	memoryBase          = 512 << 20
	memoryPerNode       = 2 << 20
	memoryPerConnEnd    = 360 << 10
	memoryPerConnEndBig = 576 << 10
	// The flows model keeps no QUIC or TLS state: its 500-node cells
	// peaked at 3.5-3.9 GiB (tiers 2-4) and 5.6-6.9 GiB (segmented-batch,
	// whose six copies sit in the links) under GOMEMLIMIT=8GiB, the worst
	// about 160 KiB per connection end beside the rest (embedded/README.md,
	// "Two network models"); whole payloads take the packet model's 1.6
	// (not measured in this model).
	memoryPerConnEndFlows    = 176 << 10
	memoryPerConnEndFlowsBig = 280 << 10
)

// Network is the network model the run uses: NetModel, packets when empty.
func (c Config) Network() string {
	if c.NetModel == "" {
		return netmodel.Packets
	}
	return c.NetModel
}

// MemoryEstimate returns the peak memory a run of c is expected to take,
// in bytes, and how it was reckoned.
func (c Config) MemoryEstimate() (bytes int64, how string) {
	info, _ := mode.Lookup(c.Mode)
	var perEnd int64
	switch flows := netmodel.Flowing(c.Network()); {
	case flows && info.OneMessage:
		perEnd = memoryPerConnEndFlowsBig
	case flows:
		perEnd = memoryPerConnEndFlows
	case info.OneMessage:
		perEnd = memoryPerConnEndBig
	default:
		perEnd = memoryPerConnEnd
	}
	ends := int64(c.Nodes) * int64(c.Degree)
	lat := netmodel.LatencyMatrixBytes(c.Nodes)
	bytes = memoryBase + int64(c.Nodes)*memoryPerNode + ends*perEnd + lat
	how = fmt.Sprintf("%d nodes × degree %d = %d connection ends × ~%d KiB (%s model), + %d × %d MiB per node, + %s latency matrix, + %d MiB",
		c.Nodes, c.Degree, ends, perEnd>>10, c.Network(), c.Nodes, memoryPerNode>>20, FormatBytes(lat), memoryBase>>20)
	return bytes, how
}

// FormatBytes renders n as "12.3 GiB" (or MiB, KiB, B).
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// partsPerPayload is how many parts the builder publishes for the first
// payload: what Omit counts against.
func (c Config) partsPerPayload() (int, error) {
	policy, err := c.policy()
	if err != nil {
		return 0, err
	}
	body, err := eip8411.SyntheticBody(seeds.Payload(c.Seed, 1), c.PayloadSize)
	if err != nil {
		return 0, err
	}
	g, err := policy.Cut(body)
	if err != nil {
		return 0, err
	}
	return g.Parts(), nil
}

// policy is the registered diffusion policy for c's mode with c's options.
func (c Config) policy() (diffusion.Policy, error) {
	without, err := diffusion.ParseCards(c.Without)
	if err != nil {
		return nil, &diffusion.OptionError{Option: "State.Without", Err: err}
	}
	return diffusion.New(c.Mode, diffusion.Options{SegmentSize: c.SegmentSize, InstallTimeout: c.InstallTimeout,
		PushWidth: c.PushWidth, Pulls: diffusion.PullRules{Window: c.PullWindow, Delay: c.PullDelay, Ban: c.PullBan},
		Order: c.order(), Parity: c.ParityShards,
		State: diffusion.StateRules{Without: without, Aim: diffusion.Aim(c.Aim), Window: c.FlightWindow, RTT: c.WindowRTT,
			AckTimeout: c.AckTimeout, PaceTick: c.PaceTick, CappedSource: c.CappedSource}})
}

// policyOptionKeys names the spec key of each diffusion option (what
// diffusion.New's OptionError names).
var policyOptionKeys = map[string]string{
	"SegmentSize": "segment_size", "InstallTimeout": "install_timeout", "PushWidth": "push_width",
	"Pulls.Window": "pull_window", "Pulls.Ban": "pull_ban", "Pulls": "pull_window", "Parity": "parity_shards",
	"State.Without": "without", "State.Aim": "aim", "State.Window": "flight_window", "State": "ack_timeout",
	"State.PushBudget": "push_width", "State.UplinkMbps": "custom_up_mbps",
}

// unapplied returns the first condition of c.Stress, by name, that the
// simulation does not apply.
func (c Config) unapplied() (string, bool) {
	for _, name := range slices.Sorted(maps.Keys(c.Stress)) {
		if !applied(name) {
			return name, true
		}
	}
	return "", false
}

// meaninglessRole returns a role the stress places that refuses only what
// the mode never asks of a node (an acknowledgement, an honest report to
// each pusher), and why: such a run would measure the role it is otherwise
// equal to under another name.
func (c Config) meaninglessRole(info mode.Info) (name, why string, ok bool) {
	var acks, state []string
	for _, m := range mode.All() {
		if m.Acks {
			acks = append(acks, string(m.Mode))
		}
		if m.PeerState {
			state = append(state, string(m.Mode))
		}
	}
	for _, r := range role.Adversarial() {
		if c.Stress[r.Name] == 0 {
			continue
		}
		switch {
		case r.UnderReport && !info.PeerState:
			return r.Name, fmt.Sprintf("the mode keeps no state per peer, so an under-reporter's reports change nothing (modes that keep it: %s)", strings.Join(state, ", ")), true
		case r.Announce && !r.Acknowledge && !info.Acks:
			return r.Name, fmt.Sprintf("the mode asks for no acknowledgements, so one that never acknowledges changes nothing (modes that ask: %s)", strings.Join(acks, ", ")), true
		}
	}
	return "", "", false
}

// omit is how many parts of each payload the builder never sends.
func (c Config) omit() int { return int(c.Stress[stress.Omit.Name]) }
