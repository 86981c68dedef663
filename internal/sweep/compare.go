package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/segdiff/segdiff/internal/stats"
)

// CompareOptions set what counts as a regression.
type CompareOptions struct {
	// Tolerance is how much worse a metric may get: relative to the base
	// mean for p50, p99 and copies (0.1: 10 %), in share points for
	// within (0.1: ten points). A metric without one is not gated.
	Tolerance map[Metric]float64 `json:"tolerance"`
	// Alpha is the significance level of the one-sided Mann–Whitney test
	// over seeds (new worse than base).
	Alpha float64 `json:"alpha"`
	// Phases are the slot phases gated: "warm" and/or "cold".
	Phases []string `json:"phases"`
}

// ToleranceText states the tolerance of every gated metric:
// "p50 10 %, p99 10 %, within 10 points, copies 10 %".
func (o CompareOptions) ToleranceText() string {
	var parts []string
	for _, m := range Metrics {
		tol, gated := o.Tolerance[m]
		switch {
		case !gated:
			parts = append(parts, fmt.Sprintf("%s not gated", m))
		case m == MetricWithin:
			parts = append(parts, fmt.Sprintf("%s %g points", m, 100*tol))
		default:
			parts = append(parts, fmt.Sprintf("%s %g %%", m, 100*tol))
		}
	}
	return strings.Join(parts, ", ")
}

// DefaultCompareOptions gate the warm p50, p99, within-window share and
// copies at 10 % (10 points for the share) and α = 0.05.
func DefaultCompareOptions() CompareOptions {
	return CompareOptions{
		Tolerance: map[Metric]float64{MetricP50: 0.10, MetricP99: 0.10, MetricWithin: 0.10, MetricCopies: 0.10, MetricCopiesOverSlot: 0.10},
		Alpha:     0.05,
		Phases:    []string{"warm"},
	}
}

// Delta is one metric of one configuration, base against new.
type Delta struct {
	Configuration string `json:"configuration"`
	Phase         string `json:"phase"`
	Metric        Metric `json:"metric"`
	Base          Spread `json:"base"`
	New           Spread `json:"new"`
	// Worse is how much worse new is than base: relative to the base mean
	// (p50, p99, copies) or in share points (within); negative is better.
	Worse Num `json:"worse"`
	// U and P are the one-sided Mann–Whitney test of "new is worse" over
	// the per-seed values; MinP is the least p-value the seed counts allow.
	U     float64 `json:"u"`
	P     float64 `json:"p"`
	MinP  float64 `json:"min_p"`
	Exact bool    `json:"exact"`
	// Regressed is the gate's verdict, Verdict says why.
	Regressed bool   `json:"regressed"`
	Verdict   string `json:"verdict"`
}

// Comparison is `segdiff sweep compare`'s result.
type Comparison struct {
	Base, New string
	// Options are the gate's settings, stated in the output.
	Options CompareOptions `json:"options"`
	// Differ lists configuration keys (seed aside) whose values differ
	// between the two sweeps' matched configurations: "node_class: home → custom".
	Differ []string `json:"differ,omitempty"`
	// OnlyBase and OnlyNew are configurations without a match.
	OnlyBase []string `json:"only_base,omitempty"`
	OnlyNew  []string `json:"only_new,omitempty"`
	Deltas   []Delta  `json:"deltas"`
}

// Regressions counts the deltas the gate failed.
func (c *Comparison) Regressions() int {
	n := 0
	for _, d := range c.Deltas {
		if d.Regressed {
			n++
		}
	}
	return n
}

// Compare matches the configurations of two sweeps' result folders by
// their coordinates (the axes' labels, seed aside) and tests each gated
// metric: a configuration regresses when new is worse than base by more
// than the tolerance and the Mann–Whitney test over seeds says new is
// worse at level Alpha. When the seed counts cannot reach Alpha at all
// (fewer than 3 + 3 seeds at 0.05), the strongest evidence they can give
// stands in: every new seed worse than every base seed.
func Compare(ctx context.Context, baseDir, newDir string, opts CompareOptions) (*Comparison, error) {
	base, baseCells, err := loadSummary(ctx, baseDir)
	if err != nil {
		return nil, fmt.Errorf("compare: base: %w", err)
	}
	next, newCells, err := loadSummary(ctx, newDir)
	if err != nil {
		return nil, fmt.Errorf("compare: new: %w", err)
	}
	cmp := &Comparison{Base: baseDir, New: newDir, Options: opts}
	for _, b := range base.Configurations {
		n := next.byConfiguration(b.Configuration)
		if n == nil {
			cmp.OnlyBase = append(cmp.OnlyBase, b.Configuration)
			continue
		}
		for _, d := range configDiff(baseCells[b.Configuration], newCells[n.Configuration]) {
			if !slices.Contains(cmp.Differ, d) {
				cmp.Differ = append(cmp.Differ, d)
			}
		}
		for _, phase := range opts.Phases {
			bp, np := b.Warm, n.Warm
			if phase == "cold" {
				bp, np = b.Cold, n.Cold
			}
			for _, m := range Metrics {
				tol, gated := opts.Tolerance[m]
				if !gated {
					continue
				}
				d, err := compareMetric(m, bp.Get(m), np.Get(m), tol, opts.Alpha)
				if err != nil {
					return nil, fmt.Errorf("compare %s %s: %w", b.Configuration, m, err)
				}
				d.Configuration, d.Phase = b.Configuration, phase
				cmp.Deltas = append(cmp.Deltas, d)
			}
		}
	}
	for _, n := range next.Configurations {
		if base.byConfiguration(n.Configuration) == nil {
			cmp.OnlyNew = append(cmp.OnlyNew, n.Configuration)
		}
	}
	if len(cmp.Deltas) == 0 {
		return nil, fmt.Errorf("compare: no configuration of %s matches one of %s", newDir, baseDir)
	}
	return cmp, nil
}

func loadSummary(ctx context.Context, dir string) (*Summary, map[string]*CellResult, error) {
	root := dir
	if cells := filepath.Join(dir, cellsDir); isDir(cells) {
		root = cells
	}
	cells, err := LoadCells(ctx, root)
	if err != nil {
		return nil, nil, err
	}
	s, err := Summarize(cells)
	if err != nil {
		return nil, nil, err
	}
	first := map[string]*CellResult{}
	for _, c := range cells {
		if _, ok := first[c.Configuration()]; !ok {
			first[c.Configuration()] = c
		}
	}
	return s, first, nil
}

func (s *Summary) byConfiguration(key string) *ConfigSummary {
	for _, c := range s.Configurations {
		if c.Configuration == key {
			return c
		}
	}
	return nil
}

// configDiff lists the configuration keys whose values differ, seed aside.
func configDiff(a, b *CellResult) []string {
	if a == nil || b == nil {
		return nil
	}
	ca, cb := a.Config, b.Config
	ca.Seed, cb.Seed = 0, 0
	var ma, mb map[string]any
	ja, _ := json.Marshal(ca)
	jb, _ := json.Marshal(cb)
	if json.Unmarshal(ja, &ma) != nil || json.Unmarshal(jb, &mb) != nil {
		return nil
	}
	var out []string
	for k, va := range ma {
		if vb := mb[k]; fmt.Sprint(va) != fmt.Sprint(vb) {
			out = append(out, fmt.Sprintf("%s: %v → %v", k, va, vb))
		}
	}
	for k, vb := range mb {
		if _, ok := ma[k]; !ok {
			out = append(out, fmt.Sprintf("%s: (unset) → %v", k, vb))
		}
	}
	slices.Sort(out)
	return out
}

func compareMetric(m Metric, base, next Spread, tol, alpha float64) (Delta, error) {
	d := Delta{Metric: m, Base: base, New: next}
	bv, nv := base.Values(), next.Values()
	alt := stats.Greater
	worse := (float64(next.Mean) - float64(base.Mean)) / math.Abs(float64(base.Mean))
	if !m.HigherIsWorse() {
		alt = stats.Less
		worse = float64(base.Mean) - float64(next.Mean)
	}
	switch {
	case math.IsInf(float64(base.Mean), 1) && math.IsInf(float64(next.Mean), 1):
		worse = 0 // both never: no number to compare
	case math.IsNaN(worse):
		worse = 0 // 0 → 0
	}
	d.Worse = Num(worse)
	mw, err := stats.MannWhitneyU(nv, bv, alt)
	if err != nil {
		return d, err
	}
	d.U, d.P, d.Exact = mw.U, mw.P, mw.Exact
	d.MinP = 1 / binomial(len(bv)+len(nv), len(nv))
	beyond := worse > tol
	// An exact p of 1/20 must meet α = 0.05 despite rounding.
	significant := d.P <= alpha*(1+1e-9)
	reachable := d.MinP <= alpha*(1+1e-9)
	switch {
	case !beyond:
		d.Verdict = "within tolerance"
	case reachable && significant:
		d.Regressed, d.Verdict = true, fmt.Sprintf("REGRESSED (p %.3g ≤ α %.3g)", d.P, alpha)
	case reachable:
		d.Verdict = fmt.Sprintf("worse beyond tolerance, not significant (p %.3g > α %.3g)", d.P, alpha)
	case d.P <= d.MinP*(1+1e-9):
		d.Regressed = true
		d.Verdict = fmt.Sprintf("REGRESSED: every new seed worse than every base seed (%d + %d seeds cannot reach α %.3g; least p %.3g)", len(bv), len(nv), alpha, d.MinP)
	default:
		d.Verdict = fmt.Sprintf("worse beyond tolerance; %d + %d seeds cannot reach α %.3g and the seeds overlap", len(bv), len(nv), alpha)
	}
	return d, nil
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// Table lays the comparison out: one row per configuration, phase and
// metric.
func (c *Comparison) Table() Table {
	t := Table{Corner: "configuration · phase · metric", Columns: []string{"base", "new", "worse by", "U", "p (one-sided)", "verdict"}}
	for _, d := range c.Deltas {
		worse := fmt.Sprintf("%+.1f %%", 100*float64(d.Worse))
		if d.Metric == MetricWithin {
			worse = fmt.Sprintf("%+.1f points", 100*float64(d.Worse))
		}
		if math.IsInf(float64(d.Worse), 0) {
			worse = "→ never"
		}
		t.Rows = append(t.Rows, TableRow{
			Label:   fmt.Sprintf("%s · %s · %s", d.Configuration, d.Phase, d.Metric),
			Entries: []string{formatMetric(d.Metric, d.Base), formatMetric(d.Metric, d.New), worse, fmt.Sprintf("%g", d.U), fmt.Sprintf("%.3g", d.P), d.Verdict},
		})
	}
	return t
}

// WriteMarkdown writes the comparison: what differs, the table, and the
// verdict.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Sweep comparison\n\nbase `%s` · new `%s` · one-sided Mann–Whitney U over seeds, α %g · %s slots · tolerance %s\n\n",
		c.Base, c.New, c.Options.Alpha, strings.Join(c.Options.Phases, " and "), c.Options.ToleranceText())
	if len(c.Differ) > 0 {
		fmt.Fprintf(&b, "The matched configurations differ in: %s.\n\n", strings.Join(c.Differ, "; "))
	}
	if len(c.OnlyBase) > 0 {
		fmt.Fprintf(&b, "Only in base: %s.\n\n", strings.Join(c.OnlyBase, "; "))
	}
	if len(c.OnlyNew) > 0 {
		fmt.Fprintf(&b, "Only in new: %s.\n\n", strings.Join(c.OnlyNew, "; "))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := c.Table().WriteMarkdown(w); err != nil {
		return err
	}
	if err := c.writeLargest(w); err != nil {
		return err
	}
	verdict := "no regression"
	if n := c.Regressions(); n > 0 {
		verdict = fmt.Sprintf("%d regressions", n)
	}
	_, err := fmt.Fprintf(w, "**%s** (%d metrics compared)\n", verdict, len(c.Deltas))
	return err
}

// writeLargest states, per metric, the largest change of the mean either
// way: two runs of one grid give the reproducibility of a sweep.
func (c *Comparison) writeLargest(w io.Writer) error {
	var parts []string
	for _, m := range Metrics {
		var best *Delta
		for i, d := range c.Deltas {
			if d.Metric != m || math.IsInf(float64(d.Worse), 0) {
				continue
			}
			if best == nil || math.Abs(float64(d.Worse)) > math.Abs(float64(best.Worse)) {
				best = &c.Deltas[i]
			}
		}
		if best == nil {
			continue
		}
		unit := " %"
		if m == MetricWithin {
			unit = " points"
		}
		parts = append(parts, fmt.Sprintf("%s %.1f%s (%s, %s)", m, 100*math.Abs(float64(best.Worse)), unit, best.Configuration, best.Phase))
	}
	if len(parts) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "Largest change of a mean over seeds, either way: %s.\n\n", strings.Join(parts, "; "))
	return err
}
