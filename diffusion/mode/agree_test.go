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
	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/params"
	"github.com/segdiff/segdiff/metrics"
	"github.com/segdiff/segdiff/steps"
)

// TestEveryListAgrees fails when any list of diffusion modes in the
// repository disagrees with package mode's table.
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
		{"metrics contract mode label", metrics.Modes, all},
		{"network-params segdiff.mode values", params.SegdiffModes, clients},
		{"kurtosis/src/package_io/constants.star MODES", starlarkList(t, "MODES"), clients},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %q, want %q (package mode)", tc.name, tc.got, tc.want)
		}
	}
	for _, m := range all {
		if _, err := devnet.ParseMode(m); err != nil {
			t.Errorf("devnet.ParseMode(%q): %v", m, err)
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

// TestEveryRoleListAgrees: the diffusion roles a network-params participant
// may ask for (segdiff.role) are package diffusion's, in every list that
// names them: clientpatch (clients.yaml roles:, resolution), params (the
// check) and the Kurtosis package's constants.star.
func TestEveryRoleListAgrees(t *testing.T) {
	want := diffusion.RoleNames()
	for _, tc := range []struct {
		name string
		got  []string
	}{
		{"clientpatch.RoleNames", clientpatch.RoleNames()},
		{"params.Roles", params.Roles},
		{"kurtosis/src/package_io/constants.star DIFFUSION_ROLES", starlarkList(t, "DIFFUSION_ROLES")},
	} {
		if !slices.Equal(tc.got, want) {
			t.Errorf("%s: %q, want %q (diffusion.RoleNames)", tc.name, tc.got, want)
		}
	}
	if _, err := diffusion.RoleNamed(clientpatch.RoleRelay); err != nil {
		t.Errorf("the default role: %v", err)
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
