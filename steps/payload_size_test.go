package steps_test

import (
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/report"
)

// TestSmallPayloadsFailEveryKurtosisScenario runs the @kurtosis scenarios
// against recorded metrics of a devnet without load (4 KiB payloads): every
// one fails at the payload-size step, naming the slots and their sizes, and
// none reaches its diffusion budget.
func TestSmallPayloadsFailEveryKurtosisScenario(t *testing.T) {
	// Chain health (@health) does not depend on payloads, and the fake has
	// no standard source to hold the contract to (@contract).
	status, s, log := runKurtosisTag(t, "fake-small", "@kurtosis && ~@slow && ~@health && ~@contract && ~@mixed", "../features")
	if status == 0 {
		t.Fatalf("the suite passed on 4 KiB payloads:\n%s", log)
	}
	run := s.Results()
	if len(run.Scenarios) != 12 {
		t.Fatalf("ran %d scenarios, want the 12 @kurtosis diffusion rows (6 outlines, whole and segmented)", len(run.Scenarios))
	}
	for _, sc := range run.Scenarios {
		if sc.Status != report.StatusFailed {
			t.Errorf("scenario %q: %s, want failed", sc.Name, sc.Status)
		}
		// The fake's warm slots are the newest three: 4, 5 and 6.
		for _, want := range []string{"raw payload size of every warm slot (90.0% of 1048576 B)", "budget >= 943718 B: FAILED",
			"b00 (datacenter) 4100 B at slot 4", "b00 (datacenter) 4101 B at slot 5", "b00 (datacenter) 4102 B at slot 6"} {
			if !strings.Contains(sc.Error, want) {
				t.Errorf("scenario %q error lacks %q:\n%s", sc.Name, want, sc.Error)
			}
		}
		if len(sc.Verdicts) != 1 {
			t.Errorf("scenario %q recorded %d verdicts, want only the payload size's (the budgets must not run)", sc.Name, len(sc.Verdicts))
		}
	}
}

// TestPayloadFillFromEnvironment: SEGDIFF_BUDGET_PAYLOAD_FILL lowers the
// share, so the same 4 KiB payloads pass the step.
func TestPayloadFillFromEnvironment(t *testing.T) {
	t.Setenv("SEGDIFF_BUDGET_PAYLOAD_FILL", "0.3%")
	status, s, log := runKurtosisTag(t, "fake-small", "@kurtosis && ~@slow", "../features/install.feature")
	if status != 0 {
		t.Fatalf("status %d with PAYLOAD_FILL 0.3 %%:\n%s", status, log)
	}
	v := s.Results().Scenarios[0].Verdicts[0]
	if !strings.HasPrefix(v.Check, "raw payload size") || !v.Pass || v.Measured != 4100 {
		t.Errorf("verdict %+v, want a pass measuring 4100 B", v)
	}
}
