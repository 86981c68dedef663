// Package driver runs a planned embedded network: it builds the simulated
// links, creates a node per host, dials the topology, starts the routers,
// waits for the meshes to settle, then drives the slots (block, reveal,
// deadline) and collects what every node measured. It must run inside a
// testing/synctest bubble: every wait is on the virtual clock.
//
// The driver does not know the diffusion mode or which node is special:
// the plan names the builder, the proposers and every node's role, and the
// policy does the rest.
package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/x/simlibp2p"
	"golang.org/x/sync/errgroup"

	"github.com/segdiff/segdiff/diffusion"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/embedded/chain"
	"github.com/segdiff/segdiff/internal/devnet/embedded/flownet"
	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
	"github.com/segdiff/segdiff/internal/devnet/embedded/node"
	"github.com/segdiff/segdiff/internal/devnet/embedded/result"
	"github.com/segdiff/segdiff/internal/devnet/embedded/seeds"
)

// Plan is a network ready to run, resolved and seeded by the caller.
type Plan struct {
	// Label names the run in progress lines ("segmented seed 7").
	Label string
	Seed  int64
	Nodes []NodePlan
	// Builder is the index of the node that reveals every payload.
	Builder int
	Edges   []netmodel.Edge
	Latency *netmodel.Latency
	// NetModel is one of netmodel.Models.
	NetModel string
	Gossip   pubsub.GossipSubParams
	Policy   diffusion.Policy
	// Payloads ride slots 1..len(Payloads), one per slot.
	Payloads []Payload

	SlotDuration  time.Duration
	RevealOffset  time.Duration
	PayloadDueBPS uint64
	PTCSize       int
	// MeshSettleTimeout bounds the wait for every mesh to reach [Dlo, Dhi];
	// it must exceed gossipsub's PruneBackoff (1 min).
	MeshSettleTimeout time.Duration
	// HeapProfile, when set, receives a heap profile at the last payload's
	// deadline.
	HeapProfile string
}

// NodePlan is one node of the plan.
type NodePlan struct {
	Class devnet.LinkClass
	Rates netmodel.Rates
	// Role is how the node treats payload messages.
	Role diffusion.Role
	// InstallDelay is the node's block install delay.
	InstallDelay time.Duration
	// Validators is how many validators the node runs (PTC members are
	// drawn from every node's validators, in node order).
	Validators int
	// Loss is the share of deliveries and requests dropped on arrival.
	Loss node.Loss
}

// Payload is one slot's prepared payload and its block.
type Payload struct {
	Slot     uint64
	Proposer int
	Block    chain.Block
	Prepared *diffusion.Prepared
}

// ErrMeshNotFormed is returned (wrapped) when a node still has no mesh peer
// on the payload topic when MeshSettleTimeout ends. Before the routers were
// started after the dials small dense networks hit it intermittently; a
// fresh run usually succeeds.
var ErrMeshNotFormed = errors.New("gossipsub mesh did not form")

// collector is the run's node.Sink: completion times per slot and node,
// and deferred-message counts per node.
type collector struct {
	n        int
	deferred []atomic.Int64
	// honest marks the nodes network completion waits for: adversarial
	// nodes (withholders, silent, mute) may never complete, and the
	// design's accounting is over the honest network.
	honest []bool
	want   int
	// onAll is called once per slot, when the last honest node completes it.
	onAll func(slot uint64)

	mu        sync.Mutex
	completed map[uint64][]time.Time // slot → per node
	count     map[uint64]int
}

func newCollector(honest []bool) *collector {
	want := 0
	for _, h := range honest {
		if h {
			want++
		}
	}
	n := len(honest)
	return &collector{n: n, honest: honest, want: want, deferred: make([]atomic.Int64, n), completed: map[uint64][]time.Time{}, count: map[uint64]int{}}
}

func (c *collector) Deferred(i int) { c.deferred[i].Add(1) }

func (c *collector) Completed(i int, slot uint64, t time.Time) {
	c.mu.Lock()
	done, ok := c.completed[slot]
	if !ok {
		done = make([]time.Time, c.n)
		c.completed[slot] = done
	}
	all := false
	if done[i].IsZero() {
		done[i] = t
		if c.honest[i] {
			c.count[slot]++
			all = c.count[slot] == c.want
		}
	}
	c.mu.Unlock()
	if all && c.onAll != nil {
		c.onAll(slot)
	}
}

func (c *collector) doneCount(slot uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := 0
	for _, t := range c.completed[slot] {
		if !t.IsZero() {
			k++
		}
	}
	return k
}

func (c *collector) completions(slot uint64) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.completed[slot]...)
}

// Run runs plan inside the caller's synctest bubble and returns what it
// measured. Progress lines go to progress.
func Run(plan Plan, progress io.Writer) (*result.Run, error) {
	hosts, closeNet, checkNet, err := buildNetwork(plan)
	if err != nil {
		return nil, err
	}
	start, wallStart := time.Now(), wallNow()
	ctx, cancel := context.WithCancel(context.Background())
	honest := make([]bool, len(plan.Nodes))
	for i, n := range plan.Nodes {
		honest[i] = n.Role.Honest()
	}
	sink := newCollector(honest)
	var nodes []*node.Node
	// Bytes are also read at the instant the last node completes a slot:
	// the design's accounting counts what nodes received by network
	// completion, not the late duplicates after it.
	var atDoneMu sync.Mutex
	atDone := map[uint64][]node.Traffic{}
	sink.onAll = func(slot uint64) {
		snap := make([]node.Traffic, len(nodes))
		for i, n := range nodes {
			snap[i] = n.Traffic(slot)
			n.NetworkCompleted(slot)
		}
		atDoneMu.Lock()
		atDone[slot] = snap
		atDoneMu.Unlock()
	}
	defer func() {
		// Teardown inside the bubble: stop pubsub, close hosts, then let
		// pubsub's untracked retry goroutines (≤ 1 s) exit before the
		// network goes.
		cancel()
		for _, n := range nodes {
			n.Close()
		}
		time.Sleep(1001 * time.Millisecond)
		closeNet()
	}()
	peerRoles := map[peer.ID]diffusion.Role{}
	for i, h := range hosts {
		peerRoles[h.ID()] = plan.Nodes[i].Role
	}
	peerRole := func(p peer.ID) diffusion.Role {
		if r, ok := peerRoles[p]; ok {
			return r
		}
		return diffusion.Relay
	}
	parts := node.NewParts()
	for i, h := range hosts {
		np := plan.Nodes[i]
		spec := node.Spec{Index: i, Role: np.Role, InstallDelay: np.InstallDelay, Gossip: plan.Gossip,
			Loss: np.Loss, LossRand: seeds.Loss(plan.Seed, i), PeerRole: peerRole, UplinkMbps: np.Rates.UpMbps, Parts: parts}
		n, err := node.New(spec, h, plan.Policy, sink)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	degree := 0
	if len(nodes) > 0 {
		degree = 2 * len(plan.Edges) / len(nodes)
	}
	fmt.Fprintf(progress, "network: %d nodes, %d edges (degree %d), mode %s, seed %d, %s model\n", len(nodes), len(plan.Edges), degree, plan.Policy.Mode(), plan.Seed, plan.NetModel)
	if err := connect(ctx, nodes, plan.Edges); err != nil {
		return nil, err
	}
	// Routers start once every connection is up (and identified): a router
	// created before the dials lost whole groups of peers' streams in small
	// networks; created after, it adopts the existing connections.
	time.Sleep(time.Second)
	routersStart := time.Now()
	for _, n := range nodes {
		if err := n.Start(ctx); err != nil {
			return nil, err
		}
	}
	for _, n := range nodes {
		if err := n.Join(ctx); err != nil {
			return nil, err
		}
	}
	if err := settleMesh(plan, nodes, progress); err != nil {
		return nil, err
	}
	reportTopicPeers(nodes, degree, progress)
	setup, setupWall := time.Since(start), wallNow().Sub(wallStart)

	firstSlot := chain.FirstSlotStart(plan.Seed, plan.Gossip.HeartbeatInterval, plan.RevealOffset, routersStart, time.Now())
	timing := devnet.Timing{Genesis: firstSlot.Add(-plan.SlotDuration), SlotDuration: plan.SlotDuration, PayloadDueBPS: plan.PayloadDueBPS}
	slotWall := make([]time.Duration, len(plan.Payloads))
	reveals := make([]time.Time, len(plan.Payloads))
	var lastWall time.Time
	for i, p := range plan.Payloads {
		slotStart := timing.SlotStart(p.Slot)
		time.Sleep(time.Until(slotStart))
		w := wallNow()
		if i > 0 {
			slotWall[i-1] = w.Sub(lastWall)
		}
		lastWall = w
		if err := nodes[p.Proposer].PublishBlock(ctx, p.Block); err != nil {
			return nil, fmt.Errorf("slot %d: %w", p.Slot, err)
		}
		time.Sleep(time.Until(slotStart.Add(plan.RevealOffset)))
		if reveals[i], err = nodes[plan.Builder].Reveal(ctx, p.Prepared); err != nil {
			return nil, fmt.Errorf("slot %d: %w", p.Slot, err)
		}
		time.Sleep(time.Until(timing.PayloadDeadline(p.Slot)))
		if i == len(plan.Payloads)-1 {
			if plan.HeapProfile != "" {
				if err := writeHeapProfile(plan.HeapProfile); err != nil {
					return nil, err
				}
			}
			fmt.Fprintf(progress, "memory at the last payload deadline: %s\n", memoryNow(plan.HeapProfile != ""))
		}
		done := sink.doneCount(p.Slot)
		fmt.Fprintf(progress, "slot %d/%d: %d/%d nodes complete at the payload deadline (%.1f%%), %.0fs wall so far\n",
			p.Slot, len(plan.Payloads), done, len(nodes), 100*float64(done)/float64(len(nodes)), wallNow().Sub(wallStart).Seconds())
	}
	// Let the last slot run out so stragglers finish or time out.
	time.Sleep(time.Until(timing.SlotStart(uint64(len(plan.Payloads)) + 1)))
	slotWall[len(plan.Payloads)-1] = wallNow().Sub(lastWall)
	if err := checkNet(); err != nil {
		return nil, err
	}

	res := &result.Run{Builder: plan.Builder, Edges: len(plan.Edges), Timing: timing, Setup: setup, SetupWall: setupWall, SlotWall: slotWall}
	res.Nodes = nodeInfos(plan, nodes)
	for i, p := range plan.Payloads {
		atDoneMu.Lock()
		snap := atDone[p.Slot]
		atDoneMu.Unlock()
		res.Slots = append(res.Slots, slotResult(plan, nodes, sink, p, reveals[i], i > 0, timing, snap))
	}
	for i, n := range nodes {
		res.Registries = append(res.Registries, n.Registry())
		res.Deferred = append(res.Deferred, sink.deferred[i].Load())
	}
	return res, nil
}

// buildNetwork starts the plan's network model inside the bubble and
// returns its hosts in node order, how to close it, and how to check it
// for a defect of the model once the run is over.
func buildNetwork(plan Plan) ([]host.Host, func(), func() error, error) {
	rates := make([]netmodel.Rates, len(plan.Nodes))
	for i, n := range plan.Nodes {
		rates[i] = n.Rates
	}
	switch plan.NetModel {
	case netmodel.Packets:
		net, meta, err := simlibp2p.SimpleLibp2pNetwork(netmodel.Groups(rates), plan.Latency.PacketLatency, simlibp2p.NetworkSettings{UseBlankHost: true})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("build simulated network: %w", err)
		}
		net.Start()
		return meta.Nodes, net.Close, func() error { return nil }, nil
	case netmodel.Flows, netmodel.FlowsCC, netmodel.FlowsCCSimnet, netmodel.FlowsCCSimnetFQ, netmodel.FlowsCCSimnetDrops, netmodel.FlowsCCSimnetFQPacked:
		m := plan.NetModel
		bucketed := m == netmodel.FlowsCCSimnetFQ || m == netmodel.FlowsCCSimnetDrops || m == netmodel.FlowsCCSimnetFQPacked
		opts := flownet.Options{
			Congestion:      m != netmodel.Flows,
			CoDelAnyBacklog: m == netmodel.FlowsCCSimnet || bucketed,
			Drops:           m == netmodel.FlowsCCSimnetDrops,
			PackedWrites:    m == netmodel.FlowsCCSimnetFQPacked,
		}
		if bucketed {
			opts.FlowBuckets, opts.Seed = netmodel.FlowBuckets, plan.Seed
		}
		if opts.Congestion {
			// QLOGDIR, which has quic-go trace every connection on the
			// packet model, has the windows write the same subset of
			// events; it changes no figure.
			opts.QlogDir = os.Getenv("QLOGDIR")
		}
		net, err := flownet.New(rates, plan.Latency, plan.Edges, opts)
		if err != nil {
			return nil, nil, nil, err
		}
		net.Start()
		return net.Hosts(), func() { _ = net.Close() }, net.Check, nil
	}
	return nil, nil, nil, fmt.Errorf("network model %q, want one of %s", plan.NetModel, strings.Join(netmodel.Models, ", "))
}

// connect dials every edge, the lower index dialling the higher, all at
// once (the prototype dialled sequentially, which only costs virtual time).
func connect(ctx context.Context, nodes []*node.Node, edges []netmodel.Edge) error {
	var g errgroup.Group
	for _, e := range edges {
		g.Go(func() error {
			a, b := nodes[e.A].Host(), nodes[e.B].Host()
			if err := a.Connect(ctx, peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}); err != nil {
				return fmt.Errorf("connect node %d to node %d: %w", e.A, e.B, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// settleMesh waits 2.5 s (heartbeats land at 100, 800 and 1500 ms; the
// first precedes the subscriptions), then polls every 100 ms until every
// node's payload-topic mesh is within [Dlo, Dhi], for at most
// MeshSettleTimeout. Not poll.Until: its checks fall on the virtual clock
// at fixed instants every seeded run reproduces, and a passed deadline is
// no error unless a mesh is empty.
func settleMesh(plan Plan, nodes []*node.Node, progress io.Writer) error {
	dlo, dhi := plan.Gossip.Dlo, plan.Gossip.Dhi
	time.Sleep(2500 * time.Millisecond)
	deadline := time.Now().Add(plan.MeshSettleTimeout)
	for {
		bad := 0
		for _, n := range nodes {
			if m := n.MeshSize(); m < dlo || m > dhi {
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
			for i, n := range nodes {
				if n.MeshSize() == 0 {
					return fmt.Errorf("settle mesh: node %d has no mesh peer after %v (%d of %d nodes outside [%d, %d]): %w", i, plan.MeshSettleTimeout, bad, len(nodes), dlo, dhi, ErrMeshNotFormed)
				}
			}
			fmt.Fprintf(progress, "mesh: %d of %d nodes still outside [%d, %d] after %v; continuing\n", bad, len(nodes), dlo, dhi, plan.MeshSettleTimeout)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// reportTopicPeers prints how many of its connections each node's router
// knows as payload-topic subscribers: with a healthy network every
// connection is one (min = degree).
func reportTopicPeers(nodes []*node.Node, degree int, progress io.Writer) {
	lo, sum := degree, 0
	for _, n := range nodes {
		k := n.TopicPeers()
		lo = min(lo, k)
		sum += k
	}
	fmt.Fprintf(progress, "pubsub: payload-topic peers per node min %d mean %.1f of %d connections\n", lo, float64(sum)/float64(len(nodes)), degree)
}

func nodeInfos(plan Plan, nodes []*node.Node) []result.NodeInfo {
	proposers := map[int]bool{}
	for _, p := range plan.Payloads {
		proposers[p.Proposer] = true
	}
	out := make([]result.NodeInfo, len(nodes))
	for i, n := range nodes {
		np := plan.Nodes[i]
		info := result.NodeInfo{Index: i, ID: result.NodeID(i), PeerID: n.Host().ID().String(), LinkClass: np.Class,
			Region: plan.Latency.Region(i), Validators: np.Validators}
		if i == plan.Builder {
			info.Roles = append(info.Roles, devnet.RoleBuilder)
		}
		if !np.Role.Honest() {
			info.Roles = append(info.Roles, devnet.Role(np.Role.Name))
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
func slotResult(plan Plan, nodes []*node.Node, sink *collector, p Payload, revealAt time.Time, warm bool, timing devnet.Timing, atDone []node.Traffic) result.SlotResult {
	n := len(nodes)
	g := p.Prepared.Payload.Group
	s := result.SlotResult{
		Slot: p.Slot, Warm: warm, Proposer: p.Proposer, Builder: plan.Builder, Reveal: revealAt,
		RawSize: g.RawSize(), CompressedSize: g.CompressedSize(), Segments: len(p.Prepared.Messages),
		Completion:        make([]time.Duration, n),
		DataBytes:         make([]int64, n),
		ControlBytes:      make([]int64, n),
		SentBytes:         make([]int64, n),
		DroppedBytes:      make([]int64, n),
		InstalledAt:       make([]time.Time, n),
		FirstSentAt:       make([]time.Time, n),
		IWantSent:         make([]int64, n),
		NetworkCompletion: -1,
	}
	if sink.want < n {
		s.Honest = append([]bool(nil), sink.honest...)
	}
	done := sink.completions(p.Slot)
	if atDone != nil {
		s.DataBytesAtCompletion, s.ControlBytesAtCompletion = make([]int64, n), make([]int64, n)
		last := time.Time{}
		for i, tr := range atDone {
			s.DataBytesAtCompletion[i], s.ControlBytesAtCompletion[i] = tr.Data, tr.Control
			if sink.honest[i] && done[i].After(last) {
				last = done[i]
			}
		}
		s.NetworkCompletion = last.Sub(revealAt)
	}
	for i, nd := range nodes {
		s.Completion[i] = -1
		if done != nil && !done[i].IsZero() {
			s.Completion[i] = done[i].Sub(revealAt)
		}
		tr := nd.Traffic(p.Slot)
		s.DataBytes[i], s.ControlBytes[i] = tr.Data, tr.Control
		s.SentBytes[i], s.DroppedBytes[i], s.FirstSentAt[i] = tr.Sent, tr.Dropped, tr.FirstSent
		s.InstalledAt[i] = nd.InstalledAt(p.Slot)
		s.IWantSent[i] = tr.IWantSent
	}
	deadline := timing.PayloadDeadline(p.Slot)
	// Validator v belongs to the node whose range of validators holds it.
	var owner []int
	for i, np := range plan.Nodes {
		for range np.Validators {
			owner = append(owner, i)
		}
	}
	votes := 0
	for _, v := range chain.PTCCommittee(plan.Seed, p.Slot, len(owner), plan.PTCSize) {
		i := owner[v]
		if done != nil && !done[i].IsZero() && !done[i].After(deadline) {
			votes++
		}
	}
	s.PTC = devnet.PTCVotes{Slot: p.Slot, Size: plan.PTCSize, PayloadPresent: votes, Source: "embedded"}
	return s
}

// memoryNow describes where the process's memory is, from runtime/metrics
// after a collection (one, a second or two at 500 nodes; the heap profile,
// when asked for, has just run one): the network holds the most state at
// the last payload deadline, and a heap profile does not show goroutine
// stacks, which grow with the connections (several goroutines per
// connection end).
func memoryNow(collected bool) string {
	if !collected {
		runtime.GC()
	}
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/sched/goroutines:goroutines"},
	}
	metrics.Read(samples) // every name is supported and a uint64 since Go 1.16
	gib := func(i int) float64 { return float64(samples[i].Value.Uint64()) / (1 << 30) }
	return fmt.Sprintf("live heap %.2f GiB, goroutine stacks %.2f GiB (%d goroutines), all the runtime holds %.2f GiB",
		gib(0), gib(1), samples[3].Value.Uint64(), gib(2))
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
