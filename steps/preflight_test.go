package steps_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cucumber/godog"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/report"
	"github.com/segdiff/segdiff/steps"
)

// noEnclaveBackend is registered with a preflight that always fails, as a
// backend with nothing to attach to does.
const noEnclaveBackend = "fake-no-enclave"

var errNoEnclave = errors.New("no enclave endpoints")

// presetsBackend knows one preset, "fake".
const presetsBackend = "fake-presets"

func init() {
	devnet.Register(noEnclaveBackend, openFake, devnet.WithPreflight(func(context.Context) error { return errNoEnclave }))
	devnet.Register(presetsBackend, openFake, devnet.WithConfigCheck(func(cfg devnet.Config) error {
		if cfg.Preset != "fake" {
			return fmt.Errorf("unknown fake preset %q", cfg.Preset)
		}
		return nil
	}))
}

// writeFeature writes a feature file into a temporary directory and returns
// its path.
func writeFeature(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "temp.feature")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const presetTypoFeature = `@embedded
Feature: a feature naming a preset the backend does not know
  Scenario: preset typo
    Given a segmented devnet with preset "fkae"
    When the devnet has revealed 3 warm payloads
    Then the PTC votes payload present in every warm slot
`

const undefinedFeature = `@embedded
Feature: a feature with a typo
  Scenario: undefined given
    Given a segmneted devnet
    When the devnet has revealed 3 warm payloads
    Then the PTC votes payload present in every warm slot
`

func TestPreflightFailsClosed(t *testing.T) {
	tests := []struct {
		name    string
		backend string
		tag     string
		tags    string
		paths   []string
		env     map[string]string
		wantErr []string
		is      error
	}{
		{name: "passes", backend: fakeBackend, tags: "@embedded && ~@slow", paths: []string{"../features"}},
		{name: "unknown backend", backend: "kurtsis", tags: "@embedded", paths: []string{"../features"},
			wantErr: []string{`unknown devnet backend "kurtsis"`, fakeBackend}, is: devnet.ErrUnknownBackend},
		{name: "unknown tag", backend: fakeBackend, tags: "@embeded && ~@slow", paths: []string{"../features"},
			wantErr: []string{"names @embeded, which no feature", "known tags: @broken @bytes @contract @embedded @extended @health @install @kurtosis @mixed @scale @slow @stress"}},
		{name: "unknown negated tag", backend: fakeBackend, tags: "@embedded && ~@slwo", paths: []string{"../features"},
			wantErr: []string{"names @slwo"}},
		{name: "another syntax", backend: fakeBackend, tags: "@embedded and not @slow", paths: []string{"../features"},
			wantErr: []string{`"@embedded and not @slow" is not one tag`, `did you mean "@embedded && ~@slow"?`}},
		// godog's tag parser panics on these; the preflight reads them first.
		{name: "empty term", backend: fakeBackend, tags: "@embedded &&", paths: []string{"../features"},
			wantErr: []string{`tag filter "@embedded &&" has an empty term`}},
		{name: "empty alternative", backend: fakeBackend, tags: "@embedded,", paths: []string{"../features"},
			wantErr: []string{`tag filter "@embedded," has an empty term`}},
		{name: "bare at sign", backend: fakeBackend, tags: "@", paths: []string{"../features"},
			wantErr: []string{`tag filter "@" has an empty term`}},
		{name: "selects nothing", backend: fakeBackend, tags: "@kurtosis && @slow", paths: []string{"../features"},
			wantErr: []string{`tag filter "@kurtosis && @slow" selects no scenario`}},
		{name: "selects only another backend's scenarios", backend: fakeBackend, tags: "@kurtosis", paths: []string{"../features"},
			wantErr: []string{"would all be skipped", "not tagged @embedded", "nothing would be checked"}},
		{name: "selects only @slow scenarios", backend: fakeBackend, tags: "@slow", paths: []string{"../features/study.feature"},
			wantErr: []string{"would all be skipped", "@slow: set SEGDIFF_SLOW=1"}},
		{name: "undefined step", backend: fakeBackend, tags: "@embedded", paths: []string{writeFeature(t, undefinedFeature)},
			wantErr: []string{"1 undefined steps", `"undefined given": Given a segmneted devnet`}},
		{name: "misspelled budget variable", backend: fakeBackend, tags: "@embedded", paths: []string{"../features"},
			env: map[string]string{"SEGDIFF_BUDGET_COMPLETON_P50": "1s"}, wantErr: []string{"SEGDIFF_BUDGET_COMPLETON_P50 is not a budget"}},
		{name: "malformed budget value", backend: fakeBackend, tags: "@embedded", paths: []string{"../features"},
			env: map[string]string{"SEGDIFF_BUDGET_COMPLETION_P50": "abc"}, wantErr: []string{`SEGDIFF_BUDGET_COMPLETION_P50="abc"`}},
		{name: "unknown variable", backend: fakeBackend, tags: "@embedded", paths: []string{"../features"},
			env: map[string]string{"SEGDIFF_PRESTE": "ci"}, wantErr: []string{"SEGDIFF_PRESTE is not a segdiff variable; did you mean SEGDIFF_PRESET?"}},
		{name: "malformed variable", backend: fakeBackend, tags: "@embedded", paths: []string{"../features"},
			env: map[string]string{"SEGDIFF_SCRAPE": "bogus"}, wantErr: []string{`SEGDIFF_SCRAPE="bogus": want direct or promql`}},
		{name: "preset the backend does not know", backend: presetsBackend, tags: "@embedded", paths: []string{writeFeature(t, presetTypoFeature)},
			wantErr: []string{`"preset typo": Given a segmented devnet with preset "fkae": unknown fake preset "fkae"`}},
		{name: "backend preflight", backend: noEnclaveBackend, tag: steps.TagEmbedded, tags: "@embedded", paths: []string{"../features"},
			wantErr: []string{"no enclave endpoints"}, is: errNoEnclave},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			tag := tc.tag
			if tag == "" {
				tag = steps.TagEmbedded
			}
			s := steps.New(steps.Config{Backend: tc.backend, Tag: tag, Preset: "fake", ReportsDir: "", Log: &bytes.Buffer{}})
			plan, err := s.Preflight(context.Background(), godog.Options{Paths: tc.paths, Tags: tc.tags})
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Preflight = %v", err)
				}
				if len(plan.Runnable()) == 0 {
					t.Fatal("preflight passed a plan with nothing to run")
				}
				return
			}
			if err == nil {
				t.Fatalf("Preflight passed; want an error containing %q", tc.wantErr)
			}
			t.Logf("error: %v", err)
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q", w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(err, %v) = false", tc.is)
			}
		})
	}
}

// The godog CLI runs non-strict by default, where an undefined step counts
// as a pass; the suite's before-step hook makes it a failure in any mode.
func TestUndefinedStepFailsWithoutStrict(t *testing.T) {
	var out bytes.Buffer
	s := steps.New(steps.Config{Backend: fakeBackend, Tag: steps.TagEmbedded, Preset: "fake", ReportsDir: "", Log: &bytes.Buffer{}})
	status := godog.TestSuite{
		TestSuiteInitializer: s.InitializeTestSuite,
		ScenarioInitializer:  s.InitializeScenario,
		Options:              &godog.Options{Format: "progress", Output: &out, Paths: []string{writeFeature(t, undefinedFeature)}, Strict: false},
	}.Run()
	if status == 0 {
		t.Fatalf("non-strict run with an undefined step passed:\n%s", out.String())
	}
	sc := scenarioByName(t, s, "undefined given")
	if sc.Status != report.StatusFailed || !strings.Contains(sc.Error, `undefined step "a segmneted devnet"`) {
		t.Fatalf("scenario %s: %q", sc.Status, sc.Error)
	}
	if err := s.Outcome(); err == nil || !strings.Contains(err.Error(), "1 of 1 scenarios failed") {
		t.Fatalf("Outcome = %v", err)
	}
}

func TestOutcomeFailsWhenNothingExecuted(t *testing.T) {
	s, _ := runUnderKurtosisTag(t, "../features/comparison.feature") // every scenario skipped
	err := s.Outcome()
	if err == nil || !strings.Contains(err.Error(), "no scenario executed") {
		t.Fatalf("Outcome = %v, want a no-scenario failure", err)
	}
}
