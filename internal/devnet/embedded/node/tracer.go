package node

import (
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/segdiff/segdiff/diffusion"
	"github.com/segdiff/segdiff/metrics"
)

// Traffic is what a node's tracer counted for one slot's payload.
type Traffic struct {
	// Data and Control are the bytes received (see tracer).
	Data, Control int64
	// Sent and Dropped are payload data bytes queued to peers and dropped
	// from full queues: Σ received = Σ sent − Σ dropped.
	Sent, Dropped int64
	// FirstSent is when the node first queued a payload message (zero:
	// never).
	FirstSent time.Time
	// IWantSent counts the payload message ids the node requested with
	// IWANT (each can bring a full copy).
	IWantSent int64
}

// tracer is one node's pubsub RawTracer. It attributes received payload
// bytes to slots, through the policy's Attribution, and keeps the node's
// mesh size on the payload topic.
//
// Data bytes are len(Message.Data) of every Publish entry received on the
// payload topic, duplicates included (no framing, no QUIC). Control bytes
// are the protobuf bytes of each IHAVE/IWANT/IDONTWANT message id that
// names a payload message (tag + length + id); the topic strings and the
// control envelope are not attributed to any slot. A policy that sends
// bytes of its own (outside gossipsub messages) adds them through
// received.
//
// The hooks run synchronously inside pubsub and never block: they take a
// mutex for a few map updates.
type tracer struct {
	rec   *metrics.Recorder
	attr  diffusion.Attribution
	topic string

	mu     sync.Mutex
	mesh   map[peer.ID]struct{}
	bySlot map[uint64]*Traffic
	seen   map[uint64]bool // a data byte of the slot arrived
}

var _ pubsub.RawTracer = (*tracer)(nil)

func newTracer(rec *metrics.Recorder, p diffusion.Policy) *tracer {
	return &tracer{rec: rec, attr: p, topic: p.Topic(), mesh: map[peer.ID]struct{}{}, bySlot: map[uint64]*Traffic{}, seen: map[uint64]bool{}}
}

// slot returns slot's counters; t.mu must be held.
func (t *tracer) slot(s uint64) *Traffic {
	c, ok := t.bySlot[s]
	if !ok {
		c = &Traffic{}
		t.bySlot[s] = c
	}
	return c
}

func idBytes(id string) int {
	return protowire.SizeTag(2) + protowire.SizeBytes(len(id))
}

// received counts n received bytes of slot's payload and records the
// first data arrival.
func (t *tracer) received(slot uint64, control bool, n int) {
	now := time.Now()
	t.mu.Lock()
	c := t.slot(slot)
	first := false
	if control {
		c.Control += int64(n)
	} else {
		c.Data += int64(n)
		first = !t.seen[slot]
		t.seen[slot] = true
	}
	t.mu.Unlock()
	if first {
		t.rec.FirstArrival(slot, now)
	}
	kind := metrics.KindData
	if control {
		kind = metrics.KindControl
	}
	t.rec.AddReceivedBytes(slot, kind, n)
}

// partialControlBytes is the control part of a partial-message RPC: the
// group id and the parts metadata (inventory, requests), as protobuf
// fields, when it carries metadata; a data-only RPC has none, as a Publish
// entry's framing is not counted either.
func partialControlBytes(pm *pb.PartialMessagesExtension) int {
	if len(pm.PartsMetadata) == 0 {
		return 0
	}
	return protowire.SizeTag(2) + protowire.SizeBytes(len(pm.GroupID)) + protowire.SizeTag(4) + protowire.SizeBytes(len(pm.PartsMetadata))
}

// RecvRPC is not where bytes are counted: the node's RPC inspector calls
// wire first, before any policy edits the RPC, so that received bytes are
// what arrived.
func (t *tracer) RecvRPC(*pubsub.RPC) {}

// wire counts an incoming RPC's payload bytes as they arrived.
func (t *tracer) wire(rpc *pubsub.RPC) {
	if pm := rpc.Partial; pm != nil && pm.GetTopicID() == t.topic {
		if slot, ok := t.attr.PartialSlot(pm.GroupID); ok {
			if n := len(pm.PartialMessage); n > 0 {
				t.received(slot, false, n)
			}
			if n := partialControlBytes(pm); n > 0 {
				t.received(slot, true, n)
			}
		}
	}
	for _, m := range rpc.Publish {
		if m.GetTopic() != t.topic {
			continue
		}
		if slot, ok := t.attr.DataSlot(m.Data); ok {
			t.received(slot, false, len(m.Data))
		}
	}
	c := rpc.Control
	if c == nil {
		return
	}
	ids := func(list []string) {
		for _, id := range list {
			if slot, ok := t.attr.IDSlot(id); ok {
				t.received(slot, true, idBytes(id))
			}
		}
	}
	for _, ih := range c.Ihave {
		if ih.GetTopicID() == t.topic {
			ids(ih.MessageIDs)
		}
	}
	for _, iw := range c.Iwant {
		ids(iw.MessageIDs)
	}
	for _, dw := range c.Idontwant {
		ids(dw.MessageIDs)
	}
}

func (t *tracer) SendRPC(rpc *pubsub.RPC, _ peer.ID) {
	t.sent(rpc, false)
	if c := rpc.Control; c != nil {
		for _, iw := range c.Iwant {
			for _, id := range iw.MessageIDs {
				if slot, ok := t.attr.IDSlot(id); ok {
					t.mu.Lock()
					t.slot(slot).IWantSent++
					t.mu.Unlock()
				}
			}
		}
	}
}

func (t *tracer) DropRPC(rpc *pubsub.RPC, _ peer.ID) { t.sent(rpc, true) }

func (t *tracer) sent(rpc *pubsub.RPC, dropped bool) {
	if pm := rpc.Partial; pm != nil && pm.GetTopicID() == t.topic && len(pm.PartialMessage) > 0 {
		if slot, ok := t.attr.PartialSlot(pm.GroupID); ok {
			t.sentData(slot, len(pm.PartialMessage), dropped)
		}
	}
	for _, m := range rpc.Publish {
		if m.GetTopic() != t.topic {
			continue
		}
		if slot, ok := t.attr.DataSlot(m.Data); ok {
			t.sentData(slot, len(m.Data), dropped)
		}
	}
}

// sentData counts n payload data bytes of slot queued to a peer (or
// dropped from a full queue).
func (t *tracer) sentData(slot uint64, n int, dropped bool) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.slot(slot)
	if dropped {
		c.Dropped += int64(n)
		return
	}
	c.Sent += int64(n)
	if c.FirstSent.IsZero() {
		c.FirstSent = now
	}
}

func (t *tracer) ValidateMessage(*pubsub.Message) {}

// DuplicateMessage counts copies the router dropped as already seen.
func (t *tracer) DuplicateMessage(msg *pubsub.Message) {
	if msg.GetTopic() != t.topic {
		return
	}
	if slot, ok := t.attr.DataSlot(msg.Data); ok {
		t.rec.SegmentReceived(slot, true)
	}
}

func (t *tracer) Graft(p peer.ID, topic string) {
	if topic == t.topic {
		t.mu.Lock()
		t.mesh[p] = struct{}{}
		t.mu.Unlock()
	}
}

func (t *tracer) Prune(p peer.ID, topic string) {
	if topic == t.topic {
		t.mu.Lock()
		delete(t.mesh, p)
		t.mu.Unlock()
	}
}

func (t *tracer) meshSize() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.mesh)
}

func (t *tracer) traffic(slot uint64) Traffic {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.bySlot[slot]; ok {
		return *c
	}
	return Traffic{}
}

func (t *tracer) OnNewOutboundStream(peer.ID, protocol.ID)             {}
func (t *tracer) OnClosedOutboundStream(peer.ID)                       {}
func (t *tracer) Join(string)                                          {}
func (t *tracer) Leave(string)                                         {}
func (t *tracer) DeliverMessage(*pubsub.Message)                       {}
func (t *tracer) RejectMessage(*pubsub.Message, string)                {}
func (t *tracer) ThrottlePeer(peer.ID)                                 {}
func (t *tracer) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
func (t *tracer) UndeliverableMessage(*pubsub.Message)                 {}
