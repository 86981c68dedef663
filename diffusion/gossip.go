package diffusion

import (
	"context"
	"encoding/binary"
	"fmt"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/segdiff/segdiff/eip8411"
)

// Gossip limits as Prysm sets them, for the payload topic.
const (
	// subBufferSize is the payload subscription's buffer: a batch publish
	// delivers every segment at once, and an unread subscription drops
	// messages, which would look like a slow network.
	subBufferSize = 1024
	// validatorConcurrency bounds payload messages parked in the validator
	// per node; far above K duplicates of a slot.
	validatorConcurrency = 4096
)

// messageFormat is what distinguishes the gossip-topic policies: how a
// payload message names its slot, how it is verified against the installed
// block, and what a node does with it once accepted.
type messageFormat interface {
	// verify checks data against the installed commitment and returns what
	// deliver needs (pubsub carries it as ValidatorData).
	verify(data []byte, c Commitment) (any, error)
	// deliver handles an accepted message of slot from another node.
	deliver(slot uint64, validated any)
}

// payloadSlot reads the slot a whole envelope starts with (uint64 LE).
func payloadSlot(data []byte) (uint64, bool) {
	if len(data) < 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(data), true
}

// topicNode is a gossip-topic policy on one node: it parks each payload
// message until its block is installed, verifies it, lets gossipsub relay
// it, and hands accepted messages to the format.
type topicNode struct {
	env       Env
	opts      Options
	attr      Attribution
	name      string
	topicOpts []pubsub.TopicOpt
	format    messageFormat
	self      peer.ID
	ps        *pubsub.PubSub
	topic     *pubsub.Topic
}

func (n *topicNode) RouterOptions() []pubsub.Option { return nil }

// Join registers the validator, joins the topic, subscribes and drains the
// subscription until ctx ends.
func (n *topicNode) Join(ctx context.Context, ps *pubsub.PubSub) error {
	n.self, n.ps = n.env.Host().ID(), ps
	if err := ps.RegisterTopicValidator(n.name, n.validate, pubsub.WithValidatorConcurrency(validatorConcurrency)); err != nil {
		return fmt.Errorf("register payload validator: %w", err)
	}
	t, err := ps.Join(n.name, n.topicOpts...)
	if err != nil {
		return fmt.Errorf("join %s: %w", n.name, err)
	}
	n.topic = t
	sub, err := t.Subscribe(pubsub.WithBufferSize(subBufferSize))
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", n.name, err)
	}
	go func() {
		defer sub.Cancel()
		for {
			m, err := sub.Next(ctx)
			if err != nil {
				return
			}
			if m.ReceivedFrom == n.self {
				continue // the builder's own publish
			}
			slot, _ := n.attr.DataSlot(m.Data)
			<-n.env.Installed(slot) // validation guarantees it; keeps the race detector informed
			n.format.deliver(slot, m.ValidatorData)
		}
	}()
	return nil
}

// validate is asynchronous, so that a parked message does not hold the
// router (see AwaitInstall).
func (n *topicNode) validate(ctx context.Context, from peer.ID, m *pubsub.Message) pubsub.ValidationResult {
	if from == n.self {
		return pubsub.ValidationAccept // the builder's own publish
	}
	slot, ok := n.attr.DataSlot(m.Data)
	if !ok {
		n.env.Events().Rejected(eip8411.ReasonDecode)
		return pubsub.ValidationReject
	}
	c, ok := AwaitInstall(ctx, n.env, slot, n.opts.InstallTimeout)
	if !ok {
		return pubsub.ValidationIgnore
	}
	validated, err := n.format.verify(m.Data, c)
	if err != nil {
		reason := eip8411.Reason(err)
		if reason == "" {
			reason = eip8411.ReasonDecode
		}
		n.env.Events().Rejected(reason)
		return pubsub.ValidationReject
	}
	if !n.env.Role().Forward {
		// A node that forwards nothing keeps the message to itself: Ignore
		// keeps it out of the router's forwarding and message cache (so it
		// is not announced either: stock gossipsub announces only what it
		// caches).
		n.format.deliver(slot, validated)
		return pubsub.ValidationIgnore
	}
	m.ValidatorData = validated
	return pubsub.ValidationAccept
}

// InspectRPC applies the node's role and the network's faults to an
// incoming RPC before the router handles it: payload deliveries and
// requests lost on arrival (Env.Drop), requests a node that does not answer
// never serves (its router would answer IWANTs from its cache), and the
// inventory and acknowledgements of a peer that announces nothing (its
// router emits them on its behalf; they are ignored here instead).
func (n *topicNode) InspectRPC(from peer.ID, rpc *pubsub.RPC) error {
	if len(rpc.Publish) > 0 {
		kept := rpc.Publish[:0]
		for _, m := range rpc.Publish {
			if m.GetTopic() == n.name && n.env.Drop(LossData) {
				continue
			}
			kept = append(kept, m)
		}
		rpc.Publish = kept
	}
	c := rpc.Control
	if c == nil {
		return nil
	}
	answer := n.env.Role().Answer
	if len(c.Iwant) > 0 {
		kept := c.Iwant[:0]
		for _, iw := range c.Iwant {
			ours := n.payloadIDs(iw.MessageIDs)
			switch {
			case ours == 0:
				kept = append(kept, iw)
			case n.env.Drop(LossRequest), !answer:
				// Lost on arrival, or never served: the payload ids go; the
				// entry's other ids (gossipsub puts every topic's ids in
				// one IWANT) stand, as loss applies to payload requests
				// only.
				iw.MessageIDs = n.otherIDs(iw.MessageIDs)
				if len(iw.MessageIDs) > 0 {
					kept = append(kept, iw)
				}
			default:
				kept = append(kept, iw)
			}
		}
		c.Iwant = kept
	}
	if !n.env.PeerRole(from).Announce {
		kept := c.Ihave[:0]
		for _, ih := range c.Ihave {
			if ih.GetTopicID() != n.name {
				kept = append(kept, ih)
			}
		}
		c.Ihave = kept
		for _, dw := range c.Idontwant {
			dw.MessageIDs = n.otherIDs(dw.MessageIDs)
		}
	}
	return nil
}

// payloadIDs counts the ids that name this policy's payload messages.
func (n *topicNode) payloadIDs(ids []string) int {
	k := 0
	for _, id := range ids {
		if _, ok := n.attr.IDSlot(id); ok {
			k++
		}
	}
	return k
}

// otherIDs returns the ids that do not name payload messages.
func (n *topicNode) otherIDs(ids []string) []string {
	out := ids[:0]
	for _, id := range ids {
		if _, ok := n.attr.IDSlot(id); !ok {
			out = append(out, id)
		}
	}
	return out
}

// topicName is the Fulu-style gossip topic for name under the fork digest.
func topicName(forkDigest, name string) string {
	return "/eth2/" + forkDigest + "/" + name + "/ssz_snappy"
}

// errWrongBlock rejects a payload message that names another block than
// the one installed for its slot.
var errWrongBlock = fmt.Errorf("payload names another block: %w", eip8411.ErrGroupMismatch)
