package embedded

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/segdiff/segdiff/devnet"
	"github.com/segdiff/segdiff/eip8411"
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
	// validatorConcurrency bounds payload messages parked in the validator
	// per node; far above K duplicates of a slot.
	validatorConcurrency = 4096
)

// node is one simulated beacon node: a libp2p host with gossipsub, its
// block and payload topics, its metrics and its view of each slot.
type node struct {
	idx          int
	run          *run
	host         host.Host
	ps           *pubsub.PubSub
	blockTopic   *pubsub.Topic
	payloadTopic *pubsub.Topic
	reg          *prometheus.Registry
	rec          *metrics.Recorder
	tr           *tracer
	installDelay time.Duration

	mu    sync.Mutex
	slots map[uint64]*nodeSlot
}

// nodeSlot is what a node knows about one slot. installed is closed when the
// block is installed; blk, root and reasm are set before that and read-only
// after.
type nodeSlot struct {
	installed chan struct{}
	arrived   time.Time
	installAt time.Time
	blk       block
	root      [32]byte
	reasm     *eip8411.Reassembler
	completed time.Time
}

func (n *node) slot(s uint64) *nodeSlot {
	n.mu.Lock()
	defer n.mu.Unlock()
	st, ok := n.slots[s]
	if !ok {
		st = &nodeSlot{installed: make(chan struct{})}
		n.slots[s] = st
	}
	return st
}

// heartbeatInterval is Prysm's gossipsub heartbeat.
const heartbeatInterval = 700 * time.Millisecond

// gossipParams are Prysm's: D=8, Dlo=6, Dhi=12 (scaled with MeshD),
// heartbeat 700 ms, history 6/3, Dlazy 6 and gossip factor 0.25 (both
// configurable); everything else the library default (IDONTWANT threshold
// 1 KiB, PruneBackoff 1 min, ...).
func gossipParams(c Config) pubsub.GossipSubParams {
	p := pubsub.DefaultGossipSubParams()
	p.D = c.MeshD
	p.Dlo, p.Dhi = c.meshBounds()
	p.Dout = min(p.Dout, p.Dlo-1, p.D/2-1)
	p.Dout = max(p.Dout, 0)
	p.Dscore = min(p.Dscore, p.Dhi)
	p.Dlazy = c.GossipLazy
	p.GossipFactor = c.GossipFactor
	p.HeartbeatInterval = heartbeatInterval
	p.HistoryLength = 6
	p.HistoryGossip = 3
	return p
}

// start creates the node's metrics and pubsub router, once its connections
// are up (see README: router start order).
func (n *node) start(ctx context.Context) error {
	reg := prometheus.NewRegistry()
	rec, err := metrics.NewRecorder(reg, metrics.WithInfo(string(n.run.cfg.Mode), eip8411.FormatSegdiff1, ClientName))
	if err != nil {
		return fmt.Errorf("node %d: %w", n.idx, err)
	}
	n.reg, n.rec = reg, rec
	n.tr = newTracer(n, n.run.payloadTopic())
	ps, err := pubsub.NewGossipSub(ctx, n.host,
		pubsub.WithGossipSubParams(gossipParams(n.run.cfg)),
		pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
		pubsub.WithNoAuthor(),
		pubsub.WithMessageIdFn(func(m *pb.Message) string { return contentID(m.GetTopic(), m.Data) }),
		pubsub.WithMaxMessageSize(maxMessageSize),
		pubsub.WithPeerOutboundQueueSize(outboundQueueSize),
		pubsub.WithValidateQueueSize(validateQueueSize),
		pubsub.WithRawTracer(n.tr),
	)
	if err != nil {
		return fmt.Errorf("node %d: new gossipsub: %w", n.idx, err)
	}
	n.ps = ps
	return nil
}

// join joins and subscribes both topics, registers the validators and starts
// the goroutines that drain the subscriptions (an unread subscription drops
// messages, which would look like a slow network).
func (n *node) join(ctx context.Context) error {
	var err error
	if err = n.ps.RegisterTopicValidator(topicBlock, n.validateBlock, pubsub.WithValidatorInline(true)); err != nil {
		return fmt.Errorf("node %d: register block validator: %w", n.idx, err)
	}
	if n.blockTopic, err = n.ps.Join(topicBlock); err != nil {
		return fmt.Errorf("node %d: join %s: %w", n.idx, topicBlock, err)
	}
	topic := n.run.payloadTopic()
	var opts []pubsub.TopicOpt
	if topic == topicSegment {
		opts = append(opts, pubsub.WithTopicMessageIdFn(func(m *pb.Message) string { return eip8411.MessageID(m.Data) }))
	}
	if err = n.ps.RegisterTopicValidator(topic, n.validatePayload, pubsub.WithValidatorConcurrency(validatorConcurrency)); err != nil {
		return fmt.Errorf("node %d: register payload validator: %w", n.idx, err)
	}
	if n.payloadTopic, err = n.ps.Join(topic, opts...); err != nil {
		return fmt.Errorf("node %d: join %s: %w", n.idx, topic, err)
	}
	bsub, err := n.blockTopic.Subscribe(pubsub.WithBufferSize(subBufferSize))
	if err != nil {
		return fmt.Errorf("node %d: subscribe %s: %w", n.idx, topicBlock, err)
	}
	psub, err := n.payloadTopic.Subscribe(pubsub.WithBufferSize(subBufferSize))
	if err != nil {
		return fmt.Errorf("node %d: subscribe %s: %w", n.idx, topic, err)
	}
	go drain(ctx, bsub, func(*pubsub.Message) {})
	go drain(ctx, psub, n.deliver)
	return nil
}

func drain(ctx context.Context, sub *pubsub.Subscription, f func(*pubsub.Message)) {
	defer sub.Cancel()
	for {
		m, err := sub.Next(ctx)
		if err != nil {
			return
		}
		f(m)
	}
}

// validateBlock runs inline on the first copy of a block: it records the
// arrival and schedules the install after the node's install delay. Blocks
// are relayed at once; installing (state transition, fork choice) is what
// the delay stands for.
func (n *node) validateBlock(_ context.Context, from peer.ID, m *pubsub.Message) pubsub.ValidationResult {
	b, err := decodeBlock(m.Data)
	if err != nil {
		return pubsub.ValidationReject
	}
	own := from == n.host.ID()
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
	delay := n.installDelay
	if own {
		delay = 0 // the proposer built it
	}
	time.AfterFunc(delay, func() { n.install(st, b) })
	return pubsub.ValidationAccept
}

func (n *node) install(st *nodeSlot, b block) {
	var reasm *eip8411.Reassembler
	if n.run.cfg.Mode != devnet.ModeWhole {
		r, err := eip8411.NewReassembler(b.Descriptor)
		if err != nil {
			return // never installed: its payload messages time out
		}
		reasm = r
	}
	now := time.Now()
	n.mu.Lock()
	st.blk, st.root, st.reasm, st.installAt = b, b.root(), reasm, now
	n.mu.Unlock()
	n.rec.BlockInstalled(b.Slot, now)
	close(st.installed)
}

// validatePayload is the "no relay before install" rule. go-libp2p-pubsub
// marks an id seen before validators run, so a message answered with Ignore
// because its block is not installed would be lost for good: later copies
// are dropped as duplicates and never requested. Instead the validator (an
// asynchronous one, so the router keeps running) parks the message until its
// block is installed, bounded by InstallTimeout, then verifies it against
// the installed block. Until it returns Accept the message is neither
// forwarded nor in the message cache, so it cannot be served to IWANTs.
func (n *node) validatePayload(ctx context.Context, from peer.ID, m *pubsub.Message) pubsub.ValidationResult {
	if from == n.host.ID() {
		return pubsub.ValidationAccept // the builder's own publish
	}
	slot, ok := payloadSlot(m.Data)
	if !ok {
		n.rec.SegmentRejected(eip8411.ReasonDecode)
		return pubsub.ValidationReject
	}
	st := n.slot(slot)
	select {
	case <-st.installed:
	default:
		n.rec.SegmentDeferred()
		n.run.noteDeferred(n.idx)
		t := time.NewTimer(n.run.cfg.InstallTimeout)
		select {
		case <-st.installed:
			t.Stop()
		case <-t.C:
			n.rec.SegmentRejected(metrics.ReasonInstallTimeout)
			return pubsub.ValidationIgnore
		case <-ctx.Done():
			t.Stop()
			return pubsub.ValidationIgnore
		}
	}
	var err error
	if n.run.cfg.Mode == devnet.ModeWhole {
		err = verifyWhole(m.Data, st)
	} else {
		var seg *eip8411.Segment
		if seg, err = verifySegment(m.Data, st); err == nil {
			m.ValidatorData = seg
		}
	}
	if err != nil {
		reason := eip8411.Reason(err)
		if reason == "" {
			reason = eip8411.ReasonDecode
		}
		n.rec.SegmentRejected(reason)
		return pubsub.ValidationReject
	}
	return pubsub.ValidationAccept
}

var errWrongBlock = fmt.Errorf("payload names another block: %w", eip8411.ErrGroupMismatch)

func verifySegment(data []byte, st *nodeSlot) (*eip8411.Segment, error) {
	seg, err := eip8411.DecodeSegment(data)
	if err != nil {
		return nil, err
	}
	if seg.BeaconBlockRoot != st.root {
		return nil, errWrongBlock
	}
	if err := st.blk.Descriptor.Verify(seg); err != nil {
		return nil, err
	}
	return seg, nil
}

// verifyWhole checks a whole envelope against the installed bid: it names
// the block, its compressed bytes hash to the committed Merkle root (the same
// commitment segments are checked against), and they decode strictly to a body.
func verifyWhole(data []byte, st *nodeSlot) error {
	_, root, compressed, err := decodeEnvelope(data)
	if err != nil {
		return fmt.Errorf("verify envelope: %w: %w", eip8411.ErrDecode, err)
	}
	if root != st.root {
		return errWrongBlock
	}
	if err := st.blk.Descriptor.VerifyCompressed(compressed); err != nil {
		return fmt.Errorf("verify envelope: %w", err)
	}
	if _, err := eip8411.DecompressBody(compressed); err != nil {
		return fmt.Errorf("verify envelope: %w", err)
	}
	return nil
}

// deliver handles a validated payload message from the subscription.
func (n *node) deliver(m *pubsub.Message) {
	if m.ReceivedFrom == n.host.ID() {
		return
	}
	slot, _ := payloadSlot(m.Data)
	st := n.slot(slot)
	<-st.installed // validation guarantees it; keeps the race detector informed
	if n.run.cfg.Mode == devnet.ModeWhole {
		n.rec.SegmentReceived(slot, false)
		n.complete(slot, st)
		return
	}
	seg, ok := m.ValidatorData.(*eip8411.Segment)
	if !ok {
		return
	}
	complete, dup, err := st.reasm.Add(seg)
	if err != nil {
		return // verified already; unreachable
	}
	n.rec.SegmentReceived(slot, dup)
	if complete && !dup {
		if _, err := st.reasm.Body(); err != nil {
			if !errors.Is(err, eip8411.ErrIncomplete) {
				n.rec.SegmentRejected(eip8411.ReasonDecode)
			}
			return
		}
		n.complete(slot, st)
	}
}

func (n *node) complete(slot uint64, st *nodeSlot) {
	now := time.Now()
	n.mu.Lock()
	if !st.completed.IsZero() {
		n.mu.Unlock()
		return
	}
	st.completed = now
	n.mu.Unlock()
	n.rec.Completed(slot, now)
	n.run.noteCompleted(slot, n.idx, now)
}

// installedAt returns when the node installed slot's block (zero if never).
func (n *node) installedAt(slot uint64) time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	if st, ok := n.slots[slot]; ok {
		return st.installAt
	}
	return time.Time{}
}
