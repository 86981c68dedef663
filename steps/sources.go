package steps

import (
	"context"
	"errors"
	"fmt"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/metrics"
)

// Populations of a mixed devnet: the nodes that export the metrics contract
// (a client carrying segdiff's patches) and the others.
const (
	PopulationPatched   = "patched"
	PopulationUnpatched = "unpatched"
)

// sourcesAgree holds each patched node's contract completion to its
// execution_payload_available event (assertions.SourcesAgree).
func (s *Suite) sourcesAgree(ctx context.Context, tolerance string) error {
	st, o, b, err := singleBudget(ctx, "SOURCES_AGREE", tolerance)
	if err != nil {
		return err
	}
	const check = assertions.CheckSourcesAgree
	switch {
	case o.standard == nil:
		return st.fail(check, assertions.UnitSeconds, assertions.OpAtMost, b.value, fmt.Errorf("no standard API record: %w", o.standardErr))
	case len(o.patched) == 0:
		return st.fail(check, assertions.UnitSeconds, assertions.OpAtMost, b.value,
			errors.New("no node exports the metrics contract (exclude this scenario on purpose with ~@contract)"))
	}
	v := assertions.SourcesAgree(only(o.contract, o.patched), *o.standard, o.slots, b.value)
	v.Source = "contract vs " + SourceLabel(metrics.OriginStandardAPI)
	return st.record(v, b)
}

// populationSpeedup compares a mixed devnet's two populations on the one
// source both have, the standard API: the unpatched nodes' median
// completion over the patched nodes'.
func (s *Suite) populationSpeedup(ctx context.Context, factor string) error {
	st, o, f, err := singleBudget(ctx, "POPULATION_SPEEDUP", factor)
	if err != nil {
		return err
	}
	check := fmt.Sprintf("%s nodes' median completion / %s nodes' median completion", PopulationUnpatched, PopulationPatched)
	if o.standard == nil {
		return st.fail(check, assertions.UnitRatio, assertions.OpAtLeast, f.value, fmt.Errorf("no standard API record: %w", o.standardErr))
	}
	samples, err := assertions.Completion(*o.standard, o.slots)
	if err != nil {
		return st.fail(check, assertions.UnitRatio, assertions.OpAtLeast, f.value, err)
	}
	of := map[string]string{}
	for _, n := range o.nodes {
		of[n.ID] = PopulationUnpatched
		if o.patched[n.ID] {
			of[n.ID] = PopulationPatched
		}
	}
	pops, err := assertions.Populations(samples, of)
	if err == nil && (len(pops[PopulationPatched]) == 0 || len(pops[PopulationUnpatched]) == 0) {
		err = fmt.Errorf("a mixed devnet needs both populations, got %d patched and %d unpatched receivers' samples (network-params/mixed.yaml runs both)",
			len(pops[PopulationPatched]), len(pops[PopulationUnpatched]))
	}
	if err != nil {
		return st.fail(check, assertions.UnitRatio, assertions.OpAtLeast, f.value, err)
	}
	v := assertions.SpeedupAtLeast(check, pops[PopulationUnpatched], pops[PopulationPatched], 0.5, f.value)
	v.Source = SourceLabel(metrics.OriginStandardAPI) + "; populations by whether a node exports the contract"
	return st.record(v, f)
}

// singleBudget is the scenario's single devnet and the budget key's value
// (the feature's text, or its environment override).
func singleBudget(ctx context.Context, key, text string) (*scenario, *observation, budgetValue, error) {
	st, o, err := single(ctx)
	if err != nil {
		return nil, nil, budgetValue{}, err
	}
	b, err := envBudget(key, text)
	return st, o, b, err
}

// only keeps the nodes of n in ids.
func only(n assertions.Network, ids map[string]bool) assertions.Network {
	out := n
	out.Nodes = nil
	for _, node := range n.Nodes {
		if ids[node.ID] {
			out.Nodes = append(out.Nodes, node)
		}
	}
	return out
}
