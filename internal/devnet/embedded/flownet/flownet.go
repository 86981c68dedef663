// Package flownet is the embedded devnet's second network model, "flows":
// go-libp2p hosts on go-libp2p's in-memory network (mocknet), whose writes
// travel as chunks through the sender's uplink, the pair's one-way latency
// and the receiver's downlink. Each link serves its flows (one per peer,
// as a QUIC connection is one flow to FQ-CoDel) round robin, a chunk at a
// time, at the link's rate, and a write returns once its last chunk has
// left the uplink.
//
// It keeps what the diffusion policies and gossipsub see: every RPC, the
// routers' queues, shared uplinks and downlinks, latency, the order of
// bytes on a connection. It leaves out what costs most in the packet model
// (netmodel's links on simnet, QUIC and TLS in x/simlibp2p): packets, QUIC
// and TLS state and handshakes, congestion control, queue drops and
// acknowledgements. It is a second, named model, validated against the
// packet model for tiers 2-4 on warm payloads, honest and under some
// stresses, and not for the stock segment modes, the other stresses or
// cold payloads (embedded/README.md, "Two network models"; a run outside
// says so: embedded.Config.ModelCaveat), never a silent replacement.
//
// Its variant "flows-cc" (Options.Congestion) adds a congestion window per
// connection with quic-go's rules and CoDel's marks on every link's flows
// (window.go): a connection then takes a share of a link by its window and
// round trip, not an equal share whenever it has data, which is what the
// stock segment modes, with every uplink full, turn on. Options bring it
// nearer simnet's links one rule at a time (CoDelAnyBacklog, FlowBuckets,
// Drops), and nearer quic-go's streams (PackedWrites), each a named model of
// package netmodel.
package flownet

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
	ma "github.com/multiformats/go-multiaddr"
	msmux "github.com/multiformats/go-multistream"

	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
	"github.com/segdiff/segdiff/internal/devnet/embedded/seeds"
)

const (
	// chunkSize is the unit a link serves: a flow's bytes leave in chunks
	// of at most this, one flow after another. At 50 Mbps a chunk takes
	// 0.66 ms; a message on an idle connection waits at most the chunk in
	// service (the new-flow rule). One-packet chunks gave tier3's figures
	// at 100 nodes (seed 7) in a draft; 16 KiB chunks moved p50 at 500
	// nodes by 3 % for 7 % less CPU, so the grain stays fine.
	chunkSize = 4 << 10
	// A 1-RTT QUIC packet over UDP carries about 1,220 bytes of stream
	// data with about 32 bytes of short header, STREAM frame header and
	// AEAD tag; a link is charged for those too.
	packetData     = 1220
	packetOverhead = 32
)

// wireBytes is what n bytes of stream data cost a link: the data and the
// packet overhead of ⌈n/1220⌉ packets.
func wireBytes(n int) int {
	packets := max((n+packetData-1)/packetData, 1)
	return n + packets*packetOverhead
}

// Options vary the flows model.
type Options struct {
	// Congestion gives each connection a congestion window and has the
	// links mark chunks as CoDel would drop them (the flows-cc model;
	// window.go).
	Congestion bool
	// QlogDir, with Congestion, has every window write its events to a
	// file there in the qlog subset package qlogstat reads (qlog.go); empty:
	// none, at the cost of a nil check per event.
	QlogDir string
	// CoDelAnyBacklog (a prototype, with Congestion): CoDel judges a
	// flow's sojourn whatever its backlog, as simnet v0.0.7's queues do
	// (their MTU is left zero, so RFC 8289's exemption of a queue holding
	// less than a packet never applies), and forgets a flow's CoDel state
	// (time above the target, marking count and all) when the round finds
	// the flow empty, as simnet's FQ-CoDel deletes an empty old flow. Off:
	// RFC 8289's rule, at chunk granularity.
	CoDelAnyBacklog bool
	// FlowBuckets (with Congestion): each link queues its flows in this
	// many FQ-CoDel buckets, as simnet's links do in 128, so the
	// connections that hash to one bucket share its queue, its turn and its
	// CoDel state; the bucket of a peer on a link is drawn from Seed
	// (seeds.FlowBucket). 0: a queue per peer.
	FlowBuckets int
	Seed        int64
	// Drops (with Congestion): CoDel drops the chunks it would mark. The
	// sender's window finds the loss when a later chunk is acknowledged (or
	// at a probe timeout), cuts, and sends the chunk again ahead of new
	// data; the receiver holds the stream's later chunks until it arrives
	// (head-of-line blocking), as QUIC does for a lost packet.
	Drops bool
	// PackedWrites (with Congestion): a write returns once the window has
	// let its last chunk in, as quic-go's returns once all but a packet's
	// worth of its data is packed into packets (send_stream.go), rather
	// than once that chunk has left the uplink. The writer's next message
	// then queues behind the data in flight: a control message the
	// application sends ahead of its own queue (gossipsub's IDONTWANT)
	// waits for the connection's queue at the uplink, not only for the
	// chunk in service, and duplicates it would have stopped go out.
	PackedWrites bool
}

// Network is a flows-model network of hosts, one per node, in index order.
type Network struct {
	mn    mocknet.Mocknet
	hosts []host.Host
	ports []port
	index map[peer.ID]int
	lat   *netmodel.Latency
	opts  Options

	winMu   sync.Mutex
	windows map[[2]int]*window
	// disordered counts the chunks that reached their stream out of the
	// order they were written in (see Check).
	disordered atomic.Int64
	// qlogErr is the first error creating a window's trace.
	qlogErr error

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// port is a node's two links.
type port struct{ up, down *link }

// New builds the hosts for rates (one per node) and links every edge so
// the caller can dial it. Start the links inside the run's bubble.
func New(rates []netmodel.Rates, lat *netmodel.Latency, edges []netmodel.Edge, opts Options) (_ *Network, err error) {
	n := &Network{mn: mocknet.New(), index: make(map[peer.ID]int, len(rates)), lat: lat, opts: opts, windows: map[[2]int]*window{}}
	defer func() {
		if err != nil {
			_ = n.mn.Close() // no host outlives a failed build
		}
	}()
	for i, r := range rates {
		if r.UpMbps <= 0 || r.DownMbps <= 0 {
			return nil, fmt.Errorf("flows network: node %d has rates %d/%d Mbps, want > 0", i, r.UpMbps, r.DownMbps)
		}
		sk, _, err := crypto.GenerateEd25519Key(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("flows network: key of node %d: %w", i, err)
		}
		addr, err := nodeAddr(i)
		if err != nil {
			return nil, err
		}
		h, err := n.mn.AddPeer(sk, addr)
		if err != nil {
			return nil, fmt.Errorf("flows network: add node %d: %w", i, err)
		}
		n.index[h.ID()] = i
		n.hosts = append(n.hosts, &shapedHost{Host: h, net: n, self: i})
		p := port{up: newLink(r.UpMbps, opts.Congestion, opts.CoDelAnyBacklog), down: newLink(r.DownMbps, opts.Congestion, opts.CoDelAnyBacklog)}
		p.up.drops, p.down.drops = opts.Congestion && opts.Drops, opts.Congestion && opts.Drops
		if opts.FlowBuckets > 0 {
			p.up.bucket = func(peer int) int { return seeds.FlowBucket(opts.Seed, i, true, peer, opts.FlowBuckets) }
			p.down.bucket = func(peer int) int { return seeds.FlowBucket(opts.Seed, i, false, peer, opts.FlowBuckets) }
		}
		n.ports = append(n.ports, p)
	}
	for _, e := range edges {
		if _, err := n.mn.LinkPeers(n.hosts[e.A].ID(), n.hosts[e.B].ID()); err != nil {
			return nil, fmt.Errorf("flows network: link node %d to node %d: %w", e.A, e.B, err)
		}
	}
	return n, nil
}

// nodeAddr is node i's address, the packet model's 1.x.y.z numbering.
func nodeAddr(i int) (ma.Multiaddr, error) {
	v := i + 1
	ip := net.IPv4(1, byte(v>>16), byte(v>>8), byte(v))
	a, err := ma.NewMultiaddr(fmt.Sprintf("/ip4/%s/udp/8000/quic-v1", ip))
	if err != nil {
		return nil, fmt.Errorf("flows network: address of node %d: %w", i, err)
	}
	return a, nil
}

// window returns the congestion window of the connection from → to, made
// on first use: a connection's streams share it.
func (n *Network) window(from, to int) *window {
	n.winMu.Lock()
	defer n.winMu.Unlock()
	k := [2]int{from, to}
	w := n.windows[k]
	if w == nil {
		up, f := n.ports[from].up, n.ports[from].up.flow(to)
		w = newWindow(func(cs ...chunk) { up.enqueue(f, cs...) })
		w.handshakeRTT = n.lat.Between(from, to) + n.lat.Between(to, from)
		w.packedWrites = n.opts.PackedWrites
		if n.opts.QlogDir != "" && n.qlogErr == nil {
			w.trace, n.qlogErr = newQlogTrace(n.opts.QlogDir, from, to)
		}
		n.windows[k] = w
	}
	return w
}

// Check reports a defect of the model seen so far: chunks that reached
// their stream out of write order, which a reader sees as corrupt data.
func (n *Network) Check() error {
	if k := n.disordered.Load(); k > 0 {
		return fmt.Errorf("flows network: %d chunks reached their stream out of the order they were written in (a defect of the model: the run's figures are not to be used)", k)
	}
	return nil
}

// Hosts are the nodes' hosts in index order.
func (n *Network) Hosts() []host.Host { return n.hosts }

// Start runs every link's server. It must be called inside the bubble the
// network runs in.
func (n *Network) Start() {
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for i := range n.ports {
		p := &n.ports[i]
		n.wg.Go(func() { p.up.serve(n.ctx, n.departed, n.dropped) })
		n.wg.Go(func() { p.down.serve(n.ctx, n.deliver, n.dropped) })
	}
}

// Close stops the links (writes still waiting return an error) and closes
// the hosts, before waiting for the links: a delivery blocked on a stream
// nobody reads ends when the stream closes.
func (n *Network) Close() error {
	if n.cancel != nil {
		n.cancel()
	}
	err := n.mn.Close()
	n.wg.Wait()
	n.winMu.Lock()
	defer n.winMu.Unlock()
	for _, w := range n.windows {
		w.mu.Lock()
		if w.trace != nil {
			if terr := w.trace.close(); n.qlogErr == nil {
				n.qlogErr = terr
			}
			w.trace = nil
		}
		w.mu.Unlock()
	}
	if err == nil && n.qlogErr != nil {
		err = fmt.Errorf("flows network: qlog: %w", n.qlogErr)
	}
	return err
}

// departed hands a chunk that left its sender's uplink to the receiver's
// downlink after the pair's one-way latency. Its bytes are copied here, as
// a packet leaves with its own: the writer waits only until its last chunk
// has left, then reuses its buffer.
func (n *Network) departed(c chunk) {
	c.release()
	s := c.s
	time.AfterFunc(n.lat.Between(s.from, s.to), func() { n.ports[s.to].down.enqueue(s.down, c) })
}

// dropped hands a chunk a link dropped back to its window to be found
// lost. A drop at the uplink ends the writer's wait as its departure
// would, so its bytes are copied first.
func (n *Network) dropped(c chunk) {
	c.release()
	c.dropped = false
	c.win.dropped(c)
}

// release ends the writer's hold on c once it has left the uplink (or
// been dropped there, or with PackedWrites entered it): its bytes move to
// a buffer of its own, if they have not yet, and a write's last chunk
// tells the writer.
func (c *chunk) release() {
	if c.data != nil && c.buf == nil {
		b := chunkPool.Get().(*[]byte)
		*b = append((*b)[:0], c.data...)
		c.data, c.buf = *b, b
	}
	if c.sent != nil {
		select {
		case c.sent <- struct{}{}:
		default:
		}
		c.sent = nil
	}
}

// chunkPool holds the buffers chunks travel in between the links.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, chunkSize); return &b }}

// deliver writes a chunk that left the receiver's downlink into the
// in-memory stream (which copies it), or runs its action. An error means
// the stream is gone (reset or closed under teardown); the writer saw its
// write succeed, as a QUIC sender does for data in flight.
func (n *Network) deliver(c chunk) {
	if c.win != nil && c.data != nil {
		w, size, seq, marked, sent := c.win, wireBytes(len(c.data)), c.seq, c.marked, c.sentAt
		time.AfterFunc(n.lat.Between(c.s.to, c.s.from), func() { w.acked(size, seq, marked, time.Since(sent)) })
	}
	if !n.opts.Drops {
		// Without drops nothing is sent again, so a stream's chunks must
		// arrive in the order they were written: one that does not is a
		// defect of the model, which a run must not report as a figure.
		if s := c.s; c.sseq != s.rnext {
			n.disordered.Add(1)
			s.rnext = c.sseq
		}
		c.s.rnext++
		apply(c)
		return
	}
	// Drops: a stream's chunks reach the reader in order, the ones behind
	// a loss held until it is sent again. Only this downlink's server
	// touches the stream's receiving side.
	s := c.s
	if c.sseq != s.rnext {
		if s.held == nil {
			s.held = map[uint64]chunk{}
		}
		s.held[c.sseq] = c
		return
	}
	for {
		apply(c)
		s.rnext++
		var ok bool
		if c, ok = s.held[s.rnext]; !ok {
			return
		}
		delete(s.held, s.rnext)
	}
}

// apply writes a chunk into the in-memory stream, or runs its action.
func apply(c chunk) {
	if c.then != nil {
		c.then(c.s.Stream)
		return
	}
	_, _ = c.s.Stream.Write(c.data)
	chunkPool.Put(c.buf)
}

// shapedHost is a host whose outgoing streams are shaped. Gossipsub writes
// only on the streams it opens, so shaping those carries all its traffic;
// the streams a peer opens are shaped at that peer.
type shapedHost struct {
	host.Host
	net  *Network
	self int
}

// NewStream opens a stream on the existing connection and negotiates its
// protocol through the links, so the request reaches the peer a latency
// later, as on a real network: in memory, a router that starts a moment
// before its peer's would find no handler there and give the peer up.
// (The peer's answer comes back in memory, at once.)
func (h *shapedHost) NewStream(ctx context.Context, p peer.ID, pids ...protocol.ID) (network.Stream, error) {
	to, ok := h.net.index[p]
	if !ok {
		return h.Host.NewStream(ctx, p, pids...)
	}
	raw, err := h.Network().NewStream(network.WithNoDial(ctx, "flows: streams ride existing connections"), p)
	if err != nil {
		return nil, err
	}
	s := &stream{Stream: raw, net: h.net, from: h.self, to: to,
		up: h.net.ports[h.self].up.flow(to), down: h.net.ports[to].down.flow(h.self), sent: make(chan struct{}, 1)}
	if h.net.opts.Congestion {
		s.win = h.net.window(h.self, to)
	}
	proto, err := msmux.SelectOneOf(pids, io.ReadWriteCloser(s))
	if err != nil {
		_ = raw.Reset()
		return nil, fmt.Errorf("flows: negotiate %v with node %d: %w", pids, to, err)
	}
	if err := raw.SetProtocol(proto); err != nil {
		_ = raw.Reset()
		return nil, err
	}
	return s, nil
}

// stream is an outgoing stream whose writes go through the links. Its
// writes, like a QUIC stream's, are one at a time.
type stream struct {
	network.Stream
	net      *Network
	from, to int
	// up and down are the connection's flows at the sender's uplink and
	// the receiver's downlink.
	up, down *flow
	// win is the connection's congestion window (flows-cc), or nil.
	win *window
	// sent hears when a write's last chunk has left the uplink.
	sent    chan struct{}
	scratch []chunk
	// mu orders a write's chunks and an action behind the data before it;
	// wseq numbers them. rnext is the number the receiver takes next, held
	// (Options.Drops) the chunks that came before it.
	mu    sync.Mutex
	wseq  uint64
	rnext uint64
	held  map[uint64]chunk
}

// Write queues p in chunks on the sender's uplink and returns once the
// last has left it, or with Options.PackedWrites once the window has let
// it in.
func (s *stream) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.scratch = s.scratch[:0]
	for off := 0; off < len(p); off += chunkSize {
		s.scratch = append(s.scratch, chunk{data: p[off:min(off+chunkSize, len(p))], s: s})
	}
	s.scratch[len(s.scratch)-1].sent = s.sent
	s.send(s.scratch...)
	select {
	case <-s.sent:
		return len(p), nil
	case <-s.net.ctx.Done():
		return 0, fmt.Errorf("flows network closed: %w", net.ErrClosed)
	}
}

// CloseWrite sends the end of the stream after the data written before it
// (a QUIC FIN), without waiting.
func (s *stream) CloseWrite() error {
	s.after(func(u network.Stream) { _ = u.CloseWrite() })
	return nil
}

// Close stops reading at once and closes the writing side after the data
// written before it.
func (s *stream) Close() error {
	err := s.Stream.CloseRead()
	s.after(func(u network.Stream) { _ = u.Close() })
	return err
}

// after queues do behind the data written so far: it runs on the
// in-memory stream when it leaves the receiver's downlink.
func (s *stream) after(do func(network.Stream)) {
	s.send(chunk{s: s, then: do})
}

// send numbers chunks in the stream's order and puts them on the sender's
// uplink, through the connection's window if it has one.
func (s *stream) send(chunks ...chunk) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range chunks {
		chunks[i].sseq = s.wseq
		s.wseq++
	}
	if s.win != nil {
		s.win.send(chunks...)
		return
	}
	s.net.ports[s.from].up.enqueue(s.up, chunks...)
}

// chunk is a piece of one write on its way, or an action that follows the
// writes before it.
type chunk struct {
	// data is the writer's bytes in the uplink, then a copy in buf.
	data []byte
	buf  *[]byte
	s    *stream
	// sent, on a write's last chunk, hears when it leaves the uplink.
	sent chan<- struct{}
	then func(network.Stream)
	// queued is when it joined its link's queue; marked: a link's CoDel
	// marked it. win, seq and sentAt: the window it entered, its number
	// there and when (flows-cc).
	queued time.Time
	marked bool
	win    *window
	seq    uint64
	sentAt time.Time
	// dropped: a link's CoDel dropped it (Options.Drops). sseq is its
	// number in its stream.
	dropped bool
	sseq    uint64
}
