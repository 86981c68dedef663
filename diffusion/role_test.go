package diffusion

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/eip8411"
)

// Each adversarial role and fault in isolation, at the seams where the
// policies decide: topicNode.InspectRPC (requests answered, inventory of a
// peer that announces nothing, arrivals lost), topicNode.validate
// (forwarding), and the phase node's control/forward/emit/arrival/publish
// steps, driven directly on its loop state without a router.

var allRoles = []Role{Relay, Withholder, Silent, Mute}

// fakeEnv is an Env with a fixed role, per-peer roles, a drop function and
// installed commitments; it counts the drop draws it was asked for.
type fakeEnv struct {
	host   host.Host
	role   Role
	peers  map[peer.ID]Role
	drop   func(Loss) bool
	commit map[uint64]Commitment
	ev     *recEvents

	mu    sync.Mutex
	draws map[Loss]int
}

func newFakeEnv(role Role) *fakeEnv {
	return &fakeEnv{host: idHost{id: "self"}, role: role, peers: map[peer.ID]Role{}, commit: map[uint64]Commitment{},
		ev: &recEvents{}, draws: map[Loss]int{}}
}

func (e *fakeEnv) Host() host.Host { return e.host }

func (e *fakeEnv) Installed(slot uint64) <-chan struct{} {
	ch := make(chan struct{})
	if _, ok := e.commit[slot]; ok {
		close(ch)
	}
	return ch
}

func (e *fakeEnv) Commitment(slot uint64) (Commitment, bool) {
	c, ok := e.commit[slot]
	return c, ok
}

func (e *fakeEnv) Role() Role { return e.role }

func (e *fakeEnv) PeerRole(p peer.ID) Role {
	if r, ok := e.peers[p]; ok {
		return r
	}
	return Relay
}

func (e *fakeEnv) Drop(k Loss) bool {
	e.mu.Lock()
	e.draws[k]++
	e.mu.Unlock()
	return e.drop != nil && e.drop(k)
}

func (e *fakeEnv) drawn(k Loss) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.draws[k]
}

func (e *fakeEnv) Events() Events { return e.ev }

// dropAll drops every arrival of kind.
func dropAll(kind Loss) func(Loss) bool { return func(k Loss) bool { return k == kind } }

// recEvents counts what a policy reports.
type recEvents struct {
	mu                                  sync.Mutex
	received, dups, completed, deferred int
	rejected                            []string
	dataBytes, controlBytes             int
}

func (r *recEvents) Received(_ uint64, dup bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if dup {
		r.dups++
		return
	}
	r.received++
}

func (r *recEvents) Completed(uint64) {
	r.mu.Lock()
	r.completed++
	r.mu.Unlock()
}

func (r *recEvents) Rejected(reason string) {
	r.mu.Lock()
	r.rejected = append(r.rejected, reason)
	r.mu.Unlock()
}

func (r *recEvents) Deferred() {
	r.mu.Lock()
	r.deferred++
	r.mu.Unlock()
}

func (r *recEvents) ReceivedBytes(_ uint64, control bool, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if control {
		r.controlBytes += n
		return
	}
	r.dataBytes += n
}

// idHost is a host.Host that only knows its id: the policies' NewNode asks
// for nothing else.
type idHost struct {
	host.Host
	id peer.ID
}

func (h idHost) ID() peer.ID { return h.id }

// fixture is one payload as policy p prepares it, with the commitment an
// installed block would carry.
type fixture struct {
	policy Policy
	slot   uint64
	msgs   [][]byte
	prep   *Prepared
	commit Commitment
}

const fixtureSlot = 3

func newFixture(t *testing.T, m mode.Mode) fixture {
	t.Helper()
	p, err := New(m, Options{SegmentSize: 2048, Order: eip8411.OrderCompressThenCut})
	if err != nil {
		t.Fatalf("New(%s): %v", m, err)
	}
	body, err := eip8411.SyntheticBody(rand.New(rand.NewPCG(1, 2)), 16<<10)
	if err != nil {
		t.Fatalf("SyntheticBody: %v", err)
	}
	g, err := p.Cut(body)
	if err != nil {
		t.Fatalf("Cut: %v", err)
	}
	root := [32]byte{7}
	pr, err := p.Prepare(Payload{Slot: fixtureSlot, BlockRoot: root, Group: g})
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	c, err := NewCommitment(fixtureSlot, root, g.Descriptor())
	if err != nil {
		t.Fatalf("NewCommitment: %v", err)
	}
	if info, _ := mode.Lookup(m); !info.OneMessage && len(pr.Messages) < 4 {
		t.Fatalf("%s: %d parts, want at least 4 for these tests", m, len(pr.Messages))
	}
	return fixture{policy: p, slot: fixtureSlot, msgs: pr.Messages, prep: pr, commit: c}
}

// topicOf returns the gossip-topic part of a policy node.
func topicOf(t *testing.T, n Node) *topicNode {
	t.Helper()
	switch n := n.(type) {
	case *segmentedNode:
		return &n.topicNode
	case *wholeNode:
		return &n.topicNode
	case *wholePullsNode:
		return &n.topicNode
	}
	t.Fatalf("%T is not a gossip-topic node", n)
	return nil
}

// iwantIDs and idontwantIDs return the message ids of each entry.
func iwantIDs(c *pb.ControlMessage) [][]string {
	var out [][]string
	for _, e := range c.Iwant {
		out = append(out, slices.Clone(e.MessageIDs))
	}
	return out
}

func idontwantIDs(c *pb.ControlMessage) [][]string {
	var out [][]string
	for _, e := range c.Idontwant {
		out = append(out, slices.Clone(e.MessageIDs))
	}
	return out
}

func ihaveTopics(c *pb.ControlMessage) []string {
	var out []string
	for _, e := range c.Ihave {
		out = append(out, e.GetTopicID())
	}
	return out
}

func equalIDs(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}

// otherTopic is a topic no policy owns (the beacon block topic's shape).
const otherTopic = "/eth2/00000000/beacon_block/ssz_snappy"

// controlRPC is an RPC carrying, for payload ids pay and a non-payload id
// other: IWANTs for payload ids only, other only, and both mixed; IHAVEs on
// the payload topic and another; one IDONTWANT naming both kinds.
func controlRPC(topic string, pay []string, other string) *pubsub.RPC {
	rpc := &pubsub.RPC{}
	t1, t2 := topic, otherTopic
	rpc.Control = &pb.ControlMessage{
		Iwant: []*pb.ControlIWant{
			{MessageIDs: slices.Clone(pay)},
			{MessageIDs: []string{other}},
			{MessageIDs: []string{pay[0], other}},
		},
		Ihave: []*pb.ControlIHave{
			{TopicID: &t1, MessageIDs: slices.Clone(pay)},
			{TopicID: &t2, MessageIDs: []string{other}},
		},
		Idontwant: []*pb.ControlIDontWant{{MessageIDs: append(slices.Clone(pay), other)}},
	}
	return rpc
}

// The node's own role decides which requests it serves (Answer); the
// sending peer's role decides whether its inventory and acknowledgements
// count (Announce). The two are independent: every pair is checked, in a
// content-id policy (whole) and a structural-id one (segmented).
func TestInspectRPCRoles(t *testing.T) {
	for _, m := range []mode.Mode{mode.Segmented, mode.Whole} {
		f := newFixture(t, m)
		var pay []string
		for _, msg := range f.msgs[:min(2, len(f.msgs))] {
			var id string
			if m == mode.Whole {
				id = ContentID(f.policy.Topic(), msg)
			} else {
				id = eip8411.MessageID(msg)
			}
			if _, ok := f.policy.IDSlot(id); !ok {
				t.Fatalf("%s: IDSlot does not recognise the policy's own id %x", m, id)
			}
			pay = append(pay, id)
		}
		other := ContentID(otherTopic, []byte("a block"))
		if _, ok := f.policy.IDSlot(other); ok {
			t.Fatalf("%s: IDSlot claims a block-topic id", m)
		}
		for _, own := range allRoles {
			for _, from := range allRoles {
				t.Run(string(m)+"/"+own.Name+"<-"+from.Name, func(t *testing.T) {
					env := newFakeEnv(own)
					env.peers["peer"] = from
					n := topicOf(t, f.policy.NewNode(env))
					rpc := controlRPC(f.policy.Topic(), pay, other)
					if err := n.InspectRPC("peer", rpc); err != nil {
						t.Fatalf("InspectRPC: %v", err)
					}
					c := rpc.Control
					wantIwant := [][]string{pay, {other}, {pay[0], other}}
					if !own.Answer {
						wantIwant = [][]string{{other}, {other}}
					}
					if got := iwantIDs(c); !equalIDs(got, wantIwant) {
						t.Errorf("IWANT ids kept = %q, want %q (answers %v)", got, wantIwant, own.Answer)
					}
					wantIhave, wantIdw := []string{f.policy.Topic(), otherTopic}, [][]string{append(slices.Clone(pay), other)}
					if !from.Announce {
						wantIhave, wantIdw = []string{otherTopic}, [][]string{{other}}
					}
					if got := ihaveTopics(c); !slices.Equal(got, wantIhave) {
						t.Errorf("IHAVE topics kept = %q, want %q (peer announces %v)", got, wantIhave, from.Announce)
					}
					if got := idontwantIDs(c); !equalIDs(got, wantIdw) {
						t.Errorf("IDONTWANT ids kept = %q, want %q (peer announces %v)", got, wantIdw, from.Announce)
					}
					if d := env.drawn(LossData) + env.drawn(LossRequest); d != 2 {
						// One request draw per IWANT entry naming a payload
						// message; none for the rest.
						t.Errorf("%d loss draws, want 2 (the IWANT entries naming payload ids)", d)
					}
				})
			}
		}
	}
}

// Loss on arrival: a lost delivery is removed from the RPC only on the
// payload topic, a lost request only for payload ids, and each kind is
// drawn only for its own traffic.
func TestInspectRPCLoss(t *testing.T) {
	f := newFixture(t, mode.Segmented)
	pay := []string{eip8411.MessageID(f.msgs[0]), eip8411.MessageID(f.msgs[1])}
	other := ContentID(otherTopic, []byte("a block"))
	topic, t2 := f.policy.Topic(), otherTopic
	tests := []struct {
		name        string
		drop        func(Loss) bool
		wantPublish []string // topics of the deliveries kept
		wantIwant   [][]string
		dataDraws   int
		reqDraws    int
	}{
		{"no loss", nil, []string{topic, otherTopic, topic}, [][]string{pay, {other}, {pay[0], other}}, 2, 2},
		{"data lost", dropAll(LossData), []string{otherTopic}, [][]string{pay, {other}, {pay[0], other}}, 2, 2},
		{"requests lost", dropAll(LossRequest), []string{topic, otherTopic, topic}, [][]string{{other}, {other}}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newFakeEnv(Relay)
			env.drop = tt.drop
			n := topicOf(t, f.policy.NewNode(env))
			rpc := controlRPC(topic, pay, other)
			rpc.Publish = []*pb.Message{{Topic: &topic, Data: f.msgs[0]}, {Topic: &t2, Data: []byte("a block")}, {Topic: &topic, Data: f.msgs[1]}}
			if err := n.InspectRPC("peer", rpc); err != nil {
				t.Fatalf("InspectRPC: %v", err)
			}
			var got []string
			for _, m := range rpc.Publish {
				got = append(got, m.GetTopic())
			}
			if !slices.Equal(got, tt.wantPublish) {
				t.Errorf("deliveries kept on topics %q, want %q", got, tt.wantPublish)
			}
			if got := iwantIDs(rpc.Control); !equalIDs(got, tt.wantIwant) {
				t.Errorf("IWANT ids kept = %q, want %q", got, tt.wantIwant)
			}
			if got := len(rpc.Control.Ihave); got != 2 {
				t.Errorf("%d IHAVE entries kept, want 2 (loss drops no inventory)", got)
			}
			if d, r := env.drawn(LossData), env.drawn(LossRequest); d != tt.dataDraws || r != tt.reqDraws {
				t.Errorf("draws data %d requests %d, want %d and %d (one per payload delivery and per payload IWANT entry)", d, r, tt.dataDraws, tt.reqDraws)
			}
		})
	}
}

// A mute peer's IHAVE never reaches the pull ledger of whole-pulls: it is
// neither asked nor kept as an offer, and the next announcer that does
// announce is the one asked.
func TestWholePullsIgnoresMuteAnnouncer(t *testing.T) {
	f := newFixture(t, mode.WholePulls)
	id := ContentID(f.policy.Topic(), f.msgs[0])
	env := newFakeEnv(Relay)
	env.peers["mute"], env.peers["withholder"] = Mute, Withholder
	n := f.policy.NewNode(env).(*wholePullsNode)
	topic := f.policy.Topic()
	announce := func(from peer.ID) []string {
		rpc := &pubsub.RPC{}
		rpc.Control = &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: &topic, MessageIDs: []string{id}}}}
		if err := n.InspectRPC(from, rpc); err != nil {
			t.Fatalf("InspectRPC: %v", err)
		}
		var ids []string
		for _, ih := range rpc.Control.Ihave {
			ids = append(ids, ih.MessageIDs...)
		}
		return ids
	}
	if got := announce("mute"); len(got) != 0 {
		t.Fatalf("a mute peer's IHAVE reached the router: %q", got)
	}
	n.mu.Lock()
	_, asked := n.ledger.Asked(id)
	offers := n.ledger.Offers(id)
	n.mu.Unlock()
	if asked || offers != 0 {
		t.Fatalf("after a mute peer's IHAVE: asked %v, %d offers; want neither", asked, offers)
	}
	if got := announce("withholder"); !slices.Equal(got, []string{id}) {
		t.Fatalf("the first announcing peer's IHAVE = %q, want it let through", got)
	}
	n.mu.Lock()
	p, _ := n.ledger.Asked(id)
	n.mu.Unlock()
	if p != "withholder" {
		t.Errorf("ledger asked %q, want the first peer that announces", p)
	}
}

// A node that forwards nothing keeps a valid payload message to itself:
// Ignore (out of the router's forwarding and cache) and delivered locally.
// A forwarding node accepts it and leaves delivery to the subscription. An
// invalid message is rejected whatever the role.
func TestValidateForwarding(t *testing.T) {
	for _, m := range []mode.Mode{mode.Segmented, mode.SegmentedBatch, mode.Whole, mode.WholePulls} {
		f := newFixture(t, m)
		for _, role := range allRoles {
			t.Run(string(m)+"/"+role.Name, func(t *testing.T) {
				env := newFakeEnv(role)
				env.commit[f.slot] = f.commit
				n := topicOf(t, f.policy.NewNode(env))
				topic := f.policy.Topic()
				msg := &pubsub.Message{Message: &pb.Message{Topic: &topic, Data: f.msgs[0]}}
				got := n.validate(context.Background(), "peer", msg)
				want := pubsub.ValidationAccept
				if !role.Forward {
					want = pubsub.ValidationIgnore
				}
				if got != want {
					t.Fatalf("validate = %v, want %v (forwards %v)", got, want, role.Forward)
				}
				env.ev.mu.Lock()
				received, completed, rejected := env.ev.received, env.ev.completed, len(env.ev.rejected)
				env.ev.mu.Unlock()
				wantReceived := 0
				if !role.Forward {
					wantReceived = 1 // delivered here, as the subscription never sees it
				}
				if received != wantReceived || rejected != 0 {
					t.Errorf("received %d, rejected %d; want %d and 0", received, rejected, wantReceived)
				}
				if len(f.msgs) == 1 && completed != wantReceived {
					t.Errorf("completed %d, want %d (one-message payload)", completed, wantReceived)
				}
				if _, isSeg := n.format.(*segmentedNode); isSeg && role.Forward && msg.ValidatorData == nil {
					t.Error("an accepted segment carries no ValidatorData for the subscription")
				}

				bad := bytes.Clone(f.msgs[0])
				bad[len(bad)-1] ^= 0x40
				if got := n.validate(context.Background(), "peer", &pubsub.Message{Message: &pb.Message{Topic: &topic, Data: bad}}); got != pubsub.ValidationReject {
					t.Errorf("validate(corrupt) = %v, want Reject", got)
				}
			})
		}
	}
}

// Phase-forwarding modes decide on the node's loop, without the router:
// the tests below drive those steps directly.

var phaseMesh = []peer.ID{"m1", "m2", "m3", "m4", "m5"}

func newPhaseNode(t *testing.T, f fixture, role Role) (*phasedNode, *fakeEnv) {
	t.Helper()
	env := newFakeEnv(role)
	env.commit[f.slot] = f.commit
	n := f.policy.NewNode(env).(*phasedNode)
	for _, p := range phaseMesh {
		n.mesh[p] = struct{}{}
	}
	return n, env
}

// drain runs the work the node's callbacks queued for its loop.
func (n *phasedNode) drain() {
	for n.runQueued() {
	}
}

func bitsOf(parts int, idx ...int) Bits {
	b := NewBits(parts)
	for _, i := range idx {
		b.Set(i)
	}
	return b
}

// outbox returns the parts queued to each peer, and the peers queued an
// announcement.
func outbox(g *group) (parts map[peer.ID][]int, have []peer.ID) {
	parts = map[peer.ID][]int{}
	for p, o := range g.outbox {
		if len(o.parts) > 0 {
			parts[p] = slices.Clone(o.parts)
		}
		if o.have {
			have = append(have, p)
		}
	}
	slices.Sort(have)
	return parts, have
}

// A WANT is answered with the parts held only by a node that answers.
func TestPhaseAnswer(t *testing.T) {
	for _, m := range []mode.Mode{mode.Phase, mode.Tier2, mode.Tier3} {
		f := newFixture(t, m)
		for _, role := range allRoles {
			t.Run(string(m)+"/"+role.Name, func(t *testing.T) {
				n, _ := newPhaseNode(t, f, role)
				g := n.newGroup(f.commit)
				for _, i := range []int{0, 1, 2} {
					g.held.Set(i)
					g.msgs[i] = f.msgs[i]
				}
				last := g.parts - 1
				n.control(g, "asker", Control{Parts: g.parts, Want: bitsOf(g.parts, 0, 2, last)})
				parts, _ := outbox(g)
				var want []int
				if role.Answer {
					want = []int{0, 2} // never a part not held
				}
				if got := parts["asker"]; !slices.Equal(got, want) {
					t.Errorf("parts sent to the asker = %v, want %v (answers %v)", got, want, role.Answer)
				}
			})
		}
	}
}

// A newly accepted part is pushed to PushWidth mesh peers by a forwarding
// node and announced to the rest of the mesh by an announcing one; a mute
// node queues nothing at all. Every role holds and counts the part.
func TestPhaseForwardAndAnnounce(t *testing.T) {
	f := newFixture(t, mode.Phase)
	for _, role := range allRoles {
		t.Run(role.Name, func(t *testing.T) {
			n, env := newPhaseNode(t, f, role)
			g := n.newGroup(f.commit)
			n.part(g, "m1", f.msgs[0])
			if !g.held.Has(0) || env.ev.received != 1 {
				t.Fatalf("part 0 held %v, received %d; want held and counted once", g.held.Has(0), env.ev.received)
			}
			parts, have := outbox(g)
			pushed := 0
			for p, ps := range parts {
				if !slices.Equal(ps, []int{0}) || p == "m1" {
					t.Errorf("%s queued parts %v (the sender already holds part 0)", p, ps)
				}
				pushed++
			}
			wantPushed := 0
			if role.Forward {
				wantPushed = DefaultPushWidth
			}
			if pushed != wantPushed {
				t.Errorf("pushed part 0 to %d peers, want %d (forwards %v)", pushed, wantPushed, role.Forward)
			}
			wantHave := 0
			if role.Announce {
				wantHave = len(phaseMesh) - wantPushed
			}
			if len(have) != wantHave {
				t.Errorf("announced to %v, want %d mesh peers (announces %v)", have, wantHave, role.Announce)
			}
			for p := range parts {
				if slices.Contains(have, p) {
					t.Errorf("%s was both pushed the part and announced to", p)
				}
			}
		})
	}
}

// The heartbeat's gossip emission announces to the chosen gossip peers only
// from a node that announces.
func TestPhaseEmitGossip(t *testing.T) {
	f := newFixture(t, mode.Phase)
	for _, role := range allRoles {
		t.Run(role.Name, func(t *testing.T) {
			n, _ := newPhaseNode(t, f, role)
			g := n.newGroup(f.commit)
			g.held.Set(0)
			g.msgs[0] = f.msgs[0]
			n.onEmitGossip(f.policy.Topic(), g.id, []peer.ID{"g1", "g2"}, nil)
			n.drain()
			_, have := outbox(g)
			var want []peer.ID
			if role.Announce {
				want = []peer.ID{"g1", "g2"}
			}
			if !slices.Equal(have, want) {
				t.Errorf("announced to %v, want %v (announces %v)", have, want, role.Announce)
			}
		})
	}
}

// Loss on arrival in the phase modes: a lost part is never held (the
// metadata riding with it still counts), and a lost WANT is not answered
// (the HAVE riding with it still counts). A request is drawn only when the
// metadata carries a WANT.
func TestPhaseLoss(t *testing.T) {
	f := newFixture(t, mode.Phase)
	t.Run("data", func(t *testing.T) {
		for _, lost := range []bool{false, true} {
			n, env := newPhaseNode(t, f, Relay)
			if lost {
				env.drop = dropAll(LossData)
			}
			g := n.newGroup(f.commit)
			meta := Control{Parts: g.parts, Have: bitsOf(g.parts, 0, 3)}.Encode()
			if err := n.onIncomingRPC("m1", nil, &pb.PartialMessagesExtension{GroupID: g.id, PartialMessage: f.msgs[0], PartsMetadata: meta}); err != nil {
				t.Fatal(err)
			}
			n.drain()
			if g.held.Has(0) == lost {
				t.Errorf("lost %v: part held %v", lost, g.held.Has(0))
			}
			if k := g.known["m1"]; !k.Has(3) {
				t.Errorf("lost %v: the sender's HAVE was not recorded", lost)
			}
			if d, r := env.drawn(LossData), env.drawn(LossRequest); d != 1 || r != 0 {
				t.Errorf("lost %v: draws data %d requests %d, want 1 and 0", lost, d, r)
			}
		}
	})
	t.Run("requests", func(t *testing.T) {
		for _, lost := range []bool{false, true} {
			n, env := newPhaseNode(t, f, Relay)
			if lost {
				env.drop = dropAll(LossRequest)
			}
			g := n.newGroup(f.commit)
			g.held.Set(0)
			g.msgs[0] = f.msgs[0]
			meta := Control{Parts: g.parts, Have: bitsOf(g.parts, 3), Want: bitsOf(g.parts, 0)}.Encode()
			if err := n.onIncomingRPC("m1", nil, &pb.PartialMessagesExtension{GroupID: g.id, PartsMetadata: meta}); err != nil {
				t.Fatal(err)
			}
			n.drain()
			parts, _ := outbox(g)
			var want []int
			if !lost {
				want = []int{0}
			}
			if got := parts["m1"]; !slices.Equal(got, want) {
				t.Errorf("lost %v: parts sent = %v, want %v", lost, got, want)
			}
			if k := g.known["m1"]; !k.Has(3) {
				t.Errorf("lost %v: the HAVE riding with the WANT was not recorded", lost)
			}
			if d, r := env.drawn(LossData), env.drawn(LossRequest); d != 0 || r != 1 {
				t.Errorf("lost %v: draws data %d requests %d, want 0 and 1", lost, d, r)
			}
			// A HAVE alone draws no request loss.
			have := Control{Parts: g.parts, Have: bitsOf(g.parts, 4)}.Encode()
			if err := n.onIncomingRPC("m2", nil, &pb.PartialMessagesExtension{GroupID: g.id, PartsMetadata: have}); err != nil {
				t.Fatal(err)
			}
			n.drain()
			if r := env.drawn(LossRequest); r != 1 {
				t.Errorf("a HAVE without a WANT drew a request loss (%d draws)", r)
			}
		}
	})
}

// An omitted part never leaves a phase builder: it is not held, pushed,
// announced as held, or served to a WANT; every other part is pushed to
// PushWidth mesh peers.
func TestPhaseBuilderOmits(t *testing.T) {
	for _, m := range []mode.Mode{mode.Phase, mode.Tier3} {
		t.Run(string(m), func(t *testing.T) {
			f := newFixture(t, m)
			pr := *f.prep
			pr.Messages = slices.Clone(f.msgs)
			const omitted = 1
			pr.Messages[omitted] = nil
			n, _ := newPhaseNode(t, f, Relay)
			n.publish(&pr)
			g := n.groups[f.slot]
			if g == nil {
				t.Fatal("publish made no group")
			}
			if g.held.Has(omitted) || g.msgs[omitted] != nil || g.held.Count() != len(pr.Messages)-1 {
				t.Fatalf("builder holds %d parts (omitted one held: %v), want %d", g.held.Count(), g.held.Has(omitted), len(pr.Messages)-1)
			}
			parts, have := outbox(g)
			copies := map[int]int{}
			for p, ps := range parts {
				for _, i := range ps {
					copies[i]++
					if i == omitted {
						t.Errorf("the omitted part is queued to %s", p)
					}
				}
			}
			for i := range pr.Messages {
				if want := DefaultPushWidth; i != omitted && copies[i] != want {
					t.Errorf("part %d pushed to %d peers, want %d", i, copies[i], want)
				}
			}
			if len(have) != len(phaseMesh) {
				t.Errorf("announced to %v, want the whole mesh", have)
			}
			g.outbox = map[peer.ID]*partialSend{}
			n.control(g, "asker", Control{Parts: g.parts, Want: bitsOf(g.parts, 0, omitted)})
			if parts, _ := outbox(g); !slices.Equal(parts["asker"], []int{0}) {
				t.Errorf("WANT for parts 0 and %d answered with %v, want [0]", omitted, parts["asker"])
			}
		})
	}
}
