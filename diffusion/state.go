package diffusion

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Uplinker is implemented by an Env that knows its node's configured
// uplink. Tier 4 sizes its window from it and decides from it whether the
// node stripes (as the source) or pushes wider (as a forwarder); without
// it, StateRules.UplinkMbps is assumed.
type Uplinker interface {
	// UplinkMbps is the node's uplink in Mbps (0: unknown).
	UplinkMbps() int
}

// stateNode is tier 4's per-node state (and whole-paced's): the cards the
// node plays, its window, the queue of copies waiting for it, and the
// pacer. It is owned by the node's loop, like the rest of phasedNode.
type stateNode struct {
	rules      StateRules
	cards      cardSet
	role       Role
	uplinkMbps int
	// perCopy: the window counts copies (StateRules.Window), not bytes.
	perCopy bool
	window  *Window
	queue   sendQueue
	pacer   *pacer
	rng     *rand.Rand
	// wakeAt is when a timer will next wake the loop to dispatch; paceArmed
	// says a pace tick is scheduled.
	wakeAt    time.Time
	paceArmed bool
	// unreported holds the peers demoted for a payload that have reported
	// nothing since: they start the next payload demoted, until they
	// report. Per-payload state alone relearns a black hole every slot,
	// and half of each slot's first pushes go into it when half the mesh
	// is mute.
	unreported map[peer.ID]bool
	// unanswered holds the peers whose claim lapsed (asked for a part they
	// announced, they did not send it), until a part arrives from them: a
	// silent node reports what it took and passes nothing on, so only its
	// unanswered requests show it.
	unanswered map[peer.ID]bool
	// echoing holds the peers whose reports, for longer than Grace after
	// our first push of a payload, admitted only parts we had written to
	// them: a tailored under-reporter tells each pusher it holds only what
	// that pusher sent, so it ranks furthest behind for good, and when half
	// the mesh is such nodes the lower half of the ranking is all of them
	// (tier 4 under half the network under-reporting, 100 nodes, packet
	// model: warm p99 up to 3.9 s); one that pads its reports with a part
	// more evades a rule that asks for a single part beyond our writes
	// (padding-under-reporter), so the rule asks for a share, new within
	// the grace period (echoesSince). They start the next payload demoted,
	// until their reports reach further beyond our writes (echoLift), or
	// they send a part.
	echoing map[peer.ID]bool
	// claimedAt is the last slot each peer claimed a decode of. Neither
	// kind of under-reporter ever claims, and a peer that lies with one
	// takes no pushes; an honest peer claims every payload it rebuilds.
	// A peer that claimed the last payload or this one is judged echoing
	// only when it shows nothing beyond our writes, so the share rule
	// does not demote an honest peer that few others push to.
	claimedAt map[peer.ID]uint64
}

// peerState is what a node knows of one peer for one payload. What the
// node wrote to the peer is in group.known with the rest of what the peer
// holds.
type peerState struct {
	reported Bits // parts the peer said it holds (HAVE) or sent us
	have     Bits // its latest inventory (HAVE)
	sentBy   Bits // parts it sent us (what an under-reporter admits to it)
	wrote    Bits // parts the node wrote to it
	decoded  bool // its decode claim arrived
	claimed  bool // our decode claim went to it
	// firstPush is when our first push to it was written, firstWrite our
	// first push or answer; heard when it last reported anything (HAVE,
	// claim or part); grew when its latest inventory last held more parts
	// we had not written to it than the one before.
	firstPush, firstWrite, heard, grew time.Time
}

// echoShare and echoLift judge a peer by its latest inventory, the parts
// it says it holds now: it echoes our pushes when fewer than one in
// echoShare of them are parts we did not write to it, and their number
// has not grown for the grace period. A tailored under-reporter admits to
// each pusher only what that pusher sent (none beyond); one that pads its
// inventory with a part more admits one part beyond our writes, whichever
// part it is, so it is caught once we have written it two parts. An honest
// peer that many of its parts came from (half the network under-reporting
// leaves it few honest pushers) keeps reporting parts from elsewhere, and
// is not. A demotion carried into the next payload lifts when an
// inventory holds echoLift parts beyond our writes: a padder's one part
// does not lift it. Judged on what the peer reported over the payload
// instead, a padder whose padding part changes as it gets lower-index
// parts would look like a peer that keeps growing.
const (
	echoShare = 2
	echoLift  = 2
)

// shown counts the parts the peer's latest inventory and the parts it sent
// us hold between them, and how many of those the node did not write to it.
func (ps *peerState) shown() (all, beyond int) {
	for i, w := range ps.wrote {
		h := ps.sentBy[i]
		if i < len(ps.have) {
			h |= ps.have[i]
		}
		all += bits.OnesCount8(h)
		beyond += bits.OnesCount8(h &^ w)
	}
	return all, beyond
}

// beyond is how many of the parts the peer has shown the node did not
// write to it.
func (ps *peerState) beyond() int {
	_, b := ps.shown()
	return b
}

// echoes reports that what the peer has shown reaches beyond what the node
// wrote to it by fewer than one part in echoShare.
func (ps *peerState) echoes() bool {
	all, beyond := ps.shown()
	return beyond*echoShare < all
}

// echoesSince reports that the peer has reported since first, a push of
// ours, its inventory echoes the node's writes, and the parts it holds
// beyond them have not grown for grace up to now; for a peer that claims
// decodes (claims), only when it has shown nothing beyond our writes.
func (ps *peerState) echoesSince(first, now time.Time, grace time.Duration, claims bool) bool {
	if first.IsZero() || ps.heard.Before(first) || now.Sub(ps.grew) <= grace {
		return false
	}
	if claims {
		all, beyond := ps.shown()
		return all > 0 && beyond == 0
	}
	return ps.echoes()
}

// quietSince reports that the peer has reported nothing since first, a
// write of ours (false when there was none).
func (ps *peerState) quietSince(first time.Time) bool {
	return !first.IsZero() && ps.heard.Before(first)
}

func newStateNode(p *phased, env Env) *stateNode {
	r := p.state
	st := &stateNode{rules: r, cards: newCardSet(p.cards, r.Without), role: env.Role(), uplinkMbps: r.UplinkMbps,
		pacer: newPacer(r.PaceTick), rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())), unreported: map[peer.ID]bool{}, unanswered: map[peer.ID]bool{}, echoing: map[peer.ID]bool{}, claimedAt: map[peer.ID]uint64{}}
	if u, ok := env.(Uplinker); ok && u.UplinkMbps() > 0 {
		st.uplinkMbps = u.UplinkMbps()
	}
	capacity := int(float64(st.uplinkMbps) * 1e6 / 8 * r.RTT.Seconds())
	if r.Window > 0 {
		st.perCopy, capacity = true, r.Window
	}
	st.window = NewWindow(capacity, r.AckTimeout)
	return st
}

// initGroup gives a new group its per-peer state.
func (st *stateNode) initGroup(g *group) {
	g.peers = map[peer.ID]*peerState{}
	g.holders = make([]int, g.parts)
	g.reporters = make([]int, g.parts)
}

// peer returns p's state for g.
func (st *stateNode) peer(g *group, p peer.ID) *peerState {
	ps, ok := g.peers[p]
	if !ok {
		ps = &peerState{reported: NewBits(g.parts), sentBy: NewBits(g.parts), wrote: NewBits(g.parts)}
		g.peers[p] = ps
	}
	return ps
}

// report records that p holds part i, as it said or showed.
func (st *stateNode) report(g *group, ps *peerState, i int) {
	if !ps.reported.Has(i) {
		ps.reported.Set(i)
		g.reporters[i]++
	}
}

// pushBudget is how many mesh peers get each new part (cards 11 and 17).
func (st *stateNode) pushBudget() int {
	if !st.cards[CardPushBudget] {
		return prototypePushWidth
	}
	if st.cards[CardFastPush] && st.uplinkMbps >= st.rules.FastUplinkMbps {
		return st.rules.FastPushBudget
	}
	return st.rules.PushBudget
}

// prototypePushWidth is the prototype's push width for a payload up to
// 1 MiB (Prysm segmentgossip pushwidth: 4 up to 256 KiB, 3 up to 1 MiB, 2
// above), what a node pushes to without the push-budget card.
const prototypePushWidth = 3

// forget drops what the node keeps for slots at or below horizon.
func (st *stateNode) forget(horizon uint64) {
	st.window.Forget(horizon)
	st.queue.drop(func(slot uint64) bool { return slot <= horizon })
	st.pacer.forget(horizon)
}

// haveFor is the inventory sent to p for g: what the node holds, but an
// under-reporter admits to each peer only what that peer sent it (and, when
// it pads, the lowest-index parts it holds that the peer did not send, so
// that its reports are never only the peer's own pushes), and a node that
// does not acknowledge sends nothing to a peer that pushed to it.
func (st *stateNode) haveFor(g *group, p peer.ID) Bits {
	ps := g.peers[p]
	switch {
	case st.role.UnderReport:
		if ps == nil || ps.sentBy.Count() == 0 {
			return nil
		}
		return padded(ps.sentBy, g.held, g.parts, st.role.UnderReportPad)
	case !st.role.Acknowledge && ps != nil && ps.sentBy.Count() > 0:
		return nil
	}
	return g.held
}

// padded returns sent with up to pad more parts of held, the lowest-index
// ones sent lacks; sent itself when pad is zero.
func padded(sent, held Bits, parts, pad int) Bits {
	if pad <= 0 {
		return sent
	}
	out := sent.Clone()
	for i := 0; i < parts && pad > 0; i++ {
		if held.Has(i) && !out.Has(i) {
			out.Set(i)
			pad--
		}
	}
	return out
}

// claimFor reports whether the decode claim goes to p now (once per peer),
// under the same rules as haveFor: an under-reporter never claims.
func (st *stateNode) claimFor(g *group, p peer.ID) bool {
	ps := st.peer(g, p)
	if ps.claimed || st.role.UnderReport || !st.role.Announce || (!st.role.Acknowledge && ps.sentBy.Count() > 0) {
		return false
	}
	ps.claimed = true
	return true
}

// unwanted reports that p needs part i of g no more: it holds it (it said
// so, sent it, or we wrote it to it already), claimed the payload, or
// holds enough parts of a coded group to rebuild.
func (n *phasedNode) unwanted(g *group, p peer.ID, i int) bool {
	k := g.known[p]
	if k.Has(i) || (g.need < g.parts && k.Count() >= g.need) {
		return true
	}
	ps := g.peers[p]
	return ps != nil && ps.decoded
}

// heard records p's inventory or decode claim: state for the rules that
// read it, and the acknowledgement of what the node has in flight to p.
func (n *phasedNode) heard(g *group, p peer.ID, have Bits, decoded bool) {
	st := n.st
	ps := st.peer(g, p)
	ps.heard = time.Now()
	delete(st.unreported, p)
	for i := range g.parts {
		if have.Has(i) {
			st.report(g, ps, i)
		}
	}
	if have != nil {
		before := ps.beyond()
		ps.have = append(ps.have[:0], have...)
		if b := ps.beyond(); b > before {
			ps.grew = ps.heard
		}
		if ps.beyond() >= echoLift {
			delete(st.echoing, p)
		}
	}
	if decoded {
		// A peer that rebuilt the payload takes no more pushes of it, and
		// neither kind of under-reporter ever claims: the claim lifts a
		// demotion that would otherwise outlive the payload. Without it an
		// honest peer demoted late in a payload of three parts stays so,
		// since no inventory of it can reach two parts beyond our writes.
		delete(st.echoing, p)
		st.claimedAt[p] = max(st.claimedAt[p], g.slot)
	}
	ps.decoded = ps.decoded || decoded
	st.window.Ack(p, g.slot, func(i int) bool { return ps.decoded || ps.reported.Has(i) })
}

// arrivedFrom records that p sent part i: p holds it, what is in flight of
// it to p is acknowledged, and the node acknowledges the part to p.
func (n *phasedNode) arrivedFrom(g *group, p peer.ID, i int) {
	st := n.st
	ps := st.peer(g, p)
	ps.heard = time.Now()
	delete(st.unreported, p)
	delete(st.unanswered, p)
	delete(st.echoing, p)
	if !ps.sentBy.Has(i) && !ps.wrote.Has(i) {
		ps.grew = ps.heard
	}
	ps.sentBy.Set(i)
	st.report(g, ps, i)
	st.window.Ack(p, g.slot, func(j int) bool { return j == i })
	if st.role.Announce && !g.capped {
		n.out(g, p).have = true
	}
}

// askedFor returns the peers the node asked for part i and has not heard
// from since: once the part arrives from elsewhere, the node's inventory
// tells them, and their answers, if still queued, are cancelled.
func (n *phasedNode) askedFor(g *group, i int) []peer.ID {
	var out []peer.ID
	if p, ok := n.ledger.Asked(partKey{g.slot, i}); ok {
		out = append(out, p)
	}
	for p, a := range g.asked {
		if a.Has(i) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// forwardState is tier 4's forwarding of a newly accepted part: queue it
// for the push budget of mesh peers (chosen when it is popped, from the
// state then) and send the node's inventory to the whole mesh at once, and
// to the peers asked for the part.
func (n *phasedNode) forwardState(g *group, i int, from peer.ID, asked []peer.ID) {
	st := n.st
	mesh := n.meshPeers()
	if st.role.Forward {
		var peers []peer.ID
		for _, p := range mesh {
			if p != from && !n.unwanted(g, p, i) {
				peers = append(peers, p)
			}
		}
		k := n.pushWidth()
		if n.p.pushAll {
			k = len(peers)
		}
		if k > 0 && len(peers) > 0 {
			st.queue.push(pushTicket{slot: g.slot, part: i, budget: k, peers: peers})
		}
	}
	if !st.role.Announce || g.capped {
		return
	}
	// Every mesh peer gets the inventory, those a push may go to as well:
	// the push may wait behind the window, and a peer that does not know
	// the node holds the part may push it here meanwhile.
	for _, p := range mesh {
		n.out(g, p).have = true
	}
	for _, p := range asked {
		n.out(g, p).have = true
	}
}

// heldBy counts the parts p is known to hold for the aim's ranking: what it
// reported, and with projection what the node wrote to it too.
func (n *phasedNode) heldBy(g *group, p peer.ID) int {
	if n.st.cards[CardProjection] {
		return g.known[p].Count()
	}
	return n.st.peer(g, p).reported.Count()
}

// demoted reports the safer aim's demotion: p took our pushes and has
// reported nothing since the first, for longer than the grace period, or
// was demoted so for an earlier payload and has reported nothing since; or
// p's reports have barely reached beyond the parts we wrote to it for as
// long (it echoes our pushes, as a tailored under-reporter does, padded
// or not), or echoed an earlier
// payload's and has shown nothing else since; or p left a request of ours
// unanswered and has sent no part since.
func (n *phasedNode) demoted(g *group, p peer.ID, now time.Time) bool {
	st := n.st
	if st.rules.Aim != AimSafer {
		return false
	}
	if st.unreported[p] || st.echoing[p] || n.unanswering(p, now) {
		return true
	}
	ps := st.peer(g, p)
	if ps.decoded || now.Sub(ps.firstPush) <= st.rules.Grace {
		return false // a peer that claimed the payload takes no pushes of it
	}
	switch {
	case ps.quietSince(ps.firstPush):
		st.unreported[p] = true
		return true
	case ps.echoesSince(ps.firstPush, now, st.rules.Grace, st.claims(p, g.slot)):
		st.echoing[p] = true
		return true
	}
	return false
}

// unacknowledging reports that p took our writes, pushes or answers, and
// has reported nothing since the first for AckTimeout, the time an entry
// of the window waits for its acknowledgement; or was found so for an
// earlier payload and has reported nothing since. A mute node asks for
// every part and acknowledges none: each answer to it held a slot of the
// window until the slot lapsed, and half a network of them filled a
// source's window for whole slots (tier 4, mute at 50 %, 100 and 500
// nodes). AckTimeout rather than the aim's Grace (300 ms): the geo model's
// longest round trip is 264 ms before the part's own transmission and any
// queueing, so a far honest peer's acknowledgement can take longer than
// Grace.
func (n *phasedNode) unacknowledging(g *group, p peer.ID, now time.Time) bool {
	st := n.st
	if st.unreported[p] {
		return true
	}
	ps := g.peers[p]
	if ps != nil && ps.quietSince(ps.firstWrite) && now.Sub(ps.firstWrite) >= st.rules.AckTimeout {
		st.unreported[p] = true
		return true
	}
	return false
}

// unanswering reports that p left a request of ours unanswered (the
// ledger banned it) and has sent no part since; the ledger's ban lapses,
// this does not.
func (n *phasedNode) unanswering(p peer.ID, now time.Time) bool {
	st := n.st
	if !st.unanswered[p] && n.ledger.Banned(p, now) {
		st.unanswered[p] = true
	}
	return st.unanswered[p]
}

// publishState is the source's reveal in tier 4: its first copies striped
// over every connection when its uplink clears the threshold, else each
// part to the push budget of mesh peers in turn; then (unless capped) its
// inventory to the mesh.
func (n *phasedNode) publishState(g *group, pr *Prepared) {
	st := n.st
	g.capped = st.rules.CappedSource
	var idx []int
	for i, m := range pr.Messages {
		if m != nil {
			idx = append(idx, i)
		}
	}
	mesh := n.meshPeers()
	st.rng.Shuffle(len(mesh), func(i, j int) { mesh[i], mesh[j] = mesh[j], mesh[i] })
	if st.cards[CardStripe] && st.uplinkMbps >= st.rules.StripeUplinkMbps {
		peers := n.topicPeers()
		st.rng.Shuffle(len(peers), func(i, j int) { peers[i], peers[j] = peers[j], peers[i] })
		for p, pos := range stripes(len(idx), peers) {
			for _, k := range pos {
				st.queue.push(pushTicket{slot: g.slot, part: idx[k], budget: 1, peers: []peer.ID{p}})
			}
		}
	} else if len(mesh) > 0 {
		width := n.pushWidth()
		if n.p.pushAll {
			width = len(mesh)
		}
		// Each part to width mesh peers; rarest at pop sends every first
		// copy before a second (batch publishing).
		for _, i := range idx {
			st.queue.push(pushTicket{slot: g.slot, part: i, budget: min(width, len(mesh)), peers: mesh})
		}
	}
	if g.capped {
		return
	}
	// The mesh hears at once that the source holds everything. For the
	// whole message this stands in for stock gossip's rule never to forward
	// a message back to its author: without it every mesh peer that got the
	// payload elsewhere first pushes it back (6 copies at the ci builder).
	for _, p := range mesh {
		n.out(g, p).have = true
	}
}

// topicPeers returns every peer connected on the payload topic.
func (n *phasedNode) topicPeers() []peer.ID {
	if n.ps == nil {
		return n.meshPeers()
	}
	return n.ps.ListPeers(n.p.topic)
}

// dispatch writes queued copies while the window has room: expired
// entries first free their slots; the queue's pop applies cancel at
// dispatch and rarest first. Without the window card everything queued
// goes at once.
func (n *phasedNode) dispatch(now time.Time) {
	st := n.st
	st.window.Expire(now)
	rules := n.popRules(now)
	windowed := st.cards[CardWindow]
	for st.queue.Len() > 0 && (!windowed || st.window.Room()) {
		s, ok := st.queue.pop(rules, func(queuedSend) {})
		if !ok {
			break
		}
		g := n.groups[s.slot]
		if g == nil || g.msgs[s.part] == nil {
			continue
		}
		if windowed {
			w := 1
			if !st.perCopy {
				w = len(g.msgs[s.part])
			}
			st.window.Add(s.to, s.slot, s.part, w, now)
		}
		n.out(g, s.to).parts = append(n.out(g, s.to).parts, s.part)
		n.know(g, s.to, s.part)
		ps := st.peer(g, s.to)
		ps.wrote.Set(s.part)
		if !s.answer && ps.firstPush.IsZero() {
			ps.firstPush = now
		}
		if ps.firstWrite.IsZero() {
			ps.firstWrite = now
		}
	}
	if windowed && st.queue.Len() > 0 {
		if next, ok := st.window.NextLapse(); ok {
			n.wakeAt(next)
		}
	}
}

// claims reports that p claimed a decode of the payload of slot or of an
// earlier one no more than a slot before.
func (st *stateNode) claims(p peer.ID, slot uint64) bool {
	at, ok := st.claimedAt[p]
	return ok && at+1 >= slot
}

// popRules are the cards the queue's pop plays, on the node's state at
// now.
func (n *phasedNode) popRules(now time.Time) popRules {
	st := n.st
	r := popRules{
		sent: func(slot uint64, part int, p peer.ID) bool {
			g := n.groups[slot]
			return g == nil || st.peer(g, p).wrote.Has(part)
		},
		aim: func(slot uint64, part int, eligible []peer.ID) peer.ID {
			g := n.groups[slot]
			if !st.cards[CardAim] || g == nil {
				return eligible[st.rng.IntN(len(eligible))]
			}
			cands := make([]aimCandidate, len(eligible))
			for i, p := range eligible {
				cands[i] = aimCandidate{peer: p, held: n.heldBy(g, p), demoted: n.demoted(g, p, now)}
			}
			return aimTargets(cands, 1, st.rules.Aim, st.rng)[0]
		},
	}
	if st.cards[CardWindow] {
		// Answers to a peer that acknowledges nothing wait behind every
		// other write, one in flight at a time: its entries lapse rather
		// than free, and the window is the whole node's.
		r.deferred = func(slot uint64, p peer.ID) bool {
			g := n.groups[slot]
			return g != nil && n.unacknowledging(g, p, now)
		}
		r.deferredRoom = func() bool {
			return !st.window.Holds(func(p peer.ID) bool { return st.unreported[p] })
		}
	}
	if st.cards[CardCancel] {
		r.unwanted = func(slot uint64, part int, p peer.ID) bool {
			g := n.groups[slot]
			return g == nil || n.unwanted(g, p, part)
		}
	}
	if st.cards[CardRarest] {
		r.rarity = func(slot uint64, part int) int {
			g := n.groups[slot]
			if g == nil {
				return 0
			}
			if st.cards[CardProjection] {
				return g.holders[part]
			}
			return g.reporters[part]
		}
	}
	return r
}

// wakeAt makes sure the loop runs (and dispatches) at t.
func (n *phasedNode) wakeAt(t time.Time) {
	st := n.st
	now := time.Now()
	if !st.wakeAt.IsZero() && st.wakeAt.After(now) && !st.wakeAt.After(t) {
		return
	}
	st.wakeAt = t
	time.AfterFunc(max(t.Sub(now), 0), func() {
		n.post(func() {
			if !st.wakeAt.After(time.Now()) {
				st.wakeAt = time.Time{}
			}
		})
	})
}

// pace queues announcements of g to gossip peers, one a tick.
func (n *phasedNode) pace(g *group, peers []peer.ID) {
	if n.p.paceByCopy && g.msgs[0] != nil { // whole: one part
		n.st.pacer.tick = copyTime(len(g.msgs[0]), n.st.uplinkMbps)
	}
	for _, p := range peers {
		n.st.pacer.add(g.slot, p)
	}
	if !n.st.paceArmed {
		n.paceTick()
	}
}

// copyTime is how long an uplink of mbps takes to send size bytes.
func copyTime(size, mbps int) time.Duration {
	if mbps <= 0 {
		return 0
	}
	return time.Duration(float64(size) * 8 / (float64(mbps) * 1e6) * float64(time.Second))
}

// paceTick sends the announcement due now and schedules the next.
func (n *phasedNode) paceTick() {
	st := n.st
	st.paceArmed = false
	a, ok, retry := st.pacer.next(time.Now())
	if ok {
		if g := n.groups[a.slot]; g != nil {
			n.out(g, a.to).have = true
		}
	}
	if !retry.IsZero() {
		st.paceArmed = true
		time.AfterFunc(max(time.Until(retry), 0), func() { n.post(n.paceTick) })
	}
}

// claim sends the decode claim to every peer the node exchanged with for
// g and its whole mesh: nobody pushes to it any more.
func (n *phasedNode) claim(g *group) {
	for _, p := range n.meshPeers() {
		n.out(g, p).claim = true
	}
	for p := range g.known {
		n.out(g, p).claim = true
	}
}
