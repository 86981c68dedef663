package steps

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/cucumber/godog"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/beacon"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/poll"
	"github.com/segdiff/segdiff/internal/report"
)

// Steps of health.feature (is the glamsterdam chain healthy: finality,
// participation, proposals with external builder bids whose payloads are
// revealed) and the per-client install-delay report of install.feature.

func init() {
	Budgets["FINALITY_LAG"] = Budget{assertions.UnitEpochs, "epochs the finalized epoch may trail each epoch (number)"}
	Budgets["PARTICIPATION"] = Budget{assertions.UnitShare, "minimum share of validators attesting with the correct target, per epoch (percent)"}
	Budgets["CANONICAL_BLOCKS"] = Budget{assertions.UnitShare, "minimum share of slots with a canonical block, per epoch (percent)"}
	Budgets["EXTERNAL_BIDS"] = Budget{assertions.UnitShare, "minimum share of blocks whose bid came from an external builder, per epoch (percent)"}
	Budgets["REVEALED_BIDS"] = Budget{assertions.UnitShare, "minimum share of bids whose payload the PTC judged present, per epoch (percent)"}
	Budgets["INSTALL_P50"] = Budget{assertions.UnitSeconds, "per client, median block-install delay over nodes x warm slots (duration)"}
	Budgets["INSTALL_P99"] = Budget{assertions.UnitSeconds, "per client, 99th-percentile block-install delay over nodes x warm slots (duration)"}
}

// healthDefinitions are the sentences of this file, appended to
// definitions() as one block.
func (s *Suite) healthDefinitions() []definition {
	const health, install = "health.feature", "install.feature (Kurtosis: per client)"
	return []definition{
		{health, "When", `^the chain has finished (\d+) epochs?$`, s.finishedEpochs, nil},
		{health, "Then", `^the finalized epoch trails every epoch by at most (\S+) epochs$`, s.finalityLag, nil},
		{health, "Then", `^at least (\S+) of validators attest with the correct target in every epoch$`, s.participation, nil},
		{health, "Then", `^at least (\S+) of slots have a canonical block in every epoch$`, s.canonicalBlocks, nil},
		{health, "Then", `^at least (\S+) of blocks carry an external builder's bid in every epoch$`, s.externalBids, nil},
		{health, "Then", `^at least (\S+) of bids have their payload judged present by the PTC in every epoch$`, s.revealedBids, nil},
		{install, "Then", `^per client the block-install delay has p50 at most (\S+), p99 at most (\S+) and max at most (\S+)$`, s.installPerClient, nil},
	}
}

type healthKey struct{}

// healthReading is what "the chain has finished N epochs" read: the newest
// N epochs whose attestation rewards are final, from one beacon node.
type healthReading struct {
	source string
	epochs []devnet.EpochHealth
}

// epochsBehindHead is how far behind the head the newest judged epoch is:
// an epoch's attestations are included (and its rewards computed) during
// the next epoch, whose state the following one starts from.
const epochsBehindHead = 2

func (s *Suite) finishedEpochs(ctx context.Context, n int) (context.Context, error) {
	st, err := state(ctx)
	if err != nil {
		return ctx, err
	}
	if n < 1 {
		return ctx, fmt.Errorf("need at least 1 epoch, the step asks for %d", n)
	}
	if len(st.obs) != 1 {
		return ctx, fmt.Errorf("step needs exactly one devnet, the scenario opened %d", len(st.obs))
	}
	o := st.obs[0]
	url, err := beaconURL(ctx, o.d)
	if err != nil {
		return ctx, err
	}
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, err := beacon.New(bctx, beacon.WithAddress(url))
	if err != nil {
		return ctx, fmt.Errorf("read chain health of devnet (%s): %w", o.cfg, err)
	}
	spe, err := c.SlotsPerEpoch(bctx)
	if err != nil {
		return ctx, fmt.Errorf("read chain health from %s: %w", url, err)
	}
	head, err := s.waitForEpoch(bctx, c, o, spe, uint64(n)+epochsBehindHead)
	if err != nil {
		return ctx, err
	}
	h := &healthReading{source: url}
	for e := head - epochsBehindHead - uint64(n) + 1; e <= head-epochsBehindHead; e++ {
		eh, err := c.EpochHealth(bctx, e, spe)
		if err != nil {
			return ctx, fmt.Errorf("read chain health from %s: %w", url, err)
		}
		h.epochs = append(h.epochs, eh)
	}
	return context.WithValue(ctx, healthKey{}, h), nil
}

// beaconURL is the beacon API of the devnet's first node that has one.
func beaconURL(ctx context.Context, d devnet.Devnet) (string, error) {
	nodes, err := d.Nodes(ctx)
	if err != nil {
		return "", fmt.Errorf("list nodes: %w", err)
	}
	for _, n := range nodes {
		if n.BeaconURL != "" {
			return n.BeaconURL, nil
		}
	}
	return "", fmt.Errorf("no node of the %s devnet has a beacon API (the embedded devnet runs none; health.feature is @kurtosis)", d.Backend())
}

// waitForEpoch polls the head until its epoch is at least want and returns
// that epoch; the wait is bounded by Config.WaitTimeout, or by the slots
// still to come from the head at the start plus 2 minutes.
func (s *Suite) waitForEpoch(ctx context.Context, c *beacon.Client, o *observation, spe, want uint64) (uint64, error) {
	timeout := s.cfg.WaitTimeout
	if timeout <= 0 {
		slot, err := c.HeadSlot(ctx)
		if err != nil {
			return 0, fmt.Errorf("wait for epoch %d: %w", want, err)
		}
		if slot/spe >= want {
			return slot / spe, nil
		}
		timing, err := o.d.Timing(ctx)
		if err != nil {
			return 0, fmt.Errorf("read timing of devnet (%s): %w", o.cfg, err)
		}
		timeout = time.Duration((want+1)*spe-slot)*timing.SlotDuration + 2*time.Minute
	}
	var epoch uint64
	err := poll.Until(ctx, time.Now().Add(timeout), s.cfg.PollInterval, func(ctx context.Context) error {
		slot, err := c.HeadSlot(ctx)
		if err != nil {
			return poll.Stop(fmt.Errorf("wait for epoch %d: %w", want, err))
		}
		if epoch = slot / spe; epoch >= want {
			return nil
		}
		return fmt.Errorf("devnet (%s): head at slot %d (epoch %d), the checks need epoch %d", o.cfg, slot, epoch, want)
	})
	if err != nil {
		return 0, err
	}
	return epoch, nil
}

func (s *Suite) finalityLag(ctx context.Context, budget string) error {
	return healthCheck(ctx, "FINALITY_LAG", budget, assertions.UnitEpochs, assertions.FinalityLag)
}

func (s *Suite) participation(ctx context.Context, share string) error {
	return healthCheck(ctx, "PARTICIPATION", share, assertions.UnitShare, assertions.Participation)
}

func (s *Suite) canonicalBlocks(ctx context.Context, share string) error {
	return healthCheck(ctx, "CANONICAL_BLOCKS", share, assertions.UnitShare, assertions.CanonicalBlocks)
}

func (s *Suite) externalBids(ctx context.Context, share string) error {
	st, err := state(ctx)
	if err != nil {
		return err
	}
	if len(st.obs) != 1 {
		return fmt.Errorf("step needs exactly one devnet, the scenario opened %d", len(st.obs))
	}
	nodes, err := st.obs[0].d.Nodes(ctx)
	if err != nil {
		return fmt.Errorf("external bids: list the devnet's nodes: %w", err)
	}
	// A devnet whose proposers build their own payloads (no builder node:
	// whole.yaml) has no external bid to count: the check cannot apply.
	if !slices.ContainsFunc(nodes, func(n devnet.Node) bool { return n.HasRole(devnet.RoleBuilder) }) {
		st.skipped = "the devnet runs no external builder (no node holds the builder role; every proposer builds its own payload), so there are no external bids to count"
		fmt.Fprintf(s.cfg.Log, "segdiff: skip %q: %s\n", st.rec.Name, st.skipped)
		return godog.ErrSkip
	}
	return healthCheck(ctx, "EXTERNAL_BIDS", share, assertions.UnitShare, assertions.ExternalBids)
}

func (s *Suite) revealedBids(ctx context.Context, share string) error {
	return healthCheck(ctx, "REVEALED_BIDS", share, assertions.UnitShare, assertions.RevealedBids)
}

// healthCheck judges the scenario's health reading epoch by epoch and
// records every epoch's verdict in the report.
func healthCheck(ctx context.Context, key, text string, u assertions.Unit, judge func([]devnet.EpochHealth, float64) []assertions.Verdict) error {
	st, err := state(ctx)
	if err != nil {
		return err
	}
	h, ok := ctx.Value(healthKey{}).(*healthReading)
	if !ok {
		return errors.New("no chain health read: a \"When the chain has finished N epochs\" step must come first")
	}
	b, err := envBudget(key, text)
	if err != nil {
		return err
	}
	if b.override != "" {
		st.rec.Overrides = append(st.rec.Overrides, b.override)
	}
	vs := judge(h.epochs, b.value)
	for i := range vs {
		vs[i].Source = SourceBeaconReads
	}
	st.rec.Verdicts = append(st.rec.Verdicts, vs...)
	if err := assertions.WorstEpoch(vs); err != nil {
		return fmt.Errorf("%w (budget from %s, read from %s)", err, b.source, h.source)
	}
	return nil
}

// installPerClient reports the block-install delay's p50, p99 and max per
// client (devnet.Node.Client) and gates each on its budget.
func (s *Suite) installPerClient(ctx context.Context, p50, p99, maxDelay string) error {
	st, o, err := single(ctx)
	if err != nil {
		return err
	}
	type gate struct {
		key, text, stat string
		q               float64
	}
	gates := []gate{{"INSTALL_P50", p50, "p50", 0.5}, {"INSTALL_P99", p99, "p99", 0.99}, {"INSTALL_MAX", maxDelay, "max", 1}}
	budgets := make([]budgetValue, len(gates))
	for i, g := range gates {
		if budgets[i], err = envBudget(g.key, g.text); err != nil {
			return err
		}
	}
	samples, err := assertions.InstallDelay(o.net, o.slots)
	if err != nil {
		return st.fail("block-install delay per client", assertions.UnitSeconds, assertions.OpAtMost, budgets[1].value, err)
	}
	st.samples(report.KindInstall, o, samples)
	client := map[string]string{}
	for _, n := range o.nodes {
		client[n.ID] = n.Client
	}
	byClient := map[string][]assertions.Sample{}
	for _, sm := range samples {
		c := client[sm.Node]
		if c == "" {
			c = "unknown"
		}
		byClient[c] = append(byClient[c], sm)
	}
	clients := make([]string, 0, len(byClient))
	for c := range byClient {
		clients = append(clients, c)
	}
	sort.Strings(clients)
	var errs []error
	for _, c := range clients {
		for i, g := range gates {
			v := assertions.QuantileAtMost(fmt.Sprintf("block-install delay %s, %s", g.stat, c), assertions.UnitSeconds, byClient[c], g.q, budgets[i].value)
			if err := st.record(v, budgets[i]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(clients) == 0 {
		return st.fail("block-install delay per client", assertions.UnitSeconds, assertions.OpAtMost, budgets[1].value, errors.New("no samples"))
	}
	return errors.Join(errs...)
}
