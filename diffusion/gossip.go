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

// payloadSlot reads the slot every payload message starts with: both the
// segment container and the whole envelope begin with it (uint64 LE).
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
			slot, _ := payloadSlot(m.Data)
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
	slot, ok := payloadSlot(m.Data)
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
	m.ValidatorData = validated
	return pubsub.ValidationAccept
}

// topicName is the Fulu-style gossip topic for name under the fork digest.
func topicName(forkDigest, name string) string {
	return "/eth2/" + forkDigest + "/" + name + "/ssz_snappy"
}

// errWrongBlock rejects a payload message that names another block than
// the one installed for its slot.
var errWrongBlock = fmt.Errorf("payload names another block: %w", eip8411.ErrGroupMismatch)
