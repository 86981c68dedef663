package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"
	"testing/synctest"
	"text/tabwriter"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/metrics"

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
	// SlotResult is one payload's diffusion, as the driver saw it.
	SlotResult = result.SlotResult
)

// NodeID is the stable name of node i ("node-007").
func NodeID(i int) string { return result.NodeID(i) }

// ErrMeshNotFormed is returned (wrapped) when a node still has no mesh peer
// when the mesh-settle timeout ends; a fresh run usually succeeds.
var ErrMeshNotFormed = driver.ErrMeshNotFormed

// Summary is what `segdiff sim` reports of a run's warm (or cold) slots:
// which run, and the suite's summary of its measurement record.
type Summary struct {
	Mode  string `json:"mode"`
	Seed  int64  `json:"seed"`
	Nodes int    `json:"nodes"`
	assertions.Summary
	// Checks are what each of the features' budget checks (by budget key,
	// assertions.Checks) measures on these slots: the value a budget of
	// that check is compared with, so that a sweep can say which budgets
	// its cells pass and what a budget set from them would be.
	Checks map[string]CheckValue `json:"checks"`
}

// CheckValue is one check's measured value: a number, or never (a
// completion check on slots some honest node never completed), or why it
// could not be measured.
type CheckValue struct {
	Value float64 `json:"value"`
	Never bool    `json:"never,omitempty"`
	Error string  `json:"error,omitempty"`
}

// CheckValues measures every check (assertions.Checks) on slots of net.
func CheckValues(net assertions.Network, slots []uint64) map[string]CheckValue {
	out := map[string]CheckValue{}
	for _, c := range assertions.Checks {
		v, err := c.Measured(net, slots)
		var miss *assertions.MissingReadings
		switch {
		case err == nil:
			out[c.Key] = CheckValue{Value: v}
		case errors.As(err, &miss) && miss.AllStranded():
			out[c.Key] = CheckValue{Never: true}
		default:
			out[c.Key] = CheckValue{Error: err.Error()}
		}
	}
	return out
}

// Record is r's measurement record: every node's metrics, read in process
// from its registry exactly as the suite scrapes them (package metrics),
// and the PTC's votes. It needs the registries, so it exists only in the
// process that simulated r.
func (r *Result) Record() (assertions.Network, error) {
	if len(r.Registries) != len(r.Nodes) {
		return assertions.Network{}, fmt.Errorf("record: %d registries for %d nodes (a result read back from JSON has none)", len(r.Registries), len(r.Nodes))
	}
	nodes := make([]devnet.Node, len(r.Nodes))
	snaps := map[string]*metrics.Snapshot{}
	for i, info := range r.Nodes {
		nodes[i] = devnet.Node{ID: info.ID, Roles: info.Roles, LinkClass: info.LinkClass}
		mfs, err := r.Registries[i].Gather()
		if err != nil {
			return assertions.Network{}, fmt.Errorf("record: gather node %s: %w", info.ID, err)
		}
		var text bytes.Buffer
		for _, mf := range mfs {
			if _, err := expfmt.MetricFamilyToText(&text, mf); err != nil {
				return assertions.Network{}, fmt.Errorf("record: node %s: %w", info.ID, err)
			}
		}
		if snaps[info.ID], err = metrics.Parse(&text, info.ID); err != nil {
			return assertions.Network{}, fmt.Errorf("record: %w", err)
		}
	}
	net, err := assertions.FromSnapshots(nodes, snaps)
	if err != nil {
		return net, fmt.Errorf("record: %w", err)
	}
	net.PTC = map[uint64]devnet.PTCVotes{}
	for _, s := range r.Slots {
		net.PTC[s.Slot] = s.PTC
	}
	return net, nil
}

// Summarize condenses r's warm payloads (every payload but the first; the
// only one when there is one) and its cold one from its record.
func (r *Result) Summarize() (warm, cold Summary, err error) {
	net, err := r.Record()
	if err != nil {
		return warm, cold, err
	}
	var warmSlots, coldSlots []uint64
	for i, s := range r.Slots {
		if i == 0 {
			coldSlots = append(coldSlots, s.Slot)
		}
		if i > 0 || len(r.Slots) == 1 {
			warmSlots = append(warmSlots, s.Slot)
		}
	}
	label := Summary{Mode: string(r.Config.Mode), Seed: r.Config.Seed, Nodes: r.Config.Nodes}
	warm, cold = label, label
	if warm.Summary, err = assertions.Summarize(net, warmSlots, r.Config.Window); err != nil {
		return warm, cold, fmt.Errorf("warm slots: %w", err)
	}
	if cold.Summary, err = assertions.Summarize(net, coldSlots, r.Config.Window); err != nil {
		return warm, cold, fmt.Errorf("cold slot: %w", err)
	}
	warm.Checks, cold.Checks = CheckValues(net, warmSlots), CheckValues(net, coldSlots)
	return warm, cold, nil
}

// WriteSummaryTable writes one row per summary: completion quantiles pooled
// over honest receivers × slots (nearest-rank), the share within the
// window, copies per receiver and slot by each definition, and PTC-timely
// slots.
func WriteSummaryTable(w io.Writer, sums []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	window := 3 * time.Second
	if len(sums) > 0 {
		window = sums[0].Window
	}
	fmt.Fprintf(tw, "mode\tseed\tnodes\tslots\tp50\tp90\tp99\tmax\t≤%v\tcopies by completion\tmedian\tcopies over slot\tmedian\tdata copies\tPTC timely\t\n", window)
	dur := func(d time.Duration) string {
		if d < 0 {
			return "never"
		}
		return fmt.Sprintf("%.3fs", d.Seconds())
	}
	num := func(v assertions.Num) string {
		if math.IsNaN(float64(v)) {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", float64(v))
	}
	for _, s := range sums {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%.1f%%\t%s\t%s\t%s\t%s\t%s\t%d/%d\t\n",
			s.Mode, s.Seed, s.Nodes, s.Slots, dur(s.P50), dur(s.P90), dur(s.P99), dur(s.Max), 100*s.Within,
			num(s.ByNetworkCompletion.Mean), num(s.ByNetworkCompletion.Median), num(s.OverSlot.Mean), num(s.OverSlot.Median),
			num(s.DataOverSlot), s.PTCTimely, s.PTCSlots)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "completion from the reveal, nearest-rank over honest receivers × slots (\"never\": the quantile fell on a node that never completed); copies = (data + control bytes) ÷ compressed payload per receiver and slot, mean then median: by network completion (when the last honest node completed; n/a if one never did) and over the slot (late duplicates included, what clients' metrics give)")
	return err
}

// Simulate builds the network cfg describes and diffuses cfg.Payloads
// payloads over it, all inside a testing/synctest bubble: every host,
// connection and timer runs on the bubble's virtual clock, so the result
// depends on the simulated links and latencies, not on how fast the machine
// is. Progress lines go to progress (nil: none). The error is returned after
// the bubble has exited; t is only used to create the bubble. cfg must have
// passed Validate: the caller checks it once, before anything starts
// (segdiff sim checks every run of its flags before the first).
func Simulate(t *testing.T, cfg Config, progress io.Writer) (*Result, error) {
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
	if caveat := cfg.ModelCaveat(); caveat != "" {
		fmt.Fprintln(progress, "note: "+caveat)
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
		Label: fmt.Sprintf("%s seed %d", c.Mode, c.Seed), Seed: c.Seed, Builder: c.Builder, Edges: edges, Latency: lat, NetModel: c.Network(),
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
		np := driver.NodePlan{Class: classes[i], Rates: rates, Role: roles[i], InstallDelay: c.InstallDelay}
		if d, ok := c.InstallDelayOverrides[i]; ok {
			np.InstallDelay = d
		}
		if i != c.Builder {
			np.Validators = c.ValidatorsPerNode
			others = append(others, i)
		}
		p.Nodes = append(p.Nodes, np)
	}
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
		p.Payloads = append(p.Payloads, driver.Payload{Slot: slot, Proposer: proposers[i], Block: b, Prepared: prepared})
	}
	for _, e := range conditionEffects {
		if v, set := c.Stress[e.condition.Name]; set {
			if err := e.apply(&p, v); err != nil {
				return driver.Plan{}, err
			}
		}
	}
	return p, nil
}

// effect is how the simulation applies one fault condition of package
// stress to a planned network.
type effect struct {
	condition stress.Condition
	apply     func(p *driver.Plan, v float64) error
}

// conditionEffects is how the embedded devnet applies each fault condition
// of package stress, in the order it applies them (thin uplinks set the
// rates that a spread then spreads). A role's condition needs no entry:
// placeRoles places every role. A condition registered in package stress
// without an entry here is one the simulation would not apply, and
// Validate refuses it.
var conditionEffects = []effect{
	{stress.ThinUplink, func(p *driver.Plan, v float64) error {
		for i := range p.Nodes {
			p.Nodes[i].Class = devnet.LinkCustom
			p.Nodes[i].Rates = netmodel.Rates{UpMbps: int(v), DownMbps: stress.ThinDownlink(int(v))}
		}
		return nil
	}},
	{stress.UplinkSpread, func(p *driver.Plan, v float64) error {
		spreadUplinks(p.Nodes, v, p.Seed)
		return nil
	}},
	{stress.LossData, func(p *driver.Plan, v float64) error {
		for i := range p.Nodes {
			p.Nodes[i].Loss.Data = v
		}
		return nil
	}},
	{stress.LossRequests, func(p *driver.Plan, v float64) error {
		for i := range p.Nodes {
			p.Nodes[i].Loss.Requests = v
		}
		return nil
	}},
	{stress.Omit, func(p *driver.Plan, v float64) error {
		omit := int(v)
		for _, pl := range p.Payloads {
			msgs := pl.Prepared.Messages
			if omit >= len(msgs) {
				return &ValidationError{Fields: []*FieldError{{Key: "stress", Err: fmt.Errorf("omit=%d, but slot %d's payload has %d parts", omit, pl.Slot, len(msgs))}}}
			}
			for _, i := range seeds.Omit(p.Seed, pl.Slot).Perm(len(msgs))[:omit] {
				msgs[i] = nil // the builder never sends it
			}
		}
		return nil
	}},
}

// applied reports whether the simulation applies the condition called
// name: a role's share (placeRoles) or a fault with an effect.
func applied(name string) bool {
	if c, ok := stress.Lookup(name); ok && c.Role {
		return true
	}
	for _, e := range conditionEffects {
		if e.condition.Name == name {
			return true
		}
	}
	return false
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
