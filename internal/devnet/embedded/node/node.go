// Package node is one simulated beacon node of the embedded devnet: a
// libp2p host running gossipsub, the beacon block topic and its install
// rule, the node's metrics (the contract's Recorder), a raw tracer that
// attributes gossip bytes to payload slots, and the diffusion policy the
// run selected, which the node hosts through diffusion.Env. A node knows
// nothing of the run around it: it reports completions through a Sink.
package node

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/segdiff/segdiff/diffusion"
	"github.com/segdiff/segdiff/eip8411"
	"github.com/segdiff/segdiff/internal/devnet/embedded/chain"
	"github.com/segdiff/segdiff/metrics"
)

// ClientName is the client label every embedded node exports.
const ClientName = "embedded"

// Gossip limits as Prysm sets them.
const (
	// maxMessageSize is max(max_compressed_len(MAX_PAYLOAD_SIZE)+1024, 1 MiB).
	maxMessageSize    = eip8411.MaxTotalLength + 1024
	outboundQueueSize = 600
	validateQueueSize = 600
	subBufferSize     = 1024
)

// HeartbeatInterval is Prysm's gossipsub heartbeat.
const HeartbeatInterval = 700 * time.Millisecond

// MeshBounds derives Dlo and Dhi from D with Prysm's ratios (8 → 6 and 12).
func MeshBounds(d int) (dlo, dhi int) {
	dlo = max(d*3/4, 1)
	dhi = max(d*3/2, d+1)
	return dlo, dhi
}

// GossipParams are Prysm's: D (here d), Dlo and Dhi from MeshBounds,
// heartbeat 700 ms, history 6/3, Dlazy and gossip factor as given (library
// defaults 6 and 0.25); everything else the library default (IDONTWANT
// threshold 1 KiB, PruneBackoff 1 min, ...).
func GossipParams(d, dlazy int, gossipFactor float64) pubsub.GossipSubParams {
	p := pubsub.DefaultGossipSubParams()
	p.D = d
	p.Dlo, p.Dhi = MeshBounds(d)
	p.Dout = max(min(p.Dout, p.Dlo-1, p.D/2-1), 0)
	p.Dscore = min(p.Dscore, p.Dhi)
	p.Dlazy = dlazy
	p.GossipFactor = gossipFactor
	p.HeartbeatInterval = HeartbeatInterval
	p.HistoryLength = 6
	p.HistoryGossip = 3
	return p
}

// Sink receives what a node reports to the run around it. It must be safe
// for concurrent use.
type Sink interface {
	// Completed: node held slot's verified payload at t (first time only).
	Completed(node int, slot uint64, at time.Time)
	// Deferred: node parked a payload message until its block installed.
	Deferred(node int)
}

// Spec is one node's part of the run's configuration.
type Spec struct {
	Index int
	// Role is how the node behaves towards payload messages.
	Role diffusion.Role
	// InstallDelay is how long after a block arrives the node installs it
	// (the state transition and fork choice it stands for); a block the
	// node proposed itself is installed at once.
	InstallDelay time.Duration
	// Gossip are the router's parameters.
	Gossip pubsub.GossipSubParams
	// Loss is the share of payload deliveries (data) and requests dropped
	// on arrival at this node, drawn from LossRand.
	Loss     Loss
	LossRand *rand.Rand
	// PeerRole says how each peer behaves (nil: every peer relays).
	PeerRole func(peer.ID) diffusion.Role
	// UplinkMbps is the node's configured uplink, which policies that size
	// their sending from it read (diffusion.Uplinker).
	UplinkMbps int
	// Parts, shared by the network's nodes, holds one copy of each
	// verified part for all of them (nil: each node keeps its own).
	Parts *Parts
}

// Loss is the probability that one arrival of each kind is dropped.
type Loss struct{ Data, Requests float64 }

// Node is one simulated beacon node. Create it with New, then Start (the
// router) once its connections are up, then Join.
type Node struct {
	spec   Spec
	host   host.Host
	policy diffusion.Policy
	pnode  diffusion.Node
	sink   Sink

	reg        *prometheus.Registry
	rec        *metrics.Recorder
	tr         *tracer
	ps         *pubsub.PubSub
	blockTopic *pubsub.Topic

	mu    sync.Mutex
	slots map[uint64]*slotState

	lossMu sync.Mutex // guards spec.LossRand
}

// slotState is what a node knows about one slot. installed is closed when
// the block is installed; commit and installAt are set before that and
// read-only after.
type slotState struct {
	installed chan struct{}
	arrived   time.Time
	installAt time.Time
	commit    diffusion.Commitment
	completed time.Time
}

// New prepares a node on h running policy; nothing runs until Start.
func New(spec Spec, h host.Host, policy diffusion.Policy, sink Sink) (*Node, error) {
	reg := prometheus.NewRegistry()
	rec, err := metrics.NewRecorder(reg, metrics.WithInfo(string(policy.Mode()), eip8411.FormatSegdiff1, ClientName))
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", spec.Index, err)
	}
	n := &Node{spec: spec, host: h, policy: policy, sink: sink, reg: reg, rec: rec, slots: map[uint64]*slotState{}}
	n.tr = newTracer(rec, policy)
	n.pnode = policy.NewNode(n)
	return n, nil
}

// Start creates the node's pubsub router, once its connections are up (a
// router created before the dials lost whole groups of peers' streams in
// small networks; created after, it adopts the existing connections).
func (n *Node) Start(ctx context.Context) error {
	opts := []pubsub.Option{
		pubsub.WithGossipSubParams(n.spec.Gossip),
		pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
		pubsub.WithNoAuthor(),
		pubsub.WithMessageIdFn(func(m *pb.Message) string { return diffusion.ContentID(m.GetTopic(), m.Data) }),
		pubsub.WithMaxMessageSize(maxMessageSize),
		pubsub.WithPeerOutboundQueueSize(outboundQueueSize),
		pubsub.WithValidateQueueSize(validateQueueSize),
		pubsub.WithRawTracer(n.tr),
		pubsub.WithAppSpecificRpcInspector(n.inspect),
	}
	ps, err := pubsub.NewGossipSub(ctx, n.host, append(opts, n.pnode.RouterOptions()...)...)
	if err != nil {
		return fmt.Errorf("node %d: new gossipsub: %w", n.spec.Index, err)
	}
	n.ps = ps
	return nil
}

// inspect sees every incoming RPC before the router handles it: it counts
// the bytes as they arrived, then lets the policy apply its rules (it may
// edit the RPC).
func (n *Node) inspect(from peer.ID, rpc *pubsub.RPC) error {
	n.tr.wire(rpc)
	if in, ok := n.pnode.(diffusion.RPCInspector); ok {
		return in.InspectRPC(from, rpc)
	}
	return nil
}

// Join joins the block topic (with its install rule) and the policy's
// payload topic, and drains both subscriptions until ctx ends (an unread
// subscription drops messages, which would look like a slow network).
func (n *Node) Join(ctx context.Context) error {
	if err := n.ps.RegisterTopicValidator(chain.BlockTopic, n.validateBlock, pubsub.WithValidatorInline(true)); err != nil {
		return fmt.Errorf("node %d: register block validator: %w", n.spec.Index, err)
	}
	t, err := n.ps.Join(chain.BlockTopic)
	if err != nil {
		return fmt.Errorf("node %d: join %s: %w", n.spec.Index, chain.BlockTopic, err)
	}
	n.blockTopic = t
	sub, err := t.Subscribe(pubsub.WithBufferSize(subBufferSize))
	if err != nil {
		return fmt.Errorf("node %d: subscribe %s: %w", n.spec.Index, chain.BlockTopic, err)
	}
	go func() {
		defer sub.Cancel()
		for {
			if _, err := sub.Next(ctx); err != nil {
				return
			}
		}
	}()
	if err := n.pnode.Join(ctx, n.ps); err != nil {
		return fmt.Errorf("node %d: %w", n.spec.Index, err)
	}
	return nil
}

// PublishBlock publishes b (the node proposes it).
func (n *Node) PublishBlock(ctx context.Context, b chain.Block) error {
	if err := n.blockTopic.Publish(ctx, b.Encode()); err != nil {
		return fmt.Errorf("node %d: publish block %d: %w", n.spec.Index, b.Slot, err)
	}
	return nil
}

// Reveal publishes a prepared payload from this node (the builder), which
// holds it complete from this instant.
func (n *Node) Reveal(ctx context.Context, p *diffusion.Prepared) (time.Time, error) {
	at := time.Now()
	g := p.Payload.Group
	n.rec.Revealed(p.Payload.Slot, at, g.RawSize(), g.CompressedSize(), len(p.Messages))
	n.complete(p.Payload.Slot)
	if err := n.pnode.Publish(ctx, p); err != nil {
		return at, fmt.Errorf("node %d: %w", n.spec.Index, err)
	}
	return at, nil
}

func (n *Node) slot(s uint64) *slotState {
	n.mu.Lock()
	defer n.mu.Unlock()
	st, ok := n.slots[s]
	if !ok {
		st = &slotState{installed: make(chan struct{})}
		n.slots[s] = st
	}
	return st
}

// validateBlock runs inline on the first copy of a block: it records the
// arrival and schedules the install after the node's install delay. Blocks
// are relayed at once; installing is what the delay stands for.
func (n *Node) validateBlock(_ context.Context, from peer.ID, m *pubsub.Message) pubsub.ValidationResult {
	b, err := chain.DecodeBlock(m.Data)
	if err != nil {
		return pubsub.ValidationReject
	}
	now := time.Now()
	st := n.slot(b.Slot)
	n.mu.Lock()
	if !st.arrived.IsZero() {
		n.mu.Unlock()
		return pubsub.ValidationIgnore
	}
	st.arrived = now
	n.mu.Unlock()
	n.rec.BlockArrived(b.Slot, now)
	delay := n.spec.InstallDelay
	if from == n.host.ID() {
		delay = 0 // the proposer built it
	}
	time.AfterFunc(delay, func() { n.install(st, b) })
	return pubsub.ValidationAccept
}

func (n *Node) install(st *slotState, b chain.Block) {
	c, err := diffusion.NewCommitment(b.Slot, b.Root(), b.Descriptor)
	if err != nil {
		return // never installed: its payload messages time out
	}
	now := time.Now()
	n.mu.Lock()
	st.commit = c
	st.installAt = now
	n.mu.Unlock()
	n.rec.BlockInstalled(b.Slot, now)
	close(st.installed)
}

func (n *Node) complete(slot uint64) {
	now := time.Now()
	st := n.slot(slot)
	n.mu.Lock()
	if !st.completed.IsZero() {
		n.mu.Unlock()
		return
	}
	st.completed = now
	n.mu.Unlock()
	n.rec.Completed(slot, now)
	n.sink.Completed(n.spec.Index, slot, now)
}

// diffusion.Env, for the node's policy.

// Host is the node's libp2p host.
func (n *Node) Host() host.Host { return n.host }

// Installed is closed once slot's block is installed.
func (n *Node) Installed(slot uint64) <-chan struct{} { return n.slot(slot).installed }

// Commitment is what slot's installed block commits to.
func (n *Node) Commitment(slot uint64) (diffusion.Commitment, bool) {
	st := n.slot(slot)
	select {
	case <-st.installed:
		return st.commit, true
	default:
		return diffusion.Commitment{}, false
	}
}

// Role is the node's role.
func (n *Node) Role() diffusion.Role { return n.spec.Role }

// UplinkMbps is the node's configured uplink (diffusion.Uplinker).
func (n *Node) UplinkMbps() int { return n.spec.UplinkMbps }

// SharePart is diffusion.PartSharer: the network's one copy of the part
// when the run shares them.
func (n *Node) SharePart(slot uint64, index int, data []byte) []byte {
	if n.spec.Parts == nil {
		return data
	}
	return n.spec.Parts.Share(slot, index, data)
}

// PeerRole is how peer p behaves (the simulation knows every node's role).
func (n *Node) PeerRole(p peer.ID) diffusion.Role {
	if n.spec.PeerRole == nil {
		return diffusion.Relay
	}
	return n.spec.PeerRole(p)
}

// Drop draws whether this arrival of kind is lost.
func (n *Node) Drop(kind diffusion.Loss) bool {
	p := n.spec.Loss.Data
	if kind == diffusion.LossRequest {
		p = n.spec.Loss.Requests
	}
	if p <= 0 || n.spec.LossRand == nil {
		return false
	}
	n.lossMu.Lock()
	defer n.lossMu.Unlock()
	return n.spec.LossRand.Float64() < p
}

// Events is where the policy reports.
func (n *Node) Events() diffusion.Events { return events{n} }

// events is the node's diffusion.Events: the metrics contract and the sink.
type events struct{ n *Node }

func (e events) Received(slot uint64, dup bool) { e.n.rec.SegmentReceived(slot, dup) }
func (e events) Completed(slot uint64)          { e.n.complete(slot) }
func (e events) Rejected(reason string)         { e.n.rec.SegmentRejected(reason) }
func (e events) Deferred() {
	e.n.rec.SegmentDeferred()
	e.n.sink.Deferred(e.n.spec.Index)
}
func (e events) ReceivedBytes(slot uint64, control bool, size int) {
	e.n.tr.received(slot, control, size)
}

// Readings after the run (or at any time; they are consistent snapshots).

// NetworkCompleted records, in the node's metrics, its bytes of slot as
// they stand at the moment the last honest node completed it.
func (n *Node) NetworkCompleted(slot uint64) { n.rec.ReceivedBytesByNetworkCompletion(slot) }

// Registry is the node's metrics registry.
func (n *Node) Registry() *prometheus.Registry { return n.reg }

// MeshSize is the node's mesh size on the payload topic.
func (n *Node) MeshSize() int { return n.tr.meshSize() }

// TopicPeers is how many peers the router knows as payload-topic
// subscribers.
func (n *Node) TopicPeers() int { return len(n.ps.ListPeers(n.policy.Topic())) }

// Traffic returns what the node's tracer counted for slot.
func (n *Node) Traffic(slot uint64) Traffic { return n.tr.traffic(slot) }

// InstalledAt returns when the node installed slot's block (zero if never).
func (n *Node) InstalledAt(slot uint64) time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	if st, ok := n.slots[slot]; ok {
		return st.installAt
	}
	return time.Time{}
}

// Close closes the node's host.
func (n *Node) Close() error { return n.host.Close() }
