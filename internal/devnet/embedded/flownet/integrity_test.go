package flownet

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/stretchr/testify/require"

	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
)

// TestStreamsArriveWhole_synctest: every model's streams deliver what was
// written, whole and in order, while many writers share uplinks, windows
// and buckets and each reuses its buffer as soon as a write returns (as
// gossipsub's writer does with its pooled buffer).
//
// The windows' defect this guards against (two goroutines letting chunks
// in at one instant and queueing them in the other order) needs goroutines
// that run in parallel: the test runs with at least 4 Ps, and fails within
// a few runs on the defect.
func TestStreamsArriveWhole_synctest(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0))))
	for _, tt := range []struct {
		name string
		opts Options
	}{
		{"flows", Options{}},
		{"flows-cc", Options{Congestion: true}},
		{"flows-cc-simnet-fq", Options{Congestion: true, CoDelAnyBacklog: true, FlowBuckets: 4, Seed: 7}},
		{"flows-cc-simnet-drops", Options{Congestion: true, CoDelAnyBacklog: true, FlowBuckets: 4, Seed: 7, Drops: true}},
		{"flows-cc-simnet-fq-packed", Options{Congestion: true, CoDelAnyBacklog: true, FlowBuckets: 4, Seed: 7, PackedWrites: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { streamsArriveWhole(t, tt.opts) })
		})
	}
}

func streamsArriveWhole(t *testing.T, opts Options) {
	const (
		nodes    = 5
		messages = 150
		maxSize  = 96 << 10
	)
	rates := make([]netmodel.Rates, nodes)
	for i := range rates {
		rates[i] = netmodel.Rates{UpMbps: 20 + 40*i, DownMbps: 100}
	}
	var edges []netmodel.Edge
	for a := range nodes {
		for b := a + 1; b < nodes; b++ {
			edges = append(edges, netmodel.Edge{A: a, B: b})
		}
	}
	lat, err := netmodel.NewLatency(netmodel.LatencyUniform, nodes, 1, 10*time.Millisecond)
	require.NoError(t, err)
	n, err := New(rates, lat, edges, opts)
	require.NoError(t, err)
	n.Start()
	defer n.Close()
	ctx := context.Background()
	hosts := n.Hosts()
	for _, e := range edges {
		require.NoError(t, hosts[e.A].Connect(ctx, peer.AddrInfo{ID: hosts[e.B].ID(), Addrs: hosts[e.B].Addrs()}))
	}
	var reads sync.WaitGroup
	errs := make(chan error, 4*nodes*nodes)
	for _, h := range hosts {
		h.SetStreamHandler(testProto, func(s network.Stream) {
			defer reads.Done()
			errs <- readMessages(s, messages)
		})
	}
	var writes sync.WaitGroup
	for from := range nodes {
		for to := range nodes {
			if from == to {
				continue
			}
			// Two streams a direction: they share the connection's window.
			for k := range 2 {
				s, err := hosts[from].NewStream(ctx, hosts[to].ID(), testProto)
				require.NoError(t, err)
				reads.Add(1)
				seed := uint64(from*100 + to*10 + k)
				writes.Go(func() { errs <- writeMessages(s, seed, messages, maxSize) })
			}
		}
	}
	writes.Wait()
	reads.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, n.Check())
}

// writeMessages writes count framed messages of random sizes from one
// buffer, scribbling over it after every write.
func writeMessages(s network.Stream, seed uint64, count, maxSize int) error {
	r := rand.New(rand.NewPCG(seed, 1))
	buf := make([]byte, 0, 8+maxSize)
	for m := range count {
		// Mostly small writes back to back, as a router's control and
		// forwarding traffic is: a write the window lets in at an
		// acknowledgement wakes its writer while the acknowledgement is
		// still letting chunks in.
		size := 1 + r.IntN(2000)
		if r.IntN(4) == 0 {
			size = 1 + r.IntN(maxSize)
		}
		buf = binary.BigEndian.AppendUint64(buf[:0], seed<<32|uint64(m)<<20|uint64(size))
		for i := range size {
			buf = append(buf, byte(int(seed)+m*7+i))
		}
		if _, err := s.Write(buf); err != nil {
			return fmt.Errorf("stream %d message %d: %w", seed, m, err)
		}
		for i := range buf {
			buf[i] = 0xee
		}
		if r.IntN(16) == 0 {
			time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond)
		}
	}
	return s.CloseWrite()
}

// readMessages reads count messages and checks each one's frame and bytes.
func readMessages(s network.Stream, count int) error {
	defer s.Close()
	var hdr [8]byte
	var seed uint64
	for m := range count {
		if _, err := io.ReadFull(s, hdr[:]); err != nil {
			return fmt.Errorf("message %d header: %w", m, err)
		}
		h := binary.BigEndian.Uint64(hdr[:])
		if m == 0 {
			seed = h >> 32
		}
		size := int(h & (1<<20 - 1))
		if h>>32 != seed || int(h>>20&0xfff) != m || size == 0 {
			return fmt.Errorf("stream %d message %d: header %x", seed, m, h)
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(s, data); err != nil {
			return fmt.Errorf("stream %d message %d: %w", seed, m, err)
		}
		for i, b := range data {
			if b != byte(int(seed)+m*7+i) {
				return fmt.Errorf("stream %d message %d: byte %d of %d is %#x, want %#x", seed, m, i, size, b, byte(int(seed)+m*7+i))
			}
		}
	}
	rest, err := io.ReadAll(s)
	if err != nil || len(rest) > 0 {
		return fmt.Errorf("stream %d: %d bytes after the last message (%v)", seed, len(rest), err)
	}
	return nil
}

// TestCheckNamesDisorder_synctest: a chunk that reaches its stream ahead
// of one written before it is counted, and Check names the defect; in
// order, Check is clean.
func TestCheckNamesDisorder_synctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lat, err := netmodel.NewLatency(netmodel.LatencyUniform, 2, 1, time.Millisecond)
		require.NoError(t, err)
		home := netmodel.Rates{UpMbps: 50, DownMbps: 100}
		n, err := New([]netmodel.Rates{home, home}, lat, []netmodel.Edge{{A: 0, B: 1}}, Options{})
		require.NoError(t, err)
		n.Start()
		defer n.Close()
		a, b := n.Hosts()[0], n.Hosts()[1]
		require.NoError(t, a.Connect(context.Background(), peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}))
		b.SetStreamHandler(testProto, func(s network.Stream) { _, _ = io.Copy(io.Discard, s) })
		raw, err := a.NewStream(context.Background(), b.ID(), testProto)
		require.NoError(t, err)
		s := raw.(*stream)
		synctest.Wait()
		next := s.wseq
		deliver := func(k uint64, data string) {
			c := chunk{s: s, sseq: next + k, data: []byte(data)}
			c.release() // into a buffer of its own, as a chunk that left the uplink
			n.deliver(c)
		}
		deliver(0, "first")
		require.NoError(t, n.Check())
		deliver(2, "third")
		deliver(1, "second")
		require.ErrorContains(t, n.Check(), "flows network: 2 chunks reached their stream out of the order they were written in")
	})
}
