package steps

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v34"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet"
)

// Plan is what a run of the suite with some godog options would execute.
type Plan struct {
	// Scenarios the options' paths and tag filter select, in file order.
	Scenarios []Planned
	// Tags carried anywhere in the options' paths (feature, scenario or
	// Examples tags) and the suite's own backend and @slow tags, sorted:
	// the names a tag filter may use.
	Tags []string
}

// Planned is one selected scenario (one Examples row of an outline).
type Planned struct {
	Feature string // the feature file
	Name    string
	Tags    []string
	Steps   []PlannedStep
	// Skip says why this suite would skip the scenario ("" when it runs).
	Skip string
}

// PlannedStep is one step of a planned scenario.
type PlannedStep struct {
	Keyword string // Given, When or Then (And/But resolved)
	Text    string
}

// Runnable returns the planned scenarios this suite would execute.
func (p Plan) Runnable() []Planned {
	var out []Planned
	for _, sc := range p.Scenarios {
		if sc.Skip == "" {
			out = append(out, sc)
		}
	}
	return out
}

// Plan lists what opts would run against this suite: the scenarios its
// paths and tag filter select, each with the reason this suite would skip
// it, and every tag the features carry.
func (s *Suite) Plan(opts godog.Options) (Plan, error) {
	all := opts
	all.Tags = ""
	features, err := (&godog.TestSuite{Options: &all}).RetrieveFeatures()
	if err != nil {
		return Plan{}, fmt.Errorf("plan scenarios: %w", err)
	}
	// The suite's own tags are always known: a default filter such as
	// "@embedded && ~@slow" stays valid on a path without @slow scenarios.
	plan := Plan{Tags: []string{TagBroken, TagEmbedded, TagExtended, TagKurtosis, TagMixed, TagSlow}}
	for _, f := range features {
		for _, p := range f.Pickles {
			for _, t := range p.Tags {
				if !slices.Contains(plan.Tags, t.Name) {
					plan.Tags = append(plan.Tags, t.Name)
				}
			}
		}
	}
	sort.Strings(plan.Tags)
	selected := opts
	features, err = (&godog.TestSuite{Options: &selected}).RetrieveFeatures()
	if err != nil {
		return Plan{}, fmt.Errorf("plan scenarios: %w", err)
	}
	for _, f := range features {
		for _, p := range f.Pickles {
			pl := Planned{Feature: p.Uri, Name: p.Name}
			for _, t := range p.Tags {
				pl.Tags = append(pl.Tags, t.Name)
			}
			for _, st := range p.Steps {
				pl.Steps = append(pl.Steps, PlannedStep{Keyword: keywordOf(st.Type), Text: st.Text})
			}
			pl.Skip = s.skipReason(pl.Tags)
			if pl.Skip == "" {
				var texts []string
				for _, st := range pl.Steps {
					texts = append(texts, st.Text)
				}
				pl.Skip = s.devnetSkip(texts)
			}
			plan.Scenarios = append(plan.Scenarios, pl)
		}
	}
	return plan, nil
}

func keywordOf(t messages.PickleStepType) string {
	switch t {
	case messages.PickleStepType_CONTEXT:
		return "Given"
	case messages.PickleStepType_ACTION:
		return "When"
	case messages.PickleStepType_OUTCOME:
		return "Then"
	}
	return ""
}

// DefaultTags is the tag filter of a run on backend when none is given:
// the backend's scenarios without the opt-in @slow and @broken ones.
func DefaultTags(backend string) string {
	return "@" + backend + " && ~" + TagSlow + " && ~" + TagExtended + " && ~" + TagBroken
}

// OptedIn reports whether the tag filter tags selects the opt-in tag (@slow,
// @broken) rather than excluding it.
func OptedIn(tags, tag string) bool {
	return strings.Contains(tags, tag) && !strings.Contains(tags, "~"+tag)
}

// TagAtoms splits a godog tag filter the way godog reads it ("," is or,
// "&&" is and, a leading "~" negates) and returns the tag names it uses,
// with their "@". A malformed filter is an error (CheckTagFilter).
func TagAtoms(filter string) ([]string, error) {
	if err := CheckTagFilter(filter); err != nil {
		return nil, err
	}
	if strings.TrimSpace(filter) == "" {
		return nil, nil
	}
	var out []string
	for _, or := range strings.Split(filter, ",") {
		for _, term := range strings.Split(or, "&&") {
			out = append(out, "@"+strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(term), "~"), "@"))
		}
	}
	return out, nil
}

// tagSyntax is godog's tag filter syntax, for errors.
const tagSyntax = `godog's syntax: "," for or, "&&" for and, "~" for not, e.g. "@embedded && ~@slow"`

// CheckTagFilter checks that filter is a well-formed godog tag filter:
// terms joined by "," (or) and "&&" (and), each an optional "~" (not), an
// optional "@" and a name without spaces. godog's own parser panics on an
// empty term ("@embedded &&") and reads other mistakes as a tag no
// scenario carries; the error names the filter in one line, and for
// Cucumber's "and/or/not" syntax suggests godog's spelling.
func CheckTagFilter(filter string) error {
	if strings.TrimSpace(filter) == "" {
		return nil
	}
	for _, or := range strings.Split(filter, ",") {
		for _, term := range strings.Split(or, "&&") {
			name := strings.TrimSpace(term)
			name = strings.TrimPrefix(name, "~")
			name = strings.TrimPrefix(name, "@")
			switch {
			case name == "":
				return fmt.Errorf("tag filter %q has an empty term (%s)", filter, tagSyntax)
			case strings.ContainsAny(name, " \t()!|&"):
				return fmt.Errorf("tag filter %q: %q is not one tag (%s)%s", filter, strings.TrimSpace(term), tagSyntax, godogSpelling(filter))
			case strings.ContainsAny(name, "~@"):
				return fmt.Errorf("tag filter %q: %q is not a tag (%s)", filter, strings.TrimSpace(term), tagSyntax)
			}
		}
	}
	return nil
}

// godogSpelling suggests godog's spelling of a filter written in Cucumber's
// tag expression syntax ("@a and not @b"), or "".
func godogSpelling(filter string) string {
	if strings.ContainsAny(filter, "()") {
		return "; godog's filters have no parentheses"
	}
	fields := strings.Fields(filter)
	var out strings.Builder
	changed := false
	for i := 0; i < len(fields); i++ {
		switch f := fields[i]; {
		case f == "and":
			out.WriteString(" && ")
			changed = true
		case f == "or":
			out.WriteString(", ")
			changed = true
		case f == "not" && i+1 < len(fields):
			out.WriteString("~")
			changed = true
		default:
			out.WriteString(f)
		}
	}
	if !changed {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", out.String())
}

// Preflight checks, before any devnet opens, everything that would make a
// run check nothing or check something other than what was asked:
//   - the backend is registered;
//   - the tag filter is well-formed (godog's own parser panics on some
//     malformed filters);
//   - every set variable of EnvVars parses, and every set SEGDIFF_
//     variable is one of them (a misspelled budget would be ignored);
//   - every tag in the filter is carried by some feature (a typo'd tag
//     would silently select nothing, or everything);
//   - the filter selects at least one scenario, and this suite would run
//     at least one of them (a @kurtosis filter on the embedded backend
//     would skip them all);
//   - every step of the runnable scenarios has a definition, and every
//     devnet they select is one the backend would open (its preset, its
//     stress, the network: devnet.CheckConfig, once per devnet);
//   - the backend's own preflight (a Kurtosis run needs its endpoints).
//
// It returns the plan so that the caller can prefetch its devnets.
func (s *Suite) Preflight(ctx context.Context, opts godog.Options) (Plan, error) {
	if err := devnet.Known(s.cfg.Backend); err != nil {
		return Plan{}, fmt.Errorf("backend (DEVNET): %w", err)
	}
	if err := CheckEnv(os.Environ()); err != nil {
		return Plan{}, err
	}
	// Before godog reads the filter: its parser panics on some mistakes.
	atoms, err := TagAtoms(opts.Tags)
	if err != nil {
		return Plan{}, err
	}
	plan, err := s.Plan(opts)
	if err != nil {
		return Plan{}, err
	}
	var unknown []string
	for _, a := range atoms {
		if !slices.Contains(plan.Tags, a) && !slices.Contains(unknown, a) {
			unknown = append(unknown, a)
		}
	}
	if len(unknown) > 0 {
		return plan, fmt.Errorf("tag filter %q names %s, which no feature in %s carries (known tags: %s)",
			opts.Tags, strings.Join(unknown, ", "), strings.Join(opts.Paths, " "), strings.Join(plan.Tags, " "))
	}
	if len(plan.Scenarios) == 0 {
		return plan, fmt.Errorf("tag filter %q selects no scenario in %s", opts.Tags, strings.Join(opts.Paths, " "))
	}
	runnable := plan.Runnable()
	if len(runnable) == 0 {
		reasons := map[string]int{}
		for _, sc := range plan.Scenarios {
			reasons[sc.Skip]++
		}
		var parts []string
		for r, n := range reasons {
			parts = append(parts, fmt.Sprintf("%d %s", n, r))
		}
		sort.Strings(parts)
		return plan, fmt.Errorf("the %d scenarios tag filter %q selects would all be skipped on the %s backend (%s): nothing would be checked",
			len(plan.Scenarios), opts.Tags, s.cfg.Backend, strings.Join(parts, "; "))
	}
	var undefined []string
	for _, sc := range runnable {
		for _, st := range sc.Steps {
			if !s.defined(st.Keyword, st.Text) {
				undefined = append(undefined, fmt.Sprintf("%s: %q: %s %s", sc.Feature, sc.Name, st.Keyword, st.Text))
			}
		}
	}
	if len(undefined) > 0 {
		return plan, fmt.Errorf("%d undefined steps (steps/SYNTAX.md lists the sentences): %s", len(undefined), strings.Join(undefined, "; "))
	}
	checked := map[string]bool{}
	for _, sc := range runnable {
		for _, st := range sc.Steps {
			cfgs, err := s.configsOf(st.Text)
			for _, cfg := range cfgs {
				if err == nil && !checked[cfg.String()] {
					checked[cfg.String()] = true
					err = devnet.CheckConfig(s.cfg.Backend, cfg)
				}
			}
			if err != nil {
				return plan, fmt.Errorf("%s: %q: %s %s: %w", sc.Feature, sc.Name, st.Keyword, st.Text, err)
			}
		}
	}
	if err := devnet.Preflight(ctx, s.cfg.Backend); err != nil {
		return plan, err
	}
	return plan, nil
}

// compiled is a definition's sentence, compiled once per suite.
type compiled struct {
	keyword string
	re      *regexp.Regexp
}

// defined reports whether a step of keyword (Given/When/Then) and text has
// a definition, as godog would match it.
func (s *Suite) defined(keyword, text string) bool {
	s.defsOnce.Do(func() {
		for _, d := range s.definitions() {
			s.defs = append(s.defs, compiled{keyword: d.keyword, re: regexp.MustCompile(d.expr)})
		}
	})
	for _, d := range s.defs {
		if (keyword == "" || d.keyword == keyword) && d.re.MatchString(text) {
			return true
		}
	}
	return false
}

// failUndefined is a before-step hook: a step no definition matches fails
// as an error, not as godog's "undefined" status, which a non-strict run
// (the godog CLI's default) counts as a pass.
func (s *Suite) failUndefined(ctx context.Context, st *godog.Step) (context.Context, error) {
	if !s.defined(keywordOf(st.Type), st.Text) {
		return ctx, fmt.Errorf("undefined step %q: no sentence in steps/SYNTAX.md matches it", st.Text)
	}
	return ctx, nil
}

// BudgetRow is one budget of a planned scenario: a check the scenario makes
// on its devnet, against a value.
type BudgetRow struct {
	Feature, Scenario string
	// Devnet is the devnet the scenario's Given step selects.
	Devnet devnet.Config
	Check  assertions.Check
	// Budget is the value in the feature's text (an environment override
	// does not apply: the row is what the feature says).
	Budget float64
}

// BudgetRows lists every budget the runnable scenarios of plan check on a
// single devnet (comparison scenarios, which measure two, are left out),
// in plan order, so that a sweep's cells can be held against the
// features' budgets (segdiff sweep budgets).
func (s *Suite) BudgetRows(plan Plan) ([]BudgetRow, error) {
	defs := s.definitions()
	var out []BudgetRow
	for _, sc := range plan.Runnable() {
		var cfgs []devnet.Config
		for _, st := range sc.Steps {
			if st.Keyword == "Given" {
				c, err := s.configsOf(st.Text)
				if err != nil {
					return nil, fmt.Errorf("%s: %q: %s %s: %w", sc.Feature, sc.Name, st.Keyword, st.Text, err)
				}
				cfgs = append(cfgs, c...)
			}
		}
		if len(cfgs) != 1 {
			continue
		}
		for _, st := range sc.Steps {
			for _, d := range defs {
				m := regexp.MustCompile(d.expr).FindStringSubmatch(st.Text)
				if d.check == nil || d.keyword != st.Keyword || m == nil {
					continue
				}
				v, err := parseBudget(m[1], Budgets[d.check.Key].Unit)
				if err != nil {
					return nil, fmt.Errorf("%s: %q: budget %q: %w", sc.Feature, sc.Name, m[1], err)
				}
				out = append(out, BudgetRow{Feature: sc.Feature, Scenario: sc.Name, Devnet: cfgs[0], Check: *d.check, Budget: v})
			}
		}
	}
	return out, nil
}
