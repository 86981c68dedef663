package watch_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/segdiff/segdiff/internal/beacon"
	"github.com/segdiff/segdiff/internal/beacon/beacontest"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/watch"
	"github.com/segdiff/segdiff/metrics"
)

const (
	slotDur   = 300 * time.Millisecond
	slots     = 4
	slotBytes = 700_000
)

// offsets are each node's event times into a slot.
type offsets struct{ gossip, available time.Duration }

var timings = map[string]offsets{
	"b00": {50 * time.Millisecond, 60 * time.Millisecond},
	"n01": {100 * time.Millisecond, 150 * time.Millisecond},
	"n02": {120 * time.Millisecond, 170 * time.Millisecond},
}

func events(o offsets) []beacontest.Event {
	var out []beacontest.Event
	for s := uint64(1); s <= slots; s++ {
		start := time.Duration(s) * slotDur
		out = append(out,
			beacontest.Event{Topic: metrics.TopicBlockGossip, Slot: s, At: start + 20*time.Millisecond},
			beacontest.Event{Topic: metrics.TopicBlock, Slot: s, At: start + 30*time.Millisecond},
			beacontest.Event{Topic: metrics.TopicPayloadGossip, Slot: s, At: start + o.gossip},
			beacontest.Event{Topic: metrics.TopicPayloadAvailable, Slot: s, At: start + o.available})
	}
	return out
}

// counter serves metrics.TopicBytesSeries growing by slotBytes 150 ms into
// every slot, and metrics.ReceiveBlockSeries counting one block of
// installMs(slot) ms 30 ms into every slot (when the block event comes).
func counter(clock *beacontest.Clock) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n, blocks, ms := 0, 0, 0
		for s := 1; s <= slots+2; s++ {
			since := time.Since(clock.Genesis())
			if since >= time.Duration(s)*slotDur+150*time.Millisecond {
				n++
			}
			if since >= time.Duration(s)*slotDur+30*time.Millisecond {
				blocks++
				ms += installMs(uint64(s))
			}
		}
		fmt.Fprintf(w, "# TYPE %s counter\n%s{is_partial=\"false\",topic=\"/eth2/00000000/execution_payload/ssz_snappy\"} %d\n",
			metrics.TopicBytesSeries, metrics.TopicBytesSeries, n*slotBytes)
		fmt.Fprintf(w, "# TYPE %s summary\n%s_sum %d\n%s_count %d\n", metrics.ReceiveBlockSeries, metrics.ReceiveBlockSeries, ms, metrics.ReceiveBlockSeries, blocks)
	})
}

// installMs is the ReceiveBlock time of slot's block on n01.
func installMs(slot uint64) int { return 10 + int(slot) }

type sizer struct{}

func (sizer) PayloadSize(_ context.Context, slot uint64) (beacon.PayloadSize, error) {
	return beacon.PayloadSize{Raw: 1 << 20, Compressed: 700_000 + int(slot)}, nil
}

// TestWatch runs a fake network in a synctest bubble: builder b00; n01
// with a per-topic byte counter; n02, whose stream drops once in slot 2
// while it reports the payload gossip-valid; n03, whose stream is up but
// never emits; n04 without a beacon API. Every reading is checked against
// the schedule. On the wall clock a loaded machine delayed receipts past
// any tolerance (slot 2 available at 781 ms, want 750 ms +0..25 ms); in
// the bubble's virtual time an event is received in the instant the fake
// emits it, so every time must equal the schedule's exactly.
func TestWatch(t *testing.T) {
	synctest.Test(t, testWatch)
}

func testWatch(t *testing.T) {
	memnet := newMemNet(t)
	clock := &beacontest.Clock{Lead: 200 * time.Millisecond}
	chain := beacontest.NewChain(time.Time{})
	chain.Clock = clock
	var nodes []devnet.Node
	for _, id := range []string{"b00", "n01", "n02", "n03", "n04"} {
		n := devnet.Node{ID: id, Roles: []devnet.Role{devnet.RoleNode}, Client: "fake"}
		stream := &beacontest.Stream{Clock: clock}
		switch id {
		case "b00":
			n.Roles = []devnet.Role{devnet.RoleBuilder}
		case "n02":
			stream.DropAt = 2*slotDur + 110*time.Millisecond
		case "n01":
			n.MetricsURL = memnet.serve(t, id+".metrics", counter(clock)) + "/metrics"
		}
		if o, ok := timings[id]; ok {
			stream.Events = events(o)
		}
		if id != "n04" {
			n.BeaconURL = memnet.serve(t, id+".beacon", beacontest.Node(chain, stream))
		}
		nodes = append(nodes, n)
	}
	timing := devnet.Timing{Genesis: clock.Genesis(), SlotDuration: slotDur}
	w, err := watch.Start(context.Background(), nodes, timing, watch.WithStreamBackoff(20*time.Millisecond, 40*time.Millisecond),
		watch.WithSizer(sizer{}), watch.WithSettle(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.FirstSlot() != 1 {
		t.Fatalf("first measured slot %d, want 1 (the streams were up before genesis)", w.FirstSlot())
	}
	time.Sleep(time.Until(timing.SlotStart(slots + 2).Add(50 * time.Millisecond)))
	snaps, err := w.Snapshots(context.Background(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got time.Time, want time.Time) {
		t.Helper()
		if !got.Equal(want) {
			t.Errorf("%s at %v, want %v", what, got.Sub(timing.Genesis), want.Sub(timing.Genesis))
		}
	}
	for s := uint64(1); s <= slots; s++ {
		start := timing.SlotStart(s)
		b := snaps["b00"].Slot(s)
		if b == nil || !b.Has(metrics.NameRevealTimestamp) {
			t.Fatalf("slot %d: no reveal on the builder's record", s)
		}
		near(fmt.Sprintf("slot %d reveal", s), b.Reveal, start.Add(50*time.Millisecond))
		if b.CompressedSize != 700_000+s || b.RawSize != 1<<20 {
			t.Errorf("slot %d sizes %d / %d", s, b.RawSize, b.CompressedSize)
		}
		n1 := snaps["n01"].Slot(s)
		near(fmt.Sprintf("slot %d n01 available", s), n1.Completed, start.Add(150*time.Millisecond))
		near(fmt.Sprintf("slot %d n01 block", s), n1.BlockInstalled, start.Add(30*time.Millisecond))
		// n01 exports ReceiveBlock's summary: its arrival is the block
		// event less the block's install time, not its block_gossip event.
		if s < slots {
			near(fmt.Sprintf("slot %d n01 block arrival", s), n1.BlockArrival, start.Add(30*time.Millisecond-time.Duration(installMs(s))*time.Millisecond))
		}
		n2s := snaps["n02"].Slot(s)
		near(fmt.Sprintf("slot %d n02 block arrival (block_gossip)", s), n2s.BlockArrival, start.Add(20*time.Millisecond))
		if d, ok := n1.CompletionFrom(b.Reveal); !ok || d != 100*time.Millisecond {
			t.Errorf("slot %d n01 completion from the reveal %v, want 100ms", s, d)
		}
		if s < slots && (!n1.HasSeries(metrics.NameReceivedBytes+`{kind="data"}`) || n1.DataBytes != slotBytes) {
			t.Errorf("slot %d n01 payload-topic bytes %d, want %d", s, n1.DataBytes, slotBytes)
		}
	}
	// n02 lost slot 2's gossip report in the outage; slots 1 and 2 (whose
	// windows hold it) are gaps, the others are whole.
	n2 := snaps["n02"]
	if st := n2.Slot(2); st == nil || st.HasSeries(metrics.NamePayloadGossip) || !st.Has(metrics.NameCompletedTimestamp) {
		t.Errorf("n02 slot 2: %+v, want the gossip report lost and the availability received after the reconnect", st)
	}
	for s := uint64(1); s <= slots; s++ {
		gap := n2.Gaps[s]
		if wantGap := s <= 2; wantGap != (gap != "") || (wantGap && !strings.Contains(gap, "reconnected")) {
			t.Errorf("n02 slot %d gap %q", s, gap)
		}
	}
	if len(snaps["n03"].Slots) != 0 || len(snaps["n03"].Gaps) != 0 {
		t.Errorf("n03 (silent): slots %v gaps %v, want no readings and no gaps", snaps["n03"].Slots, snaps["n03"].Gaps)
	}
	if g := snaps["n04"].Gaps[3]; !strings.Contains(g, "never connected: the node has no beacon API") {
		t.Errorf("n04 slot 3 gap %q", g)
	}
	for _, id := range []string{"b00", "n02", "n03"} {
		if snaps[id].Slot(2) != nil && snaps[id].Slot(2).HasSeries(metrics.NameReceivedBytes+`{kind="data"}`) {
			t.Errorf("%s has payload bytes without a counter", id)
		}
	}
	if snaps["n01"].Origin != metrics.OriginStandardAPI {
		t.Errorf("origin %q", snaps["n01"].Origin)
	}
	if _, err := w.Snapshots(context.Background(), []devnet.Node{{ID: "n09"}}); err == nil || !strings.Contains(err.Error(), "node n09 is not watched") {
		t.Errorf("unwatched node: %v", err)
	}
}

// memNet is an in-memory network for TestWatch's bubble: a goroutine
// blocked on a loopback socket (httptest) is not durably blocked, so the
// bubble's clock would never advance. Each host is an http.Server whose
// connections are net.Pipe ends, which block on the bubble's channels.
// The watcher's HTTP clients have no transport of their own, so while the
// test runs http.DefaultTransport dials these hosts.
type memNet struct {
	mu    sync.Mutex
	hosts map[string]*pipeListener // by host:port
}

func newMemNet(t *testing.T) *memNet {
	m := &memNet{hosts: map[string]*pipeListener{}}
	tr := &http.Transport{DialContext: m.dial}
	saved := http.DefaultTransport
	http.DefaultTransport = tr
	t.Cleanup(func() {
		http.DefaultTransport = saved
		tr.CloseIdleConnections()
	})
	return m
}

// serve serves h at http://host until t's cleanup and returns that URL.
func (m *memNet) serve(t *testing.T, host string, h http.Handler) string {
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	m.mu.Lock()
	m.hosts[host+":80"] = l
	m.mu.Unlock()
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + host
}

func (m *memNet) dial(ctx context.Context, _, addr string) (net.Conn, error) {
	m.mu.Lock()
	l := m.hosts[addr]
	m.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("memnet: no host %s", addr)
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pipeListener hands a server the connections memNet dials.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

func TestStartRefuses(t *testing.T) {
	timing := devnet.Timing{Genesis: time.Now(), SlotDuration: time.Second}
	tests := []struct {
		name   string
		nodes  []devnet.Node
		timing devnet.Timing
		want   string
	}{
		{"no nodes", nil, timing, "watch: no nodes"},
		{"no slot clock", []devnet.Node{{ID: "a"}}, devnet.Timing{}, "has no genesis or slot duration"},
		{"a bad beacon URL", []devnet.Node{{ID: "a", BeaconURL: "localhost:1"}}, timing, "watch node a: event stream: beacon address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := watch.Start(context.Background(), tt.nodes, tt.timing); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}
