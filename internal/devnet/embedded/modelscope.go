package embedded

import (
	"fmt"
	"slices"
	"strings"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
	"github.com/segdiff/segdiff/internal/stress"
)

// flowsValidated is where the flows network model was checked against the
// packet model under issue #23's rule (warm p50 and p99, mean over seeds
// 7–9, within 10 %; copies by network completion within 5 %): the honest
// ladder at 100 and 500 nodes (README.md, "Two network models") and stress
// rows at 100 nodes ("Which stresses the flows model may carry"). A mode
// maps to the stress conditions it passed under, at one value each
// (half the network for a role, 5 % loss, ±80 %). The payload size is the
// spec's PayloadSize, not a stress entry, and raises no caveat: 1 and
// 2 MiB passed for every mode here (128 KiB was not tried). Not here,
// because they failed: segmented and segmented-batch; tier 2 and tier 4
// under spread uplinks; tier 3 under silent or mute nodes; tier 4 under
// mute nodes and under-reporters (at half the network; a quarter passed
// only before the echo demotion); 10 Mbps for all three. The rest was not
// tried; padding under-reporters, the under-reporters' variant, stay
// outside with them.
var flowsValidated = map[mode.Mode][]string{
	mode.Tier2: {role.Withholder.Name, stress.LossData.Name, role.Silent.Name, role.Mute.Name},
	mode.Tier3: {role.Withholder.Name, stress.LossData.Name, stress.UplinkSpread.Name},
	mode.Tier4: {role.Withholder.Name, stress.LossData.Name, role.Silent.Name, role.UnackingWithholder.Name, stress.Omit.Name},
}

// flowsCCValidated are the modes the flows-cc model was checked in against
// the packet model under the same rule, on the honest network at 100 and
// 500 nodes, warm and cold payloads (README.md, "A congestion window in
// the flows model"). Not here, because they failed: segmented-batch (12 %
// fast at the median at both scales) and segmented (13 % and 27 % slow at
// 100 nodes). No stress row was run on it.
var flowsCCValidated = []mode.Mode{mode.Tier2, mode.Tier3, mode.Tier4}

// flowsCCSimnetFQValidated are the modes the flows-cc-simnet-fq model
// carries by the rule of qlog-findings.md, "FQ-CoDel's buckets and drops":
// the same figures and tolerances, judged on the model's first run against
// the mean of two packet runs, on the honest network (at 500 nodes, for
// the tiers, against the packet model's one run). The reference's own runs
// differ by up to 25 % at 100 nodes and 12 % at 500 ("The packet reference
// at 500, run again"), so the verdict is only as sharp as that. Not here:
// segmented-batch (10–14 % fast, 6–8 % short on copies, in both runs at
// 100 nodes) and tier2 (p99 10.6 % low at 100 nodes on the judged run,
// 13.4 % high at 500).
var flowsCCSimnetFQValidated = []mode.Mode{mode.Segmented, mode.Tier3, mode.Tier4}

// flowsCCSimnetFQEdge are the carried modes whose second runs fell outside
// the rule: their figures come with that said.
var flowsCCSimnetFQEdge = map[mode.Mode]string{
	mode.Segmented: "within the rule on its judged runs, its second run at 100 nodes was 10.2 % fast at the median",
}

// flowsCCSimnetFQPackedValidated are the modes the flows-cc-simnet-fq-packed
// model carries by the same rule (qlog-findings.md, "Writes that return in
// flight"), on the honest network: the ladder's segmented-batch and tiers
// 2–4. Not here: segmented, 8–12 % fast at the median at 500 nodes in each
// of three runs; its judged run, made again on the build that fixed the
// windows' ordering defect, was outside (−12.2 % at the median, −14.5 % at
// p99; qlog-findings.md, "Two defects of the windows").
var flowsCCSimnetFQPackedValidated = []mode.Mode{mode.SegmentedBatch, mode.Tier2, mode.Tier3, mode.Tier4}

// flowsCCSimnetFQPackedEdge are its carried modes whose second runs fell
// outside the rule.
var flowsCCSimnetFQPackedEdge = map[mode.Mode]string{
	mode.Tier4: "within the rule on its judged runs, its second run at 100 nodes was 5.5 % short on copies",
}

// ModelCaveat is one line on why c's figures may not stand for the packet
// model's, or "" when they may: c runs the packet model, or a flows model
// where it was validated. For the flows model that covers warm payloads
// only (it has no slow start, so cold payloads are always apart); the
// flows-cc model was validated on cold payloads too.
func (c Config) ModelCaveat() string {
	switch c.Network() {
	case netmodel.Packets:
		return ""
	case netmodel.FlowsCCSimnet:
		return `the flows-cc-simnet network model is validated against the packet model for no mode: these figures are its own (internal/devnet/embedded/qlog-findings.md, "Across seeds, modes and scales")`
	case netmodel.FlowsCCSimnetDrops:
		return `the flows-cc-simnet-drops network model is validated against the packet model for no mode: these figures are its own (internal/devnet/embedded/qlog-findings.md, "FQ-CoDel's buckets and drops")`
	case netmodel.FlowsCCSimnetFQ:
		return c.scopedCaveat(netmodel.FlowsCCSimnetFQ, flowsCCSimnetFQValidated, flowsCCSimnetFQEdge, `(internal/devnet/embedded/qlog-findings.md, "FQ-CoDel's buckets and drops")`)
	case netmodel.FlowsCCSimnetFQPacked:
		return c.scopedCaveat(netmodel.FlowsCCSimnetFQPacked, flowsCCSimnetFQPackedValidated, flowsCCSimnetFQPackedEdge, `(internal/devnet/embedded/qlog-findings.md, "Writes that return in flight")`)
	case netmodel.FlowsCC:
		const where = `(internal/devnet/embedded/README.md, "A congestion window in the flows model")`
		if !slices.Contains(flowsCCValidated, c.Mode) {
			return fmt.Sprintf("the flows-cc network model is not validated against the packet model for mode %s: these figures are its own %s", c.Mode, where)
		}
		if outside := c.stressesOutside(nil); len(outside) > 0 {
			return fmt.Sprintf("the flows-cc network model is validated against the packet model on the honest network only, not for %s under %s: these figures are its own %s", c.Mode, strings.Join(outside, ", "), where)
		}
		return ""
	}
	carried, ok := flowsValidated[c.Mode]
	if !ok {
		return fmt.Sprintf("the flows network model is not validated against the packet model for mode %s: these figures are the flows model's own (internal/devnet/embedded/README.md, \"Two network models\")", c.Mode)
	}
	outside := c.stressesOutside(carried)
	if len(outside) == 0 {
		return ""
	}
	return fmt.Sprintf("the flows network model is not validated against the packet model for %s under %s: these figures are the flows model's own (internal/devnet/embedded/README.md, \"Which stresses the flows model may carry\")", c.Mode, strings.Join(outside, ", "))
}

// scopedCaveat is ModelCaveat for a model validated for the modes in
// validated on the honest network, with a line for the modes in edge;
// where names the write-up.
func (c Config) scopedCaveat(model string, validated []mode.Mode, edge map[mode.Mode]string, where string) string {
	if !slices.Contains(validated, c.Mode) {
		return fmt.Sprintf("the %s network model is not validated against the packet model for mode %s: these figures are its own %s", model, c.Mode, where)
	}
	if outside := c.stressesOutside(nil); len(outside) > 0 {
		return fmt.Sprintf("the %s network model is validated against the packet model on the honest network only, not for %s under %s: these figures are its own %s", model, c.Mode, strings.Join(outside, ", "), where)
	}
	if line, ok := edge[c.Mode]; ok {
		return fmt.Sprintf("the %s network model carries %s at the rule's edge: %s %s", model, c.Mode, line, where)
	}
	return ""
}

// stressesOutside lists, sorted, c's stress conditions not in carried.
// Zero is no stress for every condition: a share of no nodes, no loss, no
// spread, no part omitted.
func (c Config) stressesOutside(carried []string) []string {
	var outside []string
	for name, v := range c.Stress {
		if v != 0 && !slices.Contains(carried, name) {
			outside = append(outside, name)
		}
	}
	slices.Sort(outside)
	return outside
}
