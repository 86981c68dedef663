package starlarktest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// EnvEthereumPackageDir is the environment variable that turns the
// real-package mode on: the directory of a checkout of
// github.com/ethpandaops/ethereum-package at the pinned commit. The packages
// it imports are read from checkouts beside it, <root>/<org>/<repo>, where
// the ethereum-package checkout is <root>/ethpandaops/ethereum-package (the
// layout .github/workflows/ci.yml creates).
const EnvEthereumPackageDir = "SEGDIFF_ETHPKG_DIR"

// EthereumPackageName is ethereum-package's locator root (its kurtosis.yml
// name).
const EthereumPackageName = "github.com/ethpandaops/ethereum-package"

// ErrRealPackageOff is returned by RealEthereumPackage when
// EnvEthereumPackageDir is unset.
var ErrRealPackageOff = errors.New("real-package mode off: set " + EnvEthereumPackageDir +
	" to a checkout of " + EthereumPackageName + " at the pinned commit, its imports checked out beside it as <root>/<org>/<repo> (see kurtosis/README.md)")

// RealPackage is a checkout of ethereum-package and of the packages it
// imports, as found on disk.
type RealPackage struct {
	Dir    string // the ethereum-package checkout
	Commit string // its commit; "" when Dir is not a git checkout
	// Imports are the remote packages ethereum-package's Starlark imports
	// (transitively), each with the directory it is read from.
	Imports []Import
}

// Import is one remote package ethereum-package imports.
type Import struct {
	Name   string // github.com/<org>/<repo>
	Dir    string
	Commit string
	// Missing is true when no checkout with that kurtosis.yml name is at Dir.
	Missing bool
}

// Options returns the Runtime options that serve ethereum-package and every
// import found from their checkouts. A missing import is left out; importing
// it fails naming the directory it was looked for in.
func (p *RealPackage) Options() []Option {
	opts := []Option{WithPackage(EthereumPackageName, p.Dir, p.Commit)}
	for _, imp := range p.Imports {
		if !imp.Missing {
			opts = append(opts, WithPackage(imp.Name, imp.Dir, imp.Commit))
		}
	}
	root := reposRoot(p.Dir)
	opts = append(opts, func(r *Runtime) {
		r.missingHint = func(name string) string {
			return fmt.Sprintf("the real-package mode reads %s from %s", name, filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(name, "github.com/"))))
		}
	})
	return opts
}

// MissingImports names the imports without a checkout.
func (p *RealPackage) MissingImports() []string {
	var out []string
	for _, imp := range p.Imports {
		if imp.Missing {
			out = append(out, fmt.Sprintf("%s (looked for %s)", imp.Name, imp.Dir))
		}
	}
	return out
}

// RealEthereumPackage finds the checkout named by EnvEthereumPackageDir and
// the packages its Starlark imports. It returns ErrRealPackageOff when the
// variable is unset, and an error when the directory is not an
// ethereum-package checkout.
func RealEthereumPackage() (*RealPackage, error) {
	dir := os.Getenv(EnvEthereumPackageDir)
	if dir == "" {
		return nil, ErrRealPackageOff
	}
	return LoadRealPackage(dir)
}

// LoadRealPackage is RealEthereumPackage for an explicit directory.
func LoadRealPackage(dir string) (*RealPackage, error) {
	k, err := LoadKurtosisYAML(dir)
	if err != nil {
		return nil, fmt.Errorf("load ethereum-package checkout: %w", err)
	}
	if k.Name != EthereumPackageName {
		return nil, fmt.Errorf("load ethereum-package checkout: %s is package %q, want %s", dir, k.Name, EthereumPackageName)
	}
	p := &RealPackage{Dir: dir, Commit: gitHead(dir)}
	root := reposRoot(dir)
	seen := map[string]bool{EthereumPackageName: true}
	queue := []string{dir}
	for len(queue) > 0 {
		names, err := remoteImports(queue[0])
		if err != nil {
			return nil, err
		}
		queue = queue[1:]
		for _, name := range names {
			if seen[name] {
				continue
			}
			seen[name] = true
			imp := Import{Name: name, Dir: filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(name, "github.com/")))}
			if k, err := LoadKurtosisYAML(imp.Dir); err != nil || k.Name != name {
				imp.Missing = true
			} else {
				imp.Commit = gitHead(imp.Dir)
				queue = append(queue, imp.Dir)
			}
			p.Imports = append(p.Imports, imp)
		}
	}
	sort.Slice(p.Imports, func(i, j int) bool { return p.Imports[i].Name < p.Imports[j].Name })
	return p, nil
}

// reposRoot is <root> for a checkout at <root>/<org>/<repo>.
func reposRoot(dir string) string { return filepath.Dir(filepath.Dir(filepath.Clean(dir))) }

var importRE = regexp.MustCompile(`import_module\(\s*"(github\.com/[^/"@]+/[^/"@]+)`)

// remoteImports lists the package roots of the github.com import_module
// locators in the .star files under dir, other than dir's own package.
func remoteImports(dir string) ([]string, error) {
	k, err := LoadKurtosisYAML(dir)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".star") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range importRE.FindAllStringSubmatch(string(src), -1) {
			if m[1] != k.Name {
				set[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list imports of %s: %w", dir, err)
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}
