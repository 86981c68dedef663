package diffusion

import (
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/segdiff/segdiff/diffusion/mode"
)

func init() {
	Register(mode.WholePulls, func(o Options) (Policy, error) {
		w, _ := newWhole(o)
		return &wholePulls{whole: w.(*whole)}, nil
	})
}

// RPCInspector is implemented by a policy node that inspects (and may
// edit) every incoming RPC before the router handles it. The node hosting
// the policy calls it from its go-libp2p-pubsub application RPC inspector,
// after counting the RPC's bytes as they arrived; an error drops the RPC.
type RPCInspector interface {
	InspectRPC(from peer.ID, rpc *pubsub.RPC) error
}

// wholePulls is whole-message gossip with disciplined pulls, on stock
// go-libp2p-pubsub: an RPC inspector keeps a Ledger of IHAVE announcements
// per message id. The first announcer of an id the node has not seen is let
// through, so the router asks it (IWANT); later announcers' IHAVEs for that
// id are removed from their RPCs and kept as offers. When a request lapses
// (PullRules.Window without the message), the next offerer is asked by
// handing the router that offerer's announcement again, in the next RPC
// that peer sends; the lapsed peer's IHAVEs are dropped for PullRules.Ban.
// Stock gossipsub instead asks every announcer while the first copy is
// still arriving.
type wholePulls struct{ *whole }

func (w *wholePulls) Mode() mode.Mode { return mode.WholePulls }

func (w *wholePulls) NewNode(env Env) Node {
	n := &wholePullsNode{wholeNode: w.whole.NewNode(env).(*wholeNode), ledger: NewLedger[string](w.opts.Pulls), pend: map[peer.ID][]string{}}
	return n
}

type wholePullsNode struct {
	*wholeNode

	mu     sync.Mutex
	ledger *Ledger[string]
	pend   map[peer.ID][]string // announcements to hand the router again, by announcer
}

func (n *wholePullsNode) RouterOptions() []pubsub.Option {
	return []pubsub.Option{pubsub.WithRawTracer(arrivals{n})}
}

// InspectRPC applies the pull discipline to from's IHAVEs on the payload
// topic.
func (n *wholePullsNode) InspectRPC(from peer.ID, rpc *pubsub.RPC) error {
	if err := n.topicNode.InspectRPC(from, rpc); err != nil {
		return err
	}
	now := time.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	for id, next := range n.ledger.Due(now) {
		n.pend[next] = append(n.pend[next], id)
	}
	c := rpc.Control
	if c != nil {
		for _, ih := range c.Ihave {
			if ih.GetTopicID() != n.name {
				continue
			}
			kept := ih.MessageIDs[:0]
			for _, id := range ih.MessageIDs {
				if _, ok := n.whole().IDSlot(id); !ok {
					kept = append(kept, id) // not a payload id: not ours to judge
					continue
				}
				if n.ledger.Announced(id, from, now) {
					kept = append(kept, id)
				}
			}
			ih.MessageIDs = kept
		}
	}
	if ids := n.pend[from]; len(ids) > 0 {
		delete(n.pend, from)
		var again []string
		for _, id := range ids {
			if p, ok := n.ledger.Asked(id); ok && p == from {
				again = append(again, id)
			}
		}
		if len(again) > 0 {
			if rpc.Control == nil {
				rpc.Control = &pb.ControlMessage{}
			}
			topic := n.name
			rpc.Control.Ihave = append(rpc.Control.Ihave, &pb.ControlIHave{TopicID: &topic, MessageIDs: again})
		}
	}
	return nil
}

func (n *wholePullsNode) whole() *whole { return n.policy }

// arrived records that message id arrived (or was published here).
func (n *wholePullsNode) arrived(id string) {
	n.mu.Lock()
	n.ledger.Arrived(id)
	n.mu.Unlock()
}

// arrivals tells the ledger when a payload message arrives.
type arrivals struct{ n *wholePullsNode }

var _ pubsub.RawTracer = arrivals{}

func (a arrivals) ValidateMessage(m *pubsub.Message) {
	if m.GetTopic() == a.n.name {
		a.n.arrived(m.ID)
	}
}

func (a arrivals) DuplicateMessage(m *pubsub.Message) {
	if m.GetTopic() == a.n.name {
		a.n.arrived(m.ID)
	}
}

func (arrivals) OnNewOutboundStream(peer.ID, protocol.ID)             {}
func (arrivals) OnClosedOutboundStream(peer.ID)                       {}
func (arrivals) Join(string)                                          {}
func (arrivals) Leave(string)                                         {}
func (arrivals) Graft(peer.ID, string)                                {}
func (arrivals) Prune(peer.ID, string)                                {}
func (arrivals) DeliverMessage(*pubsub.Message)                       {}
func (arrivals) RejectMessage(*pubsub.Message, string)                {}
func (arrivals) ThrottlePeer(peer.ID)                                 {}
func (arrivals) RecvRPC(*pubsub.RPC)                                  {}
func (arrivals) SendRPC(*pubsub.RPC, peer.ID)                         {}
func (arrivals) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
func (arrivals) DropRPC(*pubsub.RPC, peer.ID)                         {}
func (arrivals) UndeliverableMessage(*pubsub.Message)                 {}
