package steps_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/cucumber/godog"

	"github.com/segdiff/segdiff/internal/beacon/beacontest"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
	"github.com/segdiff/segdiff/internal/report"
	"github.com/segdiff/segdiff/metrics/metricstest"
	"github.com/segdiff/segdiff/steps"
)

// TestFeaturesRunUnchangedAgainstKurtosisBackend attaches the real
// "kurtosis" backend to an endpoints file naming fake nodes: the fake
// backend's metrics servers and a fake beacon API serving a healthy chain
// whose blocks carry 400 of 512 payload_present votes per slot, and fake
// ELs that hold every bid's block. Every @kurtosis scenario must pass, the
// @embedded-only ones must not run.
func TestFeaturesRunUnchangedAgainstKurtosisBackend(t *testing.T) {
	attachKurtosis(t, beacontest.HealthyChain(time.Unix(1_800_000_000, 0), healthEpochs, healthSlotsPerEpoch), "")
	status, out, s := runKurtosis(t, "../features")
	if status != 0 {
		t.Fatalf("status %d:\n%s", status, out)
	}
	run := s.Results()
	if len(run.Scenarios) != 9 {
		t.Fatalf("ran %d scenarios, want the 9 @kurtosis ones: %+v", len(run.Scenarios), run.Scenarios)
	}
	for _, sc := range run.Scenarios {
		if sc.Status != report.StatusPassed {
			t.Errorf("scenario %q: %s %s", sc.Name, sc.Status, sc.Error)
		}
		for _, v := range sc.Verdicts {
			if v.Check == "PTC payload_present votes per warm slot" && v.Measured != 400 {
				t.Errorf("PTC votes measured %v, want 400 from the fake chain", v.Measured)
			}
		}
	}
}

// The fake chain of the Kurtosis-backend tests (kurtosistest's default).
const (
	healthEpochs        = kurtosistest.HealthyEpochs
	healthSlotsPerEpoch = kurtosistest.HealthySlotsPerEpoch
)

// attachKurtosis starts a fake enclave (kurtosistest.StartEnclave) whose
// nodes serve chain's beacon API, and points the kurtosis backend at it.
// The EL of node lacking does not hold slot 5's block.
func attachKurtosis(t *testing.T, chain *beacontest.Chain, lacking string) {
	t.Helper()
	e := kurtosistest.StartEnclave(t, kurtosistest.EnclaveConfig{
		Network: metricstest.Network{Slots: fakeSlots, Receivers: fakeReceivers, Compressed: fakeCompressed},
		Chain:   chain, LackingEL: lacking})
	t.Setenv(kurtosis.EnvEndpoints, e.EndpointsPath)
}

// runKurtosis runs the @kurtosis scenarios of paths against the attached
// kurtosis backend and returns godog's status, its output with the suite's
// log, and the suite.
func runKurtosis(t *testing.T, paths ...string) (int, string, *steps.Suite) {
	t.Helper()
	var log, out bytes.Buffer
	s := steps.New(steps.Config{Backend: kurtosis.BackendName, ReportsDir: t.TempDir(), RunID: "kt",
		PollInterval: 10 * time.Millisecond, WaitTimeout: 2 * time.Second, Log: &log})
	status := godog.TestSuite{
		TestSuiteInitializer: s.InitializeTestSuite,
		ScenarioInitializer:  s.InitializeScenario,
		Options: &godog.Options{Format: "progress", Output: &out, Paths: paths,
			Tags: "@kurtosis && ~@slow", Strict: true, NoColors: true},
	}.Run()
	return status, out.String() + log.String(), s
}
