package diffusion

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p-pubsub/partialmessages"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/eip8411"
)

func init() {
	Register(mode.Phase, func(o Options) (Policy, error) { return newPhased(o, mode.Phase, rung{}), nil })
	Register(mode.Tier2, func(o Options) (Policy, error) { return newPhased(o, mode.Tier2, rung{pulls: true}), nil })
	Register(mode.Tier3, func(o Options) (Policy, error) { return newPhased(o, mode.Tier3, rung{pulls: true, coded: true}), nil })
	Register(mode.Tier4, func(o Options) (Policy, error) {
		// Tier 4 pushes first: pulls only repair, so they wait longer
		// for pushes aimed at the node to land (100 nodes of the study
		// network, seeds 7-9: a 100 ms delay cost 2.36 copies and a p99 of
		// 0.575 s, 400 ms 2.03 and 0.522 s; diffusion/README.md).
		if o.Pulls.Delay == 0 {
			o.Pulls.Delay = Tier4PullDelay
		}
		return newPhased(o, mode.Tier4, rung{pulls: true, coded: true, cards: Cards()}), nil
	})
	Register(mode.WholePaced, func(o Options) (Policy, error) {
		// Stock gossip's rules with two local ones: the mesh gets the push
		// (every mesh peer, as gossipsub's D), gossip peers an announcement
		// (paced), and every announcer of a missing payload is asked, as
		// stock IWANT does; at most three copies are in flight, each
		// released by its receiver's acknowledgement or cancelled once the
		// peer says it holds the payload (IDONTWANT).
		if o.State.Window == 0 {
			o.State.Window = wholePacedCopies
		}
		if o.State.AckTimeout == 0 {
			o.State.AckTimeout = wholePacedAckTimeout
		}
		return newPhased(o, mode.WholePaced, rung{whole: true, pushAll: true, paceByCopy: o.State.PaceTick == 0,
			cards: []Card{CardCancel, CardWindow, CardPace}}), nil
	})
}

// Tier4PullDelay is tier 4's default PullRules.Delay.
const Tier4PullDelay = 400 * time.Millisecond

// wholePacedAckTimeout is how long a whole copy waits for its
// acknowledgement: a 746 KB copy takes about 0.36 s at a third of a 50 Mbps
// uplink, so tier 4's 400 ms would free slots of copies still arriving
// (ci preset, seed 7: p99 1.90 s at 2.63 copies with 400 ms, 1.68 s at
// 2.21 with 2 s).
const wholePacedAckTimeout = 2 * time.Second

// wholePacedCopies is whole-paced's window: three copies in flight (the
// design: one idles the uplink through every acknowledgement, two are too
// few once some peers never acknowledge).
const wholePacedCopies = 3

// rung is what a phase-forwarding mode adds to the phase.
type rung struct {
	// pulls: disciplined pulls (the Ledger) instead of asking every
	// announcer.
	pulls bool
	// coded: tier3's erasure code.
	coded bool
	// whole: the payload travels whole, as one part (an envelope).
	whole bool
	// pushAll: a new part is pushed to every mesh peer not known to hold
	// it (stock gossip), not to PushWidth of them.
	pushAll bool
	// cards: tier 4's rules the mode plays (before StateRules.Without);
	// none for the phase and tiers 2 and 3.
	cards []Card
	// paceByCopy: paced announcements are one copy's time at the node's
	// uplink apart, not StateRules.PaceTick (whole-paced, unless the tick
	// is set). Each announcement may draw a request for a whole copy; at
	// tier 4's 20 ms a home node announces six times while it sends one
	// copy, and the requests it draws queue behind its window and arrive
	// after the asker has the payload (100 nodes of the study network,
	// seeds 7-9: 4.06 copies at 20 ms, 3.45 one copy's time apart;
	// sweeps/results/whole-paced-pace-100/).
	paceByCopy bool
}

// Phase-forwarding defaults.
const (
	// DefaultPushWidth is how many mesh peers get each new part eagerly;
	// the rest of the mesh gets an announcement (the design's phase: two).
	DefaultPushWidth = 2
	// pendingTotal and pendingPerPeer bound the parts and announcements a
	// node buffers until their block is installed.
	pendingTotal   = 4096
	pendingPerPeer = 256
	// groupIDSize is a partial-message group id: slot ‖ segment group id.
	groupIDSize = 8 + 32
	// keepSlots is how many recent slots a node keeps group state for: the
	// newest and the one before (a late request for an older payload is
	// past its PTC deadline). The parts kept for serving are most of a
	// 500-node network's payload memory.
	keepSlots = 2
)

// phased is the policy of the phase, tier2 and tier3 modes: a payload's segments
// travel as the parts of one partial message per payload on the segment
// topic, through go-libp2p-pubsub's partialmessages extension, which lets
// the application decide per peer what to push and what to announce:
//
//   - the builder pushes each segment to PushWidth of its mesh peers in turn
//     (the first copy of every segment before any repeat) and announces the
//     whole group to every mesh peer;
//   - a node that accepts a new segment pushes it eagerly to PushWidth mesh
//     peers not known to hold it and announces its inventory (HAVE) to the
//     rest of its mesh at once — phase forwarding; at each heartbeat it
//     announces to gossip (non-mesh) peers, as gossipsub's IHAVE does;
//   - a node requests (WANT) missing segments from announcers. In phase
//     mode it asks every announcer of a missing segment, as stock
//     gossipsub's IWANT does; tier2 adds disciplined pulls: one outstanding
//     request per segment, other announcers kept in a bounded offer table,
//     the next one asked after PullRules.Window, a lapsed peer banned for
//     PullRules.Ban (Ledger);
//   - tier3 adds a systematic erasure code: the builder sends k data and m
//     parity shards (eip8411 segdiff/2, Reed–Solomon), any k rebuild the
//     payload, a node stops asking once it holds k, and a rebuilt payload
//     whose re-encoded shards do not match the committed root is rejected
//     and never completes;
//   - nothing is forwarded, announced as held or answered before its block
//     is installed; parts and announcements that arrive earlier wait in a
//     bounded queue with per-peer shares (Pending).
type phased struct {
	opts  Options
	m     mode.Mode
	topic string
	rung
	state StateRules
}

func newPhased(o Options, m mode.Mode, r rung) *phased {
	name := "execution_payload_segment"
	if r.whole {
		name = "execution_payload"
	}
	return &phased{opts: o, m: m, topic: topicName(o.ForkDigest, name), rung: r, state: o.State.withDefaults()}
}

// Cut cuts the body in the configured order, with tier3's code; a whole
// payload is committed as segdiff/1 (its envelope is checked against the
// Merkle root of its segments).
func (p *phased) Cut(body *eip8411.Body) (*Group, error) {
	l := Layout{SegmentSize: p.opts.SegmentSize, Order: p.opts.Order}
	if p.whole {
		l.Order = eip8411.OrderCompressThenCut
	}
	if p.coded {
		l.Coding, l.Parity = eip8411.CodingReedSolomon, p.opts.Parity
	}
	return Cut(body, l)
}

func (p *phased) Mode() mode.Mode { return p.m }
func (p *phased) Topic() string   { return p.topic }

// GroupID is a payload's partial-message group id: slot (LE) ‖ the
// segment group id the bid commits to.
func GroupID(slot uint64, segmentGroup [32]byte) []byte {
	out := make([]byte, groupIDSize)
	binary.LittleEndian.PutUint64(out, slot)
	copy(out[8:], segmentGroup[:])
	return out
}

func (p *phased) Prepare(pl Payload) (*Prepared, error) {
	if p.whole {
		compressed, err := pl.Group.CompressedBody()
		if err != nil {
			return nil, fmt.Errorf("prepare payload %d: %w", pl.Slot, err)
		}
		return &Prepared{Payload: pl, Messages: [][]byte{EncodeEnvelope(pl.Slot, pl.BlockRoot, compressed)}}, nil
	}
	msgs, err := pl.Group.Messages(pl.Slot, pl.BlockRoot)
	if err != nil {
		return nil, fmt.Errorf("prepare payload %d: %w", pl.Slot, err)
	}
	return &Prepared{Payload: pl, Messages: msgs}, nil
}

func (p *phased) DataSlot(data []byte) (uint64, bool) {
	if p.whole {
		return payloadSlot(data)
	}
	return eip8411.MessageSlot(data)
}

// partsOf is how many parts a committed payload travels in, and how many
// of them rebuild it.
func (p *phased) partsOf(c Commitment) (parts, need int) {
	if p.whole {
		return 1, 1
	}
	return c.Parts(), c.Need()
}

// verify checks a received part against the commitment.
func (p *phased) verify(data []byte, c Commitment) (part, error) {
	if p.whole {
		return part{}, VerifyEnvelope(data, c)
	}
	return VerifyPart(data, c)
}
func (p *phased) IDSlot(string) (uint64, bool) { return 0, false }

// PartialSlot reads the slot from a group id made by GroupID.
func (p *phased) PartialSlot(groupID []byte) (uint64, bool) {
	if len(groupID) != groupIDSize {
		return 0, false
	}
	return binary.LittleEndian.Uint64(groupID), true
}

func (p *phased) NewNode(env Env) Node {
	n := &phasedNode{
		env: env, p: p, self: env.Host().ID(),
		mesh:    map[peer.ID]struct{}{},
		groups:  map[uint64]*group{},
		pending: NewPending[inbound](pendingTotal, pendingPerPeer),
		ledger:  NewLedger[partKey](p.opts.Pulls),
		waiting: map[uint64]bool{},
		wake:    make(chan struct{}, 1),
	}
	if len(p.cards) > 0 {
		n.st = newStateNode(p, env)
	}
	n.sharer, _ = env.(PartSharer)
	n.ext = &partialmessages.PartialMessagesExtension[struct{}]{
		Logger:             slog.New(slog.DiscardHandler),
		OnIncomingRPC:      n.onIncomingRPC,
		OnEmitGossip:       n.onEmitGossip,
		GroupTTLByHeatbeat: 6,
	}
	return n
}

// partKey names one part of one payload in the ledger.
type partKey struct {
	slot uint64
	part int
}

// inbound is a partial-message RPC as the node's loop handles it.
type inbound struct {
	from     peer.ID
	groupID  []byte
	data     []byte // a part (an encoded segment); nil for none
	metadata []byte // a Control; nil for none
}

// phasedNode is the policy on one node. All of its state is owned by one
// goroutine (loop); the extension's callbacks, which run on pubsub's event
// loop and must not block, only queue work for it, and it publishes from
// its own goroutine (publishing from a callback would deadlock).
type phasedNode struct {
	env  Env
	p    *phased
	ext  *partialmessages.PartialMessagesExtension[struct{}]
	ps   *pubsub.PubSub
	self peer.ID

	// queue and wake carry work from other goroutines to the loop.
	qmu   sync.Mutex
	queue []func()
	wake  chan struct{}

	// meshMu guards mesh, which the router's tracer hooks update.
	meshMu sync.Mutex
	mesh   map[peer.ID]struct{}

	// Owned by the loop.
	groups  map[uint64]*group
	pending *Pending[inbound]
	ledger  *Ledger[partKey]
	waiting map[uint64]bool // slots with a goroutine waiting for the install
	latest  uint64
	st      *stateNode // tier 4's rules; nil in the phase and tiers 2 and 3
	sharer  PartSharer // nil unless env is one
}

// group is one payload as a node holds it.
type group struct {
	slot    uint64
	id      []byte
	commit  Commitment
	parts   int // parts of the group
	need    int // parts that rebuild the payload
	held    Bits
	msgs    [][]byte // the encoded parts held, by index
	reasm   *assembler
	done    bool
	known   map[peer.ID]Bits         // parts each peer is known to hold
	asked   map[peer.ID]Bits         // parts asked of each peer (phase mode)
	outbox  map[peer.ID]*partialSend // what the next flush sends, per peer
	sent    map[peer.ID]Bits         // the last HAVE sent to each peer
	pushCur int                      // the builder's round-robin position
	// Tier 4's per-peer state (nil without it).
	peers     map[peer.ID]*peerState
	holders   []int // per part: peers known to hold it (group.known)
	reporters []int // per part: peers that said so (peerState.reported)
	capped    bool  // the source in capped mode: it announces nothing
}

// partialSend is one peer's part of a flush.
type partialSend struct {
	parts []int // parts to send, in order
	have  bool  // send our HAVE
	want  Bits  // parts to ask for (nil: none)
	claim bool  // send the decode claim
}

func (n *phasedNode) RouterOptions() []pubsub.Option {
	return []pubsub.Option{pubsub.WithPartialMessagesExtension(n.ext), pubsub.WithRawTracer(meshTracer{n})}
}

// Join joins the segment topic asking peers for partial messages, drains
// the (unused) full-message subscription and starts the node's loop.
func (n *phasedNode) Join(ctx context.Context, ps *pubsub.PubSub) error {
	n.ps = ps
	t, err := ps.Join(n.p.topic, pubsub.RequestPartialMessages())
	if err != nil {
		return fmt.Errorf("join %s: %w", n.p.topic, err)
	}
	sub, err := t.Subscribe(pubsub.WithBufferSize(subBufferSize))
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", n.p.topic, err)
	}
	go func() {
		defer sub.Cancel()
		for {
			if _, err := sub.Next(ctx); err != nil {
				return
			}
		}
	}()
	go n.loop(ctx)
	return nil
}

// Publish hands the builder's payload to the loop: it holds every part,
// pushes each to PushWidth mesh peers in turn and announces the group to
// its whole mesh.
func (n *phasedNode) Publish(_ context.Context, pr *Prepared) error {
	n.post(func() { n.publish(pr) })
	return nil
}

// post queues f for the loop; it never blocks.
func (n *phasedNode) post(f func()) {
	n.qmu.Lock()
	n.queue = append(n.queue, f)
	n.qmu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *phasedNode) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
		}
		for n.runQueued() {
			n.flush(ctx)
		}
	}
}

// runQueued runs the work queued so far and reports whether there was any.
func (n *phasedNode) runQueued() bool {
	n.qmu.Lock()
	work := n.queue
	n.queue = nil
	n.qmu.Unlock()
	for _, f := range work {
		f()
	}
	return len(work) > 0
}

// onIncomingRPC runs on pubsub's event loop: it queues the RPC's parts for
// the node's loop. The byte fields are the RPC's own (protobuf copies them
// out of the read buffer when it decodes) and nothing writes to them after
// this call, so the node keeps them rather than a copy: the part it keeps
// to serve peers is the one that arrived.
func (n *phasedNode) onIncomingRPC(from peer.ID, _ map[peer.ID]struct{}, rpc *pb.PartialMessagesExtension) error {
	in := inbound{from: from, groupID: rpc.GroupID}
	if len(rpc.PartialMessage) > 0 && !n.env.Drop(LossData) {
		in.data = rpc.PartialMessage
	}
	if len(rpc.PartsMetadata) > 0 {
		in.metadata = rpc.PartsMetadata
	}
	n.post(func() { n.receive(in) })
	return nil
}

// onEmitGossip runs on pubsub's event loop at a heartbeat: the gossip
// (non-mesh) peers chosen for the group get our inventory.
func (n *phasedNode) onEmitGossip(_ string, groupID []byte, peers []peer.ID, _ map[peer.ID]struct{}) {
	gid, ps := slices.Clone(groupID), slices.Clone(peers)
	n.post(func() {
		g := n.groupByID(gid)
		if g == nil || !n.env.Role().Announce || g.capped {
			return
		}
		if n.st != nil && n.st.cards[CardPace] {
			n.pace(g, ps)
			return
		}
		for _, p := range ps {
			n.out(g, p).have = true
		}
	})
}

// publish is the builder's reveal.
func (n *phasedNode) publish(pr *Prepared) {
	pl := pr.Payload
	c, err := NewCommitment(pl.Slot, pl.BlockRoot, pl.Group.Descriptor())
	if err != nil {
		return
	}
	g := n.newGroup(c)
	for i, m := range pr.Messages {
		if m != nil {
			g.held.Set(i)
			g.msgs[i] = m
		}
	}
	g.done = true
	if n.st != nil {
		n.publishState(g, pr)
		return
	}
	mesh := n.meshPeers()
	rand.Shuffle(len(mesh), func(i, j int) { mesh[i], mesh[j] = mesh[j], mesh[i] })
	for i, m := range pr.Messages {
		if m == nil {
			continue
		}
		for range min(n.pushWidth(), len(mesh)) {
			p := mesh[g.pushCur%len(mesh)]
			g.pushCur++
			n.out(g, p).parts = append(n.out(g, p).parts, i)
			n.know(g, p, i)
		}
	}
	for _, p := range mesh {
		n.out(g, p).have = true
	}
}

func (n *phasedNode) pushWidth() int {
	if n.st != nil {
		return n.st.pushBudget()
	}
	if n.p.opts.PushWidth > 0 {
		return n.p.opts.PushWidth
	}
	return DefaultPushWidth
}

// inMesh reports whether p is in the node's mesh on the topic.
func (n *phasedNode) inMesh(p peer.ID) bool {
	n.meshMu.Lock()
	defer n.meshMu.Unlock()
	_, ok := n.mesh[p]
	return ok
}

// newGroup makes slot's group from its installed commitment.
func (n *phasedNode) newGroup(c Commitment) *group {
	parts, need := n.p.partsOf(c)
	g := &group{slot: c.Slot, id: GroupID(c.Slot, c.GroupID()), commit: c, parts: parts, need: need,
		held: NewBits(parts), msgs: make([][]byte, parts),
		known: map[peer.ID]Bits{}, asked: map[peer.ID]Bits{}, outbox: map[peer.ID]*partialSend{}, sent: map[peer.ID]Bits{}}
	if n.st != nil {
		n.st.initGroup(g)
	}
	if n.p.whole {
		// A whole envelope is verified as a whole; nothing to reassemble.
	} else if r, err := newAssembler(c); err == nil {
		g.reasm = r
	}
	n.groups[c.Slot] = g
	n.forgetOld(c.Slot)
	return g
}

// forgetOld drops groups and ledger entries keepSlots behind the newest.
func (n *phasedNode) forgetOld(slot uint64) {
	n.latest = max(n.latest, slot)
	if n.latest < keepSlots {
		return
	}
	horizon := n.latest - keepSlots
	for s := range n.groups {
		if s <= horizon {
			delete(n.groups, s)
		}
	}
	n.ledger.Forget(func(k partKey) bool { return k.slot > horizon })
	if n.st != nil {
		n.st.forget(horizon)
	}
}

func (n *phasedNode) groupByID(id []byte) *group {
	slot, ok := n.p.PartialSlot(id)
	if !ok {
		return nil
	}
	if g, ok := n.groups[slot]; ok && string(g.id) == string(id) {
		return g
	}
	return nil
}

// receive handles one inbound RPC on the loop.
func (n *phasedNode) receive(in inbound) {
	slot, ok := n.p.PartialSlot(in.groupID)
	if !ok {
		return
	}
	g, ok := n.groups[slot]
	if !ok {
		c, installed := n.env.Commitment(slot)
		if !installed {
			// Rule 1: nothing before its block is installed. Buffer it
			// (bounded, per-peer shares) and resubmit at the install.
			if in.data != nil {
				n.env.Events().Deferred()
			}
			if n.pending.Add(slot, in.from, in) {
				n.awaitInstall(slot)
			}
			return
		}
		g = n.newGroup(c)
	}
	if string(g.id) != string(in.groupID) {
		n.env.Events().Rejected(eip8411.ReasonGroupMismatch)
		return
	}
	if in.metadata != nil {
		c, err := DecodeControl(in.metadata, g.parts)
		if err == nil {
			if c.Want != nil && n.env.Drop(LossRequest) {
				c.Want = nil // the request is lost on arrival
			}
			n.control(g, in.from, c)
		}
	}
	if in.data != nil {
		n.part(g, in.from, in.data)
	}
}

// awaitInstall resubmits slot's buffered RPCs once its block is installed,
// or drops them after the install timeout.
func (n *phasedNode) awaitInstall(slot uint64) {
	if n.waiting[slot] {
		return
	}
	n.waiting[slot] = true
	installed := n.env.Installed(slot)
	go func() {
		t := time.NewTimer(n.p.opts.InstallTimeout)
		defer t.Stop()
		select {
		case <-installed:
			n.post(func() {
				delete(n.waiting, slot)
				for _, in := range n.pending.Release(slot) {
					n.receive(in)
				}
			})
		case <-t.C:
			n.post(func() {
				delete(n.waiting, slot)
				for _, in := range n.pending.Release(slot) {
					if in.data != nil {
						n.env.Events().Rejected(ReasonInstallTimeout)
					}
				}
			})
		}
	}()
}

// control handles a peer's HAVE, WANT and decode claim.
func (n *phasedNode) control(g *group, from peer.ID, c Control) {
	if c.Want != nil && n.env.Role().Answer {
		for i := range g.parts {
			if c.Want.Has(i) && g.held.Has(i) {
				if n.st != nil {
					n.st.queue.answer(queuedSend{to: from, slot: g.slot, part: i})
					continue
				}
				n.out(g, from).parts = append(n.out(g, from).parts, i)
				n.know(g, from, i)
			}
		}
	}
	if n.st != nil && (c.Have != nil || c.Decoded) {
		n.heard(g, from, c.Have, c.Decoded)
	}
	if c.Have == nil {
		return
	}
	for i := range g.parts {
		if c.Have.Has(i) {
			n.know(g, from, i)
		}
	}
	if g.done {
		return
	}
	if n.p.pushAll && n.inMesh(from) {
		// Stock gossip asks only gossip peers' announcements: a mesh peer
		// that holds the payload pushes it, and its HAVE is the
		// IDONTWANT stock gossipsub sends its mesh.
		return
	}
	now := time.Now()
	// A coded group needs any `need` parts: ask for no more than are
	// missing, counting requests still outstanding.
	budget := g.parts
	if g.need < g.parts {
		budget = g.need - g.held.Count() - n.outstanding(g)
	}
	for i := range g.parts {
		if !c.Have.Has(i) || g.held.Has(i) {
			continue
		}
		if budget <= 0 {
			if n.st == nil {
				break
			}
			// Tier 4 keeps the announcement: the requests that spent the
			// budget may go to peers that never answer (silent nodes),
			// and an honest peer announces a part once.
			n.ledger.Offer(partKey{g.slot, i}, from)
			continue
		}
		if !n.p.pulls {
			// Phase mode pulls as stock gossipsub does: every announcer
			// of a missing part is asked for it.
			a := g.asked[from]
			if a == nil {
				a = NewBits(g.parts)
				g.asked[from] = a
			}
			if !a.Has(i) {
				a.Set(i)
				n.ask(g, from, i)
				budget--
			}
			continue
		}
		if _, asked := n.ledger.Asked(partKey{g.slot, i}); asked {
			n.ledger.Announced(partKey{g.slot, i}, from, now) // an offer
			continue
		}
		if n.ledger.Announced(partKey{g.slot, i}, from, now) {
			n.askLater(g, from, i)
			budget--
		}
	}
}

// outstanding counts g's parts asked for and not yet held.
func (n *phasedNode) outstanding(g *group) int {
	k := 0
	for i := range g.parts {
		if _, ok := n.ledger.Asked(partKey{g.slot, i}); ok && !g.held.Has(i) {
			k++
		}
	}
	return k
}

// ask adds part i to the WANT sent to p at the next flush.
func (n *phasedNode) ask(g *group, p peer.ID, i int) {
	o := n.out(g, p)
	if o.want == nil {
		o.want = NewBits(g.parts)
	}
	o.want.Set(i)
}

// askLater asks p for part i after the pull delay, unless the part has
// arrived meanwhile, and schedules the move-on.
func (n *phasedNode) askLater(g *group, p peer.ID, i int) {
	rules := n.ledger.Rules()
	if rules.Delay == 0 {
		n.ask(g, p, i)
		n.scheduleDue()
		return
	}
	slot := g.slot
	time.AfterFunc(rules.Delay, func() {
		n.post(func() {
			g, ok := n.groups[slot]
			if !ok || g.done || g.held.Has(i) {
				return
			}
			if asked, ok := n.ledger.Asked(partKey{slot, i}); ok && asked == p {
				n.ask(g, p, i)
				n.scheduleDue()
			}
		})
	})
}

// scheduleDue wakes the loop when the pull window of the requests just
// made ends, to move lapsed ones on.
func (n *phasedNode) scheduleDue() {
	time.AfterFunc(n.ledger.Rules().Window, func() { n.post(n.due) })
}

// due asks the next announcer for every request whose window lapsed.
func (n *phasedNode) due() {
	for k, p := range n.ledger.Due(time.Now()) {
		g, ok := n.groups[k.slot]
		if !ok || g.done || g.held.Has(k.part) {
			continue
		}
		n.ask(g, p, k.part)
		n.scheduleDue()
	}
	if n.st != nil {
		for _, g := range n.groups {
			n.askOffers(g)
		}
	}
}

// askOffers asks, for tier 4, the announcers kept as offers of g's missing
// parts no request is outstanding for, as far as the request budget
// allows now that lapsed requests have moved on.
func (n *phasedNode) askOffers(g *group) {
	if g.done || !n.p.pulls {
		return
	}
	budget := g.parts - g.held.Count()
	if g.need < g.parts {
		budget = g.need - g.held.Count() - n.outstanding(g)
	}
	now, asked := time.Now(), false
	for i := range g.parts {
		if budget <= 0 {
			break
		}
		if g.held.Has(i) {
			continue
		}
		if p, ok := n.ledger.AskOffer(partKey{g.slot, i}, now); ok {
			n.ask(g, p, i)
			budget--
			asked = true
		}
	}
	if asked {
		n.scheduleDue()
	}
}

// part handles a received part: verify, hold, forward, complete.
func (n *phasedNode) part(g *group, from peer.ID, data []byte) {
	pt, err := n.p.verify(data, g.commit)
	if err != nil {
		reason := eip8411.Reason(err)
		if reason == "" {
			reason = eip8411.ReasonDecode
		}
		n.env.Events().Rejected(reason)
		return
	}
	i := pt.index
	n.know(g, from, i)
	var asked []peer.ID
	if n.st != nil {
		asked = n.askedFor(g, i)
	}
	n.ledger.Arrived(partKey{g.slot, i})
	if n.st != nil {
		n.arrivedFrom(g, from, i)
	}
	if g.held.Has(i) {
		n.env.Events().Received(g.slot, true)
		return
	}
	g.held.Set(i)
	if n.sharer != nil {
		data = n.sharer.SharePart(g.slot, i, data)
	}
	g.msgs[i] = data
	n.env.Events().Received(g.slot, false)
	if n.st != nil {
		n.forwardState(g, i, from, asked)
	} else {
		n.forward(g, i)
	}
	if n.p.whole && !g.done {
		g.done = true
		n.completed(g)
		return
	}
	if g.reasm == nil {
		return
	}
	complete, _, err := g.reasm.add(pt)
	if err != nil || !complete || g.done {
		return
	}
	if err := g.reasm.body(); err != nil {
		if !errors.Is(err, eip8411.ErrIncomplete) {
			// An inconsistent code or an undecodable body: the payload is
			// rejected and the node stops asking for it.
			n.env.Events().Rejected(eip8411.ReasonDecode)
			g.done, g.reasm = true, nil
		}
		return
	}
	// The verified payload is the node's; the reassembler's copies of the
	// parts and the decoded body are not needed to serve peers (g.msgs is):
	// at 500 nodes they were two thirds of the live heap.
	g.done, g.reasm = true, nil
	n.completed(g)
}

// completed reports g's payload complete and, in tier 4, claims it.
func (n *phasedNode) completed(g *group) {
	n.env.Events().Completed(g.slot)
	if n.st != nil && n.st.cards[CardDecodeClaim] {
		n.claim(g)
	}
}

// forward is phase forwarding of a newly accepted part: push it to
// PushWidth mesh peers not known to hold it, announce to the rest of the
// mesh at once.
func (n *phasedNode) forward(g *group, i int) {
	role := n.env.Role()
	mesh := n.meshPeers()
	var candidates []peer.ID
	for _, p := range mesh {
		// Not to a peer known to hold the part, nor (coded groups) to one
		// whose inventory shows enough parts to rebuild: it is complete.
		if k := g.known[p]; k == nil || (!k.Has(i) && k.Count() < g.need) {
			candidates = append(candidates, p)
		}
	}
	rand.Shuffle(len(candidates), func(a, b int) { candidates[a], candidates[b] = candidates[b], candidates[a] })
	pushed := map[peer.ID]bool{}
	if role.Forward {
		for _, p := range candidates[:min(n.pushWidth(), len(candidates))] {
			n.out(g, p).parts = append(n.out(g, p).parts, i)
			n.know(g, p, i)
			pushed[p] = true
		}
	}
	if !role.Announce {
		return
	}
	for _, p := range mesh {
		if !pushed[p] {
			n.out(g, p).have = true
		}
	}
}

// know records that p holds part i.
func (n *phasedNode) know(g *group, p peer.ID, i int) {
	k := g.known[p]
	if k == nil {
		k = NewBits(g.parts)
		g.known[p] = k
	}
	if g.holders != nil && !k.Has(i) && i >= 0 && i < g.parts {
		g.holders[i]++
	}
	k.Set(i)
}

// haveFor is the inventory the node sends p for g: what it holds, except
// where tier 4's state and the node's role shape it (nil: send none).
func (n *phasedNode) haveFor(g *group, p peer.ID) Bits {
	if n.st == nil {
		return g.held
	}
	return n.st.haveFor(g, p)
}

// claimFor reports whether the decode claim is still to be sent to p.
func (n *phasedNode) claimFor(g *group, p peer.ID) bool {
	if n.st == nil {
		return false
	}
	return n.st.claimFor(g, p)
}

// out returns p's pending sends for g.
func (n *phasedNode) out(g *group, p peer.ID) *partialSend {
	o, ok := g.outbox[p]
	if !ok {
		o = &partialSend{}
		g.outbox[p] = o
	}
	return o
}

// flush publishes every group's pending sends: per peer, one RPC per part
// (each carrying the control for that peer on the first), or one control
// RPC.
func (n *phasedNode) flush(ctx context.Context) {
	if n.st != nil {
		n.dispatch(time.Now())
	}
	for _, g := range n.groups {
		if len(g.outbox) == 0 {
			continue
		}
		type send struct {
			to peer.ID
			a  partialmessages.PublishAction
		}
		var sends []send
		for p, o := range g.outbox {
			var meta []byte
			c := Control{Parts: g.parts}
			if have := n.haveFor(g, p); o.have && have != nil && !slices.Equal(g.sent[p], have) {
				c.Have = have.Clone()
				g.sent[p] = c.Have
			}
			if o.want != nil && o.want.Count() > 0 {
				c.Want = o.want
			}
			c.Decoded = o.claim && n.claimFor(g, p)
			if c.Have != nil || c.Want != nil || c.Decoded {
				meta = c.Encode()
			}
			if len(o.parts) == 0 {
				if meta != nil {
					sends = append(sends, send{p, partialmessages.PublishAction{EncodedPartsMetadata: meta}})
				}
				continue
			}
			for j, i := range o.parts {
				a := partialmessages.PublishAction{EncodedPartialMessage: g.msgs[i]}
				if j == 0 {
					a.EncodedPartsMetadata = meta
				}
				sends = append(sends, send{p, a})
			}
		}
		g.outbox = map[peer.ID]*partialSend{}
		if len(sends) == 0 {
			continue
		}
		// One PublishPartial per round of parts: the extension sends one
		// RPC per peer per call, so parts go out in rounds (the first part
		// to every peer, then the second, ...), which keeps first copies
		// ahead of repeats across peers.
		for round := 0; len(sends) > 0; round++ {
			var now, later []send
			seen := map[peer.ID]bool{}
			for _, s := range sends {
				if seen[s.to] {
					later = append(later, s)
					continue
				}
				seen[s.to] = true
				now = append(now, s)
			}
			sends = later
			actions := func(map[peer.ID]struct{}, func(peer.ID) bool) iter.Seq2[peer.ID, partialmessages.PublishAction] {
				return func(yield func(peer.ID, partialmessages.PublishAction) bool) {
					for _, s := range now {
						if !yield(s.to, s.a) {
							return
						}
					}
				}
			}
			if err := pubsub.PublishPartial(n.ps, n.p.topic, g.id, actions); err != nil && ctx.Err() == nil {
				return
			}
		}
	}
}

// meshPeers returns the node's current mesh on the segment topic.
func (n *phasedNode) meshPeers() []peer.ID {
	n.meshMu.Lock()
	defer n.meshMu.Unlock()
	out := make([]peer.ID, 0, len(n.mesh))
	for p := range n.mesh {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

var _ pubsub.RawTracer = meshTracer{}

// meshTracer keeps the node's mesh on the segment topic from the router's
// GRAFT and PRUNE events.
type meshTracer struct{ n *phasedNode }

func (t meshTracer) Graft(p peer.ID, topic string) {
	if topic == t.n.p.topic {
		t.n.meshMu.Lock()
		t.n.mesh[p] = struct{}{}
		t.n.meshMu.Unlock()
	}
}

func (t meshTracer) Prune(p peer.ID, topic string) {
	if topic == t.n.p.topic {
		t.n.meshMu.Lock()
		delete(t.n.mesh, p)
		t.n.meshMu.Unlock()
	}
}

func (meshTracer) Join(string)                                          {}
func (meshTracer) Leave(string)                                         {}
func (meshTracer) DeliverMessage(*pubsub.Message)                       {}
func (meshTracer) RejectMessage(*pubsub.Message, string)                {}
func (meshTracer) DuplicateMessage(*pubsub.Message)                     {}
func (meshTracer) ThrottlePeer(peer.ID)                                 {}
func (meshTracer) RecvRPC(*pubsub.RPC)                                  {}
func (meshTracer) SendRPC(*pubsub.RPC, peer.ID)                         {}
func (meshTracer) DropRPC(*pubsub.RPC, peer.ID)                         {}
func (meshTracer) UndeliverableMessage(*pubsub.Message)                 {}
func (meshTracer) ValidateMessage(*pubsub.Message)                      {}
func (meshTracer) OnNewOutboundStream(peer.ID, protocol.ID)             {}
func (meshTracer) OnClosedOutboundStream(peer.ID)                       {}
func (meshTracer) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
