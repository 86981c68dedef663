package report_test

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/report"
)

func testRun(id string, median float64) report.Run {
	rng := rand.New(rand.NewPCG(1, 2))
	run := report.Run{ID: id, Backend: "embedded", Started: time.Unix(1700000000, 0), Finished: time.Unix(1700000090, 0),
		Devnets: map[string]report.DevnetInfo{
			"mode=segmented": {Mode: "segmented", Seed: 7, Nodes: 40, Preset: "ci"},
			"mode=whole":     {Mode: "whole", Seed: 7, Nodes: 40, Preset: "ci"},
		}}
	budget := func(kind, label string, v float64) {
		run.AddBudget(report.BudgetLine{Kind: kind, Label: label, Value: v, Devnet: "mode=segmented", Scenario: "median completion"})
	}
	budget(report.KindCompletion, "every node", 3)
	budget(report.KindCompletion, "median", 1)
	budget(report.KindCopies, "median", 2)
	var whole, seg, copies []assertions.Sample
	for n := range 40 {
		node := "node-" + string(rune('a'+n%26)) + string(rune('a'+n/26))
		link := "home"
		if n%4 == 0 {
			link = "datacenter"
		}
		for slot := uint64(2); slot < 6; slot++ {
			whole = append(whole, assertions.Sample{Node: node, Link: link, Slot: slot, Value: 4*median + rng.Float64()})
			seg = append(seg, assertions.Sample{Node: node, Link: link, Slot: slot, Value: median + rng.Float64()/4})
			copies = append(copies, assertions.Sample{Node: node, Link: link, Slot: slot, Value: 1.2 + rng.Float64()})
		}
	}
	run.AddSamples(report.KindCompletion, "mode=whole", "whole", whole)
	run.AddSamples(report.KindCompletion, "mode=segmented", "segmented", seg)
	run.AddSamples(report.KindCompletion, "mode=segmented", "segmented", seg) // pooled once per node and slot
	run.AddSamples(report.KindCopies, "mode=segmented", "segmented", copies)
	run.Scenarios = []report.Scenario{
		{Name: "median completion", Status: report.StatusPassed, Devnets: []string{"embedded: mode=segmented"}, Verdicts: []assertions.Verdict{
			assertions.QuantileAtMost("median completion from reveal", assertions.UnitSeconds, seg, 0.5, 1),
			assertions.QuantileAtMost("median payload copies", assertions.UnitCopies, copies, 0.5, 2),
		}},
		{Name: "kurtosis only", Status: report.StatusSkipped, Error: "not tagged @embedded"},
	}
	return run
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	first, err := report.Write(dir, testRun("run-1", 0.7))
	if err != nil {
		t.Fatal(err)
	}
	if first.Previous != "" {
		t.Fatalf("first run compared against %q", first.Previous)
	}
	second, err := report.Write(dir, testRun("run-2", 0.9))
	if err != nil {
		t.Fatal(err)
	}
	if second.Previous != "run-1" {
		t.Fatalf("second run compared against %q, want run-1", second.Previous)
	}
	if target, err := os.Readlink(filepath.Join(dir, "latest")); err != nil || target != "run-2" {
		t.Fatalf("latest -> %q (%v), want run-2", target, err)
	}
	for _, name := range []string{"results.json", "summary.md", "completion-cdf.png", "completion-cdf.svg", "copies-per-node.png", "copies-per-node.svg"} {
		data, err := os.ReadFile(filepath.Join(dir, "latest", name))
		if err != nil {
			t.Fatalf("missing %s: %v", name, err)
		}
		switch filepath.Ext(name) {
		case ".png":
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s does not decode as PNG: %v", name, err)
			}
			if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
				t.Fatalf("%s is %v", name, b)
			}
		case ".svg":
			dec := xml.NewDecoder(bytes.NewReader(data))
			for {
				if _, err := dec.Token(); err != nil {
					if err.Error() != "EOF" {
						t.Fatalf("%s is not XML: %v", name, err)
					}
					break
				}
			}
		}
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "run-2", "summary.md"))
	for _, want := range []string{"Δ vs previous", "Changes (Δ) are against run run-1", "| median completion from reveal |", "(datacenter)", "![completion-cdf](completion-cdf.png)",
		"| kurtosis only |  | skipped: not tagged @embedded |  |", "| completion from reveal | whole (ci) | datacenter | 10 | 40 |", "| payload copies over the slot | segmented (ci) | all | 40 | 160 |"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, sum)
		}
	}
	first1, _ := os.ReadFile(filepath.Join(dir, "run-1", "summary.md"))
	if strings.Contains(string(first1), "Δ vs previous") {
		t.Errorf("first summary has a delta column without a previous run")
	}
}

// A run that executed nothing is published (its summary says so) but never
// becomes latest; a run's files appear only once complete.
func TestWriteMovesLatestOnlyForExecutedRuns(t *testing.T) {
	dir := t.TempDir()
	if _, err := report.Write(dir, testRun("run-1", 0.7)); err != nil {
		t.Fatal(err)
	}
	empty := report.Run{ID: "run-2", Backend: "embedded", Scenarios: []report.Scenario{{Name: "kurtosis only", Status: report.StatusSkipped}}}
	w, err := report.Write(dir, empty)
	if err != nil {
		t.Fatal(err)
	}
	if w.Latest {
		t.Error("Write says latest moved to a run that executed nothing")
	}
	if target, _ := os.Readlink(filepath.Join(dir, "latest")); target != "run-1" {
		t.Fatalf("latest -> %q, want run-1", target)
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "run-2", "summary.md"))
	if !strings.Contains(string(sum), "No scenario executed") {
		t.Errorf("summary of an empty run does not say so:\n%s", sum)
	}
	if _, err := os.Stat(report.StagingDir(dir, "run-2")); !os.IsNotExist(err) {
		t.Errorf("staging directory left behind: %v", err)
	}
	if _, err := report.Write(dir, empty); err == nil {
		t.Error("Write overwrote an existing run")
	}
}

func TestDiscardRemovesTheStagingDirectory(t *testing.T) {
	dir := t.TempDir()
	stage := report.StagingDir(dir, "run-x")
	if err := os.MkdirAll(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, "junit.xml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := report.Discard(dir, "run-x"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

func TestTableNamesEveryScenarioAndTheFailure(t *testing.T) {
	run := testRun("run-1", 0.7)
	run.Scenarios = append(run.Scenarios, report.Scenario{Name: "too slow", Status: report.StatusFailed, Verdicts: []assertions.Verdict{
		assertions.QuantileAtMost("median completion from reveal", assertions.UnitSeconds, []assertions.Sample{{Node: "n1", Slot: 2, Value: 2}}, 0.5, 1)}})
	got := report.Table(run)
	for _, want := range []string{"PASSED   median completion", "SKIPPED  kurtosis only", "FAILED   too slow", "median completion from reveal = 2s", "1 passed, 1 failed, 1 skipped"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(report.Table(report.Run{ID: "x"}), "NO SCENARIO EXECUTED") == false {
		t.Error("an empty run's table does not say nothing executed")
	}
}

func TestWriteRejectsEmptyID(t *testing.T) {
	if _, err := report.Write(t.TempDir(), report.Run{}); err == nil {
		t.Fatal("Write accepted a run without id")
	}
}

func TestAddSamplesPoolsOnce(t *testing.T) {
	var r report.Run
	s := []assertions.Sample{{Node: "a", Slot: 1, Value: 1}}
	r.AddSamples(report.KindCopies, "mode=whole", "whole", s)
	r.AddSamples(report.KindCopies, "mode=whole", "whole", s)
	r.AddSamples(report.KindCopies, "mode=segmented", "segmented", s)
	// One mode under stress is its own series.
	r.AddSamples(report.KindCopies, "mode=segmented stress=omit=4", "segmented", s)
	if len(r.Distributions) != 3 || len(r.Distributions[0].Samples) != 1 {
		t.Fatalf("distributions = %+v", r.Distributions)
	}
}

// summary.md opens with every scenario's outcome, gives skips their reason
// (not an "Error:"), and no two sections share a title, even where an
// outline's rows for two backends share a name.
func TestSummaryOpensWithTheOutcomeTable(t *testing.T) {
	run := testRun("run-1", 0.7)
	slow := []assertions.Sample{{Node: "n1", Slot: 2, Value: 2}}
	const shared = "every node completes every warm payload within 3s of the reveal (segmented)"
	run.Scenarios = append(run.Scenarios,
		report.Scenario{Name: shared, Status: report.StatusSkipped, Error: "not tagged @embedded"},
		report.Scenario{Name: shared, Status: report.StatusPassed, Devnets: []string{"embedded: mode=segmented"},
			Verdicts: []assertions.Verdict{assertions.AllAtMost("completion from reveal, every node and warm slot", assertions.UnitSeconds, slow, 3)}},
		report.Scenario{Name: shared, Status: report.StatusPassed, Devnets: []string{"embedded: mode=whole"},
			Verdicts: []assertions.Verdict{assertions.AllAtMost("completion from reveal, every node and warm slot", assertions.UnitSeconds, slow, 3)}},
		report.Scenario{Name: "too slow", Status: report.StatusFailed, Devnets: []string{"embedded: mode=segmented"}, Error: "median completion from reveal = 2s ...",
			Verdicts: []assertions.Verdict{assertions.QuantileAtMost("median completion from reveal", assertions.UnitSeconds, slow, 0.5, 1)}},
		report.Scenario{Name: "no devnet", Status: report.StatusFailed, Error: "open devnet (mode=tier2): boom"},
	)
	sum := report.Summary(run, nil, nil)
	lines := strings.Split(sum, "\n")
	if lines[0] != "# segdiff run run-1" || lines[2] != "| scenario | devnet | status | failing verdict |" {
		t.Fatalf("summary.md does not open with the outcome table:\n%s", sum)
	}
	for _, want := range []string{
		"| median completion | segmented (ci) | passed |  |",
		"| kurtosis only |  | skipped: not tagged @embedded |  |",
		"| " + shared + " |  | skipped: not tagged @embedded |  |",
		"| too slow | segmented (ci) | **failed** | median completion from reveal = 2s, budget <= 1s |",
		"| no devnet |  | **failed** | open devnet (mode=tier2): boom |",
		"Error: open devnet (mode=tier2): boom",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, sum)
		}
	}
	if strings.Contains(sum, "Error: not tagged") {
		t.Errorf("a skip is labelled as an error:\n%s", sum)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if strings.HasPrefix(l, "#") {
			if seen[l] {
				t.Errorf("title %q repeats:\n%s", l, sum)
			}
			seen[l] = true
		}
	}
	if strings.Contains(sum, "## kurtosis only") {
		t.Errorf("a skipped scenario has a section; its row says all there is:\n%s", sum)
	}
}

// Every verdict row of summary.md names the verdict's source, and a
// failing verdict's brief in the outcome table does too.
func TestSummaryRowsNameTheirSource(t *testing.T) {
	run := testRun("run-1", 0.7)
	v := assertions.QuantileAtMost("median completion from reveal", assertions.UnitSeconds, []assertions.Sample{{Node: "n1", Slot: 2, Value: 2}}, 0.5, 1)
	v.Source = "standard API, times at receipt"
	run.Scenarios = append(run.Scenarios, report.Scenario{Name: "slow on lighthouse", Status: report.StatusFailed, Devnets: []string{"embedded: mode=segmented"},
		Verdicts: []assertions.Verdict{v}})
	sum := report.Summary(run, nil, nil)
	for _, want := range []string{
		"| check | source | measured | budget | result | worst nodes |",
		"| median completion from reveal | standard API, times at receipt | 2s | <= 1s | **FAIL** |",
		"| slow on lighthouse | segmented (ci) | **failed** | median completion from reveal = 2s, budget <= 1s [source: standard API, times at receipt] |",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, sum)
		}
	}
}
