package diffusion

import (
	"slices"

	"github.com/libp2p/go-libp2p/core/peer"
)

// queuedSend is one copy a node writes: a part of a slot's payload to a
// peer, as an answer to its request or as an eager push.
type queuedSend struct {
	to     peer.ID
	slot   uint64
	part   int
	answer bool
}

// pushTicket is a part a node means to push, to up to budget mesh peers.
// The peers are chosen when the push is popped, from the state the node
// has then: a push waiting behind the window goes where it is still
// needed.
type pushTicket struct {
	slot   uint64
	part   int
	budget int
	// peers are the mesh peers the part could go to when it was accepted
	// (not the sender, none known to hold it).
	peers []peer.ID
	seq   uint64 // arrival order, for ties
}

// sendQueue holds what a node has decided to send but not yet written,
// while its window is full: answers first, in order (a peer waits for
// each), then pushes. Popping applies four of tier 4's cards through
// popRules: cancel at dispatch, rarest at pop, aim and projection (the
// latter two inside the rules' functions).
//
// A sendQueue is not safe for concurrent use; its owner serialises calls.
type sendQueue struct {
	answers []queuedSend
	tickets []pushTicket
	seq     uint64
}

// answer queues an answer.
func (q *sendQueue) answer(s queuedSend) {
	s.answer = true
	q.answers = append(q.answers, s)
}

// push queues a part to push.
func (q *sendQueue) push(t pushTicket) {
	q.seq++
	t.seq = q.seq
	q.tickets = append(q.tickets, t)
}

// Len returns how many answers and push tickets wait.
func (q *sendQueue) Len() int { return len(q.answers) + len(q.tickets) }

// popRules are what pop consults.
type popRules struct {
	// unwanted reports that a peer needs the part no more (it holds it, or
	// can rebuild the payload): cancel at dispatch. Nil switches the card
	// off, and a push goes to the peers its ticket named, whatever they
	// reported since.
	unwanted func(slot uint64, part int, p peer.ID) bool
	// sent reports that the part was written to p already: never twice,
	// whatever the cards.
	sent func(slot uint64, part int, p peer.ID) bool
	// rarity counts the known holders of a part: rarest at pop. Nil keeps
	// queue order.
	rarity func(slot uint64, part int) int
	// aim picks the peer among the eligible ones (never empty).
	aim func(slot uint64, part int, eligible []peer.ID) peer.ID
	// deferred reports that answers to p wait behind every other answer
	// and push, and go out only while deferredRoom holds. Nil defers none.
	deferred     func(slot uint64, p peer.ID) bool
	deferredRoom func() bool
}

// pop removes and returns the next copy to write. Answers and tickets the
// cancel rule leaves nobody to send to are dropped on the way and passed to
// dropped.
func (q *sendQueue) pop(r popRules, dropped func(queuedSend)) (queuedSend, bool) {
	waiting := -1 // the first deferred answer
	for i := 0; i < len(q.answers); {
		s := q.answers[i]
		if r.sent(s.slot, s.part, s.to) || (r.unwanted != nil && r.unwanted(s.slot, s.part, s.to)) {
			q.takeAnswer(i)
			dropped(s)
			continue
		}
		if r.deferred != nil && r.deferred(s.slot, s.to) {
			if waiting < 0 {
				waiting = i
			}
			i++
			continue
		}
		return q.takeAnswer(i), true
	}
	eligible := func(t pushTicket) []peer.ID {
		var out []peer.ID
		for _, p := range t.peers {
			if !r.sent(t.slot, t.part, p) && (r.unwanted == nil || !r.unwanted(t.slot, t.part, p)) {
				out = append(out, p)
			}
		}
		return out
	}
	best, bestRarity := -1, 0
	var bestPeers []peer.ID
	kept := q.tickets[:0]
	for _, t := range q.tickets {
		peers := eligible(t)
		if len(peers) == 0 {
			dropped(queuedSend{slot: t.slot, part: t.part})
			continue
		}
		kept = append(kept, t)
		// Ties keep the earliest: queue order is the phase's order.
		if best < 0 {
			best, bestPeers = len(kept)-1, peers
			if r.rarity != nil {
				bestRarity = r.rarity(t.slot, t.part)
			}
			continue
		}
		if r.rarity != nil {
			if k := r.rarity(t.slot, t.part); k < bestRarity {
				best, bestRarity, bestPeers = len(kept)-1, k, peers
			}
		}
	}
	clear(q.tickets[len(kept):])
	q.tickets = kept
	if best < 0 {
		if waiting >= 0 && r.deferredRoom() {
			return q.takeAnswer(waiting), true
		}
		return queuedSend{}, false
	}
	t := &q.tickets[best]
	s := queuedSend{to: r.aim(t.slot, t.part, bestPeers), slot: t.slot, part: t.part}
	t.budget--
	if t.budget <= 0 {
		q.tickets = append(q.tickets[:best], q.tickets[best+1:]...)
	}
	return s, true
}

// takeAnswer removes and returns answer i. The head, what pop takes when
// nothing is deferred, goes without moving the rest of the queue.
func (q *sendQueue) takeAnswer(i int) queuedSend {
	s := q.answers[i]
	if i == 0 {
		q.answers = q.answers[1:]
	} else {
		q.answers = slices.Delete(q.answers, i, i+1)
	}
	return s
}

// drop removes every answer and ticket of slots for which match holds.
func (q *sendQueue) drop(match func(slot uint64) bool) {
	q.answers = slices.DeleteFunc(q.answers, func(s queuedSend) bool { return match(s.slot) })
	q.tickets = slices.DeleteFunc(q.tickets, func(t pushTicket) bool { return match(t.slot) })
}
