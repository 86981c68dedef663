package steps_test

import (
	"testing"

	"github.com/segdiff/segdiff/internal/report"
)

// Each budget is recorded with the devnet it was checked on and the
// scenario that checked it, so every mode keeps its own (issue #20: one
// mode's median was drawn over every mode).
func TestBudgetsAreRecordedPerDevnetAndScenario(t *testing.T) {
	status, out, s := runFeatures(t, "ci", "../features/completion.feature")
	if status != 0 {
		t.Fatalf("status %d:\n%s", status, out)
	}
	run := s.Results()
	scenarios := map[string]bool{}
	for _, sc := range run.Scenarios {
		scenarios[sc.Name] = true
	}
	medians := map[string]float64{}
	for _, b := range run.Budgets {
		if _, ok := run.Devnets[b.Devnet]; !ok {
			t.Errorf("budget %+v names no devnet the run opened", b)
		}
		if !scenarios[b.Scenario] || b.Check == "" {
			t.Errorf("budget %+v names no scenario and check of the run", b)
		}
		if b.Kind == report.KindCompletion && b.Label == "median" {
			medians[run.Devnets[b.Devnet].Mode] = b.Value
		}
	}
	want := map[string]float64{"segmented": 1.9, "segmented-batch": 1.1, "tier2": 0.8, "tier3": 0.7}
	for mode, v := range want {
		if medians[mode] != v {
			t.Errorf("%s median budget %v, want the feature's %v (all: %v)", mode, medians[mode], v, medians)
		}
	}
}
