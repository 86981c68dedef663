package mode_test

import (
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
	"github.com/segdiff/segdiff/steps"
)

// TestEveryListAgrees fails when a list of diffusion modes that cannot be
// derived from package mode's table disagrees with it: the registered
// policies (every mode needs one), the Kurtosis package's Starlark, the
// client manifest and the step sentences. Go code reads the table itself.
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
	// Every mode can be named in a step sentence, and nothing else can.
	syntax := steps.Syntax()
	devnetRE := regexp.MustCompile("^a (" + mode.Pattern() + ") devnet$")
	for _, m := range all {
		if !devnetRE.MatchString("a " + m + " devnet") {
			t.Errorf("step sentences do not accept mode %q", m)
		}
	}
	if devnetRE.MatchString("a flood devnet") {
		t.Error("step sentences accept an unknown mode")
	}
	// SYNTAX.md (kept equal to steps.Syntax by steps' TestSyntax) escapes
	// "|" inside its Markdown table.
	if !strings.Contains(syntax, strings.ReplaceAll(mode.Pattern(), "|", `\|`)) {
		t.Error("steps/SYNTAX.md's sentences do not use package mode's pattern")
	}
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
