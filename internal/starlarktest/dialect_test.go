package starlarktest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/starlarktest"
)

// tempPackage writes a package with the given main.star (and extra files).
func tempPackage(t *testing.T, main string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["kurtosis.yml"] = "name: github.com/example/pkg\n"
	files["main.star"] = main
	writeTree(t, dir, files)
	return dir
}

func runTemp(t *testing.T, main string, files map[string]string) error {
	t.Helper()
	if files == nil {
		files = map[string]string{}
	}
	r, err := starlarktest.New(tempPackage(t, main, files))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run("{}")
	return err
}

// TestDialect: what Kurtosis 1.20.0 rejects fails here too.
func TestDialect(t *testing.T) {
	tests := []struct {
		name, main, wantErr string
	}{
		{"ok", "def run(plan, args={}):\n    return struct(x=[i for i in range(3)])\n", ""},
		{"while", "def run(plan):\n    while True:\n        pass\n", "while"},
		{"set", "def run(plan):\n    return set([1])\n", "set"},
		{"top-level for", "x = []\nfor i in range(3):\n    x.append(i)\ndef run(plan):\n    pass\n", "for loop not within a function"},
		{"top-level if", "if True:\n    pass\ndef run(plan):\n    pass\n", "if statement not within a function"},
		{"global reassign", "a = 1\na = 2\ndef run(plan):\n    pass\n", "cannot reassign global"},
		{"recursion", "def f(n):\n    return f(n - 1) if n else 0\ndef run(plan):\n    return f(2)\n", "called recursively"},
		{"print", "def run(plan):\n    print(\"x\")\n", "plan.print"},
		{"load", "load(\"x.star\", \"y\")\ndef run(plan):\n    pass\n", "load() statement is not available in Kurtosis"},
		{"time.now", "def run(plan):\n    return time.now()\n", "time.now() is not supported"},
		{"first param not plan", "def run(p):\n    pass\n", "first parameter must be named plan"},
		{"import cycle", "a = import_module(\"./a.star\")\ndef run(plan):\n    pass\n", "cycle in the import_module calls"},
		{"relative locator leaves package", "x = read_file(\"../outside.txt\")\ndef run(plan):\n    pass\n", "leaves the package"},
		{"unknown remote module", "x = import_module(\"github.com/other/pkg/main.star\")\ndef run(plan):\n    pass\n", "no offline stub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"a.star": "b = import_module(\"./main.star\")\n"}
			err := runTemp(t, tt.main, files)
			checkErr(t, err, tt.wantErr)
		})
	}
}

// TestBuiltinArguments proves the mock fails like Kurtosis on argument
// names: misspelled, missing required, unknown constructor field.
func TestBuiltinArguments(t *testing.T) {
	tests := []struct {
		name, call, wantErr string
	}{
		{"valid", `plan.add_service(name="s", config=ServiceConfig(image="i", ports={"http": PortSpec(number=80)}), description="d")`, ""},
		{"positional", `plan.add_service("s", ServiceConfig("i"))`, ""},
		{"misspelled argument", `plan.add_service(nmae="s", config=ServiceConfig(image="i"))`, `add_service: unexpected keyword argument "nmae"`},
		{"missing required", `plan.add_service(name="s")`, "add_service: missing argument for config"},
		{"misspelled constructor field", `ServiceConfig(imgae="i")`, `ServiceConfig: unexpected keyword argument "imgae"`},
		{"constructor missing image", `ServiceConfig(cmd=["x"])`, "ServiceConfig: missing argument for image"},
		{"unknown builtin", `plan.add_servise(name="s")`, "add_servise"},
		{"config not a ServiceConfig", `plan.add_service(name="s", config={"image": "i"})`, "config must be a ServiceConfig"},
		{"port not a PortSpec", `plan.add_service(name="s", config=ServiceConfig(image="i", ports={"http": 80}))`, "must be a PortSpec"},
		{"missing artifact", `plan.add_service(name="s", config=ServiceConfig(image="i", files={"/c": "nope"}))`, `files artifact "nope", which does not exist`},
		{"duplicate service", `[plan.add_service(name="s", config=ServiceConfig(image="i")), plan.add_service(name="s", config=ServiceConfig(image="i"))]`, "already exists"},
		{"render_templates missing key", `plan.render_templates(config={"f": struct(template="{{.X}}", data={})})`, "render_templates"},
		{"wait arguments", `plan.wait(service_name="s", recipe=GetHttpRequestRecipe(port_id="http", endpoint="/"), field="code", assertion="==")`, "missing argument for target_value"},
		{"run_sh privileged (1.18.3)", `plan.run_sh(run="true", privileged=True)`, ""},
		{"upload missing file", `plan.upload_files(src="./nope")`, "upload_files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runTemp(t, "def run(plan):\n    "+tt.call+"\n", nil)
			checkErr(t, err, tt.wantErr)
		})
	}
}

// TestSyntaxEveryStarFile parses and resolves every .star file of the
// package in the dialect, including files no test run reaches.
func TestSyntaxEveryStarFile(t *testing.T) {
	r, err := starlarktest.New(packageDir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	_ = filepath.WalkDir(packageDir, func(p string, d os.DirEntry, _ error) error {
		if strings.HasSuffix(p, ".star") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 7 {
		t.Fatalf("found %d .star files, want the package's main.star and src/ modules", len(files))
	}
	if err := starlarktest.CheckSyntax(packageDir, r.Predeclared); err != nil {
		t.Fatal(err)
	}
	bad := tempPackage(t, "def run(plan):\n    while True:\n        pass\n", map[string]string{"src/x.star": "y = undefined_name\n"})
	err = starlarktest.CheckSyntax(bad, r.Predeclared)
	if err == nil || !strings.Contains(err.Error(), "while") || !strings.Contains(err.Error(), "undefined_name") {
		t.Fatalf("CheckSyntax on a bad package: %v, want both the while loop and the undefined name", err)
	}
}

func TestKurtosisYAML(t *testing.T) {
	for name, content := range map[string]string{
		"unknown key": "name: github.com/a/b\nversion: 1\n",
		"no name":     "description: x\n",
		"bad name":    "name: segdiff\n",
		"bad replace": "name: github.com/a/b\nreplace:\n  github.com/c/d: c-d\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "kurtosis.yml"), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := starlarktest.LoadKurtosisYAML(dir); err == nil {
				t.Fatal("accepted an invalid kurtosis.yml")
			}
		})
	}
}

// checkErr fails t unless err is nil when wantErr is "", or contains wantErr.
func checkErr(t *testing.T, err error, wantErr string) {
	t.Helper()
	if wantErr == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Fatalf("err = %v, want it to contain %q", err, wantErr)
	}
}
