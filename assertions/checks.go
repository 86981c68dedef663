package assertions

import (
	"fmt"
	"strings"

	"github.com/segdiff/segdiff/metrics"
)

// Kinds of measurement, the distributions a report draws.
const (
	KindCompletion = "completion" // seconds from reveal
	KindCopies     = "copies"     // payload copies received
	KindInstall    = "install"    // block install delay, seconds
)

// Measure names what a kind's samples are, with its definition: reports
// and results label every distribution with it.
func Measure(kind string) string {
	switch kind {
	case KindCompletion:
		return "completion from reveal"
	case KindCopies:
		return "payload copies " + CopiesOverSlot.String()
	case KindInstall:
		return "block-install delay"
	}
	return kind
}

// Check is one budgeted measurement over a devnet's warm slots: what a
// feature's budget step measures, and what a sweep evaluates in every cell
// so that a budget can be set from the quantity it checks.
type Check struct {
	// Key is the budget's key (SEGDIFF_BUDGET_<Key> overrides it).
	Key string
	// Name says what is measured, in verdicts and tables.
	Name string
	Unit Unit
	// Kind is the report distribution the samples feed; Plot the budget
	// line's label on its plot ("" draws none).
	Kind, Plot string
	// Extract takes the samples from the record.
	Extract func(Network, []uint64) ([]Sample, error)
	// Statistic is the value Judge compares with the budget: the maximum
	// (Quantile 1) or a quantile of the samples.
	Quantile float64
}

// The checks of the features' budget steps. Copies are over the slot:
// what every client's metrics carry (CopiesOverSlot).
var (
	CheckCompletionMax = Check{Key: "COMPLETION_MAX", Name: "completion from reveal, every node and warm slot", Unit: UnitSeconds,
		Kind: KindCompletion, Plot: "every node", Extract: Completion, Quantile: 1}
	CheckCompletionP50 = Check{Key: "COMPLETION_P50", Name: "median completion from reveal", Unit: UnitSeconds,
		Kind: KindCompletion, Plot: "median", Extract: Completion, Quantile: 0.5}
	CheckCompletionP99 = Check{Key: "COMPLETION_P99", Name: "99th percentile of completion from reveal", Unit: UnitSeconds,
		Kind: KindCompletion, Plot: "99th percentile", Extract: Completion, Quantile: 0.99}
	CheckCopiesP50 = Check{Key: "COPIES_P50", Name: "median payload copies " + CopiesOverSlot.String() + " per node and warm slot", Unit: UnitCopies,
		Kind: KindCopies, Plot: "median", Extract: copiesOverSlot, Quantile: 0.5}
	CheckCopiesMax = Check{Key: "COPIES_MAX", Name: "payload copies " + CopiesOverSlot.String() + ", every node and warm slot", Unit: UnitCopies,
		Kind: KindCopies, Plot: "every node", Extract: copiesOverSlot, Quantile: 1}
	CheckInstallMax = Check{Key: "INSTALL_MAX", Name: "block-install delay, every node and warm slot", Unit: UnitSeconds,
		Kind: KindInstall, Extract: InstallDelay, Quantile: 1}
)

// Checks lists every check, by key order of the features.
var Checks = []Check{CheckCompletionMax, CheckCompletionP50, CheckCompletionP99, CheckCopiesP50, CheckCopiesMax, CheckInstallMax}

// copiesOverSlot counts copies over the slot as the record's origin can:
// message data only on the standard source (CopiesFor).
func copiesOverSlot(n Network, slots []uint64) ([]Sample, error) {
	return Copies(n, slots, CopiesFor(n.Origin))
}

// On returns c as it measures on a record of origin o: a copies check
// counts what o can (CopiesFor), and says so in its name.
func (c Check) On(o metrics.Origin) Check {
	if c.Kind == KindCopies && CopiesFor(o) != CopiesOverSlot {
		c.Name = strings.Replace(c.Name, CopiesOverSlot.String(), CopiesFor(o).String(), 1)
	}
	return c
}

// Judge compares samples with budget: every sample (Quantile 1) or the
// quantile at most budget.
func (c Check) Judge(samples []Sample, budget float64) Verdict {
	if c.Quantile == 1 {
		return AllAtMost(c.Name, c.Unit, samples, budget)
	}
	return QuantileAtMost(c.Name, c.Unit, samples, c.Quantile, budget)
}

// Measured is the value Judge would compare with a budget on n's slots,
// for a table of what a devnet measured; a stranded receiver makes a
// completion check's value +Inf (never).
func (c Check) Measured(n Network, slots []uint64) (float64, error) {
	samples, err := c.Extract(n, slots)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", c.Name, err)
	}
	return c.Judge(samples, 0).Measured, nil
}
