// Package repo finds the segdiff repository the code runs in, so that
// tests name its files by their path from the root (features/,
// network-params/, client-patches/clients.yaml) wherever their package
// sits. Its own tests check the repository as a whole: no build outputs
// committed, every workflow step that pipes under pipefail, the lint tools
// installed by one script in CI and .ci/run, the docs' commands runnable.
package repo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Module is the module path of the repository's go.mod.
const Module = "github.com/segdiff/segdiff"

// Root returns the repository's root: the nearest directory at or above
// the working directory whose go.mod declares Module.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the repository root: %w", err)
	}
	for {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(mod), []byte("module "+Module+"\n")) {
			return dir, nil
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("find the repository root: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find the repository root: no go.mod of module %s at or above the working directory", Module)
		}
		dir = parent
	}
}

// Path returns the repository path elem (slash-separated elements from the
// root) as a file-system path; it fails tb when there is no repository.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	root, err := Root()
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(append([]string{root}, elem...)...)
}
