package starlarktest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/internal/params"
	"github.com/segdiff/segdiff/internal/starlarktest"
)

// ciJob is the part of a GitHub Actions job the pin tests read.
type ciJob struct {
	Env   map[string]string `yaml:"env"`
	Steps []struct {
		Uses string            `yaml:"uses"`
		Run  string            `yaml:"run"`
		With map[string]string `yaml:"with"`
	} `yaml:"steps"`
}

// realPackageJob reads .github/workflows/ci.yml's real-package job.
func realPackageJob(t *testing.T) ciJob {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(packageDir, "..", ".github", "workflows", "ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]ciJob `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("parse ci.yml: %v", err)
	}
	job, ok := wf.Jobs["real-package"]
	if !ok {
		t.Fatal("ci.yml has no real-package job")
	}
	return job
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// TestRealPackagePins: the packages a real `kurtosis run` resolves are the
// ones CI's real-package job checks out and tests. That job's checkouts are
// the one list: ethereum-package at ETHPKG_COMMIT (params.EthereumPackageCommit,
// imported by main.star at that commit), every other one at a commit that
// kurtosis.yml's replace pins, and kurtosis.yml replaces nothing else.
func TestRealPackagePins(t *testing.T) {
	job := realPackageJob(t)
	if got := job.Env["ETHPKG_COMMIT"]; got != params.EthereumPackageCommit {
		t.Errorf("ci.yml real-package ETHPKG_COMMIT = %q, want params.EthereumPackageCommit %s", got, params.EthereumPackageCommit)
	}
	k, err := starlarktest.LoadKurtosisYAML(packageDir)
	if err != nil {
		t.Fatal(err)
	}
	checkedOut := map[string]bool{}
	ethpkg, script := false, false
	for _, s := range job.Steps {
		script = script || strings.TrimSpace(s.Run) == ".ci/real-package"
		repo := s.With["repository"]
		if !strings.HasPrefix(s.Uses, "actions/checkout@") || repo == "" {
			continue
		}
		if want := ".ethpkg/" + repo; s.With["path"] != want {
			t.Errorf("ci.yml checks %s out into %q; the real-package mode reads it from %s", repo, s.With["path"], want)
		}
		name := "github.com/" + repo
		if name == starlarktest.EthereumPackageName {
			ethpkg = true
			if s.With["ref"] != "${{ env.ETHPKG_COMMIT }}" {
				t.Errorf("ci.yml checks ethereum-package out at %q, want ${{ env.ETHPKG_COMMIT }}", s.With["ref"])
			}
			continue
		}
		checkedOut[name] = true
		ref := s.With["ref"]
		if !commitRE.MatchString(ref) {
			t.Errorf("ci.yml checks %s out at %q, want a full commit", repo, ref)
		}
		if got, want := k.Replace[name], name+"@"+ref; got != want {
			t.Errorf("kurtosis.yml replace %s: %q, but ci.yml tests %s", name, got, want)
		}
	}
	if !ethpkg {
		t.Error("ci.yml's real-package job does not check out ethereum-package")
	}
	if !script {
		t.Error("ci.yml's real-package job does not run .ci/real-package")
	}
	for name := range k.Replace {
		if !checkedOut[name] {
			t.Errorf("kurtosis.yml replaces %s, which ci.yml's real-package job does not check out and test", name)
		}
	}
	if len(checkedOut) == 0 {
		t.Error("ci.yml's real-package job checks out no package besides ethereum-package")
	}
}

// TestRealImportsPinned: every package the real ethereum-package imports
// (transitively) is pinned by kurtosis.yml's replace at the commit its
// checkout is at, so a real run resolves what the real-package mode tested
// and not a newer commit.
func TestRealImportsPinned(t *testing.T) {
	rp := realPackage(t)
	k, err := starlarktest.LoadKurtosisYAML(packageDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, imp := range rp.Imports {
		names = append(names, imp.Name)
		want := imp.Name + "@" + imp.Commit
		if imp.Commit == "" {
			t.Errorf("%s: %s is not a git checkout, so its commit is unknown", imp.Name, imp.Dir)
			continue
		}
		if got := k.Replace[imp.Name]; got != want {
			t.Errorf("ethereum-package imports %s, checked out at %s; kurtosis.yml replace has %q, want %q", imp.Name, imp.Commit, got, want)
		}
	}
	for name := range k.Replace {
		if !slices.Contains(names, name) {
			t.Errorf("kurtosis.yml replaces %s, which ethereum-package %s does not import", name, params.EthereumPackageCommit[:7])
		}
	}
}
