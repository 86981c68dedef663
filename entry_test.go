package segdiff_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cucumber/godog"
)

// cliEnv makes this test binary behave as the runner the godog CLI
// generates from this package (`godog run ...`): the same TestSuite with
// nil Options, so that godog parses the CLI's arguments itself.
const cliEnv = "SEGDIFF_TEST_AS_GODOG_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		os.Exit(godog.TestSuite{Name: "segdiff", TestSuiteInitializer: InitializeTestSuite, ScenarioInitializer: InitializeScenario}.Run())
	}
	os.Exit(m.Run())
}

// runSelf runs this test binary with args and env and returns its exit
// code and combined output.
func runSelf(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%v timed out:\n%s", args, out)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

const typoFeature = `@embedded
Feature: a feature with a typo
  Scenario: undefined given
    Given a segmneted devnet
    When the devnet has revealed 3 warm payloads
    Then the PTC votes payload present in every warm slot
`

// The suite must fail, with its cause and before any devnet opens, on every
// input that would make it check nothing; these cases run the real entry
// points: `make e2e`'s TestFeatures and the godog CLI's runner.
func TestEntryPointsFailClosed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite's entry points as subprocesses")
	}
	if os.Getenv(cliEnv) != "" || os.Getenv("SEGDIFF_E2E") != "" {
		t.Skip("inside a subprocess of this test")
	}
	feature := filepath.Join(t.TempDir(), "typo.feature")
	if err := os.WriteFile(feature, []byte(typoFeature), 0o644); err != nil {
		t.Fatal(err)
	}
	goTest := func(extra ...string) []string {
		return append([]string{"-test.run=^TestFeatures$", "-test.count=1"}, extra...)
	}
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{name: "go test: typo'd tag", env: []string{"SEGDIFF_E2E=1"}, args: goTest("-godog.tags=@embeded && ~@slow"),
			want: "names @embeded, which no feature"},
		{name: "go test: typo'd backend", env: []string{"SEGDIFF_E2E=1", "DEVNET=kurtsis"}, args: goTest(),
			want: `unknown devnet backend "kurtsis"`},
		{name: "go test: another backend's tag", env: []string{"SEGDIFF_E2E=1"}, args: goTest("-godog.tags=@kurtosis"),
			want: "would all be skipped on the embedded backend"},
		{name: "go test: kurtosis without an enclave", env: []string{"SEGDIFF_E2E=1", "DEVNET=kurtosis", "SEGDIFF_ENDPOINTS=/nonexistent/endpoints.json"}, args: goTest(),
			want: "read endpoints"},
		{name: "go test: undefined step", env: []string{"SEGDIFF_E2E=1"}, args: goTest("-godog.tags=@embedded", feature),
			want: `undefined steps (steps/SYNTAX.md lists the sentences)`},
		{name: "go test: misspelled budget", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_BUDGET_COMPLETON_P50=1s"}, args: goTest(),
			want: "SEGDIFF_BUDGET_COMPLETON_P50 is not a budget"},
		{name: "go test: malformed tag filter", env: []string{"SEGDIFF_E2E=1"}, args: goTest("-godog.tags=@embedded &&"),
			want: `tag filter "@embedded &&" has an empty term`},
		{name: "go test: unknown preset", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_PRESET=bogus"}, args: goTest(),
			want: `SEGDIFF_PRESET="bogus": unknown embedded preset "bogus"`},
		{name: "go test: unknown scrape mode", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_SCRAPE=bogus"}, args: goTest(),
			want: `SEGDIFF_SCRAPE="bogus": want direct or promql`},
		{name: "go test: negative prefetch", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_PREFETCH=-1"}, args: goTest(),
			want: `SEGDIFF_PREFETCH="-1": want 0`},
		{name: "go test: zero poll interval", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_POLL_INTERVAL=0s"}, args: goTest(),
			want: `SEGDIFF_POLL_INTERVAL="0s": want a duration above 0`},
		{name: "go test: zero wait timeout", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_WAIT_TIMEOUT=0s"}, args: goTest(),
			want: `SEGDIFF_WAIT_TIMEOUT="0s": want a duration above 0`},
		{name: "go test: malformed seed", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_SEED=seven"}, args: goTest(),
			want: `SEGDIFF_SEED="seven": not an integer`},
		{name: "go test: run id with a slash", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_RUN_ID=a/b"}, args: goTest(),
			want: `SEGDIFF_RUN_ID="a/b"`},
		{name: "go test: slow as a word", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_SLOW=yes"}, args: goTest(),
			want: `SEGDIFF_SLOW="yes": want 1 (on) or 0 (off)`},
		{name: "go test: e2e as a word", env: []string{"SEGDIFF_E2E=true"}, args: goTest(),
			want: `SEGDIFF_E2E="true": want 1`},
		{name: "go test: misspelled variable", env: []string{"SEGDIFF_E2E=1", "SEGDIFF_PRESTE=ci"}, args: goTest(),
			want: "SEGDIFF_PRESTE is not a segdiff variable; did you mean SEGDIFF_PRESET?"},
		{name: "godog CLI: malformed tag filter", env: []string{cliEnv + "=1"}, args: []string{"--tags=@embedded &&", "features/"},
			want: `tag filter "@embedded &&" has an empty term`},
		{name: "godog CLI: unknown scrape mode", env: []string{cliEnv + "=1", "SEGDIFF_SCRAPE=bogus"}, args: []string{"features/"},
			want: `SEGDIFF_SCRAPE="bogus": want direct or promql`},
		{name: "godog CLI: typo'd tag", env: []string{cliEnv + "=1"}, args: []string{"--tags=@embeded", "features/"},
			want: "names @embeded, which no feature"},
		{name: "godog CLI: undefined step, not strict", env: []string{cliEnv + "=1"}, args: []string{feature},
			want: "undefined steps"},
		{name: "godog CLI: typo'd backend", env: []string{cliEnv + "=1", "DEVNET=kurtsis"}, args: []string{"features/"},
			want: `unknown devnet backend "kurtsis"`},
		{name: "godog CLI: nothing selected", env: []string{cliEnv + "=1"}, args: []string{"--tags=@kurtosis && @slow", "features/"},
			want: "selects no scenario"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reports := t.TempDir()
			start := time.Now()
			code, out := runSelf(t, append(tc.env, "SEGDIFF_REPORTS_DIR="+reports), tc.args...)
			if code == 0 {
				t.Fatalf("exit 0 (a pass); want a failure naming %q:\n%s", tc.want, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d without %q:\n%s", code, tc.want, out)
			}
			if strings.Contains(out, "opened embedded devnet") || strings.Contains(out, "building the segdiff CLI") {
				t.Errorf("a devnet was opened before the failure:\n%s", out)
			}
			if strings.Contains(out, "panic:") || strings.Contains(out, "goroutine ") {
				t.Errorf("a panic instead of an error:\n%s", out)
			}
			if entries, _ := os.ReadDir(reports); len(entries) != 0 {
				t.Errorf("reports dir holds %v after a failed preflight", entries)
			}
			t.Logf("exit %d after %v", code, time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestBrokenNetworkFailsTheSuite runs the @broken scenarios of
// stress.feature — ordinary budget checks on a network the design says
// must fail (segments without a code, the source omitting parts) — as the
// suite runs any scenario, and requires the suite to fail naming the
// stranded nodes, slots and parts held: proof that it fails closed on a
// broken network. It opens embedded devnets, so it runs with make e2e
// (SEGDIFF_E2E=1), not make test.
func TestBrokenNetworkFailsTheSuite(t *testing.T) {
	if os.Getenv("SEGDIFF_E2E") != "1" || os.Getenv(brokenEnv) != "" {
		t.Skip("set SEGDIFF_E2E=1 (make e2e) to run the broken-network check")
	}
	reports := t.TempDir()
	code, out := runSelf(t, []string{brokenEnv + "=1", "SEGDIFF_REPORTS_DIR=" + reports},
		"-test.run=^TestFeatures$", "-test.count=1", "-godog.tags=@broken")
	if code == 0 {
		t.Fatalf("the suite passed on a broken network:\n%s", out)
	}
	for _, want := range []string{"completion from reveal", "nodes never completed", "never completed slots 2 (holding", "of 23 parts)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure does not say %q:\n%s", want, out)
		}
	}
	t.Logf("the suite failed as it must (exit %d)", code)
}

// brokenEnv marks the subprocess of TestBrokenNetworkFailsTheSuite.
const brokenEnv = "SEGDIFF_TEST_BROKEN"
