package steps_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cucumber/godog"

	"github.com/segdiff/segdiff/internal/beacon/beacontest"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/steps"
)

// TestELMissingABlockFailsNamingNodeAndSlot: one node's EL never imports the
// block of slot 5; the EL scenario fails naming that node and slot.
func TestELMissingABlockFailsNamingNodeAndSlot(t *testing.T) {
	attachKurtosis(t, beacontest.HealthyChain(time.Unix(1_800_000_000, 0), healthEpochs, healthSlotsPerEpoch), "n02")
	t.Setenv("SEGDIFF_BUDGET_EL_IMPORT_MAX", "50ms") // how long the missing block is polled
	var log bytes.Buffer
	s := steps.New(steps.Config{Backend: kurtosis.BackendName, ReportsDir: "", PollInterval: 10 * time.Millisecond, WaitTimeout: 2 * time.Second, Log: &log})
	status := godog.TestSuite{
		TestSuiteInitializer: s.InitializeTestSuite,
		ScenarioInitializer:  s.InitializeScenario,
		Options:              &godog.Options{Format: "progress", Output: &bytes.Buffer{}, Paths: []string{"../features/el.feature"}, Strict: true, NoColors: true},
	}.Run()
	if status == 0 {
		t.Fatalf("passed although n02's EL lacks slot 5:\n%s", log.String())
	}
	sc := s.Results().Scenarios[0]
	for _, want := range []string{"warm payloads found on every EL within 50ms of the reveal = 0.0%", "worst: n02 (home) 0.0% at slot 5"} {
		if !strings.Contains(sc.Error, want) {
			t.Errorf("error lacks %q:\n%s", want, sc.Error)
		}
	}
}
