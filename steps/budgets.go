package steps

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/segdiff/segdiff/assertions"
)

// BudgetEnvPrefix starts every budget override variable.
const BudgetEnvPrefix = "SEGDIFF_BUDGET_"

// Budget is one overridable budget: its unit (which decides how its text
// parses) and what it bounds.
type Budget struct {
	Unit assertions.Unit
	Doc  string
}

// Budgets maps each overridable budget key to its unit and what it bounds;
// the environment variable SEGDIFF_BUDGET_<key> replaces the feature's value.
var Budgets = map[string]Budget{
	"COMPLETION_MAX":          {assertions.UnitSeconds, "every receiving node's completion of every warm payload, from the reveal (duration, e.g. 3s)"},
	"COMPLETION_P50":          {assertions.UnitSeconds, "median completion from the reveal over nodes x warm slots (duration)"},
	"COMPLETION_P99":          {assertions.UnitSeconds, "99th percentile (nearest rank) of completion from the reveal over nodes x warm slots (duration)"},
	"COMPLETION_SHARE":        {assertions.UnitShare, "minimum share of completions within COMPLETION_SHARE_WITHIN (percent, e.g. 95%)"},
	"COMPLETION_SHARE_WITHIN": {assertions.UnitSeconds, "the completion time that share refers to (duration)"},
	// The copies budgets bound copies as their checks count them, and say
	// which definition that is (assertions.CopiesOverSlot).
	"COPIES_P50":    {assertions.UnitCopies, assertions.CheckCopiesP50.Name + ", late duplicates included (number)"},
	"COPIES_MAX":    {assertions.UnitCopies, "maximum " + assertions.CheckCopiesMax.Name + ", late duplicates included (number)"},
	"INSTALL_MAX":   {assertions.UnitSeconds, "maximum block-install delay of any node in any warm slot (on Kurtosis: per client; duration)"},
	"EL_IMPORT_MAX": {assertions.UnitSeconds, "time after the reveal by which every EL must hold each warm payload's block (duration)"},
	"PAYLOAD_FILL":  {assertions.UnitShare, "minimum raw payload size of every warm slot, as a share of PAYLOAD_BYTES (percent)"},
	"PAYLOAD_BYTES": {assertions.UnitBytes, "the target raw payload size PAYLOAD_FILL refers to (bytes; segdiff.load.payload_bytes)"},
	"SPEEDUP":       {assertions.UnitRatio, "minimum ratio of the slower mode's median completion to the faster mode's (number)"},
	"COPIES_RATIO":  {assertions.UnitRatio, "maximum ratio of the lighter mode's median copies " + assertions.CopiesOverSlot.String() + " to the heavier mode's (number)"},
	// The two sources and the two populations (steps/sources.go).
	"SOURCES_AGREE":      {assertions.UnitSeconds, "largest difference between a node's contract completion and its execution_payload_available event, every patched node and warm slot (duration)"},
	"POPULATION_SPEEDUP": {assertions.UnitRatio, "minimum ratio of the unpatched nodes' to the patched nodes' median completion on a mixed devnet, both from the standard API (number)"},
}

// budgetKeys returns the keys of Budgets, sorted.
func budgetKeys() []string {
	keys := make([]string, 0, len(Budgets))
	for k := range Budgets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// budgetValue is a budget as a step uses it: the value in its unit's base
// unit and where it came from.
type budgetValue struct {
	value float64
	// source is "the feature" or the overriding variable.
	source string
	// override describes an override for the report ("" when none):
	// "SEGDIFF_BUDGET_X=500ms (feature: 1750ms)".
	override string
}

// envBudget reads SEGDIFF_BUDGET_<key> if set, else text (the feature's
// value), in the unit Budgets gives key.
func envBudget(key, text string) (budgetValue, error) {
	b, ok := Budgets[key]
	if !ok {
		return budgetValue{}, fmt.Errorf("budget %s is not in steps.Budgets", key)
	}
	out := budgetValue{source: "the feature"}
	name := BudgetEnvPrefix + key
	if v, ok := os.LookupEnv(name); ok && v != "" {
		out.source = name
		out.override = fmt.Sprintf("%s=%s (feature: %s)", name, v, text)
		text = v
	}
	v, err := parseBudget(text, b.Unit)
	if err != nil {
		return budgetValue{}, fmt.Errorf("parse budget %s from %s: %w", key, out.source, err)
	}
	out.value = v
	return out, nil
}

// parseBudget reads "3s"/"750ms" (seconds), "95%"/"0.95" (share), or a plain
// number (copies, ratios).
func parseBudget(text string, u assertions.Unit) (float64, error) {
	switch u {
	case assertions.UnitSeconds:
		d, err := time.ParseDuration(text)
		if err != nil {
			return 0, err
		}
		if d < 0 {
			return 0, fmt.Errorf("negative duration %q", text)
		}
		return d.Seconds(), nil
	case assertions.UnitShare:
		pct := strings.HasSuffix(text, "%")
		v, err := parseFloat(strings.TrimSuffix(text, "%"))
		if pct {
			v /= 100
		}
		if err == nil && (v < 0 || v > 1) {
			err = fmt.Errorf("share %q outside 0..100%%", text)
		}
		return v, err
	}
	v, err := parseFloat(strings.TrimSuffix(strings.TrimSuffix(text, "x"), "×"))
	if err == nil && v < 0 {
		err = fmt.Errorf("negative number %q", text)
	}
	return v, err
}

func parseFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return v, nil
}
