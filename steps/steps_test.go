package steps_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cucumber/godog"

	"github.com/segdiff/segdiff/internal/report"
	"github.com/segdiff/segdiff/steps"
)

// runFeatures runs the repository's features in-process against the fake
// backend and returns godog's exit status, its output and the suite.
func runFeatures(t *testing.T, preset string, paths ...string) (int, string, *steps.Suite) {
	t.Helper()
	var log, out bytes.Buffer
	reports := t.TempDir()
	s := steps.New(steps.Config{Backend: fakeBackend, Tag: steps.TagEmbedded, Preset: preset, Prefetch: 2,
		ReportsDir: reports, RunID: "test-run", PollInterval: 10 * time.Millisecond, WaitTimeout: 2 * time.Second, Log: &log})
	ts := godog.TestSuite{
		Name:                 "segdiff-test",
		TestSuiteInitializer: s.InitializeTestSuite,
		ScenarioInitializer:  s.InitializeScenario,
		Options: &godog.Options{Format: "progress,cucumber:" + filepath.Join(reports, "cucumber.json"), Output: &out, Paths: paths,
			Strict: true, Tags: steps.DefaultTags("embedded"), NoColors: true},
	}
	plan, err := s.Preflight(context.Background(), *ts.Options)
	if err != nil {
		t.Fatal(err)
	}
	s.Prefetch(plan)
	status := ts.Run()
	return status, out.String() + log.String(), s
}

// runUnderKurtosisTag runs one feature file against the fake backend with
// the kurtosis backend tag selected, failing the test unless godog passes,
// and returns the suite and its log.
func runUnderKurtosisTag(t *testing.T, path string) (*steps.Suite, string) {
	t.Helper()
	status, s, log := runKurtosisTag(t, "fake", "", path)
	if status != 0 {
		t.Fatalf("status %d: %s", status, log)
	}
	return s, log
}

// runKurtosisTag runs path's scenarios matching tags ("": all) against the
// fake backend's preset with the kurtosis backend tag selected, and returns
// godog's status, the suite and its log.
func runKurtosisTag(t *testing.T, preset, tags, path string) (int, *steps.Suite, string) {
	t.Helper()
	var log bytes.Buffer
	s := steps.New(steps.Config{Backend: fakeBackend, Tag: steps.TagKurtosis, Preset: preset, ReportsDir: "", Log: &log})
	status := godog.TestSuite{
		TestSuiteInitializer: s.InitializeTestSuite,
		ScenarioInitializer:  s.InitializeScenario,
		Options: &godog.Options{Format: "progress", Output: &bytes.Buffer{}, Paths: []string{path},
			Tags: tags, Strict: true, NoColors: true},
	}.Run()
	return status, s, log.String()
}

func scenarioByName(t *testing.T, s *steps.Suite, name string) report.Scenario {
	t.Helper()
	for _, sc := range s.Results().Scenarios {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %q in %+v", name, s.Results().Scenarios)
	return report.Scenario{}
}

func TestFeaturesPassAgainstFakeDevnet(t *testing.T) {
	status, out, s := runFeatures(t, "ci", "../features")
	if status != 0 {
		t.Fatalf("status %d, output:\n%s", status, out)
	}
	run := s.Results()
	if len(run.Scenarios) < 6 {
		t.Fatalf("ran %d scenarios, want every non-@slow one: %+v", len(run.Scenarios), run.Scenarios)
	}
	for _, sc := range run.Scenarios {
		if sc.Status != report.StatusPassed || len(sc.Verdicts) == 0 {
			t.Errorf("scenario %q: status %s, %d verdicts, error %q", sc.Name, sc.Status, len(sc.Verdicts), sc.Error)
		}
	}
	// Seven plain modes (whole, whole-paced, segmented, segmented-batch,
	// tier2, tier3, tier4), nine stressed tier2/tier3 networks and one
	// stressed segmented-batch (the @extended tier4 rows are skipped): every
	// distinct devnet opens once, however many scenarios share it.
	if got := strings.Count(out, "opened "+fakeBackend); got != 17 {
		t.Errorf("opened %d devnets, want 17 (each distinct one once):\n%s", got, out)
	}
	w := s.Written()
	for _, f := range []string{"summary.md", "results.json", "completion-cdf.png", "copies-per-node.svg"} {
		if _, err := os.Stat(filepath.Join(w.Dir, f)); err != nil {
			t.Errorf("report file: %v", err)
		}
	}
}

func TestBudgetFromEnvironmentFailsNamingBudgetMeasuredAndWorstNodes(t *testing.T) {
	t.Setenv("SEGDIFF_BUDGET_COMPLETION_P50", "10ms")
	status, out, s := runFeatures(t, "fake", "../features/completion.feature")
	if status == 0 {
		t.Fatalf("suite passed with a 10ms median budget:\n%s", out)
	}
	sc := scenarioByName(t, s, "the median completion stays below 1900ms (segmented)")
	t.Logf("failure: %s", sc.Error)
	// Receivers complete after 240..520 ms; the nearest-rank median of the
	// eight is the fourth, n04 at 360 ms; the slowest is n08 (home).
	for _, want := range []string{"median completion from reveal = 360ms", "budget <= 10ms", "FAILED",
		"worst: n08 (home) 520ms", "n07 (home)", "n06 (datacenter)", "SEGDIFF_BUDGET_COMPLETION_P50"} {
		if !strings.Contains(sc.Error, want) {
			t.Errorf("failure %q lacks %q", sc.Error, want)
		}
		if !strings.Contains(out, want) {
			t.Errorf("godog output lacks %q:\n%s", want, out)
		}
	}
	cucumber, err := os.ReadFile(filepath.Join(filepath.Dir(s.Written().Dir), "cucumber.json"))
	if err != nil || !bytes.Contains(cucumber, []byte(`"name": "verdicts.json"`)) {
		t.Errorf("cucumber.json carries no verdicts.json attachment for the failure (%v)", err)
	}
	if other := scenarioByName(t, s, "every node completes every warm payload within 3s of the reveal (segmented)"); other.Status != report.StatusPassed {
		t.Errorf("unrelated scenario %s: %s", other.Status, other.Error)
	}
}

func TestMissingSeriesFailsNamingTheNode(t *testing.T) {
	status, out, s := runFeatures(t, "fake-missing", "../features/completion.feature")
	if status == 0 {
		t.Fatalf("suite passed although n03 exports no completion series:\n%s", out)
	}
	for _, sc := range s.Results().Scenarios {
		t.Logf("failure: %s", sc.Error)
		want := "node n03: series payload_diffusion_completed_timestamp_seconds missing"
		if sc.Status != report.StatusFailed || !strings.Contains(sc.Error, want) {
			t.Errorf("scenario %q: status %s, error %q, want it to name %q", sc.Name, sc.Status, sc.Error, want)
		}
	}
}

func TestSlotWithoutPTCVotesFailsNamingTheSlot(t *testing.T) {
	status, out, s := runFeatures(t, "fake-noptc", "../features/ptc.feature")
	if status == 0 {
		t.Fatalf("suite passed without PTC votes for slot 5:\n%s", out)
	}
	sc := scenarioByName(t, s, "the PTC votes the payload present in every warm slot (segmented)")
	if !strings.Contains(sc.Error, "no PTC votes for slots 5") {
		t.Fatalf("failure %q does not name slot 5", sc.Error)
	}
}

func TestBackendScopedScenariosAreSkipped(t *testing.T) {
	s, log := runUnderKurtosisTag(t, "../features/comparison.feature")
	run := s.Results()
	if len(run.Scenarios) == 0 {
		t.Fatal("no scenarios: comparison.feature's @embedded-only comparisons are not reported as skipped")
	}
	for _, sc := range run.Scenarios {
		if sc.Status != report.StatusSkipped {
			t.Errorf("scenario %q: status %s, want skipped", sc.Name, sc.Status)
		}
	}
	if strings.Contains(log, "opened") {
		t.Fatalf("a skipped scenario opened a devnet: %s", log)
	}
}

// Backend tags on Examples blocks pick the budgets: under the kurtosis tag
// only the @kurtosis rows run, with their own budgets (whatever the fake's
// whole rows measure: they are not Kurtosis figures).
func TestExamplesBlocksAreScopedByBackend(t *testing.T) {
	_, s, _ := runKurtosisTag(t, "fake", "", "../features/completion.feature")
	var ran, skipped []string
	for _, sc := range s.Results().Scenarios {
		switch sc.Status {
		case report.StatusSkipped:
			skipped = append(skipped, sc.Name)
		default:
			ran = append(ran, sc.Name)
		}
	}
	wantRan := []string{"every node completes every warm payload within 3s of the reveal (segmented)", "every node completes every warm payload within 3s of the reveal (whole)",
		"the median completion stays below 1s (segmented)", "the median completion stays below 2s (whole)"}
	if !slices.Equal(ran, wantRan) {
		t.Errorf("ran %q, want %q", ran, wantRan)
	}
	if want := embeddedRows(t, "../features/completion.feature"); len(skipped) != want {
		t.Errorf("skipped %q, want the %d @embedded rows", skipped, want)
	}
}

// An interrupt while the report is held open (or being written) leaves no
// report: Finish returns at once, saying why, and nothing is published.
func TestAbortWhileTheReportIsWrittenLeavesNone(t *testing.T) {
	dir := t.TempDir()
	s := steps.New(steps.Config{Backend: fakeBackend, ReportsDir: dir, RunID: "r1", ReportPause: time.Hour, Log: io.Discard})
	done := make(chan error, 1)
	go func() {
		_, err := s.Finish()
		done <- err
	}()
	s.Abort()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "interrupted") {
			t.Fatalf("Finish after Abort: %v, want an interrupted error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Finish did not return after Abort: the pause is not interruptible")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the reports directory holds %v after an interrupted write", entries)
	}
}

// embeddedRows counts the rows of the Examples blocks tagged @embedded in
// a feature file (header rows excluded).
func embeddedRows(t *testing.T, path string) int {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, inBlock, header := 0, false, false
	for _, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "@"):
			inBlock = slices.Contains(strings.Fields(line), "@embedded")
		case strings.HasPrefix(line, "Examples"):
			header = true
		case strings.HasPrefix(line, "|") && inBlock:
			if header {
				header = false
				continue
			}
			rows++
		case line == "":
		default:
			inBlock = false
		}
	}
	if rows == 0 {
		t.Fatalf("%s has no @embedded Examples rows", path)
	}
	return rows
}
