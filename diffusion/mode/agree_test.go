package mode_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/repo"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/segdiff/segdiff/diffusion"
	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/clientpatch"
)

// TestEveryListAgrees fails when a list of diffusion modes that cannot be
// derived from package mode's table disagrees with it: the registered
// policies (every mode needs one), the Kurtosis package's Starlark, the
// client manifest and the step sentences as written in steps/SYNTAX.md. Go
// code reads the table itself.
func TestEveryListAgrees(t *testing.T) {
	all, clients := mode.Names(), mode.ClientNames()
	var policies []string
	for _, m := range diffusion.Modes() {
		policies = append(policies, string(m))
	}
	for _, tc := range []struct {
		name      string
		got, want []string
	}{
		{"diffusion policies (the embedded devnet runs every mode)", policies, all},
		{"kurtosis/src/package_io/constants.star MODES", starlarkList(t, "MODES"), clients},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %q, want %q (package mode)", tc.name, tc.got, tc.want)
		}
	}
	// Every client image runs a mode clients can run.
	man, err := clientpatch.LoadFile(repo.Path(t, "client-patches", "clients.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range man.Clients {
		if c.Mode != "" && !slices.Contains(clients, c.Mode) {
			t.Errorf("client-patches/clients.yaml: %s runs mode %q, not a client mode of package mode", c.Name, c.Mode)
		}
	}
	// Every mode can be named in the sentences a feature writes, and
	// nothing else can: the Given sentences as steps/SYNTAX.md lists them
	// (steps' TestSyntax keeps it equal to the registered ones).
	givens := syntaxSentences(t, "Given")
	accepted := func(text string) bool {
		return slices.ContainsFunc(givens, func(re *regexp.Regexp) bool { return re.MatchString(text) })
	}
	for _, m := range all {
		for _, text := range []string{"a " + m + " devnet", "a " + m + ` devnet with preset "ci"`,
			"a " + m + ` devnet under stress "withholder=10%"`, "identical " + m + ` and whole devnets with preset "ci"`} {
			if !accepted(text) {
				t.Errorf("steps/SYNTAX.md: no Given sentence accepts %q", text)
			}
		}
	}
	if accepted("a flood devnet") {
		t.Error("steps/SYNTAX.md: a Given sentence accepts the unknown mode flood")
	}
}

// syntaxSentences returns steps/SYNTAX.md's sentences of keyword, compiled
// (the Markdown table escapes "|" inside them).
func syntaxSentences(t *testing.T, keyword string) []*regexp.Regexp {
	t.Helper()
	path := repo.Path(t, "steps", "SYNTAX.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*regexp.Regexp
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "| "+keyword+" | `")
		if !ok {
			continue
		}
		expr, ok := strings.CutSuffix(rest, "` |")
		if !ok {
			t.Fatalf("%s: malformed row %q", path, line)
		}
		re, err := regexp.Compile(strings.ReplaceAll(expr, `\|`, "|"))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, re)
	}
	if len(out) == 0 {
		t.Fatalf("%s lists no %s sentence", path, keyword)
	}
	return out
}

// TestStarlarkRolesAgree: the Kurtosis package's Starlark checks a
// participant's segdiff.role against its own list, which must be package
// role's (Go code reads package role itself).
func TestStarlarkRolesAgree(t *testing.T) {
	got, want := starlarkList(t, "DIFFUSION_ROLES"), role.Names()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("kurtosis/src/package_io/constants.star DIFFUSION_ROLES: %q, want %q (package role)", got, want)
	}
}

// starlarkList executes the Kurtosis package's constants.star and returns
// its list of strings called name.
func starlarkList(t *testing.T, name string) []string {
	t.Helper()
	path := repo.Path(t, "kurtosis", "src", "package_io", "constants.star")
	predeclared := starlark.StringDict{"struct": starlark.NewBuiltin("struct", starlarkstruct.Make)}
	globals, err := starlark.ExecFileOptions(&syntax.FileOptions{}, &starlark.Thread{Name: "constants"}, path, nil, predeclared)
	if err != nil {
		t.Fatalf("exec %s: %v", path, err)
	}
	list, ok := globals[name].(*starlark.List)
	if !ok {
		t.Fatalf("%s: %s is %v, want a list", path, name, globals[name])
	}
	var out []string
	for i := range list.Len() {
		s, ok := starlark.AsString(list.Index(i))
		if !ok {
			t.Fatalf("%s: %s[%d] is not a string", path, name, i)
		}
		out = append(out, s)
	}
	return out
}
