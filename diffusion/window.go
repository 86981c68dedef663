package diffusion

import (
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Window bounds what a node has in flight: parts (or whole copies) written
// to a peer and neither acknowledged by it nor timed out. It is tier 4's
// static window (card 14) and whole-paced's three copies in flight. Each
// entry has a weight (bytes, or 1 per copy); see Room for the bound.
//
// A Window is not safe for concurrent use; its owner serialises calls.
// Time is passed in, so that tests drive it without a clock.
type Window struct {
	capacity int
	timeout  time.Duration
	used     int
	byPeer   map[peer.ID]map[flight]flightEntry
}

// flight is one copy in flight: a part of a slot's payload to a peer.
type flight struct {
	slot uint64
	part int
}

type flightEntry struct {
	weight int
	lapse  time.Time
}

// NewWindow returns an empty window of capacity (weight units) whose
// entries lapse after timeout.
func NewWindow(capacity int, timeout time.Duration) *Window {
	return &Window{capacity: max(capacity, 1), timeout: timeout, byPeer: map[peer.ID]map[flight]flightEntry{}}
}

// Used returns the weight in flight.
func (w *Window) Used() int { return w.used }

// Room reports whether another entry is admitted now: while the weight in
// flight is below the capacity. The weight in flight therefore stays below
// the capacity plus the heaviest entry (for entries of weight 1, at most
// the capacity).
func (w *Window) Room() bool { return w.used < w.capacity }

// Add puts part of slot to p in flight at now, if there is room; an entry
// already in flight is not counted twice.
func (w *Window) Add(p peer.ID, slot uint64, part, weight int, now time.Time) bool {
	k := flight{slot, part}
	if _, ok := w.byPeer[p][k]; ok {
		return true
	}
	if !w.Room() {
		return false
	}
	m := w.byPeer[p]
	if m == nil {
		m = map[flight]flightEntry{}
		w.byPeer[p] = m
	}
	m[k] = flightEntry{weight: weight, lapse: now.Add(w.timeout)}
	w.used += weight
	return true
}

// Ack releases every entry to p of slot for which held reports the part
// held (the peer's inventory now shows it); it returns how many.
func (w *Window) Ack(p peer.ID, slot uint64, held func(part int) bool) int {
	k := 0
	for f, e := range w.byPeer[p] {
		if f.slot == slot && held(f.part) {
			w.release(p, f, e)
			k++
		}
	}
	return k
}

// Expire releases the entries whose acknowledgement did not come in time,
// and returns how many.
func (w *Window) Expire(now time.Time) int {
	k := 0
	for p, m := range w.byPeer {
		for f, e := range m {
			if !now.Before(e.lapse) {
				w.release(p, f, e)
				k++
			}
		}
	}
	return k
}

// Holds reports whether an entry to a peer for which match holds is in
// flight.
func (w *Window) Holds(match func(peer.ID) bool) bool {
	for p := range w.byPeer {
		if match(p) {
			return true
		}
	}
	return false
}

// NextLapse returns when the earliest entry lapses; false when none is in
// flight.
func (w *Window) NextLapse() (time.Time, bool) {
	var next time.Time
	for _, m := range w.byPeer {
		for _, e := range m {
			if next.IsZero() || e.lapse.Before(next) {
				next = e.lapse
			}
		}
	}
	return next, !next.IsZero()
}

// Forget drops every entry of slots at or below horizon (their payloads are
// no longer served).
func (w *Window) Forget(horizon uint64) {
	for p, m := range w.byPeer {
		for f, e := range m {
			if f.slot <= horizon {
				w.release(p, f, e)
			}
		}
	}
}

func (w *Window) release(p peer.ID, f flight, e flightEntry) {
	delete(w.byPeer[p], f)
	if len(w.byPeer[p]) == 0 {
		delete(w.byPeer, p)
	}
	w.used -= e.weight
}
