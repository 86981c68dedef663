package flownet

import (
	"math"
	"sync"
	"time"
)

// The congestion window of the flows-cc variant, with quic-go's constants
// (internal/congestion: cubic_sender.go, hybrid_slow_start.go) and CoDel's
// (RFC 8289, as simnet's links run it).
const (
	// maxDatagram is quic-go's initial packet size, the unit of its window.
	maxDatagram   = 1252
	initialWindow = 32 * maxDatagram
	minWindow     = 2 * maxDatagram
	// windowCut is the window kept after a congestion event.
	windowCut = 0.7
	// HyStart leaves slow start when the least RTT of a round's first
	// hystartSamples exceeds the connection's least RTT by an eighth of
	// it, within these bounds.
	hystartSamples = 8
	hystartMinRise = 4 * time.Millisecond
	hystartMaxRise = 16 * time.Millisecond

	codelTarget   = 5 * time.Millisecond
	codelInterval = 100 * time.Millisecond
)

// window is one direction of a connection under congestion control: a
// chunk enters the sender's uplink only while the bytes in flight (sent,
// not yet acknowledged) fit the window, so a connection's share of a link
// follows its window and round trip as a QUIC connection's does, rather
// than every backlogged connection taking an equal share. The window
// starts at 32 packets, doubles per round trip in slow start until HyStart
// sees the round trip rise or a link marks a chunk, then grows by a packet
// per window (Reno's rule, where quic-go runs CUBIC; the two were not
// compared here) and is cut to 0.7 on a mark, once per round trip.
// A mark stands for the drop CoDel would make; with Options.Drops the link
// drops the chunk instead, and the window finds the loss (lost), cuts, and
// sends the chunk again ahead of new data.
type window struct {
	mu       sync.Mutex
	cwnd     float64
	ssthresh float64
	inFlight int
	// seq numbers chunks as they enter the window; a mark on a chunk that
	// entered before the last cut does not cut again.
	seq, cutAt uint64
	// waiting holds the chunks (and actions) the window has not let in
	// yet, in write order.
	waiting []chunk
	enqueue func(...chunk)
	// unseen holds the chunks a link dropped that the window has not yet
	// found lost (Options.Drops), in the order they entered.
	unseen []chunk
	// losses counts the drops found lost.
	losses int

	// handshakeRTT is the pair's round trip, the sample QUIC's handshake
	// gives before any data is acknowledged (for the probe timeout only).
	handshakeRTT     time.Duration
	minRTT, roundMin time.Duration
	roundEnd         uint64
	samples          int
	inRound          bool

	// packedWrites: a chunk is released to its writer as it enters
	// (Options.PackedWrites).
	packedWrites bool

	// trace logs the window's events (Options.QlogDir), or is nil.
	trace *qlogTrace
}

func newWindow(enqueue func(...chunk)) *window {
	return &window{cwnd: initialWindow, ssthresh: math.Inf(1), enqueue: enqueue}
}

// send lets chunks in while the window has room; the rest wait.
func (w *window) send(chunks ...chunk) {
	w.mu.Lock()
	w.waiting = append(w.waiting, chunks...)
	w.admit()
	w.mu.Unlock()
}

// admit takes the waiting chunks that fit, in order, and queues them on
// the uplink; an action passes once the data before it is in. A chunk
// always enters an empty window. Call with w.mu held: the uplink must get
// the chunks in the order the window let them in, and a writer and an
// acknowledgement admit at the same instant (the writer a packed write
// released wakes while the acknowledgement is still admitting), so
// queueing after the unlock sent streams' bytes out of order.
func (w *window) admit() {
	var in []chunk
	now := time.Now()
	for len(w.waiting) > 0 {
		c := w.waiting[0]
		size := 0
		if c.data != nil {
			size = wireBytes(len(c.data))
		}
		if size > 0 && w.inFlight > 0 && float64(w.inFlight+size) > w.cwnd {
			break
		}
		w.waiting[0] = chunk{}
		w.waiting = w.waiting[1:]
		w.inFlight += size
		if w.trace != nil && size > 0 {
			w.trace.sent(size, len(c.data), w.inFlight)
		}
		w.seq++
		c.win, c.seq, c.sentAt = w, w.seq, now
		if w.packedWrites {
			c.release()
		}
		in = append(in, c)
	}
	if len(w.waiting) == 0 {
		w.waiting = nil // drop the array a burst grew
	}
	if len(in) > 0 {
		w.enqueue(in...)
	}
}

// acked takes the acknowledgement of a chunk of size wire bytes that
// entered as seq, marked or not, rtt after it entered, and lets in what
// now fits.
func (w *window) acked(size int, seq uint64, marked bool, rtt time.Duration) {
	w.mu.Lock()
	// quic-go grows the window only when the sender is close to using it.
	limited := len(w.waiting) > 0 || float64(w.inFlight) >= w.cwnd-3*maxDatagram
	w.inFlight -= size
	if w.minRTT == 0 || rtt < w.minRTT {
		w.minRTT = rtt
	}
	if w.cwnd < w.ssthresh && !marked {
		w.hystart(seq, rtt)
	}
	cut := marked && w.cut(seq)
	switch {
	case cut:
	case marked || !limited:
	case w.cwnd < w.ssthresh:
		w.cwnd += float64(size) // a packet per packet acknowledged
	default:
		w.cwnd += maxDatagram * float64(size) / w.cwnd
	}
	if w.trace != nil {
		w.trace.acked(w, rtt, marked, cut, limited)
	}
	// quic-go's packet threshold: a packet three or more behind one
	// acknowledged is lost, and a chunk is three packets or more.
	w.lose(func(c chunk) bool { return c.seq < seq })
	w.admit()
	w.mu.Unlock()
}

// cut takes the window to 0.7 for a congestion event on the chunk that
// entered as seq, once per round trip: not for a chunk that entered before
// the last cut. Call with w.mu held.
func (w *window) cut(seq uint64) bool {
	if seq <= w.cutAt {
		return false
	}
	w.cwnd = max(w.cwnd*windowCut, minWindow)
	w.ssthresh = w.cwnd
	w.cutAt = w.seq
	return true
}

// dropped takes c, which a link dropped (Options.Drops). The window finds
// it lost when a chunk that entered after it is acknowledged or, if none
// is, at a probe timeout.
func (w *window) dropped(c chunk) {
	w.mu.Lock()
	w.unseen = append(w.unseen, c)
	// quic-go's probe timeout is srtt + 4·rttvar + the peer's 25 ms
	// acknowledgement delay; twice the least RTT stands for the first two.
	rtt := w.minRTT
	if rtt == 0 {
		rtt = w.handshakeRTT
	}
	pto := 2*rtt + 25*time.Millisecond
	w.mu.Unlock()
	seq := c.seq
	time.AfterFunc(pto, func() {
		w.mu.Lock()
		w.lose(func(c chunk) bool { return c.seq == seq })
		w.admit()
		w.mu.Unlock()
	})
}

// lose finds the unseen drops that lost says are lost: their bytes leave
// the flight, the window is cut, and they wait to be sent again ahead of
// new data, in order. Call with w.mu held, then admit.
func (w *window) lose(lost func(chunk) bool) {
	var again []chunk
	kept := w.unseen[:0]
	for _, c := range w.unseen {
		if !lost(c) {
			kept = append(kept, c)
			continue
		}
		w.inFlight -= wireBytes(len(c.data))
		w.losses++
		cut := w.cut(c.seq)
		if w.trace != nil {
			w.trace.lost(w, cut)
		}
		c.win = nil
		again = append(again, c)
	}
	clear(w.unseen[len(kept):])
	w.unseen = kept
	if len(again) > 0 {
		w.waiting = append(again, w.waiting...)
	}
}

// hystart leaves slow start when a round's least RTT (over its first
// samples) exceeds the least RTT seen by an eighth of it (4-16 ms): the
// queue has begun to build. A round ends with the acknowledgement of the
// chunk that entered last when it began. Call with w.mu held.
func (w *window) hystart(seq uint64, rtt time.Duration) {
	if !w.inRound || seq > w.roundEnd {
		w.inRound, w.roundEnd, w.roundMin, w.samples = true, w.seq, 0, 0
	}
	w.samples++
	if w.samples > hystartSamples {
		return
	}
	if w.roundMin == 0 || rtt < w.roundMin {
		w.roundMin = rtt
	}
	if w.samples == hystartSamples && w.roundMin > w.minRTT+min(max(w.minRTT/8, hystartMinRise), hystartMaxRise) {
		w.ssthresh = w.cwnd
	}
}

// codel is CoDel's state for one flow of a link (RFC 8289), marking the
// chunks it would drop.
type codel struct {
	firstAbove time.Time
	marking    bool
	markNext   time.Time
	count      int
	lastCount  int
}

// mark decides whether a chunk leaving now after sojourn in the queue is
// marked, with backlog bytes queued behind it: once the sojourn has stayed
// above the target for an interval, marks follow at interval/√count.
func (q *codel) mark(now time.Time, sojourn time.Duration, backlog int) bool {
	above := false
	switch {
	case sojourn < codelTarget || backlog < maxDatagram:
		q.firstAbove = time.Time{}
	case q.firstAbove.IsZero():
		q.firstAbove = now.Add(codelInterval)
	case !now.Before(q.firstAbove):
		above = true
	}
	if q.marking {
		switch {
		case !above:
			q.marking = false
		case !now.Before(q.markNext):
			q.count++
			q.markNext = controlLaw(q.markNext, q.count)
			return true
		}
		return false
	}
	if !above {
		return false
	}
	q.marking = true
	// Resume near the last rate if marking stopped only a moment ago.
	if delta := q.count - q.lastCount; delta > 1 && now.Sub(q.markNext) < 16*codelInterval {
		q.count = delta
	} else {
		q.count = 1
	}
	q.markNext = controlLaw(now, q.count)
	q.lastCount = q.count
	return true
}

func controlLaw(t time.Time, count int) time.Time {
	return t.Add(time.Duration(float64(codelInterval) / math.Sqrt(float64(count))))
}
