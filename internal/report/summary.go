package report

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/stats"
)

// Summary renders summary.md: a table of every scenario (devnet, status,
// the failing verdict), the run header, then one section per executed
// scenario (check, its source, measured, budget, result, worst nodes with link class
// and, when prev is not nil, the change since prev), the distributions and
// the plots. A skipped scenario is a row of the table, "skipped: <reason>".
func Summary(run Run, prev *Run, plots []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# segdiff run %s\n\n", run.ID)
	writeOutcomes(&b, run)
	counts := map[string]int{}
	for _, sc := range run.Scenarios {
		counts[sc.Status]++
	}
	fmt.Fprintf(&b, "Backend `%s`, started %s, took %s. Scenarios: %d passed, %d failed, %d skipped.\n\n",
		run.Backend, run.Started.UTC().Format("2006-01-02 15:04:05Z"), run.Finished.Sub(run.Started).Round(1e9),
		counts[StatusPassed], counts[StatusFailed], counts[StatusSkipped])
	if run.Executed() == 0 {
		b.WriteString("**No scenario executed: this run checked nothing.** `latest` was not moved to it.\n\n")
	}
	if len(run.Devnets) > 0 {
		keys := make([]string, 0, len(run.Devnets))
		for k := range run.Devnets {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("Devnets:\n\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "- `%s`: %s\n", k, run.Devnets[k].String())
		}
		b.WriteString("\n")
	}
	var prevFig map[string]float64
	if prev != nil {
		prevFig = prev.Figures()
		fmt.Fprintf(&b, "Changes (Δ) are against run %s.\n\n", prev.ID)
	}
	titles := sectionTitles(run)
	for i, sc := range run.Scenarios {
		if sc.Status == StatusSkipped {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n", titles[i])
		fmt.Fprintf(&b, "Status: %s", statusCell(sc))
		if len(sc.Devnets) > 0 {
			fmt.Fprintf(&b, "; devnet: `%s`", strings.Join(sc.Devnets, "`, `"))
		}
		b.WriteString("\n\n")
		if len(sc.Overrides) > 0 {
			fmt.Fprintf(&b, "Budget overridden (the title shows the feature's value): `%s`\n\n", strings.Join(sc.Overrides, "`, `"))
		}
		if len(sc.Verdicts) == 0 {
			if sc.Error != "" {
				fmt.Fprintf(&b, "Error: %s\n\n", cell(sc.Error))
			} else {
				b.WriteString("No measurements.\n\n")
			}
			continue
		}
		b.WriteString("| check | source | measured | budget | result | worst nodes |")
		if prev != nil {
			b.WriteString(" Δ vs previous |")
		}
		b.WriteString("\n|---|---|---|---|---|---|")
		if prev != nil {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, v := range sc.Verdicts {
			measured, result := v.Unit.Format(v.Measured), "pass"
			if v.Reason != "" {
				measured = v.Reason
			}
			if !v.Pass {
				result = "**FAIL**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s %s | %s | %s |", cell(v.Check), cell(v.Source), cell(measured), v.Op,
				v.Unit.Format(v.Budget), result, cell(assertions.FormatOffenders(v.OffenderUnit(), v.Worst)))
			if prev != nil {
				b.WriteString(" " + delta(v, prevFig, sc.Name) + " |")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
		for _, v := range sc.Verdicts {
			if v.Note != "" {
				fmt.Fprintf(&b, "%s: %s\n\n", cell(v.Check), cell(v.Note))
			}
		}
		if sc.Status == StatusFailed && !anyFailed(sc.Verdicts) {
			fmt.Fprintf(&b, "Error: %s\n\n", cell(sc.Error))
		}
	}
	writeDistributions(&b, run)
	if len(plots) > 0 {
		b.WriteString("## Plots\n\n")
	}
	for _, p := range plots {
		if filepath.Ext(p) == ".png" {
			name := filepath.Base(p)
			fmt.Fprintf(&b, "![%s](%s)\n\n", strings.TrimSuffix(name, ".png"), name)
		}
	}
	return b.String()
}

// writeOutcomes writes the table summary.md opens with: one row per
// scenario with its devnet, its status and, for a failure, the first
// failing verdict (or the error).
func writeOutcomes(b *strings.Builder, run Run) {
	if len(run.Scenarios) == 0 {
		b.WriteString("No scenario was selected.\n\n")
		return
	}
	b.WriteString("| scenario | devnet | status | failing verdict |\n|---|---|---|---|\n")
	for _, sc := range run.Scenarios {
		var devnets []string
		for _, d := range sc.Devnets {
			devnets = append(devnets, run.devnetLabel(strings.TrimPrefix(d, run.Backend+": ")))
		}
		failing := ""
		if sc.Status == StatusFailed {
			failing = sc.Error
			for _, v := range sc.Verdicts {
				if !v.Pass {
					failing = verdictBrief(v)
					break
				}
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", cell(sc.Name), cell(strings.Join(devnets, " vs ")), statusCell(sc), cell(failing))
	}
	b.WriteString("\n")
}

// statusCell is "passed", "**failed**" or "skipped: <reason>".
func statusCell(sc Scenario) string {
	switch sc.Status {
	case StatusFailed:
		return "**failed**"
	case StatusSkipped:
		if sc.Error == "" {
			return "skipped"
		}
		return "skipped: " + cell(sc.Error)
	}
	return cell(sc.Status)
}

// verdictBrief is a failed verdict in one table cell: the check, what was
// measured (or why nothing was) and the budget; the scenario's section has
// the worst nodes.
func verdictBrief(v assertions.Verdict) string {
	src := ""
	if v.Source != "" {
		src = " [source: " + v.Source + "]"
	}
	if v.Reason != "" {
		return fmt.Sprintf("%s: %s (budget %s %s)%s", v.Check, v.Reason, v.Op, v.Unit.Format(v.Budget), src)
	}
	return fmt.Sprintf("%s = %s, budget %s %s%s", v.Check, v.Unit.Format(v.Measured), v.Op, v.Unit.Format(v.Budget), src)
}

// sectionTitles returns, by index in run.Scenarios, a title for every
// executed scenario that no other section shares: the name, then the
// devnets where names repeat (an outline's rows for two backends), then a
// count.
func sectionTitles(run Run) map[int]string {
	titles, seen := map[int]string{}, map[string]int{}
	names := map[string]int{}
	for _, sc := range run.Scenarios {
		if sc.Status != StatusSkipped {
			names[sc.Name]++
		}
	}
	for i, sc := range run.Scenarios {
		if sc.Status == StatusSkipped {
			continue
		}
		t := sc.Name
		if names[sc.Name] > 1 && len(sc.Devnets) > 0 {
			t += " — " + strings.Join(sc.Devnets, ", ")
		}
		seen[t]++
		if seen[t] > 1 {
			t = fmt.Sprintf("%s (%d)", t, seen[t])
		}
		titles[i] = t
	}
	return titles
}

func anyFailed(vs []assertions.Verdict) bool {
	for _, v := range vs {
		if !v.Pass {
			return true
		}
	}
	return false
}

func delta(v assertions.Verdict, prev map[string]float64, scenario string) string {
	before, ok := prev[figureKey(scenario, v.Check)]
	if !ok || v.Reason != "" {
		return "new"
	}
	d := v.Measured - before
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	rel := ""
	if before != 0 {
		rel = fmt.Sprintf(" (%s%.0f%%)", sign, math.Abs(100*d/before))
	}
	if v.Unit == assertions.UnitShare {
		return fmt.Sprintf("%s%.1f pp%s", sign, 100*d, rel)
	}
	return sign + v.Unit.Format(d) + rel
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// writeDistributions summarises every pooled distribution per link class:
// the per-node figures behind the verdicts (install delay included, which
// no budget may fail but the report must show), one row group per devnet.
func writeDistributions(b *strings.Builder, run Run) {
	if len(run.Distributions) == 0 {
		return
	}
	b.WriteString("## Distributions (nearest-rank, pooled over nodes x warm slots)\n\n")
	b.WriteString("| measure | devnet | link class | nodes | samples | p50 | p90 | max |\n|---|---|---|---|---|---|---|---|\n")
	ds := append([]*Distribution(nil), run.Distributions...)
	sort.SliceStable(ds, func(i, j int) bool {
		if ds[i].Kind != ds[j].Kind {
			return ds[i].Kind < ds[j].Kind
		}
		if ri, rj := modeRank(ds[i].Mode), modeRank(ds[j].Mode); ri != rj {
			return ri < rj
		}
		return run.devnetLabel(ds[i].Devnet) < run.devnetLabel(ds[j].Devnet)
	})
	for _, d := range ds {
		u := assertions.UnitSeconds
		if d.Kind == KindCopies {
			u = assertions.UnitCopies
		}
		byLink := map[string][]float64{"all": nil}
		nodes := map[string]map[string]bool{"all": {}}
		for _, s := range d.Samples {
			for _, l := range []string{"all", s.Link} {
				byLink[l] = append(byLink[l], s.Value)
				if nodes[l] == nil {
					nodes[l] = map[string]bool{}
				}
				nodes[l][s.Node] = true
			}
		}
		links := make([]string, 0, len(byLink))
		for l := range byLink {
			links = append(links, l)
		}
		sort.Strings(links)
		for _, l := range links {
			vs := byLink[l]
			fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %s | %s | %s |\n", assertions.Measure(d.Kind), cell(run.devnetLabel(d.Devnet)), l, len(nodes[l]), len(vs),
				u.Format(stats.Quantile(vs, 0.5)), u.Format(stats.Quantile(vs, 0.9)), u.Format(stats.Quantile(vs, 1)))
		}
	}
	b.WriteString("\n")
}

// Table renders the run's outcome for a terminal: one line per scenario
// with its status and, for a failure, the first failed check; then the
// counts. The suite prints it at the end of every run, passed or failed.
func Table(run Run) string {
	var b strings.Builder
	counts := map[string]int{}
	for _, sc := range run.Scenarios {
		counts[sc.Status]++
		status := strings.ToUpper(sc.Status)
		detail := ""
		switch sc.Status {
		case StatusFailed:
			detail = sc.Error
			for _, v := range sc.Verdicts {
				if !v.Pass {
					detail = v.String()
					break
				}
			}
		case StatusSkipped:
			detail = sc.Error
		}
		if len(detail) > 160 {
			detail = detail[:157] + "..."
		}
		fmt.Fprintf(&b, "%-7s  %s", status, sc.Name)
		if detail != "" {
			fmt.Fprintf(&b, "\n         %s", strings.ReplaceAll(detail, "\n", " "))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "scenarios: %d passed, %d failed, %d skipped (run %s, %s backend)\n",
		counts[StatusPassed], counts[StatusFailed], counts[StatusSkipped], run.ID, run.Backend)
	if run.Executed() == 0 {
		b.WriteString("NO SCENARIO EXECUTED: this run checked nothing\n")
	}
	return b.String()
}
