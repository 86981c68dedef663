package steps_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/steps"
)

func TestCheckEnv(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     []string
		wantErr []string
	}{
		{name: "none", env: []string{"PATH=/bin", "GODOG_SEED=1"}},
		{name: "every variable valid", env: []string{"DEVNET=" + presetsBackend, "SEGDIFF_PRESET=fake", "SEGDIFF_SEED=7", "SEGDIFF_SCRAPE=promql",
			"SEGDIFF_PREFETCH=0", "SEGDIFF_POLL_INTERVAL=10ms", "SEGDIFF_WAIT_TIMEOUT=1m", "SEGDIFF_REPORTS_DIR=", "SEGDIFF_RUN_ID=run-1",
			"SEGDIFF_SLOW=1", "SEGDIFF_E2E=1", "SEGDIFF_ENCLAVE=segdiff-1", "SEGDIFF_ENDPOINTS=/nonexistent/endpoints.json", "SEGDIFF_ETHPKG_DIR=" + dir,
			"SEGDIFF_BUDGET_COMPLETION_P50=500ms", "SEGDIFF_BUDGET_COMPLETION_SHARE=95%", "SEGDIFF_BUDGET_SPEEDUP=3x"}},
		{name: "misspelled variable", env: []string{"SEGDIFF_PRESTE=ci"},
			wantErr: []string{"SEGDIFF_PRESTE is not a segdiff variable; did you mean SEGDIFF_PRESET?"}},
		{name: "unknown variable", env: []string{"SEGDIFF_FROBNICATE=1"},
			wantErr: []string{"SEGDIFF_FROBNICATE is not a segdiff variable (features/README.md lists them)"}},
		{name: "DEVNET missing a letter, transposed, in lower case, with a letter more", env: []string{"DEVNT=kurtosis", "DEVENT=kurtosis", "devnet=kurtosis", "DEVNETS=kurtosis"},
			wantErr: []string{"DEVNT is not a segdiff variable; did you mean DEVNET?", "DEVENT is not a segdiff variable; did you mean DEVNET?",
				"devnet is not a segdiff variable; did you mean DEVNET?", "DEVNETS is not a segdiff variable; did you mean DEVNET?"}},
		// Another program's variables are no typo of DEVNET's, however
		// near by SEGDIFF_ names' allowance (DEVICE is three edits away).
		{name: "other programs' variables", env: []string{"DEVICE=/dev/sda", "DEV=1", "DEBIAN_FRONTEND=noninteractive", "TERM=xterm", "DEVNET_FLAGS=--privileged"}},
		{name: "misspelled budget", env: []string{"SEGDIFF_BUDGET_COMPLETON_P50=1s"},
			wantErr: []string{"SEGDIFF_BUDGET_COMPLETON_P50 is not a budget; did you mean SEGDIFF_BUDGET_COMPLETION_P50?"}},
		{name: "unknown budget lists the known ones", env: []string{"SEGDIFF_BUDGET_XYZZY=1"},
			wantErr: []string{"SEGDIFF_BUDGET_XYZZY is not a budget (known: ", "SEGDIFF_BUDGET_SPEEDUP"}},
		{name: "budget not in its unit", env: []string{"SEGDIFF_BUDGET_COMPLETION_P50=abc"}, wantErr: []string{`SEGDIFF_BUDGET_COMPLETION_P50="abc"`}},
		{name: "share above 100%", env: []string{"SEGDIFF_BUDGET_COMPLETION_SHARE=120%"}, wantErr: []string{"outside 0..100%"}},
		{name: "negative copies", env: []string{"SEGDIFF_BUDGET_COPIES_P50=-1"}, wantErr: []string{"negative"}},
		{name: "empty budget", env: []string{"SEGDIFF_BUDGET_COPIES_P50="}, wantErr: []string{"SEGDIFF_BUDGET_COPIES_P50 is set but empty"}},
		{name: "empty setting", env: []string{"SEGDIFF_PRESET="}, wantErr: []string{"SEGDIFF_PRESET is set but empty (unset it for the default: ci (embedded))"}},
		{name: "misspelled backend", env: []string{"DEVNET=fake-presest", "SEGDIFF_PRESET=fake"},
			wantErr: []string{`DEVNET="fake-presest": unknown devnet backend "fake-presest"`, "did you mean fake-presets?"}},
		{name: "preset the backend does not know", env: []string{"DEVNET=" + presetsBackend, "SEGDIFF_PRESET=bogus"},
			wantErr: []string{`SEGDIFF_PRESET="bogus": unknown fake preset "bogus"`}},
		{name: "scrape mode", env: []string{"SEGDIFF_SCRAPE=bogus"}, wantErr: []string{`SEGDIFF_SCRAPE="bogus": want direct or promql`}},
		{name: "scrape mode typo", env: []string{"SEGDIFF_SCRAPE=promq"}, wantErr: []string{"did you mean promql?"}},
		{name: "negative prefetch", env: []string{"SEGDIFF_PREFETCH=-1"}, wantErr: []string{`SEGDIFF_PREFETCH="-1": want 0`}},
		{name: "prefetch not a number", env: []string{"SEGDIFF_PREFETCH=two"}, wantErr: []string{`SEGDIFF_PREFETCH="two": not an integer`}},
		{name: "zero poll interval", env: []string{"SEGDIFF_POLL_INTERVAL=0s"}, wantErr: []string{`SEGDIFF_POLL_INTERVAL="0s": want a duration above 0`}},
		{name: "poll interval without a unit", env: []string{"SEGDIFF_POLL_INTERVAL=1"}, wantErr: []string{`SEGDIFF_POLL_INTERVAL="1": not a duration`}},
		{name: "negative wait timeout", env: []string{"SEGDIFF_WAIT_TIMEOUT=-1m"}, wantErr: []string{`SEGDIFF_WAIT_TIMEOUT="-1m": want a duration above 0`}},
		{name: "seed not a number", env: []string{"SEGDIFF_SEED=seven"}, wantErr: []string{`SEGDIFF_SEED="seven": not an integer`}},
		{name: "seed 0 would be the default", env: []string{"SEGDIFF_SEED=0"}, wantErr: []string{"0 stands for the backend's default seed"}},
		{name: "slow as a word", env: []string{"SEGDIFF_SLOW=true"}, wantErr: []string{`SEGDIFF_SLOW="true": want 1 (on) or 0 (off)`}},
		{name: "e2e as a word", env: []string{"SEGDIFF_E2E=yes"}, wantErr: []string{`SEGDIFF_E2E="yes": want 1`}},
		{name: "run id with a slash", env: []string{"SEGDIFF_RUN_ID=a/b"}, wantErr: []string{`SEGDIFF_RUN_ID="a/b": want one path element`}},
		{name: "run id latest", env: []string{"SEGDIFF_RUN_ID=latest"}, wantErr: []string{`SEGDIFF_RUN_ID="latest"`}},
		{name: "reports dir is a file", env: []string{"SEGDIFF_REPORTS_DIR=" + file}, wantErr: []string{"is not a directory"}},
		{name: "missing binary", env: []string{"SEGDIFF_BIN=" + filepath.Join(dir, "segdiff")}, wantErr: []string{"SEGDIFF_BIN=", "no such file"}},
		{name: "binary not executable", env: []string{"SEGDIFF_BIN=" + file}, wantErr: []string{"not an executable file"}},
		{name: "enclave as a path", env: []string{"SEGDIFF_ENCLAVE=../x"}, wantErr: []string{`SEGDIFF_ENCLAVE="../x": want an enclave name`}},
		{name: "ethereum-package dir missing", env: []string{"SEGDIFF_ETHPKG_DIR=" + filepath.Join(dir, "nope")}, wantErr: []string{"SEGDIFF_ETHPKG_DIR=", "no such file"}},
		{name: "every problem at once", env: []string{"SEGDIFF_PREFETCH=-1", "SEGDIFF_POLL_INTERVAL=0s", "SEGDIFF_PRESTE=ci"},
			wantErr: []string{"SEGDIFF_PREFETCH", "SEGDIFF_POLL_INTERVAL", "SEGDIFF_PRESTE"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := steps.CheckEnv(tc.env)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("CheckEnv = %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckEnv(%q) = nil, want an error", tc.env)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// unsetEnv unsets every listed variable for the test (restored after).
func unsetEnv(t *testing.T) {
	t.Helper()
	for _, v := range steps.EnvVars() {
		t.Setenv(v.Name, "")
		os.Unsetenv(v.Name)
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		unsetEnv(t)
		c, err := steps.ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		if c.Backend != "" || c.ReportsDir != "reports" || c.Prefetch != 2 || c.Seed != 0 || c.Slow || c.Reader != nil {
			t.Errorf("defaults = %+v", c)
		}
	})
	t.Run("every setting", func(t *testing.T) {
		unsetEnv(t)
		for k, v := range map[string]string{"DEVNET": presetsBackend, "SEGDIFF_PRESET": "fake", "SEGDIFF_SEED": "-3", "SEGDIFF_SLOW": "1",
			"SEGDIFF_SCRAPE": "promql", "SEGDIFF_PREFETCH": "0", "SEGDIFF_POLL_INTERVAL": "250ms", "SEGDIFF_WAIT_TIMEOUT": "90s",
			"SEGDIFF_REPORTS_DIR": "", "SEGDIFF_RUN_ID": "run-7"} {
			t.Setenv(k, v)
		}
		c, err := steps.ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		want := steps.Config{Backend: presetsBackend, Preset: "fake", Seed: -3, Slow: true, Reader: steps.ScrapeReader{Mode: steps.ScrapePromQL},
			Prefetch: 0, PollInterval: 250 * time.Millisecond, WaitTimeout: 90 * time.Second, ReportsDir: "", RunID: "run-7"}
		if c.Backend != want.Backend || c.Preset != want.Preset || c.Seed != want.Seed || c.Slow != want.Slow || c.Prefetch != want.Prefetch ||
			c.PollInterval != want.PollInterval || c.WaitTimeout != want.WaitTimeout || c.ReportsDir != want.ReportsDir || c.RunID != want.RunID {
			t.Errorf("config = %+v\nwant     %+v", c, want)
		}
		if r, ok := c.Reader.(steps.ScrapeReader); !ok || r.Mode != steps.ScrapePromQL {
			t.Errorf("reader = %#v, want promql scrapes", c.Reader)
		}
	})
	t.Run("a bad value is an error", func(t *testing.T) {
		unsetEnv(t)
		t.Setenv("SEGDIFF_PREFETCH", "-1")
		if _, err := steps.ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), "SEGDIFF_PREFETCH") {
			t.Fatalf("ConfigFromEnv = %v, want an error naming SEGDIFF_PREFETCH", err)
		}
	})
}

// features/README.md's variable tables are EnvMarkdown's, between the
// markers.
func TestEnvMarkdown(t *testing.T) {
	generatedBlock(t, "<!-- variables: generated from steps.EnvVars", "<!-- end of variables -->", steps.EnvMarkdown())
}

// Every SEGDIFF_ variable the tree reads — named by a constant, passed to
// os.Getenv or os.LookupEnv, or set by a script, the Makefile or a
// workflow — is on EnvVars, so that the suite does not refuse it as
// unknown and the docs list it.
func TestEnvVarsListEveryVariable(t *testing.T) {
	listed := map[string]bool{}
	for _, v := range steps.EnvVars() {
		listed[v.Name] = true
	}
	found := map[string][]string{} // name → where
	add := func(name, where string) {
		// Prefixes (SEGDIFF_BUDGET_) are not variables.
		if strings.HasPrefix(name, steps.EnvPrefix) && !strings.HasSuffix(name, "_") {
			found[name] = append(found[name], where)
		}
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for _, v := range n.Values {
					if s, ok := stringLit(v); ok {
						add(s, fset.Position(v.Pos()).String())
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && len(n.Args) > 0 && (sel.Sel.Name == "Getenv" || sel.Sel.Name == "LookupEnv") {
					if s, ok := stringLit(n.Args[0]); ok {
						add(s, fset.Position(n.Pos()).String())
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	word := regexp.MustCompile(`\bSEGDIFF_[A-Z0-9_]*[A-Z0-9]\b`)
	others, _ := filepath.Glob("../.ci/*")
	workflows, _ := filepath.Glob("../.github/workflows/*.yml")
	for _, path := range append(append(others, workflows...), "../Makefile", "../.ci/run") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range word.FindAllString(string(b), -1) {
			add(m, path)
		}
	}
	// The scan must see the variables other packages and scripts read.
	for _, name := range []string{"SEGDIFF_BIN", "SEGDIFF_ENDPOINTS", "SEGDIFF_ENCLAVE", "SEGDIFF_ETHPKG_DIR", "SEGDIFF_E2E", "SEGDIFF_TEST_BROKEN"} {
		if len(found[name]) == 0 {
			t.Errorf("the scan did not find %s; it no longer sees the tree's variables", name)
		}
	}
	var missing []string
	for name, where := range found {
		if !listed[name] {
			missing = append(missing, name+" ("+strings.Join(where, ", ")+")")
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("read but not in steps.EnvVars: %s", strings.Join(missing, "; "))
	}
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
