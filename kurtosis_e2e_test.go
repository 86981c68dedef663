package segdiff_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
)

// The README's command for real clients, `DEVNET=kurtosis make e2e`, run as
// it is (make, .ci/e2e's build and test selection, the suite binary)
// against a fake enclave of healthy nodes, must pass: the @kurtosis
// scenarios run and pass, and the broken-network check, which only the
// embedded devnet can run, says so instead of failing the run.
func TestReadmeKurtosisCommandPassesOnAHealthyEnclave(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the suite and runs make e2e against a fake enclave")
	}
	if os.Getenv("SEGDIFF_E2E") != "" || os.Getenv(cliEnv) != "" {
		t.Skip("inside a subprocess of a suite test")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skipf("make is not installed: %v", err)
	}
	e := kurtosistest.StartEnclave(t, kurtosistest.EnclaveConfig{})
	reports := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "e2e")
	cmd.Env = append(os.Environ(),
		"DEVNET="+kurtosis.BackendName,
		kurtosis.EnvEndpoints+"="+e.EndpointsPath,
		"BUILD_DIR="+t.TempDir(),
		"SEGDIFF_REPORTS_DIR="+reports,
		"SEGDIFF_POLL_INTERVAL=10ms",
		"SEGDIFF_WAIT_TIMEOUT=30s",
	)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("DEVNET=kurtosis make e2e against a healthy enclave: %v after %v:\n%s", err, time.Since(start).Round(time.Second), out)
	}
	for _, want := range []string{
		"--- SKIP: TestBrokenNetworkFailsTheSuite",
		"runs on the embedded devnet",
		"--- PASS: TestFeatures",
		"scenarios: 9 passed, 0 failed, 0 skipped",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make e2e passed but its output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(reports, "latest", "summary.md")); err != nil {
		t.Errorf("no report: %v", err)
	}
	t.Logf("DEVNET=kurtosis make e2e passed against the fake enclave in %v", time.Since(start).Round(time.Second))
}
