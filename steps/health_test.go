package steps_test

import (
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/beacon/beacontest"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
	"github.com/segdiff/segdiff/internal/report"
	"github.com/segdiff/segdiff/metrics/metricstest"
)

// TestHealthFeatureFails runs health.feature against the kurtosis backend
// over fake beacon APIs with one fault each: every scenario that judges the
// fault fails naming the epoch (and slots) it saw, the others pass.
func TestHealthFeatureFails(t *testing.T) {
	const spe = healthSlotsPerEpoch
	tests := []struct {
		name   string
		mutate func(c *beacontest.Chain)
		failed string   // the scenario that must fail
		want   []string // substrings of its error
	}{
		{"stalled finality", func(c *beacontest.Chain) {
			c.Finalized = func(uint64) uint64 { return 0 } // never finalizes
		}, "finality advances every epoch", []string{"1 of 3 epochs fail", "epoch 4 = 4 epochs", "budget <= 3 epochs"}},
		{"low participation", func(c *beacontest.Chain) {
			c.SetParticipation(3, 40, 64)
		}, "validators attest with the correct target", []string{"1 of 3 epochs fail", "correct target, epoch 3 = 62.5%", "budget >= 95.0%"}},
		{"a run of unrevealed bids", func(c *beacontest.Chain) {
			for slot := uint64(2 * spe); slot < 2*spe+3; slot++ {
				c.Withhold(slot)
			}
		}, "slots have blocks whose payloads the PTC judges present",
			[]string{"judged present, epoch 2 = 62.5%", "budget >= 90.0%", "worst: slot 16 0 votes, slot 17 0 votes, slot 18 0 votes"}},
		{"self-built blocks", func(c *beacontest.Chain) {
			for slot := uint64(4 * spe); slot < 4*spe+3; slot++ {
				c.SelfBuild(slot)
			}
		}, "blocks carry external builders' bids",
			[]string{"external builder, epoch 4 = 62.5%", "budget >= 75.0%", "worst: slot 32, slot 33, slot 34"}},
		{"missed slots", func(c *beacontest.Chain) {
			c.Miss(3*spe + 5)
		}, "slots have blocks whose payloads the PTC judges present",
			[]string{"canonical block, epoch 3 = 87.5%", "budget >= 90.0%", "worst: slot 29"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain := beacontest.HealthyChain(time.Unix(1_800_000_000, 0), healthEpochs, spe)
			tt.mutate(chain)
			attachKurtosis(t, chain, "")
			status, out, s := runKurtosis(t, kurtosisTags, false, "../features/health.feature")
			if status == 0 {
				t.Fatalf("health.feature passed with %s:\n%s", tt.name, out)
			}
			var run []report.Scenario
			for _, sc := range s.Results().Scenarios {
				if sc.Status != report.StatusSkipped { // the whole rows: the enclave runs segmented
					run = append(run, sc)
				}
			}
			if len(run) != 4 {
				t.Fatalf("ran %d scenarios, want 4", len(run))
			}
			for _, sc := range run {
				if !strings.HasPrefix(sc.Name, tt.failed) {
					if sc.Status != report.StatusPassed {
						t.Errorf("scenario %q: %s %s, want it to pass", sc.Name, sc.Status, sc.Error)
					}
					continue
				}
				if sc.Status != report.StatusFailed {
					t.Fatalf("scenario %q: %s, want it to fail", sc.Name, sc.Status)
				}
				for _, w := range tt.want {
					if !strings.Contains(sc.Error, w) {
						t.Errorf("error %q\n does not contain %q", sc.Error, w)
					}
				}
				// Every judged epoch is in the report.
				epochs := map[string]bool{}
				for _, v := range sc.Verdicts {
					if i := strings.LastIndex(v.Check, ", epoch "); i >= 0 {
						epochs[v.Check[i+len(", epoch "):]] = true
					}
				}
				if len(epochs) != 3 || !epochs["2"] || !epochs["3"] || !epochs["4"] {
					t.Errorf("report verdicts cover epochs %v, want 2, 3 and 4", epochs)
				}
			}
		})
	}
}

// TestHealthSkipsExternalBidsWithoutABuilder: on a devnet whose proposers
// build their own payloads no node holds the builder role; the external-bids
// scenario is skipped saying why, and the others run.
func TestHealthSkipsExternalBidsWithoutABuilder(t *testing.T) {
	chain := beacontest.HealthyChain(time.Unix(1_800_000_000, 0), healthEpochs, healthSlotsPerEpoch)
	e := kurtosistest.StartEnclave(t, kurtosistest.EnclaveConfig{
		Network: metricstest.Network{Slots: fakeSlots, Receivers: fakeReceivers, Compressed: fakeCompressed},
		Chain:   chain, NoBuilderRole: true})
	t.Setenv(kurtosis.EnvEndpoints, e.EndpointsPath)
	status, out, s := runKurtosis(t, kurtosisTags, false, "../features/health.feature")
	if status != 0 {
		t.Fatalf("health.feature failed:\n%s", out)
	}
	ran, skipped := 0, ""
	for _, sc := range s.Results().Scenarios {
		switch {
		case strings.HasPrefix(sc.Name, "blocks carry external builders' bids (segmented)"):
			skipped = sc.Error
			if sc.Status != report.StatusSkipped {
				t.Errorf("%q: %s, want skipped", sc.Name, sc.Status)
			}
		case sc.Status == report.StatusPassed:
			ran++
		}
	}
	if ran != 3 || !strings.Contains(skipped, "the devnet runs no external builder") {
		t.Errorf("%d scenarios passed (want 3); the external-bids one says %q", ran, skipped)
	}
}
