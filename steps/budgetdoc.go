package steps

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v34"
)

// BudgetsDoc renders features/BUDGETS.md from the feature files in dir:
// for every scenario outline, its steps and each Examples block (name, tags
// and table) exactly as the feature holds them. The budgets live in the
// features only; this document gathers them, and a test keeps it in step.
func BudgetsDoc(dir string) (string, error) {
	features, err := (&godog.TestSuite{Options: &godog.Options{Paths: []string{dir}}}).RetrieveFeatures()
	if err != nil {
		return "", fmt.Errorf("read features for BUDGETS.md: %w", err)
	}
	sort.Slice(features, func(i, j int) bool { return features[i].Uri < features[j].Uri })
	var b strings.Builder
	b.WriteString("# Budgets per scenario\n\n" +
		"Generated from features/*.feature by `go test ./steps -run TestBudgetsDoc -update`; do not edit.\n" +
		"Each section is one scenario outline: its steps, then each Examples block as the feature has it, one\n" +
		"row per scenario. Tags on a block pick the backend that runs its rows; `SEGDIFF_BUDGET_<KEY>`\n" +
		"overrides a budget for every row (see README.md; the feature descriptions say where each figure comes from).\n")
	for _, f := range features {
		doc := f.GherkinDocument
		if doc == nil || doc.Feature == nil {
			continue
		}
		fmt.Fprintf(&b, "\n## %s: %s\n", filepath.Base(f.Uri), doc.Feature.Name)
		writeTags(&b, doc.Feature.Tags)
		for _, sc := range scenariosOf(doc.Feature.Children) {
			// "<mode>" would read as an HTML tag.
			fmt.Fprintf(&b, "\n### %s\n", strings.ReplaceAll(sc.Name, "<", `\<`))
			writeTags(&b, sc.Tags)
			b.WriteString("\n```gherkin\n")
			for _, st := range sc.Steps {
				fmt.Fprintf(&b, "%s %s\n", strings.TrimSpace(st.Keyword), st.Text)
			}
			b.WriteString("```\n")
			for _, ex := range sc.Examples {
				writeExamples(&b, ex)
			}
		}
	}
	return b.String(), nil
}

// scenariosOf lists the scenarios of a feature's children, those inside
// rules included, in file order.
func scenariosOf(children []*messages.FeatureChild) []*messages.Scenario {
	var out []*messages.Scenario
	for _, c := range children {
		switch {
		case c.Scenario != nil:
			out = append(out, c.Scenario)
		case c.Rule != nil:
			for _, rc := range c.Rule.Children {
				if rc.Scenario != nil {
					out = append(out, rc.Scenario)
				}
			}
		}
	}
	return out
}

func writeTags(b *strings.Builder, tags []*messages.Tag) {
	if len(tags) == 0 {
		return
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = "`" + t.Name + "`"
	}
	fmt.Fprintf(b, "\nTags: %s\n", strings.Join(names, " "))
}

func writeExamples(b *strings.Builder, ex *messages.Examples) {
	name := ex.Name
	if name == "" {
		name = "Examples"
	}
	fmt.Fprintf(b, "\n**%s**", name)
	for _, t := range ex.Tags {
		fmt.Fprintf(b, " `%s`", t.Name)
	}
	b.WriteString("\n\n")
	if ex.TableHeader == nil {
		b.WriteString("(no table)\n")
		return
	}
	row := func(r *messages.TableRow) {
		for _, c := range r.Cells {
			fmt.Fprintf(b, "| %s ", strings.ReplaceAll(c.Value, "|", `\|`))
		}
		b.WriteString("|\n")
	}
	row(ex.TableHeader)
	b.WriteString(strings.Repeat("|---", len(ex.TableHeader.Cells)) + "|\n")
	for _, r := range ex.TableBody {
		row(r)
	}
}
