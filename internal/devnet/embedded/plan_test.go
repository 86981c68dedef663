package embedded

import (
	"github.com/segdiff/segdiff/diffusion/mode"
	"testing"

	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/stress"
)

// Stress conditions reach the plan the driver runs: thin links give every
// node, the builder's too, the thin uplink over its downlink; role shares
// place that many nodes of each role, none of them the builder; every node
// drops the lost shares; the builder never sends the omitted parts; a spread
// moves each uplink and keeps the class's mean.
func TestPlanAppliesStress(t *testing.T) {
	c := DefaultConfig()
	c.Nodes, c.Degree, c.Payloads = 16, 14, 2
	c.Mode = mode.Tier4 // the mode in which an under-reporter means something
	c.Stress = stress.Set{stress.ThinUplink.Name: 10, role.Withholder.Name: 0.25, role.UnderReporter.Name: 0.2,
		role.PaddingUnderReporter.Name: 0.1, stress.LossData.Name: 0.05, stress.LossRequests.Name: 0.1, stress.Omit.Name: 2}
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
	if count[role.Withholder.Name] != 3 || count[role.UnderReporter.Name] != 3 || count[role.PaddingUnderReporter.Name] != 1 || count[role.Relay.Name] != 9 {
		t.Errorf("roles %v, want 3 withholders, 3 under-reporters and 1 padding under-reporter of the 15 non-builders", count)
	}
	for i, n := range p.Nodes {
		if n.Loss.Data != 0.05 || n.Loss.Requests != 0.1 {
			t.Errorf("node %d loses %+v, want data 0.05 and requests 0.1", i, n.Loss)
		}
	}
	for _, pl := range p.Payloads {
		omitted := 0
		for _, m := range pl.Prepared.Messages {
			if m == nil {
				omitted++
			}
		}
		if omitted != 2 {
			t.Errorf("slot %d: %d of %d parts omitted, want 2", pl.Slot, omitted, len(pl.Prepared.Messages))
		}
	}

	c.Stress = stress.Set{stress.UplinkSpread.Name: 0.5}
	if p, err = c.plan(); err != nil {
		t.Fatal(err)
	}
	ups := map[int]bool{}
	sum := 0
	for _, n := range p.Nodes {
		ups[n.Rates.UpMbps] = true
		sum += n.Rates.UpMbps
	}
	if mean := float64(sum) / float64(len(p.Nodes)); len(ups) < 4 || mean < 49 || mean > 51 {
		t.Errorf("spread uplinks: %d distinct rates, mean %.1f Mbps; want them spread around the home class's 50", len(ups), mean)
	}
}
