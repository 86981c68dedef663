package sweep

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/diffusion"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
)

// BudgetRow is one budget of a feature: a check on the devnet a run spec
// describes, against a value.
type BudgetRow struct {
	Feature, Scenario string
	// Spec is the devnet's run spec; cells match it whatever their seed.
	Spec   embedded.Config
	Check  assertions.Check
	Budget float64
}

// BudgetResult is a row held against the cells of its configuration:
// what each seed's warm slots measured, the worst of them, whether every
// seed passes, and the budget the cells suggest.
type BudgetResult struct {
	Row BudgetRow
	// Seeds and Values are the matching cells' seeds and measurements, in
	// seed order.
	Seeds  []int64
	Values []embedded.CheckValue
	// Worst is the largest value (+Inf: some seed had a node that never
	// completed); Pass holds when every seed is within the budget.
	Worst float64
	Pass  bool
	// Suggested is the worst seed plus a fifth, rounded up (completion to
	// 100 ms, copies to a tenth): a budget set from the quantity it checks.
	Suggested float64
}

// EvaluateBudgets holds every row against the finished cells whose spec
// is the row's but for the seed. A row no cell matches has no seeds.
func EvaluateBudgets(rows []BudgetRow, cells []*CellResult) []BudgetResult {
	bySpec := map[string][]*CellResult{}
	for _, c := range cells {
		k := specKey(c.Config)
		bySpec[k] = append(bySpec[k], c)
	}
	out := make([]BudgetResult, 0, len(rows))
	for _, row := range rows {
		r := BudgetResult{Row: row, Pass: true, Worst: math.Inf(-1)}
		for _, c := range sortBySeed(bySpec[specKey(row.Spec)]) {
			v, ok := c.Warm.Checks[row.Check.Key]
			if !ok {
				v = embedded.CheckValue{Error: "the cell's sim recorded no value of this check (an older build?)"}
			}
			r.Seeds, r.Values = append(r.Seeds, c.Seed()), append(r.Values, v)
			switch {
			case v.Error != "":
				r.Pass = false
			case v.Never:
				r.Worst, r.Pass = math.Inf(1), false
			default:
				r.Worst = math.Max(r.Worst, v.Value)
				r.Pass = r.Pass && v.Value <= row.Budget
			}
		}
		if len(r.Seeds) == 0 {
			r.Pass = false
		}
		r.Suggested = suggestBudget(r.Worst)
		out = append(out, r)
	}
	return out
}

// specKey keys a spec without its seed. The aim named as its default is
// the same devnet as the aim left empty: stress-tier4-ci.yaml names the
// safer aim, which the features' devnets leave to the default.
func specKey(c embedded.Config) string {
	c.Seed, c.HeapProfile = 0, ""
	if diffusion.Aim(c.Aim) == diffusion.DefaultStateRules.Aim {
		c.Aim = ""
	}
	return Hash(c)
}

func sortBySeed(cs []*CellResult) []*CellResult {
	out := append([]*CellResult(nil), cs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Seed() < out[j-1].Seed(); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// suggestBudget is worst plus a fifth, rounded up to a tenth (100 ms for
// times, a tenth of a copy).
func suggestBudget(worst float64) float64 {
	if math.IsInf(worst, 0) || math.IsNaN(worst) {
		return worst
	}
	const step = 0.1 // 100 ms, or a tenth of a copy
	return math.Round(math.Ceil(worst*1.2/step-1e-9)*step*10) / 10
}

// WriteBudgets writes the results as a Markdown table: per feature row,
// the budget, each seed's value, the worst, the verdict and the budget the
// cells suggest.
func WriteBudgets(w io.Writer, results []BudgetResult) error {
	var b strings.Builder
	b.WriteString("| feature | scenario | check | budget | seeds | per seed | worst | passes | from the cells (worst + 20 %) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		u := r.Row.Check.Unit
		var per []string
		for _, v := range r.Values {
			switch {
			case v.Error != "":
				per = append(per, "error: "+v.Error)
			case v.Never:
				per = append(per, "never")
			default:
				per = append(per, u.Format(v.Value))
			}
		}
		worst, verdict, from := "—", "no cell", "—"
		if len(r.Seeds) > 0 {
			worst, from = formatValue(u, r.Worst), formatValue(u, r.Suggested)
			verdict = map[bool]string{true: "yes", false: "**no**"}[r.Pass]
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Row.Feature, escape(r.Row.Scenario), r.Row.Check.Name,
			u.Format(r.Row.Budget), seedList(r.Seeds), strings.Join(per, ", "), worst, verdict, from)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func formatValue(u assertions.Unit, v float64) string {
	if math.IsInf(v, 1) {
		return "never"
	}
	return u.Format(v)
}
