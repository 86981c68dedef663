package diffusion

import (
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// pacer spreads announcements over short ticks, one peer a tick, instead
// of announcing to every gossip peer at once at the heartbeat (tier 4's
// card 15; whole-paced's paced gossip). At the heartbeat a node announces
// to a dozen or more peers; each asks at once, and the announcer serves
// them all in parallel on one uplink. Paced, the first asker is served
// sooner, and later announcements reach peers that may have the payload
// already.
//
// A pacer is not safe for concurrent use; its owner serialises calls. Time
// is passed in.
type pacer struct {
	tick  time.Duration
	queue []pacedAnnouncement
	last  time.Time // when the last announcement went out
}

// pacedAnnouncement is one announcement of slot's payload to a peer.
type pacedAnnouncement struct {
	slot uint64
	to   peer.ID
}

func newPacer(tick time.Duration) *pacer { return &pacer{tick: tick} }

// add queues an announcement, unless the same one waits already.
func (p *pacer) add(slot uint64, to peer.ID) {
	for _, a := range p.queue {
		if a.slot == slot && a.to == to {
			return
		}
	}
	p.queue = append(p.queue, pacedAnnouncement{slot, to})
}

// next returns the announcement due at now, if a tick has passed since the
// last one, and otherwise when to ask again (zero when nothing waits).
func (p *pacer) next(now time.Time) (a pacedAnnouncement, ok bool, retry time.Time) {
	if len(p.queue) == 0 {
		return a, false, time.Time{}
	}
	if due := p.last.Add(p.tick); !p.last.IsZero() && now.Before(due) {
		return a, false, due
	}
	a, p.queue = p.queue[0], p.queue[1:]
	p.last = now
	if len(p.queue) > 0 {
		retry = now.Add(p.tick)
	}
	return a, true, retry
}

// forget drops the announcements of slots at or below horizon.
func (p *pacer) forget(horizon uint64) {
	kept := p.queue[:0]
	for _, a := range p.queue {
		if a.slot > horizon {
			kept = append(kept, a)
		}
	}
	p.queue = kept
}

// stripes assigns a source's first copies over every connection, each peer
// a different stripe (tier 4's card 13): with P peers and K parts, peer j
// gets the parts j, j+P, j+2P, … when P < K; when P ≥ K, peer j gets part
// j mod K, so every peer gets one part and every part goes out. The result
// lists, per peer, its parts in order.
func stripes(parts int, peers []peer.ID) map[peer.ID][]int {
	out := map[peer.ID][]int{}
	if parts == 0 || len(peers) == 0 {
		return out
	}
	for j := range max(parts, len(peers)) {
		p := peers[j%len(peers)]
		out[p] = append(out[p], j%parts)
	}
	return out
}
