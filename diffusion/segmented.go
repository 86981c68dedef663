package diffusion

import (
	"context"
	"errors"
	"fmt"
	"sync"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/eip8411"
)

func init() {
	Register(mode.Segmented, func(o Options) (Policy, error) { return newSegmented(o, mode.Segmented, false), nil })
	Register(mode.SegmentedBatch, func(o Options) (Policy, error) { return newSegmented(o, mode.SegmentedBatch, true), nil })
}

// segmented gossips the payload as EIP-8411 segments, each an independent
// message with a hybrid (structural ‖ content) id, verified against the
// bid's Merkle commitment and reassembled. batch publishes them through
// MessageBatch + PublishBatch, whose round-robin scheduler sends one copy
// of every segment before a second copy of any; otherwise they are
// published one after another.
type segmented struct {
	opts  Options
	m     mode.Mode
	topic string
	batch bool
}

func newSegmented(o Options, m mode.Mode, batch bool) *segmented {
	return &segmented{opts: o, m: m, topic: topicName(o.ForkDigest, "execution_payload_segment"), batch: batch}
}

func (s *segmented) Mode() mode.Mode { return s.m }
func (s *segmented) Topic() string   { return s.topic }

// Cut cuts the body into segments in the configured order (segdiff/1, or
// segdiff/2 shards without a code for cut-then-compress).
func (s *segmented) Cut(body *eip8411.Body) (*Group, error) {
	return Cut(body, Layout{SegmentSize: s.opts.SegmentSize, Order: s.opts.Order})
}

func (s *segmented) Prepare(p Payload) (*Prepared, error) {
	msgs, err := p.Group.Messages(p.Slot, p.BlockRoot)
	if err != nil {
		return nil, fmt.Errorf("prepare payload %d: %w", p.Slot, err)
	}
	return &Prepared{Payload: p, Messages: msgs}, nil
}

func (s *segmented) DataSlot(data []byte) (uint64, bool) { return eip8411.MessageSlot(data) }

// PartialSlot: this policy sends no partial messages.
func (s *segmented) PartialSlot([]byte) (uint64, bool) { return 0, false }

// IDSlot reads the slot from a structural segment id.
func (s *segmented) IDSlot(id string) (uint64, bool) {
	if len(id) != eip8411.StructuralIDSize {
		return 0, false
	}
	p, err := eip8411.ParseMessageID(id)
	if err != nil || !p.Structural {
		return 0, false
	}
	return p.Slot, true
}

func (s *segmented) NewNode(env Env) Node {
	n := &segmentedNode{batch: s.batch, reasm: map[uint64]*assembler{}, done: map[uint64]bool{}}
	n.topicNode = topicNode{env: env, opts: s.opts, attr: s, name: s.topic, format: n,
		topicOpts: []pubsub.TopicOpt{pubsub.WithTopicMessageIdFn(func(m *pb.Message) string { return eip8411.MessageID(m.Data) })}}
	return n
}

type segmentedNode struct {
	topicNode
	batch bool

	mu    sync.Mutex
	reasm map[uint64]*assembler // per slot, made from its commitment
	// done marks the slots the node completed (or rejected): their
	// assemblers are dropped, every later message is a duplicate.
	done   map[uint64]bool
	latest uint64
}

// VerifySegment decodes a segment and checks it against the installed
// commitment: it names the block, and its index, size and Merkle proof
// match the descriptor. The segment's Data aliases data.
func VerifySegment(data []byte, c Commitment) (*eip8411.Segment, error) {
	seg, err := eip8411.ViewSegment(data)
	if err != nil {
		return nil, err
	}
	if seg.BeaconBlockRoot != c.BlockRoot {
		return nil, errWrongBlock
	}
	if c.V1 == nil {
		return nil, fmt.Errorf("verify segment: the bid commits to a segdiff/2 group: %w", eip8411.ErrVersion)
	}
	if err := c.V1.Verify(seg); err != nil {
		return nil, err
	}
	return seg, nil
}

func (n *segmentedNode) verify(data []byte, c Commitment) (any, error) { return VerifyPart(data, c) }

// reassembler returns slot's assembler, made from its commitment on first
// use.
func (n *segmentedNode) reassembler(slot uint64) (*assembler, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done[slot] {
		return nil, nil
	}
	if r, ok := n.reasm[slot]; ok {
		return r, nil
	}
	c, ok := n.env.Commitment(slot)
	if !ok {
		return nil, fmt.Errorf("slot %d: no installed commitment", slot)
	}
	r, err := newAssembler(c)
	if err != nil {
		return nil, err
	}
	n.reasm[slot] = r
	n.latest = max(n.latest, slot)
	for s := range n.reasm {
		if s+keepSlots <= n.latest {
			delete(n.reasm, s)
		}
	}
	for s := range n.done {
		if s+keepSlots <= n.latest {
			delete(n.done, s)
		}
	}
	return r, nil
}

// finish drops slot's assembler once the node holds (or rejected) its
// payload: the parts' copies and the decoded body are not needed again.
func (n *segmentedNode) finish(slot uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.reasm, slot)
	n.done[slot] = true
}

func (n *segmentedNode) deliver(slot uint64, validated any) {
	p, ok := validated.(part)
	if !ok {
		return
	}
	r, err := n.reassembler(slot)
	if err != nil {
		return // the installed descriptor was invalid: never completes
	}
	if r == nil {
		n.env.Events().Received(slot, true) // the slot is complete already
		return
	}
	complete, dup, err := r.add(p)
	if err != nil {
		return // verified already; unreachable
	}
	n.env.Events().Received(slot, dup)
	if !complete || dup {
		return
	}
	if err := r.body(); err != nil {
		if !errors.Is(err, eip8411.ErrIncomplete) {
			n.env.Events().Rejected(eip8411.ReasonDecode)
			n.finish(slot)
		}
		return
	}
	n.finish(slot)
	n.env.Events().Completed(slot)
}

func (n *segmentedNode) Publish(ctx context.Context, p *Prepared) error {
	if !n.batch {
		for _, m := range p.Messages {
			if m == nil {
				continue // omitted by the builder (a fault)
			}
			if err := n.topic.Publish(ctx, m); err != nil {
				return fmt.Errorf("slot %d: publish segment: %w", p.Payload.Slot, err)
			}
		}
		return nil
	}
	var batch pubsub.MessageBatch
	for _, m := range p.Messages {
		if m == nil {
			continue
		}
		if err := n.topic.AddToBatch(ctx, &batch, m); err != nil {
			return fmt.Errorf("slot %d: batch segment: %w", p.Payload.Slot, err)
		}
	}
	if err := n.ps.PublishBatch(&batch); err != nil {
		return fmt.Errorf("slot %d: publish batch: %w", p.Payload.Slot, err)
	}
	return nil
}
