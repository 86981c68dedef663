package sweep

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/segdiff/segdiff/internal/devnet/embedded"
)

// Table is a published-style table: one row per configuration, one
// column per network (or whatever the column axis is). It renders as
// Markdown; the report package can lay its own figures out the same way.
type Table struct {
	// Title heads the table; Corner heads the label column.
	Title   string
	Corner  string
	Columns []string
	Rows    []TableRow
}

// TableRow is one labelled row of entries, one per column.
type TableRow struct {
	Label   string
	Entries []string
}

// WriteMarkdown writes the table as a Markdown pipe table under its title.
func (t Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "%s\n\n", t.Title)
	}
	fmt.Fprintf(&b, "| %s |", escape(t.Corner))
	for _, c := range t.Columns {
		fmt.Fprintf(&b, " %s |", escape(c))
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(t.Columns)))
	b.WriteString("\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "| %s |", escape(r.Label))
		for i := range t.Columns {
			e := ""
			if i < len(r.Entries) {
				e = r.Entries[i]
			}
			fmt.Fprintf(&b, " %s |", escape(e))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Tables lays the summary out as tables: every configuration with every
// metric in one table; then, as the published tables are laid out
// (configuration rows × network columns), for the warm slots, then the
// cold one, the mean of per-seed medians, the mean of per-seed p99, the
// share within the window (min–max over seeds) and the copies, each entry
// with its range over seeds; then what the cells cost.
func (s *Summary) Tables() []Table {
	out := []Table{s.Overview()}
	for _, phase := range []string{"warm", "cold"} {
		for _, m := range Metrics {
			t := s.grid(func(c *ConfigSummary) string {
				p := c.Warm
				if phase == "cold" {
					p = c.Cold
				}
				return formatMetric(m, p.Get(m))
			})
			t.Title = fmt.Sprintf("**%s, %s**", phase, metricTitle(m, s.Window))
			out = append(out, t)
		}
	}
	cost := s.grid(func(c *ConfigSummary) string {
		w := c.WallSeconds
		return fmt.Sprintf("%.0f s (%.0f–%.0f), %s", float64(w.Mean), float64(w.Min), float64(w.Max), embedded.FormatBytes(c.PeakRSSBytes))
	})
	cost.Title = "**cost per cell**: wall time, mean (min–max) over seeds; peak RSS, largest"
	return append(out, cost)
}

// Overview is one table of every configuration (rows, in the grid's
// order) and every metric, warm then cold, with the cells' wall time: the
// table a ladder is read from.
func (s *Summary) Overview() Table {
	short := map[Metric]string{MetricP50: "p50", MetricP99: "p99", MetricWithin: "≤ " + s.Window,
		MetricCopies: "copies by completion", MetricCopiesOverSlot: "copies over slot"}
	t := Table{Title: "**every configuration**: mean over seeds (min–max); seconds from the reveal; copies per receiver and slot, " +
		"by network completion (mean) and over the slot (median)", Corner: "configuration"}
	for _, phase := range []string{"warm", "cold"} {
		for _, m := range Metrics {
			t.Columns = append(t.Columns, phase+" "+short[m])
		}
	}
	t.Columns = append(t.Columns, "wall per cell")
	for _, c := range s.Configurations {
		row := TableRow{Label: c.Configuration}
		if row.Label == "" {
			row.Label = "all"
		}
		for _, p := range []PhaseStats{c.Warm, c.Cold} {
			for _, m := range Metrics {
				row.Entries = append(row.Entries, formatMetric(m, p.Get(m)))
			}
		}
		w := c.WallSeconds
		row.Entries = append(row.Entries, fmt.Sprintf("%.0f s (%.0f–%.0f)", float64(w.Mean), float64(w.Min), float64(w.Max)))
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (s *Summary) grid(entry func(*ConfigSummary) string) Table {
	t := Table{Corner: strings.Join(s.RowAxes, " · "), Columns: s.ColumnLabels}
	if t.Corner == "" {
		t.Corner = "configuration"
	}
	if s.Columns != "" {
		t.Corner += " \\ " + s.Columns
	}
	for _, r := range s.RowLabels {
		row := TableRow{Label: r}
		if row.Label == "" {
			row.Label = "all"
		}
		for _, col := range s.ColumnLabels {
			e := "—"
			if c := s.Config(r, col); c != nil {
				e = entry(c)
			}
			row.Entries = append(row.Entries, e)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func metricTitle(m Metric, window string) string {
	switch m {
	case MetricP50:
		return "p50: mean of per-seed medians (min–max over seeds), seconds from the reveal"
	case MetricP99:
		return "p99: mean of per-seed 99th percentiles (min–max over seeds), seconds from the reveal"
	case MetricWithin:
		return fmt.Sprintf("receivers complete within %s: min–max over seeds", window)
	case MetricCopiesOverSlot:
		return "copies received per receiver and slot over the slot, late duplicates included (what the features' copies budgets bound): mean over seeds of per-seed medians (min–max)"
	}
	return "copies received per receiver and slot by network completion: mean over seeds of per-seed means (min–max); n/a where some node never completed"
}

// formatMetric renders an entry: "1.234 s (1.102–1.351)", "40.2–61.9 %",
// "6.12 (5.90–6.41)"; a censored seed shows as never.
func formatMetric(m Metric, s Spread) string {
	switch m {
	case MetricP50, MetricP99:
		return fmt.Sprintf("%s (%s–%s)", secondsString(s.Mean, " s"), secondsString(s.Min, ""), secondsString(s.Max, ""))
	case MetricWithin:
		lo, hi := 100*float64(s.Min), 100*float64(s.Max)
		if lo == hi {
			return fmt.Sprintf("%.1f %%", lo)
		}
		return fmt.Sprintf("%.1f–%.1f %%", lo, hi)
	}
	if math.IsNaN(float64(s.Mean)) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", float64(s.Mean), float64(s.Min), float64(s.Max))
}

func secondsString(v Num, unit string) string {
	if math.IsInf(float64(v), 1) {
		return "never"
	}
	return fmt.Sprintf("%.3f%s", float64(v), unit)
}

// WriteMarkdown writes sweep.md: what the sweep is, how its figures are
// taken, and its tables.
func (s *Summary) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Sweep %s\n\n", s.Sweep)
	if s.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(s.Description))
	}
	fmt.Fprintf(&b, "Grid `%s`: %d of %d cells, %d configurations, seeds %s.", s.GridFile, s.Cells, s.Planned, len(s.Configurations), seedList(s.Seeds))
	if len(s.Missing) > 0 {
		fmt.Fprintf(&b, " **Missing cells (plan indices): %s** — their configurations average fewer seeds.", intList(s.Missing))
	}
	b.WriteString("\n\n")
	b.WriteString("Each seed's figures are its own run's (nearest-rank over every receiver × slot, " +
		"warm = every payload but the first, cold = the first; \"never\": the quantile fell on a node that never completed). " +
		"Each entry is the mean over seeds of those per-seed figures, with the range over seeds in parentheses, " +
		"so the seed spread stands beside every mean.\n\n")
	fmt.Fprintf(&b, "Cells' machine time: %.0f s in all; largest peak RSS %s.\n\n", s.CellWallSeconds, embedded.FormatBytes(s.PeakRSSBytes))
	var outside []string
	for _, c := range s.Configurations {
		if c.ModelCaveat != "" {
			outside = append(outside, "`"+c.Configuration+"`")
		}
	}
	if len(outside) > 0 {
		fmt.Fprintf(&b, "**Outside the validated scope of the network model they ran on** (their figures are that model's own, "+
			"not the packet model's; `internal/devnet/embedded/README.md`, \"Two network models\" and \"A congestion window in the flows model\"): %s.\n\n",
			strings.Join(outside, ", "))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	for _, t := range s.Tables() {
		if err := t.WriteMarkdown(w); err != nil {
			return err
		}
	}
	return nil
}

func seedList(seeds []int64) string {
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ", ")
}

func intList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}
