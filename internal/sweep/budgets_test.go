package sweep

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/assertions"
)

// A feature's budget is held against the cells of its devnet whatever
// their seed: each seed's value is the check's, the worst decides, and the
// cells suggest a budget a fifth above the worst.
func TestEvaluateBudgets(t *testing.T) {
	p := mustPlan(t, "name: b\nfixed: {nodes: 16, degree: 14, payloads: 3}\naxes:\n  mode: [segmented, whole]\n  seed: [7, 8]\n")
	r := fakeRunner(t)
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	cells, err := LoadCells(context.Background(), r.Out)
	if err != nil {
		t.Fatal(err)
	}
	segmented, whole := p.Cells[0].Config, p.Cells[2].Config
	other := segmented
	other.Nodes, other.Degree = 18, 14
	// The aim named as its default is the same devnet; another aim is not.
	safer, plain := segmented, segmented
	safer.Aim, plain.Aim = "safer", "plain"
	rows := []BudgetRow{
		{Feature: "completion.feature", Scenario: "fast enough", Spec: segmented, Check: assertions.CheckCompletionMax, Budget: 2},
		{Feature: "completion.feature", Scenario: "too tight", Spec: whole, Check: assertions.CheckCompletionMax, Budget: 1},
		{Feature: "bytes.feature", Scenario: "copies", Spec: whole, Check: assertions.CheckCopiesP50, Budget: 5},
		{Feature: "completion.feature", Scenario: "another network", Spec: other, Check: assertions.CheckCompletionMax, Budget: 2},
		{Feature: "completion.feature", Scenario: "the default aim named", Spec: safer, Check: assertions.CheckCompletionMax, Budget: 2},
		{Feature: "completion.feature", Scenario: "another aim", Spec: plain, Check: assertions.CheckCompletionMax, Budget: 2},
	}
	res := EvaluateBudgets(rows, cells)
	for i, want := range []struct {
		seeds int
		pass  bool
	}{{2, true}, {2, false}, {2, true}, {0, false}, {2, true}, {0, false}} {
		if got := res[i]; len(got.Seeds) != want.seeds || got.Pass != want.pass {
			t.Errorf("row %q: %d seeds, pass %v; want %d, %v", rows[i].Scenario, len(got.Seeds), got.Pass, want.seeds, want.pass)
		}
	}
	// The fake sim's whole mode: receivers complete within 2·(0.8+jitter+0.4) s.
	if w := res[1].Worst; w < 1.6 || w > 2.8 || res[1].Suggested < w*1.2-1e-9 || res[1].Suggested > w*1.2+0.1 {
		t.Errorf("worst %v, suggested %v", w, res[1].Suggested)
	}
	if math.Abs(res[2].Worst-4.09) > 0.01 { // 4 copies + seed 8's jitter of 3·0.03
		t.Errorf("copies worst %v, want 4.09", res[2].Worst)
	}
	var b bytes.Buffer
	if err := WriteBudgets(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| completion.feature | too tight | completion from reveal, every node and warm slot | 1s | 7, 8 |", "**no**", "| no cell |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
