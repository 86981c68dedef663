package flownet

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"
)

// link is one direction of a node's access link: a server that sends the
// head chunk of each busy flow in turn, taking each chunk's wire bytes at
// the link's rate. A flow is the peer at the other end, or with bucket set
// the FQ-CoDel bucket the peer's connection hashes to, which peers whose
// connections collide there share, first come first served.
type link struct {
	nsPerByte float64
	// marks: CoDel marks its flows' chunks (flows-cc), for their
	// connections' windows.
	marks bool
	// anyBacklog: CoDel judges a flow's sojourn whatever its backlog
	// (Options.CoDelAnyBacklog).
	anyBacklog bool
	// drops: CoDel drops the chunks it would mark (Options.Drops).
	drops bool
	// bucket maps a peer to its flow's key (Options.FlowBuckets); nil: a
	// flow per peer.
	bucket func(peer int) int

	mu    sync.Mutex
	flows map[int]*flow
	// fresh holds the flows that turned busy since they were last served,
	// in arrival order: they go first, as FQ-CoDel serves new flows before
	// old ones, so a control message on an idle connection does not wait a
	// round of the bulk flows. busy holds the other flows with chunks
	// waiting, in service order; next is the one served next.
	fresh []*flow
	busy  []*flow
	next  int
	wake  chan struct{}
}

// flow is one peer's queue on a link, or one bucket's.
type flow struct {
	// chunks[head:] wait; the array's front is reused, so a flow fed a
	// chunk at a time does not reallocate it.
	chunks []chunk
	head   int
	// listed: the flow is in fresh or busy. A flow that empties stays in
	// busy until the round comes back to it (RFC 8290's rule), so a flow
	// that keeps emptying between its chunks is not fresh every time.
	listed bool
	// bytes is the data waiting; codel its CoDel state (flows-cc).
	bytes int
	codel codel
}

func newLink(mbps int, marks, anyBacklog bool) *link {
	return &link{
		nsPerByte:  8e3 / float64(mbps), // 8 bits per byte at mbps·10⁶ bit/s, in ns
		marks:      marks,
		anyBacklog: anyBacklog,
		flows:      map[int]*flow{},
		wake:       make(chan struct{}, 1),
	}
}

// flow returns the flow of peer, made on first use. Streams look their
// flows up once.
func (l *link) flow(peer int) *flow {
	key := peer
	if l.bucket != nil {
		key = l.bucket(peer)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.flows[key]
	if f == nil {
		f = &flow{}
		l.flows[key] = f
	}
	return f
}

// enqueue appends chunks to f, a flow of l.
func (l *link) enqueue(f *flow, chunks ...chunk) {
	l.mu.Lock()
	if f.head > 0 && len(f.chunks)+len(chunks) > cap(f.chunks) {
		k := copy(f.chunks, f.chunks[f.head:])
		clear(f.chunks[k:])
		f.chunks, f.head = f.chunks[:k], 0
	}
	if l.marks {
		// CoDel's sojourn and backlog, read only when marking (flows-cc).
		now := time.Now()
		for i := range chunks {
			chunks[i].queued = now
			f.bytes += len(chunks[i].data)
		}
	}
	f.chunks = append(f.chunks, chunks...)
	if !f.listed {
		f.listed = true
		l.fresh = append(l.fresh, f)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// pop takes the head chunk of the next flow, fresh flows first; ok is
// false when no flow has one. A fresh flow joins the round's tail after
// its chunk; a flow the round finds empty leaves it.
func (l *link) pop() (c chunk, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.fresh) > 0 {
		f := l.fresh[0]
		// Shift rather than reslice, so the array's front is reused.
		k := copy(l.fresh, l.fresh[1:])
		l.fresh[k] = nil
		l.fresh = l.fresh[:k]
		if l.next > len(l.busy) {
			l.next = 0
		}
		l.busy = slices.Insert(l.busy, l.next, f)
		l.next++
		return l.take(f), true
	}
	for len(l.busy) > 0 {
		if l.next >= len(l.busy) {
			l.next = 0
		}
		f := l.busy[l.next]
		if f.head == len(f.chunks) {
			f.listed = false
			l.busy = slices.Delete(l.busy, l.next, l.next+1)
			if l.anyBacklog {
				// simnet's FQ-CoDel deletes an old flow it finds empty,
				// CoDel state and all: the next chunk starts a new one, so
				// marking cannot resume near its last rate after an idle
				// round.
				f.codel = codel{}
			}
			continue
		}
		l.next++
		return l.take(f), true
	}
	return chunk{}, false
}

// take removes f's head chunk, marked if CoDel says so.
func (l *link) take(f *flow) chunk {
	c := f.chunks[f.head]
	f.chunks[f.head] = chunk{}
	f.head++
	if l.marks && c.data != nil {
		f.bytes -= len(c.data)
		backlog := f.bytes
		if l.anyBacklog {
			backlog = math.MaxInt
		}
		now := time.Now()
		if f.codel.mark(now, now.Sub(c.queued), backlog) {
			if l.drops && c.win != nil {
				c.dropped = true
			} else {
				c.marked = true
			}
		}
	}
	if f.head == len(f.chunks) {
		f.chunks, f.head = f.chunks[:0], 0
	}
	return c
}

// serve sends chunks until ctx ends, handing each to done once its wire
// bytes have left, and each chunk CoDel drops to dropped at once: a drop
// takes no time on the link.
func (l *link) serve(ctx context.Context, done, dropped func(chunk)) {
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		c, ok := l.pop()
		if !ok {
			select {
			case <-l.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		if c.dropped {
			dropped(c)
			continue
		}
		t.Reset(time.Duration(float64(wireBytes(len(c.data))) * l.nsPerByte))
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		done(c)
	}
}
