// Package starlarktest runs a Kurtosis Starlark package offline: every .star
// file is executed with go.starlark.net in Kurtosis 1.20.0's dialect, against
// a `plan` whose builtins record the instructions instead of executing them.
// Builtin and type-constructor arguments are checked against a table of
// Kurtosis 1.20.0's names and required arguments (builtins.go), so a
// misspelled or missing argument fails here as it would in Kurtosis.
// import_module of the package's own files reads them from disk; remote
// modules resolve only to registered stubs (see EthereumPackageStub).
//
// What it cannot prove: that images exist, that services start, that
// future references resolve at execution, or that the real ethereum-package
// behaves like its stub; only that the package's own logic produces the
// expected plan from documented inputs and outputs.
//
// A Runtime is not safe for concurrent use; create one per test.
package starlarktest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	starjson "go.starlark.net/lib/json"
	startime "go.starlark.net/lib/time"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
	"gopkg.in/yaml.v3"
)

// Kurtosis's messages for the constructs its dialect rejects at run time.
const (
	errLoad  = "load() statement is not available in Kurtosis. Please use instead `module = import_module(...)`"
	errPrint = "print: the default `print` function isn't supported please use `plan.print(...)` instead"
	errNow   = "time.now() is not supported by Kurtosis (it would make runs non-reproducible)"
)

// dialect is Kurtosis 1.20.0's: go.starlark.net's legacy defaults, i.e. no
// set, no while, no top-level control flow, no global reassignment, no
// recursion.
var dialect = &syntax.FileOptions{}

// RemoteModule builds the members of a stubbed remote module.
type RemoteModule func(r *Runtime) starlark.StringDict

// Runtime runs one Starlark package.
type Runtime struct {
	root        string // directory holding kurtosis.yml
	packageName string
	clusterType string
	privileged  bool
	// packages are read from disk: the package under test first, then
	// checkouts given with WithPackage.
	packages    []localPackage
	replace     map[string]string // the root kurtosis.yml's replace
	missingHint func(root string) string
	remote      map[string]RemoteModule
	modules     map[string]*starlarkstruct.Module
	loading     map[string]bool
	predeclared starlark.StringDict
	plan        *Plan
}

// Option configures a Runtime.
type Option func(*Runtime)

// WithClusterType sets what plan.get_cluster_type() returns (default "docker").
func WithClusterType(t string) Option { return func(r *Runtime) { r.clusterType = t } }

// WithAllowPrivilegedMode is the run-level opt-in (CLI --privileged, SDK
// WithAllowPrivilegedMode) that privileged services need; default false.
func WithAllowPrivilegedMode(allow bool) Option { return func(r *Runtime) { r.privileged = allow } }

// WithRemoteModule makes import_module(locator) return the stub's members;
// locator must match exactly, including any "@ref".
func WithRemoteModule(locator string, m RemoteModule) Option {
	return func(r *Runtime) { r.remote[locator] = m }
}

// KurtosisYAML is a package's kurtosis.yml; any other key is an error, as in
// Kurtosis (yaml.UnmarshalStrict).
type KurtosisYAML struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Replace     map[string]string `yaml:"replace"`
}

// LoadKurtosisYAML reads and checks dir/kurtosis.yml.
func LoadKurtosisYAML(dir string) (*KurtosisYAML, error) {
	p := filepath.Join(dir, "kurtosis.yml")
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("read kurtosis.yml: %w", err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	var k KurtosisYAML
	if err := dec.Decode(&k); err != nil {
		return nil, fmt.Errorf("parse %s: %w", p, err)
	}
	if !strings.HasPrefix(k.Name, "github.com/") || strings.Count(k.Name, "/") < 2 {
		return nil, fmt.Errorf("parse %s: name %q is not a package locator github.com/<org>/<repo>[/<dir>]", p, k.Name)
	}
	for from, to := range k.Replace {
		if !strings.HasPrefix(from, "github.com/") {
			return nil, fmt.Errorf("parse %s: replace key %q is not a package locator", p, from)
		}
		if !strings.HasPrefix(to, "github.com/") && !strings.HasPrefix(to, ".") && !strings.HasPrefix(to, "/") {
			return nil, fmt.Errorf("parse %s: replace %q => %q is neither a locator nor a local path", p, from, to)
		}
	}
	return &k, nil
}

// New prepares a Runtime for the package in dir.
func New(dir string, opts ...Option) (*Runtime, error) {
	k, err := LoadKurtosisYAML(dir)
	if err != nil {
		return nil, err
	}
	r := &Runtime{
		root:        dir,
		packageName: k.Name,
		clusterType: "docker",
		remote:      map[string]RemoteModule{},
		modules:     map[string]*starlarkstruct.Module{},
		loading:     map[string]bool{},
		plan:        newPlan(),
		packages:    []localPackage{{name: k.Name, dir: dir}},
		replace:     k.Replace,
	}
	for _, o := range opts {
		o(r)
	}
	r.predeclared = r.buildPredeclared()
	return r, nil
}

// Plan is what the run recorded so far.
func (r *Runtime) Plan() *Plan { return r.plan }

// Run executes main.star's run(plan, ...) with argsJSON (a JSON object, as
// the SDK sends it) and returns run's value encoded as JSON, as Kurtosis puts
// it in the RunFinishedEvent.
func (r *Runtime) Run(argsJSON string) (json.RawMessage, error) {
	main, err := r.importModule(r.packageName + "/main.star")
	if err != nil {
		return nil, err
	}
	fn, ok := main.Members["run"].(*starlark.Function)
	if !ok {
		return nil, errors.New("main.star: no function run(plan, ...)")
	}
	thread := r.thread()
	decoded, err := starlark.Call(thread, starjson.Module.Members["decode"], starlark.Tuple{starlark.String(argsJSON)}, nil)
	if err != nil {
		return nil, fmt.Errorf("decode args: %w", err)
	}
	args, ok := decoded.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("args must be a JSON object, got %s", decoded.Type())
	}
	plan := r.planModule()
	var out starlark.Value
	switch {
	case fn.NumParams() == 0:
		return nil, errors.New("main.star: run must take plan as its first parameter")
	case paramName(fn, 0) != "plan":
		return nil, fmt.Errorf("main.star: run's first parameter must be named plan, got %s", paramName(fn, 0))
	case fn.NumParams() == 2 && paramName(fn, 1) == "args":
		// Kurtosis passes the whole dict positionally to run(plan, args).
		out, err = starlark.Call(thread, fn, starlark.Tuple{plan, args}, nil)
	default:
		var kwargs []starlark.Tuple
		for _, item := range args.Items() {
			kwargs = append(kwargs, starlark.Tuple{item[0], item[1]})
		}
		out, err = starlark.Call(thread, fn, starlark.Tuple{plan}, kwargs)
	}
	if err != nil {
		var evalErr *starlark.EvalError
		if errors.As(err, &evalErr) {
			return nil, fmt.Errorf("%s\n%s", evalErr.Msg, evalErr.CallStack)
		}
		return nil, err
	}
	encoded, err := starlark.Call(thread, starjson.Module.Members["encode"], starlark.Tuple{out}, nil)
	if err != nil {
		return nil, fmt.Errorf("encode run output: %w", err)
	}
	return json.RawMessage(string(encoded.(starlark.String))), nil
}

func paramName(fn *starlark.Function, i int) string {
	name, _ := fn.Param(i)
	return name
}

func (r *Runtime) thread() *starlark.Thread {
	return &starlark.Thread{
		Name: "kurtosis",
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) { return nil, errors.New(errLoad) },
	}
}

func (r *Runtime) buildPredeclared() starlark.StringDict {
	timeMembers := starlark.StringDict{}
	for k, v := range startime.Module.Members {
		timeMembers[k] = v
	}
	timeMembers["now"] = starlark.NewBuiltin("now", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		return nil, errors.New(errNow)
	})
	d := starlark.StringDict{
		"json":          starjson.Module,
		"struct":        starlark.NewBuiltin("struct", starlarkstruct.Make),
		"time":          &starlarkstruct.Module{Name: "time", Members: timeMembers},
		"import_module": starlark.NewBuiltin("import_module", r.builtinImportModule),
		"read_file":     starlark.NewBuiltin("read_file", r.builtinReadFile),
		"print": starlark.NewBuiltin("print", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return nil, errors.New(errPrint)
		}),
		"kurtosis": &starlarkstruct.Module{Name: "kurtosis", Members: starlark.StringDict{}},
	}
	for name, c := range typeConstructors {
		d[name] = constructor(name, c)
	}
	return d
}

// callerFile is the locator of the Starlark file calling the current builtin.
func callerFile(thread *starlark.Thread) string {
	if thread.CallStackDepth() < 2 {
		return ""
	}
	return thread.CallFrame(1).Pos.Filename()
}

func (r *Runtime) builtinImportModule(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var locator string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "module_file", &locator); err != nil {
		return nil, err
	}
	abs, err := r.resolve(callerFile(thread), locator)
	if err != nil {
		return nil, fmt.Errorf("import_module: %w", err)
	}
	return r.importModule(abs)
}

func (r *Runtime) importModule(locator string) (*starlarkstruct.Module, error) {
	if m, ok := r.modules[locator]; ok {
		return m, nil
	}
	if stub, ok := r.remote[locator]; ok {
		m := &starlarkstruct.Module{Name: locator, Members: stub(r)}
		r.modules[locator] = m
		return m, nil
	}
	file, local := r.localPath(locator)
	if !local {
		return nil, r.missingPackage(locator)
	}
	if !strings.HasSuffix(locator, ".star") {
		return nil, fmt.Errorf("import_module: %s is not a .star file", locator)
	}
	if r.loading[locator] {
		return nil, fmt.Errorf("import_module: there's a cycle in the import_module calls: %s", locator)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("import_module: %w", err)
	}
	r.loading[locator] = true
	defer delete(r.loading, locator)
	globals, err := starlark.ExecFileOptions(dialect, r.thread(), locator, src, r.predeclared)
	if err != nil {
		return nil, fmt.Errorf("execute %s: %w", locator, err)
	}
	if locator == EthereumPackageName+"/main.star" {
		globals = r.recordEthereumPackageArgs(globals)
	}
	m := &starlarkstruct.Module{Name: locator, Members: globals}
	r.modules[locator] = m
	return m, nil
}

// recordEthereumPackageArgs wraps a real ethereum-package's run so that
// Plan.EthereumPackageArgs holds the args it was called with, as the stub
// records them (copied before the call: the real parser mutates them).
func (r *Runtime) recordEthereumPackageArgs(globals starlark.StringDict) starlark.StringDict {
	run, ok := globals["run"].(starlark.Callable)
	if !ok {
		return globals
	}
	out := starlark.StringDict{}
	for k, v := range globals {
		out[k] = v
	}
	out["run"] = starlark.NewBuiltin("run", func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var in starlark.Value
		if len(args) > 1 {
			in = args[1]
		}
		for _, kv := range kwargs {
			if k, _ := starlark.AsString(kv[0]); k == "args" {
				in = kv[1]
			}
		}
		if in != nil {
			g, err := toGo(th, in)
			if err != nil {
				return nil, fmt.Errorf("record ethereum-package args: %w", err)
			}
			r.plan.EthereumPackageArgs, _ = g.(map[string]any)
		}
		return starlark.Call(th, run, args, kwargs)
	})
	return out
}

func (r *Runtime) remoteNames() []string {
	var names []string
	for k := range r.remote {
		names = append(names, k)
	}
	return names
}

func (r *Runtime) builtinReadFile(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var src string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "src", &src); err != nil {
		return nil, err
	}
	abs, err := r.resolve(callerFile(thread), src)
	if err != nil {
		return nil, fmt.Errorf("read_file: %w", err)
	}
	file, ok := r.localPath(abs)
	if !ok {
		return nil, fmt.Errorf("read_file: %s is in no local package; remote files are available offline only from a checkout (WithPackage)", abs)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read_file: %w", err)
	}
	return starlark.String(data), nil
}

// CheckSyntax parses and resolves every .star file under dir in Kurtosis's
// dialect without executing it (top-level constructs, set, while, load are
// rejected here; recursion is caught only when a call happens).
func CheckSyntax(dir string, predeclared func(name string) bool) error {
	var errs []error
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".star") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := dialect.Parse(p, src, 0)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		for _, stmt := range f.Stmts {
			if _, isLoad := stmt.(*syntax.LoadStmt); isLoad {
				errs = append(errs, fmt.Errorf("%s: %s", p, errLoad))
			}
		}
		if _, err := starlark.FileProgram(f, predeclared); err != nil {
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}

// Predeclared reports whether name is predeclared for package files.
func (r *Runtime) Predeclared(name string) bool {
	_, ok := r.predeclared[name]
	return ok || starlark.Universe.Has(name)
}

// Globals executes the module at locator (github.com/<org>/<repo>/<path>,
// served by the package under test or a WithPackage checkout) and returns
// its globals that JSON can carry (tables, structs of constants) as Go
// values, numbers as json.Number; functions and modules are left out.
func (r *Runtime) Globals(locator string) (map[string]any, error) {
	m, err := r.importModule(locator)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	th := r.thread()
	for name, v := range m.Members {
		switch v.(type) {
		case *starlark.Function, *starlark.Builtin, *starlarkstruct.Module:
			continue
		}
		g, err := toGo(th, v)
		if err != nil {
			continue // not JSON-encodable (e.g. a struct holding functions)
		}
		out[name] = g
	}
	return out, nil
}

// Call executes the module at locator, as Globals does, calls its function
// fn with args (JSON-able Go values) and returns the result as a Go value
// (numbers as json.Number), e.g. ethereum-package's default_participant().
func (r *Runtime) Call(locator, fn string, args ...any) (any, error) {
	m, err := r.importModule(locator)
	if err != nil {
		return nil, err
	}
	f, ok := m.Members[fn]
	if !ok {
		return nil, fmt.Errorf("call %s: %s has no %s", fn, locator, fn)
	}
	th := r.thread()
	var sargs starlark.Tuple
	for _, a := range args {
		v, err := fromGo(th, a)
		if err != nil {
			return nil, fmt.Errorf("call %s: %w", fn, err)
		}
		sargs = append(sargs, v)
	}
	v, err := starlark.Call(th, f, sargs, nil)
	if err != nil {
		return nil, fmt.Errorf("call %s: %w", fn, err)
	}
	return toGo(th, v)
}
