package steps_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cucumber/godog"

	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/internal/repo"
	"github.com/segdiff/segdiff/steps"
)

func TestMatchTags(t *testing.T) {
	check := func(filter string, want bool, tags ...string) {
		if got := steps.MatchTags(filter, tags); got != want {
			t.Errorf("MatchTags(%q, %v) = %v, want %v", filter, tags, got, want)
		}
	}
	check("", true, "@x")
	check("@kurtosis && ~@slow", true, "@kurtosis")
	check("@kurtosis && ~@slow", false, "@kurtosis", "@slow")
	check("@kurtosis && ~@bytes,@mixed", true, "@kurtosis", "@mixed", "@bytes")
	check("@kurtosis && ~@bytes,@mixed", false, "@kurtosis", "@bytes")
	check("kurtosis", true, "@kurtosis")
}

// features/README.md's "Sources" tables are SourcesDoc's and ReadingsDoc's,
// between their markers (go test ./steps -run TestSourcesDoc -update
// rewrites them).
func TestSourcesDoc(t *testing.T) {
	m, _, err := clientpatch.LoadNightly(repo.Path(t, clientpatch.DefaultPath))
	if err != nil {
		t.Fatal(err)
	}
	want, err := steps.SourcesDoc("../features", m)
	if err != nil {
		t.Fatal(err)
	}
	generatedBlock(t, "<!-- readings: generated", "<!-- end of readings -->", steps.ReadingsDoc())
	generatedBlock(t, "<!-- sources: generated", "<!-- end of sources -->", want)
	for _, row := range []string{
		"| `bytes.feature` | payload copies per node stay within budget (\\<mode>) | segmented, whole | `prysm-segmented` |",
		"fails closed naming the client; `~@bytes` excludes it",
		"| `health.feature` | finality advances every epoch (\\<mode>) | segmented, whole | `prysm-segmented`, `prysm-gloas`, `lighthouse-gloas`, `teku-gloas`, `lodestar-gloas`, `nimbus-gloas`, `grandine-gloas` | standard API reads |",
		"| `sources.feature` | the contract's completion agrees with execution_payload_available (\\<mode>) | segmented | `prysm-segmented` | contract vs standard API (times at receipt) |",
		"| `mixed.feature` | patched nodes complete no later than unpatched ones (\\<mode>) | segmented | `prysm-segmented` |",
	} {
		if !strings.Contains(want, row) {
			t.Errorf("the sources table lacks %q:\n%s", row, want)
		}
	}
}

// generatedBlock holds features/README.md's text between begin's line and
// end to want, or rewrites it with -update (TestEnvMarkdown's tables too).
func generatedBlock(t *testing.T, begin, end, want string) {
	t.Helper()
	const path = "../features/README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q block", path, begin, end)
	}
	i += strings.Index(doc[i:], "\n") + 1
	if *update {
		if err := os.WriteFile(path, []byte(doc[:i]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc[i:j] != want {
		t.Fatalf("%s's block %q is stale; run: go test ./steps -run %s -update", path, begin, t.Name())
	}
}

// Every tag filter the nightly plans is well-formed and names only tags
// the features carry; the opt-in @mixed is opted in only on a mixed devnet.
func TestNightlyTagsAreTheFeatures(t *testing.T) {
	_, n, err := clientpatch.LoadNightly(repo.Path(t, clientpatch.DefaultPath))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := steps.New(steps.Config{Backend: "kurtosis"}).Plan(godog.Options{Paths: []string{"../features"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range n.Devnets {
		atoms, err := steps.TagAtoms(j.Tags)
		if err != nil {
			t.Errorf("%s %s: %v", j.Client, j.Params, err)
		}
		for _, a := range atoms {
			if !slices.Contains(plan.Tags, a) {
				t.Errorf("%s %s: tag %s is carried by no feature (known: %v)", j.Client, j.Params, a, plan.Tags)
			}
		}
		if steps.OptedIn(j.Tags, steps.TagMixed) != strings.Contains(j.Params, "mixed") {
			t.Errorf("%s %s: tags %q opt @mixed in on the wrong devnet", j.Client, j.Params, j.Tags)
		}
	}
}
