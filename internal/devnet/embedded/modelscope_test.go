package embedded_test

import (
	"strings"
	"testing"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
	"github.com/segdiff/segdiff/internal/stress"
)

func TestModelCaveat(t *testing.T) {
	tests := []struct {
		name     string
		netModel string
		mode     mode.Mode
		stress   stress.Set
		want     []string // substrings; none: no caveat
	}{
		{name: "packets, any mode", netModel: netmodel.Packets, mode: mode.Segmented},
		{name: "packets by default", mode: mode.SegmentedBatch, stress: stress.Set{"mute": 0.5}},
		{name: "flows, honest tier2", netModel: netmodel.Flows, mode: mode.Tier2},
		{name: "flows-cc, segmented-batch", netModel: netmodel.FlowsCC, mode: mode.SegmentedBatch, want: []string{"flows-cc network model is not validated", "mode segmented-batch"}},
		{name: "flows-cc, stock segments", netModel: netmodel.FlowsCC, mode: mode.Segmented, want: []string{"mode segmented:"}},
		{name: "flows-cc, honest tier3", netModel: netmodel.FlowsCC, mode: mode.Tier3},
		{name: "flows-cc-simnet, honest tier3", netModel: netmodel.FlowsCCSimnet, mode: mode.Tier3, want: []string{"flows-cc-simnet network model is validated against the packet model for no mode"}},
		{name: "flows-cc-simnet, segmented", netModel: netmodel.FlowsCCSimnet, mode: mode.Segmented, want: []string{"qlog-findings.md"}},
		{name: "flows-cc-simnet-fq, honest tier2", netModel: netmodel.FlowsCCSimnetFQ, mode: mode.Tier2, want: []string{"flows-cc-simnet-fq network model is not validated against the packet model for mode tier2", "buckets and drops"}},
		{name: "flows-cc-simnet-fq, segmented-batch", netModel: netmodel.FlowsCCSimnetFQ, mode: mode.SegmentedBatch, want: []string{"not validated", "mode segmented-batch"}},
		{name: "flows-cc-simnet-fq, honest segmented", netModel: netmodel.FlowsCCSimnetFQ, mode: mode.Segmented, want: []string{"carries segmented at the rule's edge", "second run at 100 nodes was 10.2 % fast"}},
		{name: "flows-cc-simnet-fq, honest tier3", netModel: netmodel.FlowsCCSimnetFQ, mode: mode.Tier3},
		{name: "flows-cc-simnet-fq, tier4 under withholders", netModel: netmodel.FlowsCCSimnetFQ, mode: mode.Tier4, stress: stress.Set{"withholder": 0.5}, want: []string{"honest network only", "tier4 under withholder"}},
		{name: "flows-cc-simnet-drops, segmented-batch", netModel: netmodel.FlowsCCSimnetDrops, mode: mode.SegmentedBatch, want: []string{"flows-cc-simnet-drops network model is validated against the packet model for no mode"}},
		{name: "flows-cc-simnet-fq-packed, honest segmented-batch", netModel: netmodel.FlowsCCSimnetFQPacked, mode: mode.SegmentedBatch},
		{name: "flows-cc-simnet-fq-packed, honest tier2", netModel: netmodel.FlowsCCSimnetFQPacked, mode: mode.Tier2},
		{name: "flows-cc-simnet-fq-packed, honest segmented", netModel: netmodel.FlowsCCSimnetFQPacked, mode: mode.Segmented, want: []string{"flows-cc-simnet-fq-packed network model is not validated against the packet model for mode segmented", "Writes that return in flight"}},
		{name: "flows-cc-simnet-fq-packed, segmented under loss", netModel: netmodel.FlowsCCSimnetFQPacked, mode: mode.Segmented, stress: stress.Set{"loss-data": 0.05}, want: []string{"not validated", "mode segmented"}},
		{name: "flows-cc-simnet-fq-packed, honest tier4", netModel: netmodel.FlowsCCSimnetFQPacked, mode: mode.Tier4, want: []string{"carries tier4 at the rule's edge", "5.5 % short on copies"}},
		{name: "flows-cc-simnet-fq-packed, tier3 under silent nodes", netModel: netmodel.FlowsCCSimnetFQPacked, mode: mode.Tier3, stress: stress.Set{"silent": 0.5}, want: []string{"honest network only", "tier3 under silent"}},
		{name: "flows-cc-simnet-fq-packed, whole", netModel: netmodel.FlowsCCSimnetFQPacked, mode: mode.Whole, want: []string{"not validated", "mode whole"}},
		{name: "flows-cc, honest tier4, a condition set to zero", netModel: netmodel.FlowsCC, mode: mode.Tier4, stress: stress.Set{"silent": 0}},
		{name: "flows-cc, tier2 under withholders (carried by flows, not run on flows-cc)", netModel: netmodel.FlowsCC, mode: mode.Tier2,
			stress: stress.Set{"withholder": 0.5, "loss-data": 0.05}, want: []string{"honest network only", "tier2 under loss-data, withholder:"}},
		{name: "flows, tier3 with withholders", netModel: netmodel.Flows, mode: mode.Tier3, stress: stress.Set{"withholder": 0.5}},
		{name: "flows, tier3 under spread uplinks", netModel: netmodel.Flows, mode: mode.Tier3, stress: stress.Set{"uplink-spread": 0.8}},
		{name: "flows, tier4 with silent nodes", netModel: netmodel.Flows, mode: mode.Tier4, stress: stress.Set{"silent": 0.5}},
		{name: "flows, stock segments", netModel: netmodel.Flows, mode: mode.Segmented, want: []string{"mode segmented:", "Two network models"}},
		{name: "flows, segmented-batch", netModel: netmodel.Flows, mode: mode.SegmentedBatch, want: []string{"mode segmented-batch:"}},
		{name: "flows, whole", netModel: netmodel.Flows, mode: mode.Whole, want: []string{"mode whole:"}},
		{name: "flows, tier3 with silent nodes", netModel: netmodel.Flows, mode: mode.Tier3, stress: stress.Set{"silent": 0.5}, want: []string{"tier3 under silent:"}},
		{name: "flows, tier4 under its unacknowledging withholders and an omitting source", netModel: netmodel.Flows, mode: mode.Tier4, stress: stress.Set{"unacking-withholder": 0.5, "omit": 32}},
		{name: "flows, tier4 under under-reporters", netModel: netmodel.Flows, mode: mode.Tier4, stress: stress.Set{"under-reporter": 0.5}, want: []string{"tier4 under under-reporter:"}},
		{name: "flows, tier4 under padding under-reporters", netModel: netmodel.Flows, mode: mode.Tier4, stress: stress.Set{"padding-under-reporter": 0.25}, want: []string{"tier4 under padding-under-reporter:"}},
		{name: "flows, tier4 under spread uplinks", netModel: netmodel.Flows, mode: mode.Tier4, stress: stress.Set{"uplink-spread": 0.8}, want: []string{"tier4 under uplink-spread:"}},
		{name: "flows, a condition set to zero is no stress", netModel: netmodel.Flows, mode: mode.Tier3, stress: stress.Set{"silent": 0, "uplink-spread": 0.8}},
		{name: "flows, tier2 with mute nodes", netModel: netmodel.Flows, mode: mode.Tier2, stress: stress.Set{"mute": 0.5}},
		{name: "flows, tier2 under spread uplinks", netModel: netmodel.Flows, mode: mode.Tier2, stress: stress.Set{"uplink-spread": 0.8}, want: []string{"tier2 under uplink-spread:"}},
		{name: "flows, the stresses outside named, sorted", netModel: netmodel.Flows, mode: mode.Tier4,
			stress: stress.Set{"withholder": 0.25, "uplink-mbps": 10, "mute": 0.1}, want: []string{"tier4 under mute, uplink-mbps:", "Which stresses"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := embedded.DefaultConfig()
			c.NetModel, c.Mode, c.Stress = tt.netModel, tt.mode, tt.stress
			got := c.ModelCaveat()
			if len(tt.want) == 0 {
				if got != "" {
					t.Fatalf("ModelCaveat() = %q, want none", got)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("ModelCaveat() = %q, want it to contain %q", got, w)
				}
			}
		})
	}
}
