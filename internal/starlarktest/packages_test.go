package starlarktest_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/starlarktest"
)

// writeTree writes files (path -> content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLocalPackages: locators of a WithPackage checkout resolve like a
// clone's: relative and package-absolute inside it, the @ref checked
// against the checkout's commit, the root kurtosis.yml's replace applied,
// and a package nobody serves reported with where it was looked for.
func TestLocalPackages(t *testing.T) {
	root := t.TempDir()
	writeTree(t, filepath.Join(root, "dep"), map[string]string{
		"kurtosis.yml":    "name: github.com/o/dep\n",
		"main.star":       "helper = import_module(\"./src/helper.star\")\nabs = import_module(\"/src/helper.star\")\nVALUE = helper.VALUE + abs.VALUE\n",
		"src/helper.star": "VALUE = len(read_file(\"../data.txt\"))\n",
		"data.txt":        "12345",
		"src/escape.star": "x = read_file(\"../../outside.txt\")\n",
	})
	writeTree(t, filepath.Join(root, "other"), map[string]string{"kurtosis.yml": "name: github.com/o/other\n", "main.star": "VALUE = 7\n"})
	tests := []struct {
		name, main, replace, commit, wantErr string
		wantOut                              string
	}{
		{name: "relative, absolute and read_file inside the checkout",
			main: "dep = import_module(\"github.com/o/dep/main.star\")\ndef run(plan):\n    return struct(v=dep.VALUE)\n", wantOut: `{"v":10}`},
		{name: "ref matches the checkout", commit: "abcdef0123",
			main: "dep = import_module(\"github.com/o/dep/main.star@abcdef\")\ndef run(plan):\n    return dep.VALUE\n", wantOut: "10"},
		{name: "ref differs", commit: "abcdef0123", wantErr: "github.com/o/dep/main.star@123456: the checkout of github.com/o/dep",
			main: "dep = import_module(\"github.com/o/dep/main.star@123456\")\ndef run(plan):\n    pass\n"},
		{name: "replace pins the ref", commit: "abcdef0123", replace: "replace:\n  github.com/o/dep: github.com/o/dep@999999\n",
			wantErr: "github.com/o/dep/main.star@999999",
			main:    "dep = import_module(\"github.com/o/dep/main.star\")\ndef run(plan):\n    pass\n"},
		{name: "replace redirects to another checkout", replace: "replace:\n  github.com/o/dep: github.com/o/other\n",
			main: "dep = import_module(\"github.com/o/dep/main.star\")\ndef run(plan):\n    return dep.VALUE\n", wantOut: "7"},
		{name: "relative locator leaves the checkout", wantErr: "leaves the package github.com/o/dep",
			main: "x = import_module(\"github.com/o/dep/src/escape.star\")\ndef run(plan):\n    pass\n"},
		{name: "unknown package", wantErr: "github.com/o/nope/main.star is a remote module with no offline stub or checkout (have: github.com/example/pkg",
			main: "x = import_module(\"github.com/o/nope/main.star\")\ndef run(plan):\n    pass\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkg := t.TempDir()
			writeTree(t, pkg, map[string]string{"kurtosis.yml": "name: github.com/example/pkg\n" + tt.replace, "main.star": tt.main})
			r, err := starlarktest.New(pkg,
				starlarktest.WithPackage("github.com/o/dep", filepath.Join(root, "dep"), tt.commit),
				starlarktest.WithPackage("github.com/o/other", filepath.Join(root, "other"), ""))
			if err != nil {
				t.Fatal(err)
			}
			out, err := r.Run("{}")
			checkErr(t, err, tt.wantErr)
			if tt.wantErr == "" && string(out) != tt.wantOut {
				t.Errorf("output %s, want %s", out, tt.wantOut)
			}
		})
	}
}

// TestRealEthereumPackageLoader: the loader finds ethereum-package's
// imports (transitively) beside the checkout, flags the missing ones, reads
// commits from .git, and is off without the variable.
func TestRealEthereumPackageLoader(t *testing.T) {
	t.Setenv(starlarktest.EnvEthereumPackageDir, "")
	if _, err := starlarktest.RealEthereumPackage(); !errors.Is(err, starlarktest.ErrRealPackageOff) {
		t.Fatalf("without %s: err = %v, want ErrRealPackageOff", starlarktest.EnvEthereumPackageDir, err)
	}
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"ethpandaops/ethereum-package/kurtosis.yml": "name: \"github.com/ethpandaops/ethereum-package\"\n",
		"ethpandaops/ethereum-package/.git/HEAD":    "0350d2e98735ff395b088fe8c261f0c9bb652c8a\n",
		"ethpandaops/ethereum-package/src/a.star":   "p = import_module(\"github.com/kt/postgres-package/main.star\")\nq = import_module(\"./b.star\")\n",
		"ethpandaops/ethereum-package/src/c.star":   "r = import_module(\n    \"github.com/kt/redis-package/main.star\"\n)\n",
		"kt/postgres-package/kurtosis.yml":          "name: github.com/kt/postgres-package\n",
		"kt/postgres-package/.git/HEAD":             "ref: refs/heads/main\n",
		"kt/postgres-package/.git/refs/heads/main":  "9c18603a90602d29fe5872d6f4693a5b6a280d15\n",
		"kt/postgres-package/main.star":             "a = import_module(\"github.com/b/db-adminer-package/main.star\")\n",
	})
	t.Setenv(starlarktest.EnvEthereumPackageDir, filepath.Join(root, "ethpandaops", "ethereum-package"))
	rp, err := starlarktest.RealEthereumPackage()
	if err != nil {
		t.Fatal(err)
	}
	if rp.Commit != "0350d2e98735ff395b088fe8c261f0c9bb652c8a" {
		t.Errorf("commit %q", rp.Commit)
	}
	var got []string
	for _, imp := range rp.Imports {
		got = append(got, imp.Name+"@"+imp.Commit)
	}
	want := "github.com/b/db-adminer-package@,github.com/kt/postgres-package@9c18603a90602d29fe5872d6f4693a5b6a280d15,github.com/kt/redis-package@"
	if strings.Join(got, ",") != want {
		t.Errorf("imports %v, want %s", got, want)
	}
	missing := strings.Join(rp.MissingImports(), "; ")
	for _, m := range []string{"github.com/b/db-adminer-package (looked for " + filepath.Join(root, "b", "db-adminer-package") + ")", "github.com/kt/redis-package"} {
		if !strings.Contains(missing, m) {
			t.Errorf("missing imports %q do not name %q", missing, m)
		}
	}
	// Importing a missing one fails naming where it was looked for.
	pkg := t.TempDir()
	writeTree(t, pkg, map[string]string{"kurtosis.yml": "name: github.com/example/pkg\n",
		"main.star": "r = import_module(\"github.com/kt/redis-package/main.star\")\ndef run(plan):\n    pass\n"})
	r, err := starlarktest.New(pkg, rp.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run("{}")
	checkErr(t, err, "the real-package mode reads github.com/kt/redis-package from "+filepath.Join(root, "kt", "redis-package"))

	t.Setenv(starlarktest.EnvEthereumPackageDir, filepath.Join(root, "kt", "postgres-package"))
	if _, err := starlarktest.RealEthereumPackage(); err == nil || !strings.Contains(err.Error(), "want github.com/ethpandaops/ethereum-package") {
		t.Errorf("another package as the checkout: err = %v", err)
	}
}
