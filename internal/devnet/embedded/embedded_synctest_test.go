//go:debug randseednop=0

//go:build go1.25

package embedded_test

import (
	"errors"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/assertions"

	dto "github.com/prometheus/client_model/go"

	"github.com/segdiff/segdiff/diffusion"
	segmode "github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
	"github.com/segdiff/segdiff/internal/devnet/embedded/chain"
	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
)

// smallConfig is a 16-node network (degree 14 > Dhi) that runs in seconds.
func smallConfig(mode devnet.Mode) embedded.Config {
	c := embedded.DefaultConfig()
	c.Nodes = 16
	c.Degree = 14
	c.Mode = mode
	c.Payloads = 2
	return c
}

// synctestSimulate is the one entry into the bubble: embedded.Simulate runs
// the whole network inside synctest.Test.
func synctestSimulate(t *testing.T, c embedded.Config) *embedded.Result {
	t.Helper()
	var progress io.Writer
	if testing.Verbose() {
		progress = os.Stderr
	}
	// Simulate runs what it is given: the spec is checked here, once, as
	// segdiff sim checks its runs before the first starts.
	if err := c.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	// A fresh network is tried up to three times when the mesh does not form
	// (a known intermittent failure, embedded.ErrMeshNotFormed); any other
	// error, and the results, are checked as usual.
	for attempt := 1; ; attempt++ {
		res, err := embedded.Simulate(t, c, progress)
		if errors.Is(err, embedded.ErrMeshNotFormed) && attempt < 3 {
			t.Logf("attempt %d: %v; retrying with a fresh network", attempt, err)
			continue
		}
		if err != nil {
			t.Fatalf("simulate: %v", err)
		}
		return res
	}
}

func gauge(t *testing.T, res *embedded.Result, node int, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := res.Registries[node].Gather()
	if err != nil {
		t.Fatalf("gather %s: %v", embedded.NodeID(node), err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			return value(m), true
		}
	}
	return 0, false
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	}
	return 0
}

// TestDiffusion_synctest runs each mode on 16 nodes in each network model
// and checks that every node completes, the PTC count follows from the
// completion times, and the byte accounting adds up against the wire (in
// the flows models: their links lose nothing, and what the -drops model's
// links drop is sent again). The -fq and -drops models change only how the
// links queue, so they run one stock and one tiered mode, to keep the race
// stage short; -fq-packed changes when a write returns to the policy, so it
// runs every mode.
func TestDiffusion_synctest(t *testing.T) {
	linksOnly := map[string]bool{netmodel.FlowsCCSimnetFQ: true, netmodel.FlowsCCSimnetDrops: true}
	for _, mode := range diffusion.Modes() {
		for _, model := range netmodel.Models {
			if linksOnly[model] && mode != segmode.SegmentedBatch && mode != segmode.Tier3 {
				continue
			}
			t.Run(string(mode)+"/"+model, func(t *testing.T) {
				c := smallConfig(mode)
				c.NetModel = model
				diffusionRun(t, c)
			})
		}
	}
}

// diffusionRun runs c and checks its slots, its record and its served metrics.
func diffusionRun(t *testing.T, c embedded.Config) {
	mode := c.Mode
	res := synctestSimulate(t, c)
	if len(res.Slots) != 2 {
		t.Fatalf("got %d payload slots, want 2", len(res.Slots))
	}
	for _, s := range res.Slots {
		slot := strconv.FormatUint(s.Slot, 10)
		wantK := 1
		if info, _ := segmode.Lookup(mode); !info.OneMessage {
			wantK = (s.CompressedSize + res.Config.SegmentSize - 1) / res.Config.SegmentSize
			if info.Coded {
				wantK *= 2 // as many parity shards as data shards
			}
		}
		if s.Segments != wantK {
			t.Errorf("slot %d: %d messages, want %d", s.Slot, s.Segments, wantK)
		}
		for i, c := range s.Completion {
			if c < 0 {
				t.Errorf("slot %d: %s never completed", s.Slot, embedded.NodeID(i))
			}
		}
		checkPTC(t, res, s)
		checkBytes(t, res, s, slot)
		sum := slotSummary(t, res, s.Slot)
		t.Logf("slot %d: p50 %v, copies %.2f by network completion, PTC %d/%d", s.Slot, sum.P50.Round(time.Millisecond), float64(sum.ByNetworkCompletion.Mean), s.PTC.PayloadPresent, s.PTC.Size)
	}
	checkRecordAgreesWithDriver(t, res)
	checkServe(t, res)
}

// slotSummary is the summary of one slot of res's record.
func slotSummary(t *testing.T, res *embedded.Result, slot uint64) assertions.Summary {
	t.Helper()
	net, err := res.Record()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := assertions.Summarize(net, []uint64{slot}, res.Config.Window)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// The record, read from the nodes' metrics, says what the driver saw: each
// honest receiver's completion from the reveal at the contract's
// millisecond precision, and its bytes over the slot and by network
// completion.
func checkRecordAgreesWithDriver(t *testing.T, res *embedded.Result) {
	t.Helper()
	net, err := res.Record()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Slots {
		done, err := assertions.Completion(net, []uint64{s.Slot})
		if err != nil {
			t.Fatalf("slot %d: %v", s.Slot, err)
		}
		byNode := map[string]float64{}
		for _, d := range done {
			byNode[d.Node] = d.Value
		}
		for i, c := range s.Completion {
			if !s.Receiver(i) {
				continue
			}
			got, ok := byNode[embedded.NodeID(i)]
			if !ok || math.Abs(got-c.Seconds()) > 0.001 {
				t.Errorf("slot %d %s: record completion %v s, driver %v", s.Slot, embedded.NodeID(i), got, c)
			}
		}
		over, err := assertions.Copies(net, []uint64{s.Slot}, assertions.CopiesOverSlot)
		if err != nil {
			t.Fatalf("slot %d: %v", s.Slot, err)
		}
		for _, o := range over {
			i := nodeIndex(t, o.Node)
			if want := float64(s.DataBytes[i]+s.ControlBytes[i]) / float64(s.CompressedSize); math.Abs(o.Value-want) > 1e-9 {
				t.Errorf("slot %d %s: %.4f copies over the slot in the record, driver %.4f", s.Slot, o.Node, o.Value, want)
			}
		}
		if s.DataBytesAtCompletion == nil {
			continue
		}
		byDone, err := assertions.Copies(net, []uint64{s.Slot}, assertions.CopiesByNetworkCompletion)
		if err != nil {
			t.Fatalf("slot %d: %v", s.Slot, err)
		}
		for _, o := range byDone {
			i := nodeIndex(t, o.Node)
			if want := float64(s.DataBytesAtCompletion[i]+s.ControlBytesAtCompletion[i]) / float64(s.CompressedSize); math.Abs(o.Value-want) > 1e-9 {
				t.Errorf("slot %d %s: %.4f copies by network completion in the record, driver %.4f", s.Slot, o.Node, o.Value, want)
			}
		}
	}
}

func nodeIndex(t *testing.T, id string) int {
	t.Helper()
	i, err := strconv.Atoi(strings.TrimPrefix(id, "node-"))
	if err != nil {
		t.Fatalf("node id %q: %v", id, err)
	}
	return i
}

// checkPTC recomputes the votes from the committee and completion times.
func checkPTC(t *testing.T, res *embedded.Result, s embedded.SlotResult) {
	t.Helper()
	c := res.Config
	deadline := res.Timing.PayloadDeadline(s.Slot)
	var owners []int // validator → node: every node but the builder runs ValidatorsPerNode
	for i := range c.Nodes {
		for range c.ValidatorsPerNode {
			if i != c.Builder {
				owners = append(owners, i)
			}
		}
	}
	committee := chain.PTCCommittee(c.Seed, s.Slot, len(owners), c.PTCSize)
	want := 0
	for _, v := range committee {
		node := owners[v]
		if d := s.Completion[node]; d >= 0 && !s.Reveal.Add(d).After(deadline) {
			want++
		}
	}
	if s.PTC.PayloadPresent != want || s.PTC.Size != c.PTCSize {
		t.Errorf("slot %d: PTC %d/%d present, want %d/%d from completion times", s.Slot, s.PTC.PayloadPresent, s.PTC.Size, want, c.PTCSize)
	}
	if want == 0 {
		t.Errorf("slot %d: no committee member's node completed by the deadline", s.Slot)
	}
}

// checkBytes: what all nodes received equals what all nodes queued minus
// what queues dropped (an independent count on the sending side); every node
// received at least one copy; and each node's metric equals the tracer's.
func checkBytes(t *testing.T, res *embedded.Result, s embedded.SlotResult, slot string) {
	t.Helper()
	var recv, sent, dropped int64
	for i := range s.DataBytes {
		recv += s.DataBytes[i]
		sent += s.SentBytes[i]
		dropped += s.DroppedBytes[i]
		if i != res.Builder && s.DataBytes[i] < int64(s.CompressedSize) {
			t.Errorf("slot %s: %s received %d data bytes, less than one copy (%d)", slot, embedded.NodeID(i), s.DataBytes[i], s.CompressedSize)
		}
		for kind, want := range map[string]int64{"data": s.DataBytes[i], "control": s.ControlBytes[i]} {
			got, ok := gauge(t, res, i, "payload_diffusion_received_bytes", map[string]string{"slot": slot, "kind": kind})
			if want > 0 && (!ok || int64(got) != want) {
				t.Errorf("slot %s: %s exports received_bytes{kind=%s} = %v (present %v), tracer counted %d", slot, embedded.NodeID(i), kind, got, ok, want)
			}
		}
	}
	if recv != sent-dropped {
		t.Errorf("slot %s: nodes received %d payload data bytes, peers sent %d − dropped %d = %d", slot, recv, sent, dropped, sent-dropped)
	}
	if s.ControlBytes[1] == 0 && s.DataBytes[1] == 0 {
		t.Errorf("slot %s: node-001 has no bytes at all", slot)
	}
}

// TestNoRelayBeforeInstall_synctest holds node 5's block back until 6.5 s
// into the slot, 3.5 s after the reveal (later than a whole payload arrives, within the install timeout), in every mode: the policy must park
// the payload messages it receives (deferred > 0), it must not queue a
// single payload message to a peer before its install, and the parked
// messages must still be delivered (it completes after installing).
func TestNoRelayBeforeInstall_synctest(t *testing.T) {
	for _, m := range diffusion.Modes() {
		t.Run(string(m), func(t *testing.T) { noRelayBeforeInstall(t, m) })
	}
}

func noRelayBeforeInstall(t *testing.T, m devnet.Mode) {
	const late = 5
	c := smallConfig(m)
	c.InstallDelayOverrides = map[int]time.Duration{late: 6500 * time.Millisecond}
	res := synctestSimulate(t, c)
	if res.Deferred[late] == 0 {
		t.Fatalf("%s deferred no payload message although its block was held back", embedded.NodeID(late))
	}
	for _, s := range res.Slots {
		installed := s.InstalledAt[late]
		if installed.IsZero() || installed.Before(s.Reveal) {
			t.Fatalf("slot %d: %s installed at %v, want after the reveal %v", s.Slot, embedded.NodeID(late), installed, s.Reveal)
		}
		if first := s.FirstSentAt[late]; !first.IsZero() && first.Before(installed) {
			t.Errorf("slot %d: %s relayed a payload message at %v, before installing its block at %v", s.Slot, embedded.NodeID(late), first, installed)
		}
		if d := s.Completion[late]; d < 0 || s.Reveal.Add(d).Before(installed) {
			t.Errorf("slot %d: %s completed %v after the reveal, want after its install (%v)", s.Slot, embedded.NodeID(late), d, installed.Sub(s.Reveal))
		}
		for i, d := range s.Completion {
			if d < 0 {
				t.Errorf("slot %d: %s never completed", s.Slot, embedded.NodeID(i))
			}
		}
	}
	if got, ok := gauge(t, res, late, "payload_diffusion_segments_deferred_total", nil); !ok || int64(got) != res.Deferred[late] {
		t.Errorf("%s exports segments_deferred_total = %v (present %v), want %d", embedded.NodeID(late), got, ok, res.Deferred[late])
	}
}

// TestSameSeed_synctest: the seed fixes topology, link classes, placement,
// proposers, PTC draws, the reveal's heartbeat phase and the global math/rand
// pubsub shuffles with. Completion times are still not bit-identical
// (goroutine scheduling decides which router draws next, and peer ids are
// random keys), so the medians are compared within a tolerance.
func TestSameSeed_synctest(t *testing.T) {
	c := smallConfig(devnet.ModeSegmented)
	c.DatacenterShare = 0.2
	a := synctestSimulate(t, c)
	b := synctestSimulate(t, c)
	if a.Edges != b.Edges {
		t.Errorf("edges %d vs %d", a.Edges, b.Edges)
	}
	for i := range a.Nodes {
		na, nb := a.Nodes[i], b.Nodes[i]
		if na.LinkClass != nb.LinkClass || na.Region != nb.Region || strings.Join(roles(na), ",") != strings.Join(roles(nb), ",") {
			t.Errorf("%s: run 1 %s/%s/%v, run 2 %s/%s/%v", na.ID, na.LinkClass, na.Region, na.Roles, nb.LinkClass, nb.Region, nb.Roles)
		}
	}
	if a.Nodes[1].LinkClass != devnet.LinkDatacenter || a.Nodes[len(a.Nodes)-1].LinkClass != devnet.LinkHome {
		t.Errorf("link classes %s … %s, want datacenter first, home last", a.Nodes[1].LinkClass, a.Nodes[len(a.Nodes)-1].LinkClass)
	}
	for i := range a.Slots {
		sa, sb := a.Slots[i], b.Slots[i]
		if sa.Proposer != sb.Proposer || sa.CompressedSize != sb.CompressedSize {
			t.Errorf("slot %d: proposer %d/%d, size %d/%d", sa.Slot, sa.Proposer, sb.Proposer, sa.CompressedSize, sb.CompressedSize)
		}
		pa, pb := slotSummary(t, a, sa.Slot).P50, slotSummary(t, b, sb.Slot).P50
		if diff := (pa - pb).Abs(); diff > max(pa, pb)/2 {
			t.Errorf("slot %d: median completion %v vs %v with the same seed", sa.Slot, pa, pb)
		}
		t.Logf("slot %d: median %v vs %v", sa.Slot, pa.Round(time.Millisecond), pb.Round(time.Millisecond))
	}
}

// TestBuilderFromConfig_synctest: the builder is whichever node the
// configuration names, not node 0: it holds the builder role, reveals every
// payload, runs no validators, and every other node completes.
func TestBuilderFromConfig_synctest(t *testing.T) {
	c := smallConfig(devnet.ModeSegmentedBatch)
	c.Builder = 9
	c.BuilderClass = devnet.LinkDatacenter
	res := synctestSimulate(t, c)
	if res.Builder != 9 {
		t.Fatalf("result names builder %d, want 9", res.Builder)
	}
	for i, n := range res.Nodes {
		isBuilder := slices.Contains(n.Roles, devnet.RoleBuilder)
		if isBuilder != (i == 9) {
			t.Errorf("%s roles %v", n.ID, n.Roles)
		}
		if (i == 9) != (n.LinkClass == devnet.LinkDatacenter) || (i == 9) != (n.Validators == 0) {
			t.Errorf("%s: class %s, %d validators", n.ID, n.LinkClass, n.Validators)
		}
	}
	for _, s := range res.Slots {
		if s.Completion[9] != 0 || s.Proposer == 9 {
			t.Errorf("slot %d: builder completion %v, proposer %d", s.Slot, s.Completion[9], s.Proposer)
		}
		for i, d := range s.Completion {
			if d < 0 {
				t.Errorf("slot %d: %s never completed", s.Slot, embedded.NodeID(i))
			}
		}
		checkPTC(t, res, s)
	}
	if _, ok := gauge(t, res, 9, "payload_diffusion_reveal_timestamp_seconds", map[string]string{"slot": "1"}); !ok {
		t.Error("node-009 exports no reveal timestamp")
	}
	if _, ok := gauge(t, res, 0, "payload_diffusion_reveal_timestamp_seconds", map[string]string{"slot": "1"}); ok {
		t.Error("node-000 exports a reveal timestamp although it is not the builder")
	}
}

func roles(n embedded.NodeInfo) []string {
	var out []string
	for _, r := range n.Roles {
		out = append(out, string(r))
	}
	return out
}

// checkServe serves the registries over HTTP, as the backend does, and
// scrapes one node through the endpoints descriptor.
func checkServe(t *testing.T, res *embedded.Result) {
	t.Helper()
	srv, err := embedded.Serve("127.0.0.1:0", res)
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	defer srv.Close()
	e := embedded.EndpointsOf(res, srv.URL())
	if len(e.Nodes) != len(res.Nodes) || len(e.PTC) != len(res.Slots) {
		t.Fatalf("endpoints list %d nodes and %d PTC slots, want %d and %d", len(e.Nodes), len(e.PTC), len(res.Nodes), len(res.Slots))
	}
	resp, err := http.Get(e.Nodes[1].MetricsURL)
	if err != nil {
		t.Fatalf("scrape %s: %v", e.Nodes[1].MetricsURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`payload_diffusion_completed_timestamp_seconds{slot="1"}`, `payload_diffusion_info{client="embedded"`} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("scrape %s: status %d, body lacks %s", e.Nodes[1].MetricsURL, resp.StatusCode, want)
		}
	}
}
