package embedded

import (
	"fmt"
	"io"
	"math"
	"testing"
	"testing/synctest"

	"github.com/segdiff/segdiff/diffusion"
	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/eip8411"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/embedded/chain"
	"github.com/segdiff/segdiff/internal/devnet/embedded/driver"
	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
	"github.com/segdiff/segdiff/internal/devnet/embedded/node"
	"github.com/segdiff/segdiff/internal/devnet/embedded/result"
	"github.com/segdiff/segdiff/internal/devnet/embedded/seeds"
	"github.com/segdiff/segdiff/internal/stress"
)

// Result is what one simulation measured, with the configuration it ran.
type Result struct {
	Config Config `json:"config"`
	result.Run
}

// Re-exported result types, so that users of the public surface need only
// this package.
type (
	// NodeInfo is one node's identity.
	NodeInfo = result.NodeInfo
	// SlotResult is one payload's diffusion.
	SlotResult = result.SlotResult
	// Summary condenses payload slots.
	Summary = result.Summary
)

// NodeID is the stable name of node i ("node-007").
func NodeID(i int) string { return result.NodeID(i) }

// ErrMeshNotFormed is returned (wrapped) when a node still has no mesh peer
// when the mesh-settle timeout ends; a fresh run usually succeeds.
var ErrMeshNotFormed = driver.ErrMeshNotFormed

// Label is the summary label of r.
func (r *Result) Label() result.Label {
	return result.Label{Mode: string(r.Config.Mode), Seed: r.Config.Seed, Nodes: r.Config.Nodes, Window: r.Config.Window}
}

// Summarize condenses r's warm payloads (every payload but the first).
func Summarize(r *Result) Summary { return result.Summarize(r.Label(), r.Warm()) }

// SummarizeCold condenses r's first (cold) payload.
func SummarizeCold(r *Result) Summary { return result.Summarize(r.Label(), r.Cold()) }

// WriteSummaryTable writes one row per summary.
func WriteSummaryTable(w io.Writer, sums []Summary) error { return result.WriteTable(w, sums) }

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
	plan, err := cfg.plan()
	if err != nil {
		return nil, err
	}
	// The seed also fixes the global math/rand that go-libp2p-pubsub draws
	// its peer shuffles from. Host keys stay random (simlibp2p draws them
	// from crypto/rand, and testing/cryptotest refuses non-test binaries),
	// and goroutine scheduling and map order vary, so a run is reproducible
	// in distribution, not bit for bit.
	if !seedGlobalRand(cfg.Seed) {
		fmt.Fprintln(progress, "warning: math/rand's global source ignores Seed in this binary (needs //go:debug randseednop=0); pubsub's shuffles are not seeded")
	}
	var run *result.Run
	synctest.Test(t, func(*testing.T) {
		run, err = driver.Run(plan, progress)
	})
	if err != nil {
		return nil, err
	}
	return &Result{Config: cfg, Run: *run}, nil
}

// plan resolves cfg into a network the driver runs: topology, latency,
// links, roles, the policy and every payload, all seeded.
func (c Config) plan() (driver.Plan, error) {
	edges, err := netmodel.RandomRegular(c.Nodes, c.Degree, c.Seed)
	if err != nil {
		return driver.Plan{}, err
	}
	lat, err := netmodel.NewLatency(c.Latency, c.Nodes, c.Seed, c.UniformLatency)
	if err != nil {
		return driver.Plan{}, err
	}
	policy, err := c.policy()
	if err != nil {
		return driver.Plan{}, err
	}
	classes := netmodel.Classes(c.Nodes, c.Builder, c.BuilderClass, c.NodeClass, c.DatacenterShare)
	roles := c.placeRoles()
	p := driver.Plan{
		Label: fmt.Sprintf("%s seed %d", c.Mode, c.Seed), Seed: c.Seed, Builder: c.Builder, Edges: edges, Latency: lat,
		Gossip: node.GossipParams(c.MeshD, c.GossipLazy, c.GossipFactor), Policy: policy,
		SlotDuration: c.SlotDuration, RevealOffset: c.RevealOffset, PayloadDueBPS: c.PayloadDueBPS, PTCSize: c.PTCSize,
		MeshSettleTimeout: c.MeshSettleTimeout, HeapProfile: c.HeapProfile,
	}
	var others []int
	for i := range c.Nodes {
		rates, err := netmodel.ClassRates(classes[i], c.custom())
		if err != nil {
			return driver.Plan{}, fmt.Errorf("node %d: %w", i, err)
		}
		np := driver.NodePlan{Class: classes[i], Rates: rates, Role: roles[i], InstallDelay: c.InstallDelay,
			Loss: node.Loss{Data: c.Stress[stress.LossData.Name], Requests: c.Stress[stress.LossRequests.Name]}}
		if d, ok := c.InstallDelayOverrides[i]; ok {
			np.InstallDelay = d
		}
		if i != c.Builder {
			np.Validators = c.ValidatorsPerNode
			others = append(others, i)
		}
		p.Nodes = append(p.Nodes, np)
	}
	spreadUplinks(p.Nodes, c.Stress[stress.UplinkSpread.Name], c.Seed)
	proposers := chain.Proposers(c.Seed, c.Payloads, others)
	for i := range c.Payloads {
		slot := uint64(i + 1)
		body, err := eip8411.SyntheticBody(seeds.Payload(c.Seed, slot), c.PayloadSize)
		if err != nil {
			return driver.Plan{}, fmt.Errorf("prepare payload %d: %w", slot, err)
		}
		g, err := policy.Cut(body)
		if err != nil {
			return driver.Plan{}, fmt.Errorf("prepare payload %d: %w", slot, err)
		}
		b := chain.Block{Slot: slot, Proposer: uint32(proposers[i]), Descriptor: g.Descriptor()}
		prepared, err := policy.Prepare(diffusion.Payload{Slot: slot, BlockRoot: b.Root(), Group: g})
		if err != nil {
			return driver.Plan{}, err
		}
		if c.omit() >= len(prepared.Messages) {
			return driver.Plan{}, &ValidationError{Fields: []*FieldError{{Key: "stress", Err: fmt.Errorf("omit=%d, but slot %d's payload has %d parts", c.omit(), slot, len(prepared.Messages))}}}
		}
		for _, i := range seeds.Omit(c.Seed, slot).Perm(len(prepared.Messages))[:c.omit()] {
			prepared.Messages[i] = nil // the builder never sends it
		}
		p.Payloads = append(p.Payloads, driver.Payload{Slot: slot, Proposer: proposers[i], Block: b, Prepared: prepared})
	}
	return p, nil
}

// placeRoles gives every node its role: the builder and most nodes relay;
// each adversarial role's share of the other nodes (its stress condition)
// plays it, in package role's order, drawn from the seed's roles stream.
func (c Config) placeRoles() []diffusion.Role {
	roles := make([]diffusion.Role, c.Nodes)
	var others []int
	for i := range roles {
		roles[i] = role.Relay
		if i != c.Builder {
			others = append(others, i)
		}
	}
	order := seeds.Roles(c.Seed).Perm(len(others))
	next := 0
	for _, r := range role.Adversarial() {
		for range int(c.Stress[r.Name] * float64(len(others))) {
			roles[others[order[next]]] = r
			next++
		}
	}
	return roles
}

// spreadUplinks draws each node's uplink uniformly within ±spread of its
// rate, then scales each class so that its mean uplink is unchanged.
func spreadUplinks(nodes []driver.NodePlan, spread float64, seed int64) {
	if spread == 0 {
		return
	}
	rng := seeds.Uplinks(seed)
	factor := make([]float64, len(nodes))
	sum, count := map[devnet.LinkClass]float64{}, map[devnet.LinkClass]float64{}
	for i, n := range nodes {
		factor[i] = 1 + spread*(2*rng.Float64()-1)
		sum[n.Class] += factor[i]
		count[n.Class]++
	}
	for i := range nodes {
		cl := nodes[i].Class
		f := factor[i] * count[cl] / sum[cl]
		nodes[i].Rates.UpMbps = max(1, int(math.Round(float64(nodes[i].Rates.UpMbps)*f)))
	}
}
