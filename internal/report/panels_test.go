package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/assertions"
)

const (
	devTier3     = "mode=tier3 nodes=default seed=default preset=ci"
	devBatch     = "mode=segmented-batch nodes=default seed=default preset=ci"
	devSegmented = "mode=segmented nodes=default seed=default preset=ci"
	devTier3Omit = "mode=tier3 nodes=default seed=default preset=ci stress=omit=4"
)

// twoModesRun has the budgets issue #20 found drawn over the wrong mode:
// tier3's median 0.7 s and p99 0.8 s beside segmented-batch's 1.1 s, and
// tier3 omit=4's 3.6 copies beside segmented's 14.5.
func twoModesRun() Run {
	run := Run{ID: "two-modes", Backend: "embedded", Devnets: map[string]DevnetInfo{
		devTier3:     {Mode: "tier3", Nodes: 32, Preset: "ci"},
		devBatch:     {Mode: "segmented-batch", Nodes: 32, Preset: "ci"},
		devSegmented: {Mode: "segmented", Nodes: 32, Preset: "ci"},
		devTier3Omit: {Mode: "tier3", Nodes: 32, Preset: "ci", Stress: "omit=4"},
	}}
	for _, b := range []BudgetLine{
		{Kind: KindCompletion, Label: "median", Value: 0.7, Devnet: devTier3, Scenario: "the median completion stays below 700ms (tier3)", Check: "median completion from reveal"},
		{Kind: KindCompletion, Label: "99th percentile", Value: 0.8, Devnet: devTier3, Scenario: "the 99th percentile of completion stays below 800ms (tier3)", Check: "99th percentile of completion from reveal"},
		{Kind: KindCompletion, Label: "median", Value: 1.1, Devnet: devBatch, Scenario: "the median completion stays below 1100ms (segmented-batch)", Check: "median completion from reveal"},
		{Kind: KindCopies, Label: "median", Value: 3.6, Devnet: devTier3Omit, Scenario: "honest nodes hold every payload under omit=4 (tier3)", Check: "median payload copies per node and warm slot"},
		{Kind: KindCopies, Label: "every node", Value: 14.5, Devnet: devSegmented, Scenario: "payload copies per node stay within budget (segmented)", Check: "payload copies, every node and warm slot"},
	} {
		run.AddBudget(b)
		run.AddBudget(b) // a second scenario sharing the check records it again
	}
	samples := func(base float64) []assertions.Sample {
		var out []assertions.Sample
		for n, node := range []string{"n1", "n2", "n3", "n4"} {
			out = append(out, assertions.Sample{Node: node, Link: "home", Slot: 2, Value: base + 0.1*float64(n)})
		}
		return out
	}
	run.AddSamples(KindCompletion, devTier3, "tier3", samples(0.5))
	run.AddSamples(KindCompletion, devBatch, "segmented-batch", samples(0.9))
	run.AddSamples(KindCopies, devTier3Omit, "tier3", samples(2.5))
	run.AddSamples(KindCopies, devSegmented, "segmented", samples(7))
	run.Scenarios = []Scenario{{Name: "the median completion stays below 700ms (tier3)", Status: StatusPassed}}
	return run
}

// Every budget stays with the devnet it was checked on: results.json lists
// both modes' budgets with devnet, scenario and check, and each plot panel
// (one per devnet) draws its own budgets only.
func TestBudgetsBelongToTheirDevnet(t *testing.T) {
	run := twoModesRun()
	dir := t.TempDir()
	w, err := Write(dir, run)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(w.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Budgets []BudgetLine `json:"budgets"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := twoModesRun().Budgets
	if len(want) != 5 || !slices.Equal(got.Budgets, want) {
		t.Errorf("results.json budgets:\n got %+v\nwant %+v (one per devnet and scenario)", got.Budgets, want)
	}

	tests := []struct {
		name, kind string
		want       map[string][]float64 // panel label -> its budget values
	}{
		{name: "completion", kind: KindCompletion, want: map[string][]float64{"tier3 (ci)": {0.7, 0.8}, "segmented-batch (ci)": {1.1}}},
		{name: "copies", kind: KindCopies, want: map[string][]float64{"tier3 omit=4 (ci)": {3.6}, "segmented (ci)": {14.5}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := panels(run, tc.kind)
			if len(ps) != len(tc.want) {
				t.Fatalf("%d panels, want one per devnet %v: %+v", len(ps), tc.want, ps)
			}
			for _, p := range ps {
				var values []float64
				for _, b := range p.Budgets {
					if b.Devnet != p.Devnet {
						t.Errorf("panel %s draws a budget of %s: %+v", p.Label, b.Devnet, b)
					}
					values = append(values, b.Value)
				}
				if want, ok := tc.want[p.Label]; !ok || !slices.Equal(values, want) {
					t.Errorf("panel %q budgets %v, want %v", p.Label, values, want)
				}
				if len(p.Values) != 4 {
					t.Errorf("panel %q has %d samples, want its own 4", p.Label, len(p.Values))
				}
			}
			// The drawn panels name the same budgets in their titles.
			c := runPlots[slices.IndexFunc(runPlots, func(c cdfPlot) bool { return c.kind == tc.kind })]
			f, err := c.figure(run, ps)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, row := range f.grid {
				for _, p := range row {
					if p == nil {
						continue
					}
					n++
					title := strings.ReplaceAll(p.Title.Text, "\n", " ")
					for _, other := range ps {
						for _, b := range other.Budgets {
							own := strings.HasPrefix(title, other.Label+" ·")
							if has := strings.Contains(title, fmt.Sprintf("%s ≤ %g%s", b.Label, b.Value, c.unit)); has != own {
								t.Errorf("panel %q: mentions %s's %s budget %v: %v, want %v", title, other.Label, b.Label, b.Value, has, own)
							}
						}
					}
				}
			}
			if n != len(ps) {
				t.Errorf("figure has %d panels, want %d", n, len(ps))
			}
		})
	}
	if _, err := os.Stat(filepath.Join(w.Dir, PlotCompletionCDF+".png")); err != nil {
		t.Error(err)
	}
}
