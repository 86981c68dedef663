package flownet

import (
	"context"
	"slices"
	"sync"
	"time"
)

// link is one direction of a node's access link: a server that sends the
// head chunk of each busy flow in turn, taking each chunk's wire bytes at
// the link's rate. A flow is the peer at the other end.
type link struct {
	nsPerByte float64
	// backlog is how many bytes a flow may leave queued when its write
	// returns.
	backlog int

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

type flow struct {
	chunks []*chunk
	// listed: the flow is in fresh or busy. A flow that empties stays in
	// busy until the round comes back to it (RFC 8290's rule), so a flow
	// that keeps emptying between its chunks is not fresh every time.
	listed bool
	// queued is the data bytes waiting; room is closed (and replaced) when
	// queued falls to the link's backlog or below.
	queued int
	room   chan struct{}
}

func newLink(mbps, backlog int) *link {
	return &link{
		backlog:   backlog,
		nsPerByte: 8e3 / float64(mbps), // 8 bits per byte at mbps·10⁶ bit/s, in ns
		flows:     map[int]*flow{},
		wake:      make(chan struct{}, 1),
	}
}

// enqueue appends chunks to the flow of peer and returns a channel closed
// once the flow's backlog is at most the link's (nil: it is already).
func (l *link) enqueue(peer int, chunks ...*chunk) <-chan struct{} {
	l.mu.Lock()
	f := l.flows[peer]
	if f == nil {
		f = &flow{}
		l.flows[peer] = f
	}
	f.chunks = append(f.chunks, chunks...)
	for _, c := range chunks {
		f.queued += len(c.data)
	}
	var room chan struct{}
	if f.queued > l.backlog {
		if f.room == nil {
			f.room = make(chan struct{})
		}
		room = f.room
	}
	if !f.listed {
		f.listed = true
		l.fresh = append(l.fresh, f)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return room
}

// pop takes the head chunk of the next flow, fresh flows first, or nil
// when no flow has one. A fresh flow joins the round's tail after its
// chunk; a flow the round finds empty leaves it.
func (l *link) pop() *chunk {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.fresh) > 0 {
		f := l.fresh[0]
		l.fresh[0] = nil
		l.fresh = l.fresh[1:]
		if l.next > len(l.busy) {
			l.next = 0
		}
		l.busy = slices.Insert(l.busy, l.next, f)
		l.next++
		return l.take(f)
	}
	for len(l.busy) > 0 {
		if l.next >= len(l.busy) {
			l.next = 0
		}
		f := l.busy[l.next]
		if len(f.chunks) == 0 {
			f.listed = false
			l.busy = slices.Delete(l.busy, l.next, l.next+1)
			continue
		}
		l.next++
		return l.take(f)
	}
	return nil
}

// take removes f's head chunk.
func (l *link) take(f *flow) *chunk {
	c := f.chunks[0]
	f.chunks[0] = nil
	f.chunks = f.chunks[1:]
	if len(f.chunks) == 0 {
		f.chunks = nil
	}
	f.queued -= len(c.data)
	if f.room != nil && f.queued <= l.backlog {
		close(f.room)
		f.room = nil
	}
	return c
}

// serve sends chunks until ctx ends, handing each to done once its wire
// bytes have left.
func (l *link) serve(ctx context.Context, done func(*chunk)) {
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		c := l.pop()
		if c == nil {
			select {
			case <-l.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		t.Reset(time.Duration(float64(WireBytes(len(c.data))) * l.nsPerByte))
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		done(c)
	}
}
