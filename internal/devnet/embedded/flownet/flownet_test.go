package flownet

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/stretchr/testify/require"

	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
	"github.com/segdiff/segdiff/internal/devnet/embedded/seeds"
)

const testProto = "/flownet-test/1"

// transfer is one write of size bytes from node from to node to, at
// time at.
type transfer struct {
	from, to, size int
	at             time.Duration
}

// run builds a flows network of rates over edges with uniform one-way
// latency, makes the transfers, and returns when each one's last byte was
// read, from the start.
func run(t *testing.T, rates []netmodel.Rates, edges []netmodel.Edge, latency time.Duration, transfers []transfer) []time.Duration {
	t.Helper()
	return runWith(t, Options{}, rates, edges, latency, transfers)
}

// runWith is run with the model's options.
func runWith(t *testing.T, opts Options, rates []netmodel.Rates, edges []netmodel.Edge, latency time.Duration, transfers []transfer) []time.Duration {
	t.Helper()
	return runInspect(t, opts, rates, edges, latency, transfers, nil)
}

// runInspect is runWith, handing the network to inspect (if not nil) once
// every transfer has been read.
func runInspect(t *testing.T, opts Options, rates []netmodel.Rates, edges []netmodel.Edge, latency time.Duration, transfers []transfer, inspect func(*Network)) []time.Duration {
	t.Helper()
	lat, err := netmodel.NewLatency(netmodel.LatencyUniform, len(rates), 1, latency)
	require.NoError(t, err)
	n, err := New(rates, lat, edges, opts)
	require.NoError(t, err)
	n.Start()
	defer n.Close()
	if inspect != nil {
		defer inspect(n)
	}
	ctx := context.Background()
	hosts := n.Hosts()
	for _, e := range edges {
		require.NoError(t, hosts[e.A].Connect(ctx, peer.AddrInfo{ID: hosts[e.B].ID(), Addrs: hosts[e.B].Addrs()}))
	}
	got := make([]time.Duration, len(transfers))
	var start time.Time
	var reads sync.WaitGroup
	for _, h := range hosts {
		h.SetStreamHandler(testProto, func(s network.Stream) {
			defer reads.Done()
			var hdr [1]byte
			_, err := io.ReadFull(s, hdr[:])
			require.NoError(t, err)
			k := int(hdr[0])
			data := make([]byte, transfers[k].size)
			_, err = io.ReadFull(s, data)
			require.NoError(t, err)
			// The finish is the last data byte; the close follows it.
			got[k] = time.Since(start)
			require.True(t, bytes.Equal(payload(k, len(data)), data), "transfer %d arrived changed", k)
			rest, err := io.ReadAll(s)
			require.NoError(t, err)
			require.Empty(t, rest, "transfer %d: bytes after its data", k)
			_ = s.Close()
		})
	}
	// Streams open first: negotiation costs a latency of its own.
	streams := make([]network.Stream, len(transfers))
	for k, tr := range transfers {
		streams[k], err = hosts[tr.from].NewStream(ctx, hosts[tr.to].ID(), testProto)
		require.NoError(t, err)
	}
	synctest.Wait()
	start = time.Now()
	var writes sync.WaitGroup
	for k, tr := range transfers {
		reads.Add(1)
		writes.Go(func() {
			time.Sleep(tr.at)
			_, err := streams[k].Write(append([]byte{byte(k)}, payload(k, tr.size)...))
			require.NoError(t, err)
			require.NoError(t, streams[k].CloseWrite())
		})
	}
	writes.Wait()
	reads.Wait()
	return got
}

func payload(k, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(k*31 + i)
	}
	return b
}

// serialise is the time n bytes (and one header byte) of stream data take
// at mbps.
func serialise(n, mbps int) time.Duration {
	return time.Duration(float64(wireBytes(n+1)) * 8e3 / float64(mbps))
}

// span is where a transfer's finish must fall.
type span struct{ lo, hi time.Duration }

// near is w give or take 3 ms: one chunk's time at each link is the
// model's grain.
func near(w time.Duration) span { return span{w - 3*time.Millisecond, w + 3*time.Millisecond} }

func TestFlowsShareTheUplink_synctest(t *testing.T) {
	const mib = 1 << 20
	ms := time.Millisecond
	// At 5 Mbps a chunk takes 6.76 ms: long enough to tell one chunk's
	// wait from a round's.
	chunk5 := serialise(chunkSize-1, 5)
	tests := []struct {
		name string
		// up is node 0's uplink in Mbps (every other link is home).
		up        int
		transfers []transfer
		// want is each transfer's finish: serialisation at the bottleneck
		// share plus the latency.
		want []span
	}{
		{"one flow runs at the uplink rate", 50,
			[]transfer{{0, 1, mib, 0}},
			[]span{near(serialise(mib, 50) + 25*ms)}},
		{"two flows from one sender share its uplink", 50,
			[]transfer{{0, 1, mib, 0}, {0, 2, mib, 0}},
			[]span{near(2*serialise(mib, 50) + 25*ms), near(2*serialise(mib, 50) + 25*ms)}},
		// Three bulk flows have each had their first chunk (new flows go
		// first, in turn) and are in their round when a small write
		// arrives at 25 ms: it waits for the chunk in service, not for
		// the round (FQ-CoDel's new-flow rule; without it, 15.6 ms after
		// arriving).
		{"a connection that turns busy goes first", 5,
			[]transfer{{0, 1, 64 << 10, 0}, {0, 2, 64 << 10, 0}, {0, 3, 64 << 10, 0}, {0, 4, 200, 25 * ms}},
			[]span{{0, time.Hour}, {0, time.Hour}, {0, time.Hour},
				{25*ms + serialise(200, 5) + 25*ms, 25*ms + chunk5 + serialise(200, 5) + 25*ms + ms}}},
		// Each sender's 50 Mbps feeds a chunk faster than the share the
		// 100 Mbps downlink gives it, yet its queue empties between
		// chunks at first; were such a flow new each time (RFC 8290's
		// rule), the last would get its whole uplink and finish at 200 ms.
		{"three senders into one downlink share it", 50,
			[]transfer{{1, 0, mib, 0}, {2, 0, mib, 0}, {3, 0, mib, 0}},
			[]span{near(3*serialise(mib, 100) + 25*ms), near(3*serialise(mib, 100) + 25*ms), near(3*serialise(mib, 100) + 25*ms)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				home := netmodel.Rates{UpMbps: 50, DownMbps: 100}
				rates := []netmodel.Rates{{UpMbps: tt.up, DownMbps: 100}, home, home, home, home}
				edges := []netmodel.Edge{{A: 0, B: 1}, {A: 0, B: 2}, {A: 0, B: 3}, {A: 0, B: 4}}
				got := run(t, rates, edges, 25*time.Millisecond, tt.transfers)
				for k, w := range tt.want {
					if got[k] < w.lo || got[k] > w.hi {
						t.Errorf("transfer %d: finished at %v, want %v..%v", k, got[k], w.lo, w.hi)
					}
				}
			})
		})
	}
}

// TestNegotiationTakesALatency_synctest: a stream's protocol request travels the
// links, so a peer whose handler appears a moment after the request was
// sent still accepts it (gossipsub routers that start together rely on
// this), and the stream's first byte arrives no earlier than the latency.
func TestNegotiationTakesALatency_synctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pair(t, netmodel.Rates{UpMbps: 50, DownMbps: 100}, Options{})
		ctx := context.Background()
		begin := time.Now()
		opened := make(chan error, 1)
		go func() {
			s, err := a.NewStream(ctx, b.ID(), testProto)
			if err == nil {
				require.Equal(t, protocol.ID(testProto), s.Protocol())
			}
			opened <- err
		}()
		time.Sleep(time.Millisecond)
		got := make(chan time.Duration, 1)
		b.SetStreamHandler(testProto, func(s network.Stream) { got <- time.Since(begin); _ = s.Close() })
		require.NoError(t, <-opened)
		require.GreaterOrEqual(t, <-got, 25*time.Millisecond)
	})
}

// pair starts a two-node network, node 0 on up and node 1 on a home link,
// 25 ms apart, and connects them; it closes when t ends.
func pair(t *testing.T, up netmodel.Rates, opts Options) (a, b host.Host) {
	t.Helper()
	lat, err := netmodel.NewLatency(netmodel.LatencyUniform, 2, 1, 25*time.Millisecond)
	require.NoError(t, err)
	n, err := New([]netmodel.Rates{up, {UpMbps: 50, DownMbps: 100}}, lat, []netmodel.Edge{{A: 0, B: 1}}, opts)
	require.NoError(t, err)
	n.Start()
	t.Cleanup(func() { _ = n.Close() })
	a, b = n.Hosts()[0], n.Hosts()[1]
	require.NoError(t, a.Connect(context.Background(), peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}))
	return a, b
}

func TestNewRejectsAZeroLink(t *testing.T) {
	lat, err := netmodel.NewLatency(netmodel.LatencyUniform, 2, 1, time.Millisecond)
	require.NoError(t, err)
	_, err = New([]netmodel.Rates{{UpMbps: 50, DownMbps: 100}, {UpMbps: 0, DownMbps: 100}}, lat, nil, Options{})
	require.ErrorContains(t, err, "node 1 has rates 0/100 Mbps")
}

// TestFlowBucketsShareAQueue_synctest: with FlowBuckets, connections that
// hash to one bucket of a link share its queue and its turn, first come
// first served, as in simnet's FQ-CoDel; a queue per peer shares the link
// equally.
func TestFlowBucketsShareAQueue_synctest(t *testing.T) {
	const mib = 1 << 20
	// A seed under which node 0's uplink puts peers 1 and 2 in one
	// bucket and peer 3 in another.
	seed := int64(0)
	for ; ; seed++ {
		b := func(peer int) int { return seeds.FlowBucket(seed, 0, true, peer, 128) }
		if b(1) == b(2) && b(1) != b(3) {
			break
		}
	}
	s := serialise(mib, 50)
	lat := 25 * time.Millisecond
	transfers := []transfer{{0, 1, mib, 0}, {0, 2, mib, time.Millisecond}, {0, 3, mib, 0}}
	for _, tt := range []struct {
		name string
		opts Options
		want []span
	}{
		{"a queue per peer", Options{}, []span{near(3*s + lat), near(3*s + lat), near(3*s + lat)}},
		// The bucket of peers 1 and 2 and peer 3's take turns: peer 3 and
		// peer 1, first in its bucket, finish when two transfers have
		// left; peer 2 last.
		{"128 buckets", Options{FlowBuckets: 128, Seed: seed}, []span{near(2*s + lat), near(3*s + lat), near(2*s + lat)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				home := netmodel.Rates{UpMbps: 50, DownMbps: 100}
				rates := []netmodel.Rates{home, home, home, home}
				edges := []netmodel.Edge{{A: 0, B: 1}, {A: 0, B: 2}, {A: 0, B: 3}}
				got := runWith(t, tt.opts, rates, edges, lat, transfers)
				for k, w := range tt.want {
					if got[k] < w.lo || got[k] > w.hi {
						t.Errorf("transfer %d: finished at %v, want %v..%v", k, got[k], w.lo, w.hi)
					}
				}
			})
		})
	}
}

// TestDropsArriveInOrder_synctest: with Drops, CoDel drops chunks of a
// standing queue; every dropped chunk is sent again and every stream still
// reads its bytes whole and in order, later than when the same queue is
// only marked (the lost chunk's round trip and the chunks held behind it).
func TestDropsArriveInOrder_synctest(t *testing.T) {
	const mib = 1 << 20
	transfers := []transfer{{0, 1, mib, 0}, {0, 2, mib, 0}, {0, 3, mib, 0}}
	home := netmodel.Rates{UpMbps: 50, DownMbps: 100}
	rates := []netmodel.Rates{{UpMbps: 5, DownMbps: 100}, home, home, home}
	edges := []netmodel.Edge{{A: 0, B: 1}, {A: 0, B: 2}, {A: 0, B: 3}}
	finish := map[bool][]time.Duration{}
	for _, drops := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			opts := Options{Congestion: true, CoDelAnyBacklog: true, Drops: drops}
			losses := 0
			finish[drops] = runInspect(t, opts, rates, edges, 25*time.Millisecond, transfers, func(n *Network) {
				n.winMu.Lock()
				defer n.winMu.Unlock()
				for _, w := range n.windows {
					w.mu.Lock()
					losses += w.losses
					require.Empty(t, w.unseen, "a drop never found lost")
					w.mu.Unlock()
				}
			})
			t.Logf("drops %v: %d losses, finishes %v", drops, losses, finish[drops])
			if drops {
				require.Positive(t, losses, "no chunk was dropped")
			} else {
				require.Zero(t, losses)
			}
		})
	}
	last := func(d []time.Duration) time.Duration { return slices.Max(d) }
	require.Greater(t, last(finish[true]), last(finish[false]))
}

// TestPackedWritesReturnInFlight_synctest: with PackedWrites a write that
// fits the window returns at once, before its bytes have left the uplink,
// and the writer may reuse its buffer: the reader still gets what was
// written. Without it the write returns once its last chunk has left.
func TestPackedWritesReturnInFlight_synctest(t *testing.T) {
	const size = 16 << 10 // inside the initial window
	for _, tt := range []struct {
		name   string
		packed bool
		want   span
	}{
		{"a write returns once it has left the uplink", false, near(serialise(size-1, 5))},
		{"a packed write returns once in flight", true, span{0, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := pair(t, netmodel.Rates{UpMbps: 5, DownMbps: 100}, Options{Congestion: true, PackedWrites: tt.packed})
				ctx := context.Background()
				got := make(chan []byte, 1)
				b.SetStreamHandler(testProto, func(s network.Stream) {
					data, err := io.ReadAll(s)
					require.NoError(t, err)
					got <- data
				})
				s, err := a.NewStream(ctx, b.ID(), testProto)
				require.NoError(t, err)
				synctest.Wait()
				buf := payload(1, size)
				begin := time.Now()
				_, err = s.Write(buf)
				require.NoError(t, err)
				returned := time.Since(begin)
				require.True(t, returned >= tt.want.lo && returned <= tt.want.hi, "write returned after %v, want %v..%v", returned, tt.want.lo, tt.want.hi)
				clear(buf) // the writer reuses its buffer
				require.NoError(t, s.Close())
				require.True(t, bytes.Equal(payload(1, size), <-got), "the bytes arrived changed")
			})
		})
	}
}
