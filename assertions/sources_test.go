package assertions_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/metrics"
)

// standard relabels a test network as the standard source's record of
// clients named client, its completions later by shift seconds on r1.
func standard(client string, shift float64, mut func(map[string]map[S]map[uint64]float64)) assertions.Network {
	n := testNet(func(m map[string]map[S]map[uint64]float64) {
		for slot, v := range m["r1"][assertions.SeriesCompleted] {
			m["r1"][assertions.SeriesCompleted][slot] = v + shift
		}
		if mut != nil {
			mut(m)
		}
	})
	n.Origin = metrics.OriginStandardAPI
	for i := range n.Nodes {
		n.Nodes[i].Origin, n.Nodes[i].Client = metrics.OriginStandardAPI, client
	}
	return n
}

// The agreement check passes within its tolerance and fails, naming the
// node and the difference, when the sources disagree by more.
func TestSourcesAgree(t *testing.T) {
	slots := []uint64{11, 12, 13}
	tests := []struct {
		name     string
		contract assertions.Network
		standard assertions.Network
		pass     bool
		measured float64
		reason   string
	}{
		{name: "agree", contract: testNet(nil), standard: standard("prysm", 0.004, nil), pass: true, measured: 0.004},
		{name: "disagree by more than the tolerance", contract: testNet(nil), standard: standard("prysm", 0.3, nil), measured: 0.3},
		{name: "earlier by more than the tolerance", contract: testNet(nil), standard: standard("prysm", -0.3, nil), measured: 0.3},
		{name: "a missing availability fails closed", contract: testNet(nil),
			standard: standard("lighthouse", 0, func(m map[string]map[S]map[uint64]float64) { delete(m["r2"][assertions.SeriesCompleted], 12) }),
			reason:   "node r2 (lighthouse): standard API reading execution_payload_available event has no value for slot 12"},
		{name: "two contract records", contract: testNet(nil), standard: testNet(nil), reason: "needs a contract record and a standard API record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := assertions.SourcesAgree(tt.contract, tt.standard, slots, 0.1)
			if tt.reason != "" {
				if v.Pass || !strings.Contains(v.Reason, tt.reason) {
					t.Fatalf("verdict %s, want a failure %q", v, tt.reason)
				}
				return
			}
			if v.Pass != tt.pass || v.Measured < tt.measured-1e-6 || v.Measured > tt.measured+1e-6 {
				t.Fatalf("verdict %s, want pass %v measuring %v", v, tt.pass, tt.measured)
			}
			if !tt.pass && (len(v.Worst) == 0 || v.Worst[0].Node != "r1") {
				t.Errorf("worst %v, want r1 first", v.Worst)
			}
		})
	}
}

// A standard-API record counts copies from message data only, names its
// check so, and a node without a byte source fails naming its client and
// the counter it lacks.
func TestCopiesOnTheStandardSource(t *testing.T) {
	slots := []uint64{11, 12, 13}
	n := standard("prysm", 0, nil)
	c := assertions.CheckCopiesP50.On(n.Origin)
	if !strings.Contains(c.Name, "over the slot (message data only)") {
		t.Errorf("check name %q", c.Name)
	}
	if assertions.CheckCopiesP50.On(metrics.OriginContract).Name != assertions.CheckCopiesP50.Name || assertions.CheckCompletionMax.On(n.Origin).Name != assertions.CheckCompletionMax.Name {
		t.Error("On renamed a check it does not change")
	}
	samples, err := c.Extract(n, slots)
	if err != nil || len(samples) != 6 || samples[0].Value != 1.5 {
		t.Fatalf("samples %v, %v; want 1500 data bytes / 1000 = 1.5 copies each", samples, err)
	}
	bare := standard("lighthouse", 0, func(m map[string]map[S]map[uint64]float64) {
		delete(m["r1"], assertions.SeriesDataBytes)
		delete(m["r1"], assertions.SeriesControlBytes)
	})
	_, err = c.Extract(bare, slots)
	want := "node r1 (lighthouse): standard API reading " + metrics.TopicBytesSeries
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "missing (wanted slots 11, 12, 13)") {
		t.Errorf("error %v, want %q ... missing", err, want)
	}
}

// A reading missing from a slot the source could not watch whole is a gap,
// named with why, and never a stranded node; GapNote lists the gaps.
func TestGaps(t *testing.T) {
	n := standard("teku", 0, func(m map[string]map[S]map[uint64]float64) { delete(m["r1"][assertions.SeriesCompleted], 12) })
	for i := range n.Nodes {
		if n.Nodes[i].ID == "r1" {
			n.Nodes[i].Gaps = map[uint64]string{12: "event stream down 08:00:12.100–08:00:12.400 (the node closed the event stream; reconnected)"}
		}
	}
	_, err := assertions.Completion(n, []uint64{11, 12, 13})
	if err == nil || !strings.Contains(err.Error(), "node r1 (teku): standard API reading execution_payload_available event has no value for slot 12 (gap: event stream down") {
		t.Fatalf("error %v", err)
	}
	var miss *assertions.MissingReadings
	if !errors.As(err, &miss) || miss.AllStranded() || strings.Contains(err.Error(), "never completed") {
		t.Errorf("a gap was taken for a stranded node: %v", err)
	}
	note := assertions.GapNote(n, []uint64{11, 12})
	if !strings.Contains(note, "standard API gaps in the measured slots") || !strings.Contains(note, "node r1 slot 12: event stream down") {
		t.Errorf("note %q", note)
	}
	if assertions.GapNote(n, []uint64{11, 13}) != "" {
		t.Error("a note for slots without gaps")
	}
}

func TestFromSnapshotsOrigin(t *testing.T) {
	nodes := []devnet.Node{{ID: "a", Roles: []devnet.Role{devnet.RoleBuilder}, Client: "lodestar"}, {ID: "b", Roles: []devnet.Role{devnet.RoleNode}, Client: "lodestar"}}
	std := map[string]*metrics.Snapshot{"a": metrics.NewSnapshot("a", metrics.OriginStandardAPI), "b": metrics.NewSnapshot("b", metrics.OriginStandardAPI)}
	std["b"].Gaps = map[uint64]string{3: "x"}
	n, err := assertions.FromSnapshots(nodes, std)
	if err != nil || n.Origin != metrics.OriginStandardAPI || n.Nodes[1].Client != "lodestar" || n.Nodes[1].Gaps[3] != "x" {
		t.Fatalf("network %+v, %v", n, err)
	}
	mixed := map[string]*metrics.Snapshot{"a": metrics.NewSnapshot("a", metrics.OriginContract), "b": std["b"]}
	if _, err := assertions.FromSnapshots(nodes, mixed); err == nil || !strings.Contains(err.Error(), "one record holds one source") {
		t.Errorf("two origins: %v", err)
	}
	if n, _ := assertions.FromSnapshots(nodes, nil); n.Origin != metrics.OriginContract {
		t.Errorf("no snapshots: origin %q, want the contract", n.Origin)
	}
}

func TestPopulations(t *testing.T) {
	samples := []assertions.Sample{{Node: "a", Value: 1}, {Node: "b", Value: 2}, {Node: "a", Value: 3}}
	got, err := assertions.Populations(samples, map[string]string{"a": "patched", "b": "unpatched"})
	if err != nil || len(got["patched"]) != 2 || len(got["unpatched"]) != 1 {
		t.Fatalf("%v, %v", got, err)
	}
	if _, err := assertions.Populations(samples, map[string]string{"a": "patched"}); err == nil || !strings.Contains(err.Error(), "node b belongs to no population") {
		t.Errorf("%v", err)
	}
}

func TestVerdictNamesItsSource(t *testing.T) {
	v := assertions.AllAtMost("x", assertions.UnitSeconds, []assertions.Sample{{Node: "a", Value: 1}}, 2)
	v.Source = "standard API"
	if !strings.Contains(v.String(), "[source: standard API]") {
		t.Errorf("%s", v)
	}
}
