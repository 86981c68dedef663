package diffusion

import "github.com/libp2p/go-libp2p/core/peer"

// Pending buffers payload messages whose block is not installed yet (the
// "no relay before install" rule), bounded in total and per sending peer:
// each peer may hold at most PerPeer of the Total slots, so one peer
// flooding fabricated messages cannot crowd out another's honest copy.
// Messages are grouped by slot and released whole when the slot's block is
// installed, or dropped when the slot is abandoned.
//
// A Pending is not safe for concurrent use; its owner serialises calls.
type Pending[M any] struct {
	total, perPeer int
	n              int
	bySlot         map[uint64][]pendingEntry[M]
	byPeer         map[peer.ID]int
}

type pendingEntry[M any] struct {
	from peer.ID
	msg  M
}

// NewPending returns a queue of at most total messages, at most perPeer of
// them from any one peer.
func NewPending[M any](total, perPeer int) *Pending[M] {
	return &Pending[M]{total: total, perPeer: perPeer, bySlot: map[uint64][]pendingEntry[M]{}, byPeer: map[peer.ID]int{}}
}

// Add buffers msg of slot from peer; false when the queue or the peer's
// share is full (the message is dropped).
func (q *Pending[M]) Add(slot uint64, from peer.ID, msg M) bool {
	if q.n >= q.total || q.byPeer[from] >= q.perPeer {
		return false
	}
	q.bySlot[slot] = append(q.bySlot[slot], pendingEntry[M]{from, msg})
	q.byPeer[from]++
	q.n++
	return true
}

// Release removes and returns slot's messages, oldest first.
func (q *Pending[M]) Release(slot uint64) []M {
	entries := q.bySlot[slot]
	delete(q.bySlot, slot)
	out := make([]M, len(entries))
	for i, e := range entries {
		out[i] = e.msg
		q.byPeer[e.from]--
		if q.byPeer[e.from] == 0 {
			delete(q.byPeer, e.from)
		}
	}
	q.n -= len(entries)
	return out
}

// Len returns how many messages are buffered.
func (q *Pending[M]) Len() int { return q.n }

// PeerLen returns how many of them came from p.
func (q *Pending[M]) PeerLen(p peer.ID) int { return q.byPeer[p] }
