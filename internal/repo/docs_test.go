package repo_test

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cucumber/godog"
	"golang.org/x/mod/modfile"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/steps"
)

// commandDocs are the documents whose example commands TestDocCommands
// checks the way the tools they call would.
var commandDocs = []string{"README.md", "features/README.md", "reports/README.md"}

// TestDocCommands checks every example command in commandDocs: every line
// of a ```sh block, and every inline code span that starts with a command
// this test knows (make, godog, go, .build/e2e.test, segdiff). A segdiff
// command (or go run ./cmd/segdiff) must name subcommands and flags the
// CLI has: it is run with --help appended. A make target must
// exist; a tag filter (TAGS, --tags, a target's own) must parse, name only
// tags the features carry and select at least one scenario the backend
// runs; godog flags, formats and paths must be real; a variable must be a
// budget or one the repository reads; a pinned godog must be go.mod's; a
// -run pattern must be one .ci/e2e runs. A ```sh line this test cannot
// check fails it, and so does a document in which it finds no command.
func TestDocCommands(t *testing.T) {
	for _, doc := range commandDocs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, c := range docCommands(string(data)) {
			err := checkCommand(c.text)
			if errors.Is(err, errNotACommand) && !c.block {
				continue // prose in backticks: a file name, a metric, a flag
			}
			checked++
			if err != nil {
				t.Errorf("%s:%d: `%s`: %v", doc, c.line, c.text, err)
			}
		}
		if checked == 0 {
			t.Errorf("%s: no example command found; the check matched nothing", doc)
		}
		t.Logf("%s: %d commands checked", doc, checked)
	}
}

// The checker itself: each command that a document once carried or could
// carry wrongly is rejected, naming what is wrong.
func TestCheckCommandRejectsWhatTheToolsWould(t *testing.T) {
	tests := []struct {
		name, cmd, wantErr string
	}{
		{name: "tag no feature carries", cmd: `make e2e TAGS='@embedded && ~@slow && ~@wip'`, wantErr: "names @wip, which no feature"},
		{name: "filter selecting nothing", cmd: `make e2e TAGS='@kurtosis && @slow'`, wantErr: "selects no scenario"},
		{name: "another backend's filter", cmd: `make e2e TAGS='@kurtosis'`, wantErr: "none of which the embedded backend runs"},
		{name: "unknown target", cmd: `make e2e-fast`, wantErr: "no Makefile target e2e-fast"},
		{name: "unknown variable", cmd: `SEGDIFF_SLOWW=1 make e2e`, wantErr: "SEGDIFF_SLOWW"},
		{name: "misspelled budget", cmd: `SEGDIFF_BUDGET_COMPLETON_P50=1s make e2e`, wantErr: "is not a budget"},
		{name: "godog flag", cmd: `godog run --tag=@embedded features/`, wantErr: "tag"},
		{name: "godog format", cmd: `godog run --format=prety features/`, wantErr: `format "prety"`},
		{name: "godog path", cmd: `godog run features/completions.feature`, wantErr: "completions.feature"},
		{name: "godog version", cmd: `go install github.com/cucumber/godog/cmd/godog@v0.15.0`, wantErr: "go.mod has github.com/cucumber/godog v0.16.0"},
		{name: "test pattern", cmd: `SEGDIFF_E2E=1 go test -run '^TestFeature$' .`, wantErr: "names TestFeature, which is no test"},
		{name: "test binary pattern", cmd: `SEGDIFF_E2E=1 .build/e2e.test -test.run '^TestFeatures$|^TestMain$'`, wantErr: "none of the patterns .ci/e2e runs"},
		{name: "test flag", cmd: `go test ./steps -run TestBudgetsDoc -updat`, wantErr: "flag -updat is defined by no test"},
		{name: "unchecked command", cmd: `kurtosis engine start`, wantErr: "not a command this test checks"},
		{name: "segdiff flag", cmd: `go run ./cmd/segdiff sim --nodse 3`, wantErr: "did you mean -nodes?"},
		{name: "segdiff flag value", cmd: `go run ./cmd/segdiff sweep compare --tolerance 10 /tmp/base /tmp/new`, wantErr: "give a percentage with its sign"},
		{name: "segdiff subcommand", cmd: `go run ./cmd/segdiff sweep comapre /tmp/base /tmp/new`, wantErr: `"comapre" is no subcommand`},
		{name: "segdiff command", cmd: `segdiff simulate --nodes 3`, wantErr: `unknown command "simulate"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkCommand(tc.cmd)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("checkCommand(%q) = %v, want an error containing %q", tc.cmd, err, tc.wantErr)
			}
		})
	}
	if err := checkCommand(`make e2e TAGS='@embedded && @stress'`); err != nil {
		t.Errorf("a good command fails: %v", err)
	}
}

// docCommand is a candidate command in a document.
type docCommand struct {
	line  int
	text  string
	block bool // a line of a ```sh block, which must be a command
}

var reCodeSpan = regexp.MustCompile("`([^`]+)`")

// docCommands returns the lines of doc's ```sh blocks and the inline code
// spans outside any block.
func docCommands(doc string) []docCommand {
	var out []docCommand
	inFence, inShell := false, false
	for i, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			inFence = !inFence
			inShell = inFence && (trimmed == "```sh" || trimmed == "```bash")
			continue
		}
		switch {
		case inShell && trimmed != "":
			out = append(out, docCommand{line: i + 1, text: trimmed, block: true})
		case !inFence:
			for _, m := range reCodeSpan.FindAllStringSubmatch(line, -1) {
				out = append(out, docCommand{line: i + 1, text: m[1]})
			}
		}
	}
	return out
}

var errNotACommand = errors.New("not a command this test checks")

// checkCommand parses text as shell and checks each simple command in it
// (an && list holds several).
func checkCommand(text string) error {
	f, err := syntax.NewParser().Parse(strings.NewReader(text), "")
	if err != nil {
		return fmt.Errorf("%w (does not parse as shell: %v)", errNotACommand, err)
	}
	var calls []*syntax.CallExpr
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok {
			calls = append(calls, c)
		}
		return true
	})
	if len(calls) == 0 {
		return errNotACommand
	}
	for _, c := range calls {
		env := map[string]string{}
		for _, a := range c.Assigns {
			v, err := literal(a.Value)
			if err != nil {
				return err
			}
			env[a.Name.Value] = v
		}
		var args []string
		for _, w := range c.Args {
			v, err := literal(w)
			if err != nil {
				return err
			}
			args = append(args, v)
		}
		if err := checkCall(env, args); err != nil {
			return err
		}
	}
	return nil
}

func literal(w *syntax.Word) (string, error) {
	if w == nil {
		return "", nil
	}
	return expand.Literal(nil, w)
}

func checkCall(env map[string]string, args []string) error {
	if len(args) == 0 {
		return errNotACommand // a bare assignment
	}
	if err := checkVariables(env); err != nil {
		return err
	}
	switch {
	case args[0] == "make":
		return checkMake(env, args[1:])
	case args[0] == "godog" && len(args) > 1 && args[1] == "run":
		return checkGodogRun(env, args[2:])
	case args[0] == "go" && len(args) > 1 && args[1] == "install":
		return checkGoInstall(args[2:])
	case args[0] == "go" && len(args) > 1 && args[1] == "test":
		return checkTestRun(args[2:], "-run")
	case args[0] == ".build/e2e.test" && len(args) > 1: // alone, it names the file
		return checkTestRun(args[1:], "-test.run")
	case args[0] == "go" && len(args) > 2 && args[1] == "run" && args[2] == "./cmd/segdiff":
		return checkSegdiff(args[3:])
	case args[0] == "segdiff" && len(args) > 1: // alone, it names the binary
		return checkSegdiff(args[1:])
	}
	return errNotACommand
}

// segdiffCLI builds the segdiff CLI once, into the folder TestMain removes.
var segdiffCLI = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(buildDir, "segdiff")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/segdiff").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the segdiff CLI: %v\n%s", err, out)
	}
	return bin, nil
})

// reSubcommand is a word that may name a subcommand (a placeholder such as
// FILE, a path or a flag ends them).
var reSubcommand = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// checkSegdiff runs the segdiff CLI with args and --help: the flags are
// parsed as given and help ends the run before anything starts, so a
// mistyped flag (or a value the flag itself refuses) fails as it would for
// the reader; each leading word must be one the help names (a misspelt
// subcommand would otherwise be taken for an argument).
func checkSegdiff(args []string) error {
	bin, err := segdiffCLI()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, append(slices.Clone(args), "--help")...).CombinedOutput()
	if err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return fmt.Errorf("segdiff %s --help: %v: %s", strings.Join(args, " "), err, first)
	}
	for _, w := range args {
		if !reSubcommand.MatchString(w) {
			break
		}
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `\b`).Match(out) {
			return fmt.Errorf("segdiff %s: %q is no subcommand segdiff's --help names", strings.Join(args, " "), w)
		}
	}
	return nil
}

// checkVariables fails on a segdiff variable steps.CheckEnv refuses (an
// unknown name, a value that does not parse) and on any other variable
// read nowhere in the repository.
func checkVariables(env map[string]string) error {
	var environ []string
	for name, value := range env {
		environ = append(environ, name+"="+value)
	}
	if err := steps.CheckEnv(environ); err != nil {
		return err
	}
	for name := range env {
		if !strings.HasPrefix(name, steps.EnvPrefix) && !repositoryReads(name) {
			return fmt.Errorf("variable %s appears in no Go source, script or Makefile: nothing reads it", name)
		}
	}
	return nil
}

var sources = sync.OnceValues(func() (string, error) {
	var b strings.Builder
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && path != ".ci" && (strings.HasPrefix(d.Name(), ".") || d.Name() == "reports") {
			return filepath.SkipDir
		}
		// This file names variables that do not exist, to test the check.
		readable := filepath.Ext(path) == ".go" && path != "internal/repo/docs_test.go" || path == "Makefile" || filepath.Dir(path) == ".ci"
		if !d.IsDir() && readable {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b.Write(data)
		}
		return nil
	})
	return b.String(), err
})

func repositoryReads(name string) bool {
	src, err := sources()
	return err == nil && regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).MatchString(src)
}

// checkMake checks make's targets and, for a target that runs the suite
// (its recipe calls .ci/e2e), the tag filter it would run with.
func checkMake(env map[string]string, args []string) error {
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		return err
	}
	vars, targets := map[string]string{}, []string{}
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok {
			vars[k] = v
		} else {
			targets = append(targets, a)
		}
	}
	if err := checkVariables(vars); err != nil {
		return err
	}
	if len(targets) == 0 {
		targets = []string{"all"}
	}
	for _, target := range targets {
		recipe, ok := makeRecipe(string(makefile), target)
		if !ok {
			return fmt.Errorf("no Makefile target %s", target)
		}
		if !strings.Contains(recipe, ".ci/e2e") {
			continue
		}
		backend := cmp.Or(vars["DEVNET"], env["DEVNET"], "embedded")
		tags := vars["TAGS"]
		if m := regexp.MustCompile(`TAGS='([^'$]*)'`).FindStringSubmatch(recipe); tags == "" && m != nil {
			tags = m[1]
		}
		if tags == "" {
			tags = steps.DefaultTags(backend)
		}
		if err := checkSelection(backend, tags, []string{"features"}, env, false); err != nil {
			return fmt.Errorf("make %s: %w", target, err)
		}
	}
	return nil
}

// makeRecipe returns target's recipe lines in makefile.
func makeRecipe(makefile, target string) (string, bool) {
	lines := strings.Split(makefile, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, target+":") {
			continue
		}
		var recipe []string
		for _, r := range lines[i+1:] {
			if !strings.HasPrefix(r, "\t") {
				break
			}
			recipe = append(recipe, r)
		}
		return strings.Join(recipe, "\n"), true
	}
	return "", false
}

// checkGodogRun parses godog run's arguments as the CLI's runner does
// (cliPreflight) and checks its formats, paths and selection.
func checkGodogRun(env map[string]string, args []string) error {
	var o godog.Options
	fs := flag.NewFlagSet("godog run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	godog.BindFlags("", fs, &o)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("godog run: %w", err)
	}
	paths := fs.Args()
	if len(paths) == 0 {
		paths = []string{"features"}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("godog run: %w", err)
		}
	}
	known := godog.AvailableFormatters()
	for _, f := range strings.Split(o.Format, ",") {
		name, file, _ := strings.Cut(f, ":")
		if _, ok := known[name]; !ok && f != "" {
			return fmt.Errorf("godog run: format %q is not one of godog's", name)
		}
		if file != "" {
			if _, err := os.Stat(filepath.Dir(file)); err != nil {
				return fmt.Errorf("godog run: format %s writes into a missing folder: %w", f, err)
			}
		}
	}
	return checkSelection(cmp.Or(env["DEVNET"], "embedded"), o.Tags, paths, env, true)
}

// checkSelection fails unless the tag filter parses, names only tags the
// features in paths carry, and selects at least one scenario that backend
// runs. The opt-in tags are opted into as the suite does: under go test
// (TestFeatures) by a filter naming the tag; under the godog CLI
// (cliPreflight) @mixed and @extended so, @slow by SEGDIFF_SLOW only;
// SEGDIFF_SLOW and SEGDIFF_EXTENDED from env in both.
func checkSelection(backend, tags string, paths []string, env map[string]string, cli bool) error {
	if err := devnet.Known(backend); err != nil {
		return err
	}
	s := steps.New(steps.Config{Backend: backend, Log: io.Discard,
		Slow:     env["SEGDIFF_SLOW"] == "1" || (!cli && steps.OptedIn(tags, steps.TagSlow)),
		Extended: env["SEGDIFF_EXTENDED"] == "1" || steps.OptedIn(tags, steps.TagExtended),
		Broken:   !cli && steps.OptedIn(tags, steps.TagBroken),
		Mixed:    steps.OptedIn(tags, steps.TagMixed)})
	defer s.Close()
	plan, err := s.Plan(godog.Options{Paths: paths, Tags: tags})
	if err != nil {
		return err
	}
	atoms, err := steps.TagAtoms(tags)
	if err != nil {
		return err
	}
	for _, a := range atoms {
		if !slices.Contains(plan.Tags, a) {
			return fmt.Errorf("tag filter %q names %s, which no feature in %s carries", tags, a, strings.Join(paths, " "))
		}
	}
	switch {
	case len(plan.Scenarios) == 0:
		return fmt.Errorf("tag filter %q selects no scenario in %s", tags, strings.Join(paths, " "))
	case len(plan.Runnable()) == 0:
		return fmt.Errorf("tag filter %q selects %d scenarios, none of which the %s backend runs", tags, len(plan.Scenarios), backend)
	}
	return nil
}

// checkGoInstall checks a pinned godog CLI against go.mod's godog.
func checkGoInstall(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("go install %v: %w", args, errNotACommand)
	}
	pkg, version, _ := strings.Cut(args[0], "@")
	const godogModule = "github.com/cucumber/godog"
	if !strings.HasPrefix(pkg, godogModule+"/") {
		return fmt.Errorf("go install %s: %w", pkg, errNotACommand)
	}
	data, err := os.ReadFile("go.mod")
	if err != nil {
		return err
	}
	mod, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return err
	}
	for _, r := range mod.Require {
		if r.Mod.Path == godogModule {
			if r.Mod.Version != version {
				return fmt.Errorf("installs godog %s, go.mod has %s %s (the CLI builds the suite with its own godog)", version, godogModule, r.Mod.Version)
			}
			return nil
		}
	}
	return fmt.Errorf("go.mod does not require %s", godogModule)
}

// goTestValueFlags are the go test flags that take the next argument.
var goTestValueFlags = []string{"-run", "-skip", "-count", "-timeout", "-bench", "-test.run", "-test.count", "-test.timeout"}

// checkTestRun checks a go test (runFlag -run) or test-binary (runFlag
// -test.run, the root package's, as make e2e builds it) command: every
// package exists, every test its pattern names is a test of the package
// and every flag it passes the tests is one they define; a test binary's
// pattern is one .ci/e2e runs.
func checkTestRun(args []string, runFlag string) error {
	var pattern string
	var pkgs, testFlags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case !strings.HasPrefix(a, "-"):
			pkgs = append(pkgs, a)
			continue
		case !hasValue && slices.Contains(goTestValueFlags, a) && i+1 < len(args):
			i++
			value = args[i]
		case !hasValue && !slices.Contains([]string{"-v", "-race", "-short", "-test.v", "-test.short"}, a):
			testFlags = append(testFlags, strings.TrimLeft(name, "-"))
		}
		if name == runFlag {
			pattern = value
		}
	}
	if runFlag == "-test.run" {
		pkgs = []string{"."}
		script, err := os.ReadFile(".ci/e2e")
		if err != nil {
			return err
		}
		var runs []string
		for _, m := range regexp.MustCompile(`run='([^']+)'`).FindAllStringSubmatch(string(script), -1) {
			runs = append(runs, m[1])
		}
		if !slices.Contains(runs, pattern) {
			return fmt.Errorf("%s %q is none of the patterns .ci/e2e runs (%s)", runFlag, pattern, strings.Join(runs, ", "))
		}
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	for _, pkg := range pkgs {
		dir, all := strings.CutSuffix(pkg, "/...")
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("go test: package %s: %w", pkg, err)
		}
		if all {
			continue // a pattern or flag over many packages is not checked
		}
		src, err := testSources(dir)
		if err != nil {
			return err
		}
		for _, name := range regexp.MustCompile(`Test\w+`).FindAllString(pattern, -1) {
			if !strings.Contains(src, "func "+name+"(t *testing.T)") {
				return fmt.Errorf("%s %q names %s, which is no test of package %s", runFlag, pattern, name, pkg)
			}
		}
		for _, f := range testFlags {
			if !strings.Contains(src, fmt.Sprintf("(%q,", f)) && !strings.HasPrefix(f, "godog.") {
				return fmt.Errorf("flag -%s is defined by no test of package %s", f, pkg)
			}
		}
	}
	return nil
}

// testSources returns the text of dir's test files.
func testSources(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		b.Write(data)
	}
	return b.String(), nil
}
