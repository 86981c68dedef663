package repo_test

import (
	"fmt"
	"os"
	"testing"

	// The docs' commands are checked against the suite's real backends.
	_ "github.com/segdiff/segdiff/internal/devnet/embedded"
	_ "github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/repo"
)

// buildDir holds what the tests build (the segdiff CLI the docs' commands
// are checked against); TestMain removes it.
var buildDir string

// TestMain runs the tests from the repository's root: they read its files
// by the paths the docs, git and the workflows use.
func TestMain(m *testing.M) {
	root, err := repo.Root()
	if err == nil {
		err = os.Chdir(root)
	}
	if err == nil {
		buildDir, err = os.MkdirTemp("", "segdiff-repo-test-")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(buildDir)
	os.Exit(code)
}
