package starlarktest

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// localPackage is a Kurtosis package whose files are read from disk: the
// package under test, or a checkout standing in for a remote package.
type localPackage struct {
	name string // locator root, e.g. github.com/ethpandaops/ethereum-package
	dir  string
	// commit is the checkout's commit ("" when unknown); a locator's or a
	// replace's @ref must be a prefix of it.
	commit string
}

// WithPackage makes locators under name (github.com/<org>/<repo>) resolve to
// the files of the checkout in dir, as Kurtosis resolves them from a clone:
// import_module, read_file and upload_files, relative and package-absolute
// locators inside it included. commit is the checkout's commit; a locator's
// "@<ref>" (or a kurtosis.yml replace's) must be a prefix of it, so a test
// cannot silently run another version than the one the package pins. An
// empty commit accepts any ref.
func WithPackage(name, dir, commit string) Option {
	return func(r *Runtime) {
		r.packages = append(r.packages, localPackage{name: strings.TrimSuffix(name, "/"), dir: dir, commit: commit})
	}
}

// splitRef splits "locator@ref" into its parts.
func splitRef(locator string) (string, string) {
	if i := strings.LastIndexByte(locator, '@'); i >= 0 {
		return locator[:i], locator[i+1:]
	}
	return locator, ""
}

// replaced applies the root kurtosis.yml's replace directives (Kurtosis
// applies the root package's replace transitively): the replaced package
// root and the ref its replacement pins.
func (r *Runtime) replaced(locator string) (string, string) {
	for from, to := range r.replace {
		if locator == from || strings.HasPrefix(locator, from+"/") {
			target, ref := splitRef(to)
			return target + strings.TrimPrefix(locator, from), ref
		}
	}
	return locator, ""
}

// packageOf returns the local package holding locator.
func (r *Runtime) packageOf(locator string) (localPackage, bool) {
	best := -1
	for i, p := range r.packages {
		if (locator == p.name || strings.HasPrefix(locator, p.name+"/")) && (best < 0 || len(p.name) > len(r.packages[best].name)) {
			best = i
		}
	}
	if best < 0 {
		return localPackage{}, false
	}
	return r.packages[best], true
}

// checkRef fails when ref is set and the package's checkout is at another
// commit.
func checkRef(p localPackage, locator, ref string) error {
	if ref == "" || p.commit == "" || strings.HasPrefix(p.commit, ref) {
		return nil
	}
	return fmt.Errorf("%s@%s: the checkout of %s in %s is at %s, not %s", locator, ref, p.name, p.dir, p.commit, ref)
}

// resolve turns a locator used in file `from` into a canonical absolute
// locator (no @ref): github.com/... as is (replace applied, ref checked
// against the checkout), /abs inside from's package, ./rel and ../rel
// relative to from and never leaving its package.
func (r *Runtime) resolve(from, locator string) (string, error) {
	switch {
	case strings.HasPrefix(locator, "github.com/"):
		loc, ref := splitRef(locator)
		loc, replRef := r.replaced(loc)
		if replRef != "" {
			ref = replRef
		}
		if p, ok := r.packageOf(loc); ok {
			if err := checkRef(p, loc, ref); err != nil {
				return "", err
			}
			return loc, nil
		}
		return locator, nil // a stub's exact locator, or a missing package
	case strings.HasPrefix(locator, "/"):
		p, ok := r.packageOf(from)
		if !ok {
			return "", fmt.Errorf("package-absolute locator %q used outside a package (in %q)", locator, from)
		}
		return p.name + locator, nil
	case strings.HasPrefix(locator, "./"), strings.HasPrefix(locator, "../"):
		p, ok := r.packageOf(from)
		if !ok {
			return "", fmt.Errorf("relative locator %q used outside the package (in %q)", locator, from)
		}
		abs := path.Join(path.Dir(from), locator)
		if !strings.HasPrefix(abs, p.name+"/") {
			return "", fmt.Errorf("relative locator %q in %s leaves the package %s", locator, from, p.name)
		}
		return abs, nil
	}
	return "", fmt.Errorf("invalid locator %q: use ./relative, /package-absolute or github.com/<org>/<repo>/<path>", locator)
}

// localPath maps a canonical locator inside a local package to a file path.
func (r *Runtime) localPath(locator string) (string, bool) {
	p, ok := r.packageOf(locator)
	if !ok {
		return "", false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(locator, p.name), "/")
	return filepath.Join(p.dir, filepath.FromSlash(rest)), true
}

// missingPackage explains a remote locator no package or stub serves.
func (r *Runtime) missingPackage(locator string) error {
	var names []string
	for _, p := range r.packages {
		names = append(names, p.name+" ("+p.dir+")")
	}
	names = append(names, r.remoteNames()...)
	sort.Strings(names)
	root := locator
	if parts := strings.SplitN(locator, "/", 4); len(parts) >= 3 {
		root = strings.Join(parts[:3], "/")
	}
	hint := ""
	if r.missingHint != nil {
		hint = "; " + r.missingHint(root)
	}
	return fmt.Errorf("import_module: %s is a remote module with no offline stub or checkout (have: %s)%s", locator, strings.Join(names, ", "), hint)
}

// gitHead returns the commit a git checkout in dir is at, or "" when dir is
// not a checkout or HEAD is symbolic and cannot be resolved from files.
func gitHead(dir string) string {
	gitDir := filepath.Join(dir, ".git")
	if data, err := os.ReadFile(gitDir); err == nil {
		// A worktree or submodule: ".git" is a file "gitdir: <path>".
		if rest, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: "); ok {
			gitDir = rest
			if !filepath.IsAbs(gitDir) {
				gitDir = filepath.Join(dir, gitDir)
			}
		}
	}
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	h := strings.TrimSpace(string(head))
	ref, symbolic := strings.CutPrefix(h, "ref: ")
	if !symbolic {
		return h
	}
	if data, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref))); err == nil {
		return strings.TrimSpace(string(data))
	}
	return ""
}
