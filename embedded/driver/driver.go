package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/x/simlibp2p"

	"github.com/segdiff/segdiff/devnet"
	"github.com/segdiff/segdiff/eip8411"
)

// Simulate builds the network cfg describes and diffuses cfg.Payloads
// payloads over it, all inside a testing/synctest bubble: every host,
// connection and timer runs on the bubble's virtual clock, so the result
// depends on the simulated links and latencies, not on how fast the machine
// is. Progress lines go to progress (nil: none). The error is returned after
// the bubble has exited; t is only used to create the bubble.
func Simulate(t *testing.T, cfg Config, progress io.Writer) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if progress == nil {
		progress = io.Discard
	}
	var (
		res *Result
		err error
	)
	// The seed also fixes the global math/rand that go-libp2p-pubsub draws
	// its peer shuffles from. Host keys stay random (simlibp2p draws them
	// from crypto/rand, and testing/cryptotest refuses non-test binaries),
	// and goroutine scheduling and map order vary, so a run is reproducible
	// in distribution, not bit for bit.
	if !seedGlobalRand(cfg.Seed) {
		fmt.Fprintln(progress, "warning: math/rand's global source ignores Seed in this binary (needs //go:debug randseednop=0); pubsub's shuffles are not seeded")
	}
	synctest.Test(t, func(*testing.T) {
		res, err = simulate(cfg, progress)
	})
	return res, err
}

// ErrMeshNotFormed is returned (wrapped) when a node still has no mesh peer
// on the payload topic when MeshSettleTimeout ends. Before the routers were
// started after the dials (see README) small dense networks hit it
// intermittently; a fresh run usually succeeds.
var ErrMeshNotFormed = errors.New("gossipsub mesh did not form")

// run is the state one simulation shares between its nodes. The builder
// registers whole-mode message ids before publishing them; tracers read
// them concurrently.
type run struct {
	cfg      Config
	nodes    []*node
	wholeIDs sync.Map // message id → slot (whole mode)
	deferred []atomic.Int64

	mu        sync.Mutex
	completed map[uint64][]time.Time // slot → per node
}

func (r *run) payloadTopic() string {
	if r.cfg.Mode == devnet.ModeWhole {
		return topicWhole
	}
	return topicSegment
}

func (r *run) wholeIDSlot(id string) (uint64, bool) {
	v, ok := r.wholeIDs.Load(id)
	if !ok {
		return 0, false
	}
	return v.(uint64), true
}

func (r *run) noteDeferred(i int) { r.deferred[i].Add(1) }

func (r *run) noteCompleted(slot uint64, i int, t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.completed[slot]
	if !ok {
		c = make([]time.Time, len(r.nodes))
		r.completed[slot] = c
	}
	if c[i].IsZero() {
		c[i] = t
	}
}

func (r *run) doneCount(slot uint64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, t := range r.completed[slot] {
		if !t.IsZero() {
			n++
		}
	}
	return n
}

// payload is one slot's prepared payload.
type payload struct {
	slot     uint64
	proposer int
	group    *eip8411.Group
	blk      block
	msgs     [][]byte // gossip data: K segments, or one envelope
}

func preparePayloads(c Config) ([]payload, error) {
	rng := rand.New(rand.NewPCG(uint64(c.Seed), 0x5eed))
	out := make([]payload, c.Payloads)
	for i := range out {
		slot := uint64(i + 1)
		body, err := eip8411.SyntheticBody(rand.New(rand.NewPCG(uint64(c.Seed)*1000003, slot)), c.PayloadSize)
		if err != nil {
			return nil, fmt.Errorf("prepare payload %d: %w", slot, err)
		}
		g, err := eip8411.NewGroup(body, eip8411.WithSegmentSize(c.SegmentSize))
		if err != nil {
			return nil, fmt.Errorf("prepare payload %d: %w", slot, err)
		}
		// The proposer rotates over the non-builder nodes.
		proposer := 1 + rng.IntN(c.Nodes-1)
		b := block{Slot: slot, Proposer: uint32(proposer), Descriptor: g.Descriptor()}
		p := payload{slot: slot, proposer: proposer, group: g, blk: b}
		if c.Mode == devnet.ModeWhole {
			p.msgs = [][]byte{encodeEnvelope(slot, b.root(), g.Compressed())}
		} else if p.msgs, err = g.EncodedSegments(slot, b.root()); err != nil {
			return nil, fmt.Errorf("prepare payload %d: %w", slot, err)
		}
		out[i] = p
	}
	return out, nil
}

// simulate runs inside the bubble.
func simulate(cfg Config, progress io.Writer) (*Result, error) {
	payloads, err := preparePayloads(cfg)
	if err != nil {
		return nil, err
	}
	degree := cfg.effectiveDegree()
	edges, err := RandomRegular(cfg.Nodes, degree, cfg.Seed)
	if err != nil {
		return nil, err
	}
	lat := newLatencyModel(cfg)
	classes := cfg.linkClasses()
	groups, err := cfg.linkGroups(classes)
	if err != nil {
		return nil, err
	}
	net, meta, err := simlibp2p.SimpleLibp2pNetwork(groups, lat.packetLatency, simlibp2p.NetworkSettings{UseBlankHost: true})
	if err != nil {
		return nil, fmt.Errorf("build simulated network: %w", err)
	}
	net.Start()
	start, wallStart := time.Now(), wallNow()
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{cfg: cfg, completed: map[uint64][]time.Time{}, deferred: make([]atomic.Int64, cfg.Nodes)}
	defer func() {
		// Teardown inside the bubble: stop pubsub, close hosts, then let
		// pubsub's untracked retry goroutines (≤ 1 s) exit before the
		// network goes.
		cancel()
		for _, n := range r.nodes {
			n.host.Close()
		}
		time.Sleep(1001 * time.Millisecond)
		net.Close()
	}()
	for i, h := range meta.Nodes {
		d := cfg.InstallDelay
		if o, ok := cfg.InstallDelayOverrides[i]; ok {
			d = o
		}
		r.nodes = append(r.nodes, &node{idx: i, run: r, host: h, installDelay: d, slots: map[uint64]*nodeSlot{}})
	}
	fmt.Fprintf(progress, "network: %d nodes, %d edges (degree %d), mode %s, seed %d\n", cfg.Nodes, len(edges), degree, cfg.Mode, cfg.Seed)
	if err := connect(ctx, r.nodes, edges); err != nil {
		return nil, err
	}
	// Routers start once every connection is up (and identified): a router
	// created before the dials lost whole groups of peers' streams in small
	// networks; created after, it adopts the existing connections.
	time.Sleep(time.Second)
	routersStart := time.Now()
	for _, n := range r.nodes {
		if err := n.start(ctx); err != nil {
			return nil, err
		}
	}
	for _, n := range r.nodes {
		if err := n.join(ctx); err != nil {
			return nil, err
		}
	}
	if err := settleMesh(r, progress); err != nil {
		return nil, err
	}
	reportTopicPeers(r, degree, progress)
	setup, setupWall := time.Since(start), wallNow().Sub(wallStart)

	firstSlot := firstSlotStart(cfg, routersStart, time.Now())
	slotWall := make([]time.Duration, len(payloads))
	timing := devnet.Timing{Genesis: firstSlot.Add(-cfg.SlotDuration), SlotDuration: cfg.SlotDuration, PayloadDueBPS: cfg.PayloadDueBPS}
	reveals := make([]time.Time, len(payloads))
	var lastWall time.Time
	builder := r.nodes[0]
	for i, p := range payloads {
		slotStart := timing.SlotStart(p.slot)
		time.Sleep(time.Until(slotStart))
		w := wallNow()
		if i > 0 {
			slotWall[i-1] = w.Sub(lastWall)
		}
		lastWall = w
		if err := r.nodes[p.proposer].blockTopic.Publish(ctx, p.blk.encode()); err != nil {
			return nil, fmt.Errorf("slot %d: publish block: %w", p.slot, err)
		}
		time.Sleep(time.Until(slotStart.Add(cfg.RevealOffset)))
		reveals[i], err = reveal(ctx, r, builder, p)
		if err != nil {
			return nil, err
		}
		time.Sleep(time.Until(timing.PayloadDeadline(p.slot)))
		if i == len(payloads)-1 && cfg.HeapProfile != "" {
			if err := writeHeapProfile(cfg.HeapProfile); err != nil {
				return nil, err
			}
		}
		done := r.doneCount(p.slot)
		fmt.Fprintf(progress, "slot %d/%d: %d/%d nodes complete at the payload deadline (%.1f%%), %.0fs wall so far\n",
			p.slot, len(payloads), done, cfg.Nodes, 100*float64(done)/float64(cfg.Nodes), wallNow().Sub(wallStart).Seconds())
	}
	// Let the last slot run out so stragglers finish or time out.
	time.Sleep(time.Until(timing.SlotStart(uint64(len(payloads)) + 1)))
	slotWall[len(payloads)-1] = wallNow().Sub(lastWall)

	res := &Result{Config: cfg, Edges: len(edges), Timing: timing, Setup: setup, SetupWall: setupWall, SlotWall: slotWall}
	res.Nodes = nodeInfos(cfg, r, lat, classes, payloads)
	for i, p := range payloads {
		res.Slots = append(res.Slots, slotResult(r, p, reveals[i], i > 0, timing))
	}
	for i, n := range r.nodes {
		res.Registries = append(res.Registries, n.reg)
		res.Deferred = append(res.Deferred, r.deferred[i].Load())
	}
	return res, nil
}

// heartbeatPhaseSalt separates the reveal-phase draw from the seed's other
// streams.
const heartbeatPhaseSalt = 0x4842

// firstSlotStart picks when slot 1 starts: the first instant at or after now
// at which the reveal falls a seeded phase into the routers' heartbeat
// period. Every router starts its 700 ms heartbeat at the same instant, and
// where the reveal lands in that period decides when the first IHAVEs for
// the payload go out; tying it to how long the mesh took to settle made the
// same seed give medians tens of percent apart. Later slots move 100 ms
// through the period each (12 s mod 700 ms), as they would on a real chain.
func firstSlotStart(c Config, routersStart, now time.Time) time.Time {
	rng := rand.New(rand.NewPCG(uint64(c.Seed), heartbeatPhaseSalt))
	phase := time.Duration(rng.Int64N(int64(heartbeatInterval)))
	t := routersStart.Add(phase - c.RevealOffset)
	if t.Before(now) {
		k := (now.Sub(t) + heartbeatInterval - 1) / heartbeatInterval
		t = t.Add(k * heartbeatInterval)
	}
	return t
}

// connect dials every edge, the lower index dialling the higher, all at
// once (the prototype dialled sequentially, which only costs virtual time).
func connect(ctx context.Context, nodes []*node, edges []Edge) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(edges))
	for _, e := range edges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, b := nodes[e.A].host, nodes[e.B].host
			if err := a.Connect(ctx, peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}); err != nil {
				errs <- fmt.Errorf("connect node %d to node %d: %w", e.A, e.B, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// settleMesh waits 2.5 s (heartbeats land at 100, 800 and 1500 ms; the
// first precedes the subscriptions), then polls every 100 ms until every
// node's payload-topic mesh is within [Dlo, Dhi], for at most
// MeshSettleTimeout.
func settleMesh(r *run, progress io.Writer) error {
	dlo, dhi := r.cfg.meshBounds()
	time.Sleep(2500 * time.Millisecond)
	deadline := time.Now().Add(r.cfg.MeshSettleTimeout)
	for {
		bad := 0
		for _, n := range r.nodes {
			if m := n.tr.meshSize(); m < dlo || m > dhi {
				bad++
			}
		}
		if bad == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			// Small networks can leave a node below Dlo for good (its peers
			// are full and it sits out their prune backoffs); a mesh of
			// at least one peer still carries the payload, so only an empty
			// mesh is fatal.
			for _, n := range r.nodes {
				if n.tr.meshSize() == 0 {
					return fmt.Errorf("settle mesh: node %d has no mesh peer after %v (%d of %d nodes outside [%d, %d]): %w", n.idx, r.cfg.MeshSettleTimeout, bad, len(r.nodes), dlo, dhi, ErrMeshNotFormed)
				}
			}
			fmt.Fprintf(progress, "mesh: %d of %d nodes still outside [%d, %d] after %v; continuing\n", bad, len(r.nodes), dlo, dhi, r.cfg.MeshSettleTimeout)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// reveal publishes p from the builder and returns the reveal instant.
func reveal(ctx context.Context, r *run, builder *node, p payload) (time.Time, error) {
	if r.cfg.Mode == devnet.ModeWhole {
		r.wholeIDs.Store(contentID(topicWhole, p.msgs[0]), p.slot)
	}
	at := time.Now()
	builder.rec.Revealed(p.slot, at, p.group.RawSize(), p.group.CompressedSize(), len(p.msgs))
	r.noteCompleted(p.slot, 0, at)
	switch r.cfg.Mode {
	case devnet.ModeSegmentedBatch:
		var batch pubsub.MessageBatch
		for _, m := range p.msgs {
			if err := builder.payloadTopic.AddToBatch(ctx, &batch, m); err != nil {
				return at, fmt.Errorf("slot %d: batch segment: %w", p.slot, err)
			}
		}
		if err := builder.ps.PublishBatch(&batch); err != nil {
			return at, fmt.Errorf("slot %d: publish batch: %w", p.slot, err)
		}
	default:
		for _, m := range p.msgs {
			if err := builder.payloadTopic.Publish(ctx, m); err != nil {
				return at, fmt.Errorf("slot %d: publish payload: %w", p.slot, err)
			}
		}
	}
	return at, nil
}

func nodeInfos(c Config, r *run, lat *latencyModel, classes []devnet.LinkClass, payloads []payload) []NodeInfo {
	proposers := map[int]bool{}
	for _, p := range payloads {
		proposers[p.proposer] = true
	}
	out := make([]NodeInfo, len(r.nodes))
	for i, n := range r.nodes {
		info := NodeInfo{Index: i, ID: NodeID(i), PeerID: n.host.ID().String(), LinkClass: classes[i], Region: lat.region(i)}
		if i == 0 {
			info.Roles = append(info.Roles, devnet.RoleBuilder)
		} else {
			info.Validators = c.ValidatorsPerNode
		}
		if proposers[i] {
			info.Roles = append(info.Roles, devnet.RoleProposer)
		}
		if len(info.Roles) == 0 {
			info.Roles = []devnet.Role{devnet.RoleNode}
		}
		out[i] = info
	}
	return out
}

// slotResult collects one payload's outcome. The PTC votes: each committee
// position votes payload_present iff its validator's node held the verified
// payload by the payload deadline.
func slotResult(r *run, p payload, revealAt time.Time, warm bool, timing devnet.Timing) SlotResult {
	n := len(r.nodes)
	s := SlotResult{
		Slot: p.slot, Warm: warm, Proposer: p.proposer, Reveal: revealAt,
		RawSize: p.group.RawSize(), CompressedSize: p.group.CompressedSize(), Segments: len(p.msgs),
		Completion:   make([]time.Duration, n),
		DataBytes:    make([]int64, n),
		ControlBytes: make([]int64, n),
		SentBytes:    make([]int64, n),
		DroppedBytes: make([]int64, n),
		InstalledAt:  make([]time.Time, n),
		FirstSentAt:  make([]time.Time, n),
		IWantSent:    make([]int64, n),
	}
	r.mu.Lock()
	done := r.completed[p.slot]
	r.mu.Unlock()
	for i, nd := range r.nodes {
		s.Completion[i] = -1
		if done != nil && !done[i].IsZero() {
			s.Completion[i] = done[i].Sub(revealAt)
		}
		s.DataBytes[i], s.ControlBytes[i] = nd.tr.slotBytes(p.slot)
		s.SentBytes[i], s.DroppedBytes[i], s.FirstSentAt[i] = nd.tr.slotSent(p.slot)
		s.InstalledAt[i] = nd.installedAt(p.slot)
		s.IWantSent[i] = nd.tr.slotIWants(p.slot)
	}
	deadline := timing.PayloadDeadline(p.slot)
	vpn := r.cfg.ValidatorsPerNode
	committee := ptcCommittee(r.cfg.Seed, p.slot, (n-1)*vpn, r.cfg.PTCSize)
	votes := 0
	for _, v := range committee {
		i := 1 + v/vpn
		if done != nil && !done[i].IsZero() && !done[i].After(deadline) {
			votes++
		}
	}
	s.PTC = devnet.PTCVotes{Slot: p.slot, Size: r.cfg.PTCSize, PayloadPresent: votes, Source: "embedded"}
	return s
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write heap profile: %w", err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		return fmt.Errorf("write heap profile: %w", err)
	}
	return nil
}

// reportTopicPeers prints how many of its connections each node's router
// knows as payload-topic subscribers: with a healthy network every
// connection is one (min = degree).
func reportTopicPeers(r *run, degree int, progress io.Writer) {
	lo, sum := degree, 0
	for _, n := range r.nodes {
		k := len(n.ps.ListPeers(r.payloadTopic()))
		lo = min(lo, k)
		sum += k
	}
	fmt.Fprintf(progress, "pubsub: payload-topic peers per node min %d mean %.1f of %d connections\n", lo, float64(sum)/float64(len(r.nodes)), degree)
}
