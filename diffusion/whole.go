package diffusion

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/eip8411"
)

func init() { Register(mode.Whole, newWhole) }

// envelopeHeader is the whole envelope's fixed part: slot ‖ block root.
const envelopeHeader = 8 + 32

// EncodeEnvelope lays out whole mode's gossip data: slot (LE) ‖ beacon
// block root ‖ the snappy-compressed body, like a
// SignedExecutionPayloadEnvelope naming its block (unsigned: the simulated
// builder is trusted).
func EncodeEnvelope(slot uint64, root [32]byte, compressed []byte) []byte {
	out := make([]byte, envelopeHeader+len(compressed))
	binary.LittleEndian.PutUint64(out, slot)
	copy(out[8:], root[:])
	copy(out[envelopeHeader:], compressed)
	return out
}

// ErrShortEnvelope is returned for data shorter than the envelope header.
var ErrShortEnvelope = errors.New("envelope shorter than its header")

// DecodeEnvelope splits an envelope made by EncodeEnvelope; compressed
// aliases data.
func DecodeEnvelope(data []byte) (slot uint64, root [32]byte, compressed []byte, err error) {
	if len(data) < envelopeHeader {
		return 0, root, nil, ErrShortEnvelope
	}
	copy(root[:], data[8:envelopeHeader])
	return binary.LittleEndian.Uint64(data), root, data[envelopeHeader:], nil
}

// VerifyEnvelope checks a whole envelope against the installed commitment:
// it names the block, its compressed bytes hash to the committed Merkle
// root (the commitment segments are checked against), and they decode
// strictly to a body.
func VerifyEnvelope(data []byte, c Commitment) error {
	_, root, compressed, err := DecodeEnvelope(data)
	if err != nil {
		return fmt.Errorf("verify envelope: %w: %w", eip8411.ErrDecode, err)
	}
	if root != c.BlockRoot {
		return errWrongBlock
	}
	if c.V1 == nil {
		return fmt.Errorf("verify envelope: the bid commits to a segdiff/2 group: %w", eip8411.ErrVersion)
	}
	if err := c.V1.VerifyCompressed(compressed); err != nil {
		return fmt.Errorf("verify envelope: %w", err)
	}
	if _, err := eip8411.DecompressBody(compressed); err != nil {
		return fmt.Errorf("verify envelope: %w", err)
	}
	return nil
}

// ContentID is the 20-byte content message id of the block and whole
// topics: Prysm's shape, SHA-256(MESSAGE_DOMAIN_VALID_SNAPPY ‖ len(topic) ‖
// topic ‖ data)[:20], hashed over the wire bytes (Prysm hashes the
// decompressed bytes; the id's width on the wire, which is what control
// bytes measure, is the same).
func ContentID(topic string, data []byte) string {
	h := sha256.New()
	h.Write([]byte{0x01, 0x00, 0x00, 0x00})
	var l [8]byte
	binary.LittleEndian.PutUint64(l[:], uint64(len(topic)))
	h.Write(l[:])
	h.Write([]byte(topic))
	h.Write(data)
	return string(h.Sum(nil)[:20])
}

// whole gossips the payload as one message: the compressed body in an
// envelope naming its block.
type whole struct {
	opts  Options
	topic string
	// ids maps each prepared envelope's message id to its slot. A content
	// id does not name its slot, so control bytes (IHAVE/IWANT/IDONTWANT
	// ids) are attributed through it: an oracle only a simulation whose
	// builder registers ids has (a client learns the slot with the message).
	ids sync.Map
}

func newWhole(o Options) (Policy, error) {
	return &whole{opts: o, topic: topicName(o.ForkDigest, "execution_payload")}, nil
}

func (w *whole) Mode() mode.Mode { return mode.Whole }
func (w *whole) Topic() string   { return w.topic }

// Cut commits a whole payload as segdiff/1 does: the envelope carries the
// body compressed whole, checked against the Merkle root of its segments.
func (w *whole) Cut(body *eip8411.Body) (*Group, error) {
	return Cut(body, Layout{SegmentSize: w.opts.SegmentSize})
}

func (w *whole) Prepare(p Payload) (*Prepared, error) {
	compressed, err := p.Group.CompressedBody()
	if err != nil {
		return nil, err
	}
	msg := EncodeEnvelope(p.Slot, p.BlockRoot, compressed)
	w.ids.Store(ContentID(w.topic, msg), p.Slot)
	return &Prepared{Payload: p, Messages: [][]byte{msg}}, nil
}

func (w *whole) DataSlot(data []byte) (uint64, bool) { return payloadSlot(data) }

// PartialSlot: this policy sends no partial messages.
func (w *whole) PartialSlot([]byte) (uint64, bool) { return 0, false }

func (w *whole) IDSlot(id string) (uint64, bool) {
	v, ok := w.ids.Load(id)
	if !ok {
		return 0, false
	}
	return v.(uint64), true
}

func (w *whole) NewNode(env Env) Node {
	n := &wholeNode{policy: w}
	n.topicNode = topicNode{env: env, opts: w.opts, attr: w, name: w.topic, format: n,
		topicOpts: []pubsub.TopicOpt{pubsub.WithTopicMessageIdFn(func(m *pb.Message) string { return ContentID(m.GetTopic(), m.Data) })}}
	return n
}

type wholeNode struct {
	topicNode
	policy *whole
}

func (n *wholeNode) verify(data []byte, c Commitment) (any, error) {
	return nil, VerifyEnvelope(data, c)
}

func (n *wholeNode) deliver(slot uint64, _ any) {
	n.env.Events().Received(slot, false)
	n.env.Events().Completed(slot)
}

func (n *wholeNode) Publish(ctx context.Context, p *Prepared) error {
	for _, m := range p.Messages {
		if m == nil {
			continue // omitted by the builder (a fault)
		}
		if err := n.topic.Publish(ctx, m); err != nil {
			return fmt.Errorf("slot %d: publish payload: %w", p.Payload.Slot, err)
		}
	}
	return nil
}
