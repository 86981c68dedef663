package steps

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v34"

	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/metrics"
)

// Sources of a scenario's figures on each kind of client, as SourcesDoc
// names them.
const (
	docContract = "contract"
	docStandard = "standard API (times at receipt)"
	docReads    = "standard API reads"
)

// SourcesDoc renders the "Sources" section of features/README.md from the
// feature files in dir and the client manifest m: for every scenario a
// Kurtosis enclave runs, the modes of its rows, the manifest's clients
// whose nightly jobs run it (their mode has a row, their tag filter
// selects it), and where its figures come from on a client with the
// metrics contract, on one with the standard API and a per-topic byte
// counter, and on one with the standard API only; then every CL entry
// with its sources and its jobs' tag filters. A test keeps the README's
// copy in step.
func SourcesDoc(dir string, m *clientpatch.Manifest) (string, error) {
	features, err := (&godog.TestSuite{Options: &godog.Options{Paths: []string{dir}}}).RetrieveFeatures()
	if err != nil {
		return "", fmt.Errorf("read features for the sources table: %w", err)
	}
	n, err := m.Nightly()
	if err != nil {
		return "", fmt.Errorf("plan the nightly for the sources table: %w", err)
	}
	var docs []*messages.GherkinDocument
	for _, f := range features {
		if f.GherkinDocument != nil && f.Feature != nil {
			docs = append(docs, f.GherkinDocument)
		}
	}
	slices.SortFunc(docs, func(x, y *messages.GherkinDocument) int { return strings.Compare(x.Uri, y.Uri) })
	var b strings.Builder
	b.WriteString("| feature | scenario | Kurtosis rows | nightly clients | contract client | standard API + byte counter | standard API only |\n|---|---|---|---|---|---|---|\n")
	for _, doc := range docs {
		featureTags := tagNames(doc.Feature.Tags)
		for _, sc := range scenariosOf(doc.Feature.Children) {
			tags := append(slices.Clone(featureTags), tagNames(sc.Tags)...)
			var modes, runs []string
			for _, ex := range sc.Examples {
				rowTags := append(slices.Clone(tags), tagNames(ex.Tags)...)
				if !slices.Contains(rowTags, TagKurtosis) {
					continue
				}
				for _, mode := range modesOf(ex) {
					if !slices.Contains(modes, mode) {
						modes = append(modes, mode)
					}
					for _, j := range n.Devnets {
						c, _ := m.Lookup(j.Client)
						if c.Mode == mode && MatchTags(j.Tags, rowTags) && !slices.Contains(runs, c.Name) {
							runs = append(runs, c.Name)
						}
					}
				}
			}
			if len(modes) == 0 {
				continue
			}
			row := sourcesOf(tags, sc.Steps)
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", filepath.Base(doc.Uri), strings.ReplaceAll(sc.Name, "<", `\<`),
				strings.Join(modes, ", "), orNone(runs), row[0], row[1], row[2])
		}
	}
	b.WriteString("\n| manifest entry | client | mode | sources | nightly job: params, tag filter |\n|---|---|---|---|---|\n")
	for _, c := range m.Clients {
		if c.Layer != clientpatch.LayerCL {
			continue
		}
		var jobs []string
		for _, j := range n.Devnets {
			if j.Client == c.Name {
				jobs = append(jobs, fmt.Sprintf("`%s`: `%s`", filepath.Base(j.Params), strings.ReplaceAll(j.Tags, "|", `\|`)))
			}
		}
		var sources []string
		for _, s := range clientpatch.Sources {
			if c.Offers(s) {
				sources = append(sources, s)
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", c.Name, c.Type, c.Mode, strings.Join(sources, ", "), strings.Join(jobs, "<br>"))
	}
	return b.String(), nil
}

// sourcesOf says where a scenario's figures come from on a contract
// client, a standard API client with a byte counter, and one without: the
// record (the contract's or the standard API's) for the steps that read
// it, the beacon node's endpoints for the PTC and chain health sentences.
func sourcesOf(tags []string, steps []*messages.Step) [3]string {
	record, reads := false, false
	defs := (&Suite{}).definitions()
	for _, st := range steps {
		for _, d := range defs {
			if d.keyword == "Given" || !regexp.MustCompile(d.expr).MatchString(st.Text) {
				continue
			}
			if d.group == "health.feature" || d.group == "ptc.feature" {
				reads = true
			} else {
				record = true
			}
		}
	}
	excluded := func(tag string) string {
		return "fails closed naming the client; `~" + tag + "` excludes it"
	}
	var out [3]string
	switch {
	case slices.Contains(tags, TagMixed):
		s := docStandard + " for both populations (a mixed devnet only)"
		out = [3]string{s, s, s}
	case slices.Contains(tags, TagContract):
		out = [3]string{docContract + " vs " + docStandard, excluded(TagContract), excluded(TagContract)}
	case slices.Contains(tags, TagBytes):
		out = [3]string{docContract, docStandard + " + `" + metrics.TopicBytesSeries + "` (message data only)", excluded(TagBytes)}
	case !record:
		return [3]string{docReads, docReads, docReads}
	default:
		out = [3]string{docContract, docStandard, docStandard}
	}
	if reads {
		for i := range out {
			out[i] += "; PTC votes: " + docReads
		}
	}
	return out
}

// modesOf lists the values of an Examples block's mode column.
func modesOf(ex *messages.Examples) []string {
	if ex.TableHeader == nil {
		return nil
	}
	col := slices.IndexFunc(ex.TableHeader.Cells, func(c *messages.TableCell) bool { return c.Value == "mode" })
	var out []string
	for _, row := range ex.TableBody {
		if col >= 0 && !slices.Contains(out, row.Cells[col].Value) {
			out = append(out, row.Cells[col].Value)
		}
	}
	return out
}

// ReadingsDoc renders metrics.StandardReadings as the rows of
// features/README.md's table of what the standard API reads.
func ReadingsDoc() string {
	var b strings.Builder
	for _, r := range metrics.StandardReadings {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.Series, strings.ReplaceAll(r.Reading, "|", `\|`), r.Definition)
	}
	return b.String()
}

func tagNames(tags []*messages.Tag) []string {
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = t.Name
	}
	return out
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return "`" + strings.Join(s, "`, `") + "`"
}

// MatchTags reports whether godog's tag filter selects a scenario carrying
// tags: "," is or, "&&" and, "~" not; an empty filter selects everything.
func MatchTags(filter string, tags []string) bool {
	if strings.TrimSpace(filter) == "" {
		return true
	}
	for _, or := range strings.Split(filter, ",") {
		all := true
		for _, term := range strings.Split(or, "&&") {
			term = strings.TrimSpace(term)
			neg := strings.HasPrefix(term, "~")
			name := "@" + strings.TrimPrefix(strings.TrimPrefix(term, "~"), "@")
			if slices.Contains(tags, name) == neg {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}
