package segdiff_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
	"github.com/segdiff/segdiff/internal/racedetector"
	"github.com/segdiff/segdiff/internal/report"
)

// The README's command for real clients, `DEVNET=kurtosis make e2e`, run as
// it is (make, .ci/e2e's build and test selection, the suite binary)
// against live fake enclaves of three kinds of client
// (kurtosistest.EnclaveConfig.Client): one carrying the metrics contract,
// one with the standard API and Prysm's per-topic byte counter, one with
// the standard API only. The segmented @kurtosis rows run and the whole
// and @mixed ones are skipped; the broken-network check, which only the
// embedded devnet can run, says so instead of failing the run. Every
// verdict in the report names its source and measures what the enclave's
// fixed timings imply (receiver i completes 200+40i ms after the reveal:
// the slowest 520 ms, the median node 360 ms); on the client with neither
// the contract nor a byte counter the byte scenario fails closed naming
// the client and the counter.
func TestReadmeKurtosisCommandPassesOnAHealthyEnclave(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the suite and runs make e2e against fake enclaves")
	}
	if racedetector.Enabled {
		t.Skip("make e2e builds and runs the suite without -race (make test runs this)")
	}
	if os.Getenv("SEGDIFF_E2E") != "" || os.Getenv(cliEnv) != "" {
		t.Skip("inside a subprocess of a suite test")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skipf("make is not installed: %v", err)
	}
	build := t.TempDir() // one build for every run
	tests := []struct {
		name   string
		client kurtosistest.Client
		tags   string // TAGS for make e2e; "" runs the README's command as it is
		source string // the completion verdicts' source, by prefix
		tally  string
		fail   string // what the failing run's output must say; "" when it passes
	}{
		{name: "contract", client: kurtosistest.ContractClient, source: "contract",
			tally: "scenarios: 11 passed, 0 failed, 11 skipped"},
		{name: "standard API and a byte counter", client: kurtosistest.StandardBytesClient, tags: "@kurtosis && ~@slow && ~@broken && ~@contract",
			source: "standard API", tally: "scenarios: 10 passed, 0 failed, 11 skipped"},
		{name: "standard API only", client: kurtosistest.StandardClient, tags: "@kurtosis && ~@slow && ~@broken && ~@contract",
			source: "standard API", tally: "scenarios: 9 passed, 1 failed, 11 skipped",
			fail: "node n01 (lighthouse): standard API reading p2p_pubsub_rpc_recv_pub_bytes_total"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.client
			e := kurtosistest.StartEnclave(t, kurtosistest.EnclaveConfig{Client: &c})
			reports := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "e2e")
			cmd.Env = append(os.Environ(),
				"DEVNET="+kurtosis.BackendName,
				kurtosis.EnvEndpoints+"="+e.EndpointsPath,
				"BUILD_DIR="+build,
				"SEGDIFF_REPORTS_DIR="+reports,
				"SEGDIFF_POLL_INTERVAL=10ms",
				"SEGDIFF_WAIT_TIMEOUT=60s",
				// A pause of this loaded machine delays every event of a moment
				// alike; steps' TestSourcesDisagreeFailsTheAgreement proves the
				// agreement's own verdict.
				"SEGDIFF_BUDGET_SOURCES_AGREE=1s",
				"TAGS="+tt.tags,
			)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			if (err == nil) != (tt.fail == "") {
				t.Fatalf("DEVNET=kurtosis make e2e against the %s enclave: %v after %v:\n%s", tt.name, err, time.Since(start).Round(time.Second), out)
			}
			wants := []string{"--- PASS: TestFeatures", tt.tally}
			if tt.tags == "" {
				wants = append(wants, "--- SKIP: TestBrokenNetworkFailsTheSuite", "runs on the embedded devnet")
			}
			if tt.fail != "" {
				wants = []string{"--- FAIL: TestFeatures", tt.tally, tt.fail, "exclude byte scenarios on purpose with ~@bytes"}
			}
			for _, want := range wants {
				if !strings.Contains(string(out), want) {
					t.Errorf("make e2e's output lacks %q:\n%s", want, out)
				}
			}
			checkReport(t, filepath.Join(reports, "latest", "results.json"), tt.source)
			t.Logf("DEVNET=kurtosis make e2e against the %s enclave: %v in %v", tt.name, err, time.Since(start).Round(time.Second))
		})
	}
}

// checkReport reads a run's results.json: every verdict names a source,
// and the completion verdicts come from source and measure the fake's
// timings (exactly from the contract, within a loaded 2-core machine's
// timer slack from the standard API).
func checkReport(t *testing.T, path, source string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report: %v", err)
	}
	var run report.Run
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	want := map[string]float64{assertions.CheckCompletionMax.Name: 0.520, assertions.CheckCompletionP50.Name: 0.360}
	tol := 0.001 // the contract carries the history's own timestamps
	if source != "contract" {
		tol = 0.2 // receipt times: a loaded machine's timers run late, by up to ~0.2 s seen
	}
	for _, sc := range run.Scenarios {
		for _, v := range sc.Verdicts {
			if v.Source == "" {
				t.Errorf("scenario %q: verdict %q names no source", sc.Name, v.Check)
			}
			w, ok := want[v.Check]
			if !ok {
				continue
			}
			delete(want, v.Check)
			if !strings.HasPrefix(v.Source, source) || math.Abs(v.Measured-w) > tol {
				t.Errorf("%s = %v from %q, want %v from the %s", v.Check, v.Measured, v.Source, w, source)
			}
		}
	}
	for check := range want {
		t.Errorf("the report has no verdict %q", check)
	}
}
