package embedded

import (
	"testing"

	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/stress"
)

// Stress conditions reach the plan the driver runs: thin links give every
// node, the builder's too, the thin uplink over its downlink; role shares
// place that many nodes of each role, none of them the builder.
func TestPlanAppliesStress(t *testing.T) {
	c := DefaultConfig()
	c.Nodes, c.Degree, c.Payloads = 16, 14, 2
	c.Stress = stress.Set{stress.ThinUplink.Name: 10, role.Withholder.Name: 0.25, role.UnderReporter.Name: 0.2}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := c.plan()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for i, n := range p.Nodes {
		if n.Class != devnet.LinkCustom || n.Rates.UpMbps != 10 || n.Rates.DownMbps != 20 {
			t.Errorf("node %d: %s %d/%d Mbps, want custom 10/20", i, n.Class, n.Rates.UpMbps, n.Rates.DownMbps)
		}
		count[n.Role.Name]++
		if i == c.Builder && !n.Role.Honest() {
			t.Errorf("the builder plays %s", n.Role.Name)
		}
	}
	if count[role.Withholder.Name] != 3 || count[role.UnderReporter.Name] != 3 || count[role.Relay.Name] != 10 {
		t.Errorf("roles %v, want 3 withholders and 3 under-reporters of the 15 non-builders", count)
	}
}
