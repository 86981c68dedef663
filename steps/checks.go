package steps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/poll"
	"github.com/segdiff/segdiff/internal/report"
	"github.com/segdiff/segdiff/metrics"
)

// measure runs c on the scenario's single devnet against the budget in text
// (or its environment override) and records the verdict.
func measure(ctx context.Context, c assertions.Check, text string) error {
	st, o, err := single(ctx)
	if err != nil {
		return err
	}
	b, err := envBudget(c.Key, text)
	if err != nil {
		return err
	}
	c = c.On(o.net.Origin)
	samples, err := c.Extract(o.net, o.slots)
	if err != nil {
		if c.Kind == assertions.KindCopies && o.net.Origin == metrics.OriginStandardAPI {
			err = fmt.Errorf("%w; a node without the metrics contract needs %s to measure bytes (exclude byte scenarios on purpose with ~%s)",
				err, metrics.TopicBytesSeries, TagBytes)
		}
		return st.fail(c.Name, c.Unit, assertions.OpAtMost, b.value, err)
	}
	st.samples(c.Kind, o, samples)
	if c.Plot != "" {
		st.suite.addBudget(report.BudgetLine{Kind: c.Kind, Label: c.Plot, Value: b.value,
			Devnet: o.cfg.String(), Scenario: st.rec.Name, Check: c.Name})
	}
	return st.record(c.Judge(samples, b.value), b)
}

func single(ctx context.Context) (*scenario, *observation, error) {
	st, err := state(ctx)
	if err != nil {
		return nil, nil, err
	}
	o, err := st.only()
	return st, o, err
}

// completionPair returns the completion samples of the scenario's two
// devnets, slow mode first.
func completionPair(st *scenario, slowMode, fastMode string) (slow, fast []assertions.Sample, err error) {
	so, err := st.byMode(slowMode)
	if err != nil {
		return nil, nil, err
	}
	fo, err := st.byMode(fastMode)
	if err != nil {
		return nil, nil, err
	}
	if slow, err = assertions.Completion(so.net, so.slots); err != nil {
		return nil, nil, err
	}
	if fast, err = assertions.Completion(fo.net, fo.slots); err != nil {
		return nil, nil, err
	}
	st.samples(report.KindCompletion, so, slow)
	st.samples(report.KindCompletion, fo, fast)
	return slow, fast, nil
}

// copiesPair reads the copies over each warm slot per receiver of two
// modes' devnets.
func copiesPair(st *scenario, aMode, bMode string) (a, b []assertions.Sample, err error) {
	ao, err := st.byMode(aMode)
	if err != nil {
		return nil, nil, err
	}
	bo, err := st.byMode(bMode)
	if err != nil {
		return nil, nil, err
	}
	if a, err = assertions.Copies(ao.net, ao.slots, assertions.CopiesOverSlot); err != nil {
		return nil, nil, err
	}
	if b, err = assertions.Copies(bo.net, bo.slots, assertions.CopiesOverSlot); err != nil {
		return nil, nil, err
	}
	st.samples(report.KindCopies, ao, a)
	st.samples(report.KindCopies, bo, b)
	return a, b, nil
}

// addBudget records a budget checked on one devnet for the report: it is
// drawn in that devnet's panel only.
func (s *Suite) addBudget(b report.BudgetLine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.run.AddBudget(b)
}

// ptcVotes reads the PTC votes of o's warm slots. Votes for a slot are
// carried by the next block, which a live devnet may not have yet, so a
// slot without votes is retried for two slot durations before it is left
// out (and PTCTimely fails naming it).
func (s *Suite) ptcVotes(ctx context.Context, o *observation) (map[uint64]devnet.PTCVotes, error) {
	timing, err := o.d.Timing(ctx)
	if err != nil {
		return nil, fmt.Errorf("read timing of devnet (%s): %w", o.cfg, err)
	}
	deadline := time.Now().Add(2 * timing.SlotDuration)
	votes := map[uint64]devnet.PTCVotes{}
	for _, slot := range o.slots {
		err := poll.Until(ctx, deadline, s.cfg.PollInterval, func(ctx context.Context) error {
			v, err := o.d.PTC(ctx, slot)
			if err != nil && !errors.Is(err, devnet.ErrNoVotes) {
				return poll.Stop(err)
			}
			if err == nil {
				votes[slot] = v
			}
			return err
		})
		switch {
		case errors.Is(err, poll.ErrTimeout):
			fmt.Fprintf(s.cfg.Log, "[diagnostics/ptc] slot %d: %v\n", slot, err)
		case err != nil:
			return nil, fmt.Errorf("read PTC votes for slot %d: %w", slot, err)
		}
	}
	return votes, nil
}
