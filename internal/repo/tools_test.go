package repo_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"mvdan.cc/sh/v3/syntax"
)

// installTools is the one script that installs the pinned lint tools.
const installTools = ".ci/install-tools"

// CI's lint job installs black and shellcheck with the script .ci/run uses,
// in a Debian bookworm container (the script pins bookworm's packages), so
// that the versions `make lint` checks cannot drift between the two.
func TestLintToolsInstalledByOneScript(t *testing.T) {
	run, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if err := installsBeforeLint([]string{string(run)}); err != nil {
		t.Errorf(".ci/run: %v", err)
	}
	raw, err := os.ReadFile(".github/workflows/ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(raw, &w); err != nil {
		t.Fatalf("parse .github/workflows/ci.yml: %v", err)
	}
	linting := 0
	for name, j := range w.Jobs {
		var scripts []string
		for _, st := range j.Steps {
			scripts = append(scripts, st.Run)
		}
		if !calls(scripts, isMakeLint) {
			continue
		}
		linting++
		if err := installsBeforeLint(scripts); err != nil {
			t.Errorf(".github/workflows/ci.yml: job %s: %v", name, err)
		}
		if image := j.image(); !strings.Contains(image, "bookworm") {
			t.Errorf(".github/workflows/ci.yml: job %s runs in %q; %s pins Debian bookworm's packages, so it needs a bookworm container", name, image, installTools)
		}
	}
	if linting == 0 {
		t.Error(".github/workflows/ci.yml: no job runs make lint")
	}
}

// The check itself passes the two ways to run the script and fails on each
// way the two could drift apart.
func TestInstallsBeforeLint(t *testing.T) {
	for _, scripts := range [][]string{{"bash .ci/install-tools", "make lint"}, {".ci/install-tools\nmake lint"}} {
		if err := installsBeforeLint(scripts); err != nil {
			t.Errorf("installsBeforeLint(%q) = %v", scripts, err)
		}
	}
	drifts := []struct {
		scripts []string
		wantErr string
	}{
		{[]string{"make lint"}, "does not run " + installTools},
		{[]string{"bash .ci/install-tools --check", "make lint"}, "does not run " + installTools},
		{[]string{"make lint", "bash .ci/install-tools"}, "does not run " + installTools},
		{[]string{"apt-get install -y black", "bash .ci/install-tools", "make lint"}, "installs black itself"},
		{[]string{"bash .ci/install-tools && pip install 'black==24.1.0'", "make lint"}, "installs black"},
		{[]string{"sudo apt-get install shellcheck", "bash .ci/install-tools", "make lint"}, "installs shellcheck itself"},
	}
	for _, d := range drifts {
		if err := installsBeforeLint(d.scripts); err == nil || !strings.Contains(err.Error(), d.wantErr) {
			t.Errorf("installsBeforeLint(%q) = %v, want an error containing %q", d.scripts, err, d.wantErr)
		}
	}
}

// pinnedTools are the tools installTools pins.
var pinnedTools = []string{"black", "shellcheck"}

// installsBeforeLint checks scripts (a job's steps, or one script) in order:
// installTools runs (not only --check) before make lint, and nothing else
// installs a pinned tool.
func installsBeforeLint(scripts []string) error {
	installed := false
	for _, s := range scripts {
		for _, args := range commands(s) {
			switch {
			case isInstallTools(args):
				installed = true
			case isMakeLint(args):
				if !installed {
					return fmt.Errorf("does not run %s before make lint", installTools)
				}
			default:
				if tool := installsPinned(args); tool != "" {
					return fmt.Errorf("installs %s itself (%q); %s installs the pinned version", tool, strings.Join(args, " "), installTools)
				}
			}
		}
	}
	if !calls(scripts, isMakeLint) {
		return fmt.Errorf("does not run make lint")
	}
	return nil
}

func isInstallTools(args []string) bool {
	if len(args) > 0 && args[0] == "bash" {
		args = args[1:]
	}
	return len(args) == 1 && strings.TrimPrefix(args[0], "./") == installTools
}

func isMakeLint(args []string) bool {
	return len(args) >= 2 && args[0] == "make" && args[1] == "lint"
}

// installsPinned returns the pinned tool a package-manager install names.
func installsPinned(args []string) string {
	if len(args) > 0 && args[0] == "sudo" {
		args = args[1:]
	}
	if len(args) < 2 || !strings.Contains(strings.Join(args[:min(len(args), 3)], " "), "install") {
		return ""
	}
	for _, a := range args[1:] {
		for _, tool := range pinnedTools {
			if a == tool || strings.HasPrefix(a, tool+"=") || strings.HasPrefix(a, tool+"<") || strings.HasPrefix(a, tool+">") {
				return tool
			}
		}
	}
	return ""
}

// calls reports whether any simple command of scripts satisfies is.
func calls(scripts []string, is func([]string) bool) bool {
	for _, s := range scripts {
		for _, args := range commands(s) {
			if is(args) {
				return true
			}
		}
	}
	return false
}

// commands returns the simple commands of a shell script in order, each as
// its literal words (a word that is not literal is left empty); a script
// that does not parse has none.
func commands(script string) [][]string {
	f, err := syntax.NewParser().Parse(strings.NewReader(script), "")
	if err != nil {
		return nil
	}
	var out [][]string
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok {
			var args []string
			for _, w := range c.Args {
				v, _ := literal(w)
				args = append(args, v)
			}
			out = append(out, args)
		}
		return true
	})
	return out
}
