package segdiff_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outcomeFeature needs no devnet: one scenario fails before any devnet is
// asked for, the other is skipped on the embedded backend.
const outcomeFeature = `@outcome
Feature: an outcome without a devnet
  Scenario: a check before any devnet
    When the devnet has revealed 3 warm payloads

  @kurtosis
  Scenario: a Kurtosis check
    Given a segmented devnet
    When the devnet has revealed 3 warm payloads
`

// Both entry points end with the suite's own tally (a skip with its
// reason, not a pass) and then the report's path: under make e2e's go test
// run as the very last line, below go test's own lines; under the godog
// CLI's runner after every scenario, before godog's summary, which counts
// the skipped scenario as passed.
func TestEntryPointsEndWithTallyAndReportPath(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite's entry points as subprocesses")
	}
	if os.Getenv(cliEnv) != "" || os.Getenv("SEGDIFF_E2E") != "" {
		t.Skip("inside a subprocess of this test")
	}
	feature := filepath.Join(t.TempDir(), "outcome.feature")
	if err := os.WriteFile(feature, []byte(outcomeFeature), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		env      []string
		args     []string
		pathLast bool // the report path is the output's last line
	}{
		{name: "make e2e (go test)", env: []string{"SEGDIFF_E2E=1"},
			args: []string{"-test.run=^TestFeatures$", "-test.v", "-test.count=1", "-godog.tags=@outcome", feature}, pathLast: true},
		{name: "godog CLI", env: []string{cliEnv + "=1"}, args: []string{feature}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reports := t.TempDir()
			code, out := runSelf(t, append(tc.env, "SEGDIFF_REPORTS_DIR="+reports), tc.args...)
			if code == 0 {
				t.Fatalf("exit 0 with a failed scenario:\n%s", out)
			}
			if strings.Contains(out, "opened embedded devnet") {
				t.Fatalf("a devnet was opened:\n%s", out)
			}
			m := regexp.MustCompile(`(?m)^report: (\S+)$`).FindAllStringSubmatchIndex(out, -1)
			if len(m) != 1 {
				t.Fatalf("want one report line, found %d:\n%s", len(m), out)
			}
			path, at := out[m[0][2]:m[0][3]], m[0][0]
			if _, err := os.Stat(path); err != nil || !strings.HasPrefix(path, reports) {
				t.Errorf("report line names %s (%v), want a summary.md under %s", path, err, reports)
			}
			start := strings.LastIndex(out[:at], "FAILED   a check before any devnet")
			if start < 0 {
				t.Fatalf("no tally before the report line:\n%s", out)
			}
			for _, want := range []string{"no devnet selected", "SKIPPED  a Kurtosis check", "not tagged @embedded",
				"scenarios: 0 passed, 1 failed, 1 skipped"} {
				if !strings.Contains(out[start:at], want) {
					t.Errorf("the tally before the report line lacks %q:\n%s", want, out)
				}
			}
			if tc.pathLast && strings.TrimRight(out[at:], "\n") != "report: "+path {
				t.Errorf("the report line is not the last line:\n%s", out)
			}
			t.Logf("ends with:\n%s", tail(out, 8))
		})
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
