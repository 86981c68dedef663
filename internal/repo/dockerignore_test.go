package repo_test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// TestDockerignoreExcludesBuildOutputs: every build output and piece of
// local state .gitignore names, and the root segdiff binary, stays out of
// the load image's build context (`make load-image` sends the repository
// root; a .build/ of a make e2e run is ~150 MB and unreadable to tar).
func TestDockerignoreExcludesBuildOutputs(t *testing.T) {
	f, err := os.Open(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	// The binary `go build ./cmd/segdiff` writes at the root.
	samples := map[string]string{"segdiff": "the root segdiff binary"}
	for _, p := range gitignorePatterns(t) {
		for _, s := range gitignoreSamples(p) {
			samples[s] = ".gitignore " + p
		}
	}
	if len(samples) < 10 {
		t.Fatalf("only %d sample paths from .gitignore: %v", len(samples), samples)
	}
	git, gitErr := exec.LookPath("git")
	for s, from := range samples {
		if excluded, err := pm.MatchesOrParentMatches(s); err != nil || !excluded {
			t.Errorf("%s (%s) is in the build context: add it to .dockerignore", s, from)
		}
		if gitErr == nil && strings.HasPrefix(from, ".gitignore") {
			// The sample must be a path the .gitignore pattern really matches.
			if out, err := exec.Command(git, "check-ignore", "--no-index", "-v", s).Output(); err != nil || !strings.Contains(string(out), strings.TrimPrefix(from, ".gitignore ")) {
				t.Errorf("test bug: git does not ignore sample %s by %s (%s, %v)", s, from, out, err)
			}
		}
	}
}

// gitignorePatterns returns .gitignore's patterns, without comments and
// negations (a file put back, e.g. reports/README.md, need not be sent).
func gitignorePatterns(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(".gitignore")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "!") {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// gitignoreSamples returns paths .gitignore pattern p matches: each '*'
// becomes a name, a directory pattern gets a file inside, and a pattern
// without a slash but at its end (which git matches at any depth) is tried
// at the root and two levels down.
func gitignoreSamples(p string) []string {
	trimmed := strings.Trim(p, "/")
	anchored := strings.HasPrefix(p, "/") || strings.Contains(trimmed, "/")
	s := strings.ReplaceAll(trimmed, "*", "x")
	if strings.HasSuffix(p, "/") {
		s += "/x"
	}
	if anchored {
		return []string{s}
	}
	return []string{s, "a/b/" + s}
}
