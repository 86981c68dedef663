package flownet

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/stretchr/testify/require"

	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
)

const testProto = "/flownet-test/1"

// transfer is one write of size bytes from node from to node to.
type transfer struct{ from, to, size int }

// run builds a flows network of rates over edges with uniform one-way
// latency, makes the transfers at once, and returns when each one's last
// byte was read, from the start.
func run(t *testing.T, rates []netmodel.Rates, edges []netmodel.Edge, latency time.Duration, transfers []transfer) []time.Duration {
	t.Helper()
	lat, err := netmodel.NewLatency(netmodel.LatencyUniform, len(rates), 1, latency)
	require.NoError(t, err)
	n, err := New(rates, lat, edges)
	require.NoError(t, err)
	n.Start()
	defer n.Close()
	ctx := context.Background()
	hosts := n.Hosts()
	for _, e := range edges {
		require.NoError(t, hosts[e.A].Connect(ctx, peer.AddrInfo{ID: hosts[e.B].ID(), Addrs: hosts[e.B].Addrs()}))
	}
	got := make([]time.Duration, len(transfers))
	var reads sync.WaitGroup
	for _, h := range hosts {
		h.SetStreamHandler(testProto, func(s network.Stream) {
			defer reads.Done()
			var hdr [1]byte
			_, err := io.ReadFull(s, hdr[:])
			require.NoError(t, err)
			data, err := io.ReadAll(s)
			require.NoError(t, err)
			k := int(hdr[0])
			require.Equal(t, transfers[k].size, len(data))
			require.True(t, bytes.Equal(payload(k, len(data)), data), "transfer %d arrived changed", k)
			got[k] = time.Since(start)
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
			_, err := streams[k].Write(append([]byte{byte(k)}, payload(k, tr.size)...))
			require.NoError(t, err)
			require.NoError(t, streams[k].CloseWrite())
		})
	}
	writes.Wait()
	reads.Wait()
	return got
}

var start time.Time

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
	return time.Duration(float64(WireBytes(n+1)) * 8e3 / float64(mbps))
}

func TestFlowsShareTheUplink(t *testing.T) {
	home := netmodel.Rates{UpMbps: 50, DownMbps: 100}
	const mib = 1 << 20
	tests := []struct {
		name      string
		transfers []transfer
		// want is each transfer's ideal finish: serialisation at the
		// bottleneck share plus the latency.
		want []time.Duration
	}{
		{"one flow runs at the uplink rate",
			[]transfer{{0, 1, mib}},
			[]time.Duration{serialise(mib, 50) + 25*time.Millisecond}},
		{"two flows from one sender share its uplink",
			[]transfer{{0, 1, mib}, {0, 2, mib}},
			[]time.Duration{2*serialise(mib, 50) + 25*time.Millisecond, 2*serialise(mib, 50) + 25*time.Millisecond}},
		{"a small write is not held behind a bulk flow",
			[]transfer{{0, 1, mib}, {0, 2, 200}},
			[]time.Duration{serialise(mib, 50) + 25*time.Millisecond, 25 * time.Millisecond}},
		{"three senders into one downlink share it",
			[]transfer{{1, 0, mib}, {2, 0, mib}, {3, 0, mib}},
			[]time.Duration{3*serialise(mib, 100) + 25*time.Millisecond, 3*serialise(mib, 100) + 25*time.Millisecond, 3*serialise(mib, 100) + 25*time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rates := []netmodel.Rates{home, home, home, home}
				edges := []netmodel.Edge{{A: 0, B: 1}, {A: 0, B: 2}, {A: 0, B: 3}}
				got := run(t, rates, edges, 25*time.Millisecond, tt.transfers)
				for k, w := range tt.want {
					// One chunk's time at each link is the model's grain.
					require.InDelta(t, w.Seconds(), got[k].Seconds(), 0.003, "transfer %d: got %v, want %v", k, got[k], w)
				}
			})
		})
	}
}

// TestNegotiationTakesALatency: a stream's protocol request travels the
// links, so a peer whose handler appears a moment after the request was
// sent still accepts it (gossipsub routers that start together rely on
// this), and the stream's first byte arrives no earlier than the latency.
func TestNegotiationTakesALatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := netmodel.Rates{UpMbps: 50, DownMbps: 100}
		lat, err := netmodel.NewLatency(netmodel.LatencyUniform, 2, 1, 25*time.Millisecond)
		require.NoError(t, err)
		n, err := New([]netmodel.Rates{home, home}, lat, []netmodel.Edge{{A: 0, B: 1}})
		require.NoError(t, err)
		n.Start()
		defer n.Close()
		ctx := context.Background()
		a, b := n.Hosts()[0], n.Hosts()[1]
		require.NoError(t, a.Connect(ctx, peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}))
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

func TestNewRejectsAZeroLink(t *testing.T) {
	lat, err := netmodel.NewLatency(netmodel.LatencyUniform, 2, 1, time.Millisecond)
	require.NoError(t, err)
	_, err = New([]netmodel.Rates{{UpMbps: 50, DownMbps: 100}, {UpMbps: 0, DownMbps: 100}}, lat, nil)
	require.ErrorContains(t, err, "node 1 has rates 0/100 Mbps")
}
