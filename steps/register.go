package steps

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/cucumber/godog"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/internal/devnet"
)

// modes matches one diffusion mode name (package mode's list).
var modes = "(" + mode.Pattern() + ")"

// Devnet-selecting sentences; Prefetch reads them too.
var (
	reDevnet       = regexp.MustCompile(`^a ` + modes + ` devnet$`)
	reDevnetPreset = regexp.MustCompile(`^a ` + modes + ` devnet with preset "([a-z0-9-]+)"$`)
	reIdentical    = regexp.MustCompile(`^identical ` + modes + ` and ` + modes + ` devnets with preset "([a-z0-9-]+)"$`)
	reStressed     = regexp.MustCompile(`^a ` + modes + ` devnet under stress "([^"]+)"$`)
	// reStressedPreset is the stress list on another preset (scale.feature:
	// the published 500-node network).
	reStressedPreset = regexp.MustCompile(`^a ` + modes + ` devnet with preset "([a-z0-9-]+)" under stress "([^"]+)"$`)
)

// definition is one step sentence and its handler.
type definition struct {
	group   string // the feature (or "every feature") that uses it
	keyword string // Given, When or Then
	expr    string // anchored regular expression
	fn      any
	// check is the budgeted measurement a sentence makes, its budget the
	// sentence's first argument (nil for other sentences).
	check *assertions.Check
}

// definitions lists every sentence, grouped by the feature that uses it.
// SYNTAX.md is rendered from it (Syntax).
func (s *Suite) definitions() []definition {
	const every, ptc, completion, bytes, install, comparison = "every feature", "ptc.feature",
		"completion.feature", "bytes.feature", "install.feature", "comparison.feature"
	return append([]definition{
		{every, "Given", reDevnet.String(), s.aDevnet, nil},
		{every, "Given", reDevnetPreset.String(), s.aDevnetWithPreset, nil},
		{every, "Given", reIdentical.String(), s.identicalDevnets, nil},
		{"stress.feature", "Given", reStressed.String(), s.aStressedDevnet, nil},
		{"scale.feature", "Given", reStressedPreset.String(), s.selectDevnet, nil},
		{every, "When", `^(?:the|each) devnet has revealed (\d+) warm payloads?$`, s.revealedWarm, nil},
		{ptc, "Then", `^the PTC votes payload present in every warm slot$`, s.ptcTimely, nil},
		{completion, "Then", `^every node completes every warm payload within (\S+) of the reveal$`, s.everyNodeCompletes, &assertions.CheckCompletionMax},
		{completion, "Then", `^the median completion from the reveal is at most (\S+)$`, s.medianCompletion, &assertions.CheckCompletionP50},
		{completion, "Then", `^the 99th percentile of completion from the reveal is at most (\S+)$`, s.tailCompletion, &assertions.CheckCompletionP99},
		{completion, "Then", `^at least (\S+) of completions are within (\S+) of the reveal$`, s.shareCompleted, nil},
		{bytes, "Then", `^the median node receives at most (\S+) payload copies over a warm slot$`, s.medianCopies, &assertions.CheckCopiesP50},
		{bytes, "Then", `^no node receives more than (\S+) payload copies over any warm slot$`, s.maxCopies, &assertions.CheckCopiesMax},
		{install, "Then", `^every node's block-install delay is at most (\S+)$`, s.installDelay, &assertions.CheckInstallMax},
		{comparison, "Then", `^the ` + modes + ` median completion is at least (\S+) times faster than ` + modes + `$`, s.speedup, nil},
		{comparison, "Then", `^the ` + modes + ` median node receives at most (\S+) times the payload copies of ` + modes + ` over a warm slot$`, s.copiesRatio, nil},
		// Every diffusion scenario, before its budgets (payload_size.go).
		{"every diffusion feature", "Then", `^every warm payload is at least (\S+) of (\S+) bytes raw$`, s.payloadAtLeast, nil},
		{"el.feature", "Then", `^every EL imports every warm payload within (\S+) of the reveal$`, s.elImported, nil},
		{"sources.feature", "Then", `^the contract and the standard API agree on every node's completion within (\S+)$`, s.sourcesAgree, nil},
		{"mixed.feature", "Then", `^the patched nodes' median completion is at least (\S+) times faster than the unpatched nodes'$`, s.populationSpeedup, nil},
	}, append(s.healthDefinitions(), s.stressDefinitions()...)...)
}

// register binds every definition to sc with its keyword.
func (s *Suite) register(sc *godog.ScenarioContext) {
	for _, d := range s.definitions() {
		switch d.keyword {
		case "Given":
			sc.Given(d.expr, d.fn)
		case "When":
			sc.When(d.expr, d.fn)
		default:
			sc.Then(d.expr, d.fn)
		}
	}
}

// Syntax renders the step sentences as Markdown, grouped by feature, with
// the budget variables; steps/SYNTAX.md is this text (a test keeps it so).
func Syntax() string {
	var b strings.Builder
	b.WriteString("# Step syntax\n\nGenerated from steps/register.go by `go test ./steps -run TestSyntax -update`; do not edit.\n")
	group := ""
	for _, d := range (&Suite{}).definitions() {
		if d.group != group {
			group = d.group
			fmt.Fprintf(&b, "\n## %s\n\n| keyword | sentence |\n|---|---|\n", group)
		}
		fmt.Fprintf(&b, "| %s | `%s` |\n", d.keyword, strings.ReplaceAll(d.expr, "|", `\|`))
	}
	b.WriteString("\n## Budget overrides\n\n| variable | bounds |\n|---|---|\n")
	for _, k := range budgetKeys() {
		fmt.Fprintf(&b, "| `%s%s` | %s |\n", BudgetEnvPrefix, k, Budgets[k].Doc)
	}
	return b.String()
}

func (s *Suite) aDevnet(ctx context.Context, mode string) error {
	return s.aDevnetWithPreset(ctx, mode, s.cfg.Preset)
}

func (s *Suite) aDevnetWithPreset(ctx context.Context, mode, preset string) error {
	return s.selectDevnet(ctx, mode, preset, "")
}

// aStressedDevnet selects a devnet under a stress (package stress:
// "withholder=50%, loss-data=5%").
func (s *Suite) aStressedDevnet(ctx context.Context, mode, stress string) error {
	return s.selectDevnet(ctx, mode, s.cfg.Preset, stress)
}

// selectDevnet adds the devnet a sentence selects (devnetConfig) to the
// scenario, opening it if no scenario has.
func (s *Suite) selectDevnet(ctx context.Context, mode, preset, stress string) error {
	st, err := state(ctx)
	if err != nil {
		return err
	}
	cfg, err := s.devnetConfig(mode, preset, stress)
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
	votes, err := s.ptcVotes(ctx, o)
	if err != nil {
		return err
	}
	v := assertions.PTCTimely(o.slots, votes)
	v.Source = SourceBeaconReads + ": payload attestations in blocks"
	if _, ok := o.d.(devnet.Standard); !ok {
		v.Source = "the devnet's own PTC (" + o.d.Backend() + ")"
	}
	return st.record(v, budgetValue{source: "PAYLOAD_TIMELY_THRESHOLD (PTC_SIZE/2)"})
}

func (s *Suite) everyNodeCompletes(ctx context.Context, budget string) error {
	return measure(ctx, assertions.CheckCompletionMax, budget)
}

func (s *Suite) medianCompletion(ctx context.Context, budget string) error {
	return measure(ctx, assertions.CheckCompletionP50, budget)
}

func (s *Suite) tailCompletion(ctx context.Context, budget string) error {
	return measure(ctx, assertions.CheckCompletionP99, budget)
}

func (s *Suite) shareCompleted(ctx context.Context, share, within string) error {
	st, o, err := single(ctx)
	if err != nil {
		return err
	}
	minShare, err := envBudget("COMPLETION_SHARE", share)
	if err != nil {
		return err
	}
	w, err := envBudget("COMPLETION_SHARE_WITHIN", within)
	if err != nil {
		return err
	}
	check := fmt.Sprintf("share of completions within %s of the reveal", assertions.UnitSeconds.Format(w.value))
	samples, err := assertions.Completion(o.net, o.slots)
	if err != nil {
		return st.fail(check, assertions.UnitShare, assertions.OpAtLeast, minShare.value, err)
	}
	return st.record(assertions.ShareAtLeast(check, samples, w.value, minShare.value), minShare, w)
}

func (s *Suite) medianCopies(ctx context.Context, budget string) error {
	return measure(ctx, assertions.CheckCopiesP50, budget)
}

func (s *Suite) maxCopies(ctx context.Context, budget string) error {
	return measure(ctx, assertions.CheckCopiesMax, budget)
}

func (s *Suite) installDelay(ctx context.Context, budget string) error {
	return measure(ctx, assertions.CheckInstallMax, budget)
}

// copiesRatio compares the median node's copies over a warm slot on two
// identical devnets.
func (s *Suite) copiesRatio(ctx context.Context, lightMode, ratio, heavyMode string) error {
	st, err := state(ctx)
	if err != nil {
		return err
	}
	f, err := envBudget("COPIES_RATIO", ratio)
	if err != nil {
		return err
	}
	check := fmt.Sprintf("%s median copies %s / %s median copies", lightMode, assertions.CopiesOverSlot, heavyMode)
	light, heavy, err := copiesPair(st, lightMode, heavyMode)
	if err != nil {
		return st.fail(check, assertions.UnitRatio, assertions.OpAtMost, f.value, err)
	}
	return st.record(assertions.RatioAtMost(check, assertions.UnitCopies, light, heavy, 0.5, f.value), f)
}

func (s *Suite) speedup(ctx context.Context, fastMode, factor, slowMode string) error {
	st, err := state(ctx)
	if err != nil {
		return err
	}
	f, err := envBudget("SPEEDUP", factor)
	if err != nil {
		return err
	}
	check := fmt.Sprintf("%s median completion / %s median completion", slowMode, fastMode)
	slow, fast, err := completionPair(st, slowMode, fastMode)
	if err != nil {
		return st.fail(check, assertions.UnitRatio, assertions.OpAtLeast, f.value, err)
	}
	return st.record(assertions.SpeedupAtLeast(check, slow, fast, 0.5, f.value), f)
}
