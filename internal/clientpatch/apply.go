package clientpatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Conflict is a patch that does not apply to a source tree.
type Conflict struct {
	Patch string   // the .patch file that failed
	Files []string // the patched files git named, sorted; may be empty
	Git   string   // git apply's own message, trimmed (Error joins its lines)
}

func (c *Conflict) Error() string {
	files := "no file named by git"
	if len(c.Files) > 0 {
		files = strings.Join(c.Files, ", ")
	}
	return fmt.Sprintf("%s does not apply: conflicts in %s: %s", c.Patch, files, oneLine(c.Git))
}

// gitFileRE matches the lines where git apply names a failing file:
// "error: patch failed: path:line", "error: path: patch does not apply",
// "error: path: No such file or directory", "error: path: already exists in working directory".
var gitFileRE = regexp.MustCompile(`(?m)^error: (?:patch failed: (.+):\d+|(.+?): (?:patch does not apply|No such file or directory|does not exist in index|already exists in working directory|does not match index))$`)

// CheckApply reports whether patches apply, in order, to the tree at dir
// without changing it. `git apply --check` checks every patch against the
// original tree, so instead the files the series touches are copied to a
// scratch directory and the patches applied there one by one; the first one
// that fails is named with the files git reports. It needs git on PATH; dir
// need not be a git repository.
func CheckApply(ctx context.Context, dir string, patches []string) error {
	var touched []string
	for _, p := range patches {
		pp, err := ParsePatchFile(p)
		if err != nil {
			return err
		}
		for _, f := range pp.Files {
			for _, name := range []string{f.OldPath, f.NewPath} {
				if name != "/dev/null" && !slices.Contains(touched, name) {
					touched = append(touched, name)
				}
			}
		}
	}
	scratch, err := os.MkdirTemp("", "segdiff-patches-")
	if err != nil {
		return fmt.Errorf("create scratch tree: %w", err)
	}
	defer os.RemoveAll(scratch)
	for _, name := range touched {
		if err := copyFile(filepath.Join(dir, filepath.FromSlash(name)), filepath.Join(scratch, filepath.FromSlash(name))); err != nil {
			return err
		}
	}
	for _, p := range patches {
		if err := gitApply(ctx, scratch, false, []string{p}); err != nil {
			return attribute(p, err)
		}
	}
	return nil
}

// copyFile copies src to dst, creating dst's directory; a missing src is
// not an error (the patch creates it, or git reports it missing).
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("copy source file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("copy source file: %w", err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return fmt.Errorf("copy source file: %w", err)
	}
	return nil
}

// Apply applies patches in order to the tree at dir. The whole series is
// checked first, so a conflict leaves the tree untouched.
func Apply(ctx context.Context, dir string, patches []string) error {
	if err := CheckApply(ctx, dir, patches); err != nil {
		return err
	}
	for _, p := range patches {
		if err := gitApply(ctx, dir, false, []string{p}); err != nil {
			return attribute(p, err)
		}
	}
	return nil
}

// gitError carries git's stderr.
type gitError struct {
	stderr string
	err    error
}

func (e *gitError) Error() string { return fmt.Sprintf("git apply: %v: %s", e.err, oneLine(e.stderr)) }
func (e *gitError) Unwrap() error { return e.err }

func gitApply(ctx context.Context, dir string, check bool, patches []string) error {
	args := []string{"apply"}
	if check {
		args = append(args, "--check")
	}
	for _, p := range patches {
		abs, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("resolve patch path: %w", err)
		}
		args = append(args, abs)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	// Outside a repository git apply still works; inside one, never let it
	// look above dir for a repository that is not the source tree.
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(absOr(dir)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return fmt.Errorf("run git: %w", err)
		}
		return &gitError{stderr: strings.TrimSpace(stderr.String()), err: err}
	}
	return nil
}

func absOr(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

// attribute turns a git failure into a *Conflict naming the patch and files.
func attribute(patch string, err error) error {
	var ge *gitError
	if !errors.As(err, &ge) {
		return err
	}
	c := &Conflict{Patch: patch, Git: ge.stderr}
	for _, m := range gitFileRE.FindAllStringSubmatch(ge.stderr, -1) {
		f := m[1]
		if f == "" {
			f = m[2]
		}
		if !slices.Contains(c.Files, f) {
			c.Files = append(c.Files, f)
		}
	}
	slices.Sort(c.Files)
	return c
}
