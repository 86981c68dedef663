package steps

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/cucumber/godog"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/devnet"
)

// Budgets maps each overridable budget key to what it bounds; the
// environment variable SEGDIFF_BUDGET_<key> replaces the feature's value.
var Budgets = map[string]string{
	"COMPLETION_MAX":          "every receiving node's completion of every warm payload, from the reveal (duration, e.g. 3s)",
	"COMPLETION_P50":          "median completion from the reveal over nodes x warm slots (duration)",
	"COMPLETION_SHARE":        "minimum share of completions within COMPLETION_SHARE_WITHIN (percent, e.g. 95%)",
	"COMPLETION_SHARE_WITHIN": "the completion time that share refers to (duration)",
	"COPIES_P50":              "median payload copies received per node and warm slot (number)",
	"COPIES_MAX":              "maximum payload copies any node receives in any warm slot (number)",
	"INSTALL_MAX":             "maximum block-install delay of any node in any warm slot (duration)",
	"SPEEDUP":                 "minimum ratio of whole-mode to segmented-mode median completion (number)",
}

// Devnet-selecting sentences; Prefetch reads them too.
var (
	reDevnet       = regexp.MustCompile(`^a (whole|segmented|segmented-batch) devnet$`)
	reDevnetPreset = regexp.MustCompile(`^a (whole|segmented|segmented-batch) devnet with preset "([a-z0-9-]+)"$`)
	reIdentical    = regexp.MustCompile(`^identical (whole|segmented|segmented-batch) and (whole|segmented|segmented-batch) devnets with preset "([a-z0-9-]+)"$`)
)

// register binds every sentence, grouped by the feature that uses it.
func (s *Suite) register(sc *godog.ScenarioContext) {
	// Every feature: choose devnets, then observe warm slots.
	sc.Given(reDevnet, s.aDevnet)
	sc.Given(reDevnetPreset, s.aDevnetWithPreset)
	sc.Given(reIdentical, s.identicalDevnets)
	sc.When(`^(?:the|each) devnet has revealed (\d+) warm payloads?$`, s.revealedWarm)

	// ptc.feature
	sc.Then(`^the PTC votes payload present in every warm slot$`, s.ptcTimely)

	// completion.feature
	sc.Then(`^every node completes every warm payload within (\S+) of the reveal$`, s.everyNodeCompletes)
	sc.Then(`^the median completion from the reveal is at most (\S+)$`, s.medianCompletion)
	sc.Then(`^at least (\S+) of completions are within (\S+) of the reveal$`, s.shareCompleted)

	// bytes.feature
	sc.Then(`^the median node receives at most (\S+) payload copies per warm slot$`, s.medianCopies)
	sc.Then(`^no node receives more than (\S+) payload copies in any warm slot$`, s.maxCopies)

	// install.feature
	sc.Then(`^every node's block-install delay is at most (\S+)$`, s.installDelay)

	// comparison.feature
	sc.Then(`^the (segmented|segmented-batch) median completion is at least (\S+) times faster than (whole|segmented)$`, s.speedup)
}

func (s *Suite) aDevnet(ctx context.Context, mode string) error {
	return s.aDevnetWithPreset(ctx, mode, s.cfg.Preset)
}

func (s *Suite) aDevnetWithPreset(ctx context.Context, mode, preset string) error {
	st, err := state(ctx)
	if err != nil {
		return err
	}
	cfg, err := st.config(mode, preset)
	if err != nil {
		return err
	}
	return st.use(cfg)
}

func (s *Suite) identicalDevnets(ctx context.Context, modeA, modeB, preset string) error {
	if modeA == modeB {
		return fmt.Errorf("identical devnets need two different modes, got %s twice", modeA)
	}
	if err := s.aDevnetWithPreset(ctx, modeA, preset); err != nil {
		return err
	}
	return s.aDevnetWithPreset(ctx, modeB, preset)
}

func (s *Suite) revealedWarm(ctx context.Context, n int) error {
	st, err := state(ctx)
	if err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("need at least 1 warm payload, the step asks for %d", n)
	}
	return st.observe(ctx, n)
}

func (s *Suite) ptcTimely(ctx context.Context) error {
	st, o, err := single(ctx)
	if err != nil {
		return err
	}
	votes := map[uint64]devnet.PTCVotes{}
	for _, slot := range o.slots {
		v, err := o.d.PTC(ctx, slot)
		if err != nil && !errors.Is(err, devnet.ErrNoVotes) {
			return fmt.Errorf("read PTC votes for slot %d: %w", slot, err)
		}
		if err == nil {
			votes[slot] = v
		}
	}
	return st.record(assertions.PTCTimely(o.slots, votes), "PAYLOAD_TIMELY_THRESHOLD (PTC_SIZE/2)")
}

func (s *Suite) everyNodeCompletes(ctx context.Context, budget string) error {
	return measure(ctx, checkCompletionMax, budget)
}

func (s *Suite) medianCompletion(ctx context.Context, budget string) error {
	return measure(ctx, checkCompletionP50, budget)
}

func (s *Suite) shareCompleted(ctx context.Context, share, within string) error {
	st, o, err := single(ctx)
	if err != nil {
		return err
	}
	w, wsrc, err := envBudget("COMPLETION_SHARE_WITHIN", within, assertions.UnitSeconds)
	if err != nil {
		return err
	}
	min, src, err := envBudget("COMPLETION_SHARE", share, assertions.UnitShare)
	if err != nil {
		return err
	}
	check := fmt.Sprintf("share of completions within %s of the reveal", assertions.UnitSeconds.Format(w))
	samples, err := assertions.Completion(o.net, o.slots)
	if err != nil {
		return st.fail(check, assertions.UnitShare, assertions.OpAtLeast, min, err)
	}
	return st.record(assertions.ShareAtLeast(check, samples, w, min), src+" and "+wsrc)
}

func (s *Suite) medianCopies(ctx context.Context, budget string) error {
	return measure(ctx, checkCopiesP50, budget)
}

func (s *Suite) maxCopies(ctx context.Context, budget string) error {
	return measure(ctx, checkCopiesMax, budget)
}

func (s *Suite) installDelay(ctx context.Context, budget string) error {
	return measure(ctx, checkInstallMax, budget)
}

func (s *Suite) speedup(ctx context.Context, fastMode, factor, slowMode string) error {
	st, err := state(ctx)
	if err != nil {
		return err
	}
	f, src, err := envBudget("SPEEDUP", factor, assertions.UnitRatio)
	if err != nil {
		return err
	}
	check := fmt.Sprintf("%s median completion / %s median completion", slowMode, fastMode)
	slow, fast, err := completionPair(st, slowMode, fastMode)
	if err != nil {
		return st.fail(check, assertions.UnitRatio, assertions.OpAtLeast, f, err)
	}
	return st.record(assertions.SpeedupAtLeast(check, slow, fast, 0.5, f), src)
}
