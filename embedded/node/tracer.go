package embedded

import (
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/segdiff/segdiff/eip8411"
	"github.com/segdiff/segdiff/metrics"
)

// tracer is one node's pubsub RawTracer. It attributes received payload
// bytes to slots and keeps the node's mesh size on the payload topic.
//
// Data bytes are len(Message.Data) of every Publish entry received on the
// payload topic, duplicates included (no framing, no QUIC). Control bytes are
// the protobuf bytes of each IHAVE/IWANT/IDONTWANT message id that names a
// payload message (tag + length + id); the topic strings and the control
// envelope are not attributed to any slot. A segment id carries its slot
// (eip8411.ParseMessageID); a whole-mode id is a content hash, so it is
// looked up in the run's registry of published payload ids, which the
// builder fills before publishing (an oracle only a simulator has).
//
// The hooks run synchronously inside pubsub and never block: they take a
// mutex for a few map updates.
type tracer struct {
	n     *node
	topic string

	mu        sync.Mutex
	mesh      map[peer.ID]struct{}
	data      map[uint64]int64
	control   map[uint64]int64
	recvCount map[uint64]int64 // payload Publish entries received
	sentData  map[uint64]int64 // payload data bytes queued to peers
	dropData  map[uint64]int64 // payload data bytes dropped from queues
	firstSent map[uint64]time.Time
	iwantSent map[uint64]int64 // IWANT ids for payload messages this node sent
}

var _ pubsub.RawTracer = (*tracer)(nil)

func newTracer(n *node, topic string) *tracer {
	return &tracer{
		n: n, topic: topic,
		mesh:      map[peer.ID]struct{}{},
		data:      map[uint64]int64{},
		control:   map[uint64]int64{},
		recvCount: map[uint64]int64{},
		sentData:  map[uint64]int64{},
		dropData:  map[uint64]int64{},
		firstSent: map[uint64]time.Time{},
		iwantSent: map[uint64]int64{},
	}
}

// idSlot attributes a message id to its payload's slot.
func (t *tracer) idSlot(id string) (uint64, bool) {
	if len(id) == eip8411.StructuralIDSize {
		p, err := eip8411.ParseMessageID(id)
		if err == nil && p.Structural {
			return p.Slot, true
		}
		return 0, false
	}
	return t.n.run.wholeIDSlot(id)
}

func idBytes(id string) int {
	return protowire.SizeTag(2) + protowire.SizeBytes(len(id))
}

func (t *tracer) RecvRPC(rpc *pubsub.RPC) {
	now := time.Now()
	type add struct {
		slot uint64
		kind metrics.Kind
		n    int
	}
	var adds []add
	for _, m := range rpc.Publish {
		if m.GetTopic() != t.topic {
			continue
		}
		slot, ok := payloadSlot(m.Data)
		if !ok {
			continue
		}
		adds = append(adds, add{slot, metrics.KindData, len(m.Data)})
	}
	if c := rpc.Control; c != nil {
		ids := func(list []string) {
			for _, id := range list {
				if slot, ok := t.idSlot(id); ok {
					adds = append(adds, add{slot, metrics.KindControl, idBytes(id)})
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
	if len(adds) == 0 {
		return
	}
	t.mu.Lock()
	for _, a := range adds {
		if a.kind == metrics.KindData {
			if t.recvCount[a.slot] == 0 {
				t.n.rec.FirstArrival(a.slot, now)
			}
			t.recvCount[a.slot]++
			t.data[a.slot] += int64(a.n)
		} else {
			t.control[a.slot] += int64(a.n)
		}
	}
	t.mu.Unlock()
	for _, a := range adds {
		t.n.rec.AddReceivedBytes(a.slot, a.kind, a.n)
	}
}

func (t *tracer) SendRPC(rpc *pubsub.RPC, p peer.ID) {
	t.sent(rpc, t.sentData, true)
	if c := rpc.Control; c != nil {
		for _, iw := range c.Iwant {
			for _, id := range iw.MessageIDs {
				if slot, ok := t.idSlot(id); ok {
					t.mu.Lock()
					t.iwantSent[slot]++
					t.mu.Unlock()
				}
			}
		}
	}
}
func (t *tracer) DropRPC(rpc *pubsub.RPC, p peer.ID) { t.sent(rpc, t.dropData, false) }

func (t *tracer) sent(rpc *pubsub.RPC, into map[uint64]int64, first bool) {
	var now time.Time
	for _, m := range rpc.Publish {
		if m.GetTopic() != t.topic {
			continue
		}
		slot, ok := payloadSlot(m.Data)
		if !ok {
			continue
		}
		if now.IsZero() {
			now = time.Now()
		}
		t.mu.Lock()
		into[slot] += int64(len(m.Data))
		if _, seen := t.firstSent[slot]; first && !seen {
			t.firstSent[slot] = now
		}
		t.mu.Unlock()
	}
}

func (t *tracer) ValidateMessage(*pubsub.Message) {}

func (t *tracer) DuplicateMessage(msg *pubsub.Message) {
	if msg.GetTopic() != t.topic {
		return
	}
	if slot, ok := payloadSlot(msg.Data); ok {
		t.n.rec.SegmentReceived(slot, true)
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

// slotBytes returns the data and control bytes received for slot.
func (t *tracer) slotBytes(slot uint64) (data, control int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.data[slot], t.control[slot]
}

// slotSent returns the payload data bytes queued and dropped for slot, and
// when the first was queued.
func (t *tracer) slotSent(slot uint64) (sent, dropped int64, first time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sentData[slot], t.dropData[slot], t.firstSent[slot]
}

// slotIWants returns how many payload message ids of slot the node asked
// for with IWANT (each can bring a full copy).
func (t *tracer) slotIWants(slot uint64) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.iwantSent[slot]
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
