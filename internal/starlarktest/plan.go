package starlarktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Plan is the record of a run: instructions in order, and the services and
// files artifacts they would create.
type Plan struct {
	Instructions []Instruction
	Services     map[string]*Service
	Artifacts    map[string]*Artifact
	// EthereumPackageArgs are the args the ethereum-package stub received
	// (JSON-decoded), nil if it was not called.
	EthereumPackageArgs map[string]any
	artifactSeq         int
}

// Instruction is one recorded plan call.
type Instruction struct {
	Name     string
	Args     map[string]starlark.Value
	Position string
}

// Service is a service the plan adds.
type Service struct {
	Name       string
	Image      string
	Ports      map[string]Port
	Files      map[string]string // mount path -> artifact name
	Entrypoint []string
	Cmd        []string
	Env        map[string]string
	Privileged bool
	// AddedBy is "package" for add_service calls from Starlark, or the stub's name.
	AddedBy string
}

// Port is one port of a service.
type Port struct {
	Number      int
	Transport   string
	Application string
}

// Artifact is a files artifact: rendered templates or uploaded files.
type Artifact struct {
	Name  string
	Files map[string]string // relative path -> content
}

func newPlan() *Plan {
	return &Plan{Services: map[string]*Service{}, Artifacts: map[string]*Artifact{}}
}

// ServiceNames returns the services' names, sorted.
func (p *Plan) ServiceNames() []string {
	names := make([]string, 0, len(p.Services))
	for n := range p.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (p *Plan) newArtifactName() string {
	p.artifactSeq++
	return fmt.Sprintf("artifact-%d", p.artifactSeq)
}

// addServiceValue records a service and returns Kurtosis's Service value.
func (r *Runtime) registerService(s *Service) (starlark.Value, error) {
	if _, dup := r.plan.Services[s.Name]; dup {
		return nil, fmt.Errorf("add_service: service %q already exists in the enclave", s.Name)
	}
	if s.Privileged && !r.privileged {
		return nil, fmt.Errorf("add_service: service %q is privileged, but the run does not allow privileged mode (kurtosis run --privileged, SDK WithAllowPrivilegedMode(true))", s.Name)
	}
	r.plan.Services[s.Name] = s
	ports := starlark.NewDict(len(s.Ports))
	for id, port := range s.Ports {
		_ = ports.SetKey(starlark.String(id), starlarkstruct.FromStringDict(starlark.String("Port"), starlark.StringDict{
			"number":               starlark.MakeInt(port.Number),
			"transport_protocol":   starlark.String(port.Transport),
			"application_protocol": starlark.String(port.Application),
			"url":                  starlark.String(fmt.Sprintf("%s://%s:%d", port.Application, s.Name, port.Number)),
		}))
	}
	return starlarkstruct.FromStringDict(starlark.String("Service"), starlark.StringDict{
		"name":     starlark.String(s.Name),
		"hostname": starlark.String(s.Name),
		// A future reference, as Kurtosis returns at interpretation time.
		"ip_address": starlark.String(fmt.Sprintf("{{kurtosis:%s.ip_address}}", s.Name)),
		"ports":      ports,
	}), nil
}

func (r *Runtime) addService(_ *starlark.Thread, a map[string]starlark.Value) (starlark.Value, error) {
	name, err := str(a["name"], "add_service: name")
	if err != nil {
		return nil, err
	}
	s, err := r.serviceFromConfig(name, a["config"])
	if err != nil {
		return nil, err
	}
	return r.registerService(s)
}

func (r *Runtime) addServices(th *starlark.Thread, a map[string]starlark.Value) (starlark.Value, error) {
	configs, ok := a["configs"].(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("add_services: configs must be a dict name -> ServiceConfig, got %s", a["configs"].Type())
	}
	out := starlark.NewDict(configs.Len())
	for _, item := range configs.Items() {
		v, err := r.addService(th, map[string]starlark.Value{"name": item[0], "config": item[1]})
		if err != nil {
			return nil, err
		}
		_ = out.SetKey(item[0], v)
	}
	return out, nil
}

func (r *Runtime) getService(_ *starlark.Thread, a map[string]starlark.Value) (starlark.Value, error) {
	name, err := str(a["name"], "get_service: name")
	if err != nil {
		return nil, err
	}
	s, ok := r.plan.Services[name]
	if !ok {
		return nil, fmt.Errorf("get_service: no service %q", name)
	}
	delete(r.plan.Services, name)
	return r.registerService(s)
}

// serviceFromConfig checks a ServiceConfig the way Kurtosis validates it
// before execution: types of the fields used here, files artifacts exist.
func (r *Runtime) serviceFromConfig(name string, v starlark.Value) (*Service, error) {
	if !isType(v, "ServiceConfig") {
		return nil, fmt.Errorf("add_service(%s): config must be a ServiceConfig, got %s", name, v.Type())
	}
	cfg := v.(*starlarkstruct.Struct)
	s := &Service{Name: name, Ports: map[string]Port{}, Files: map[string]string{}, Env: map[string]string{}, AddedBy: "package"}
	image, _ := cfg.Attr("image")
	var err error
	if s.Image, err = str(image, "ServiceConfig.image"); err != nil {
		return nil, fmt.Errorf("add_service(%s): %w", name, err)
	}
	if ports, _ := cfg.Attr("ports"); ports != nil {
		d, ok := ports.(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("add_service(%s): ports must be a dict", name)
		}
		for _, item := range d.Items() {
			id, _ := starlark.AsString(item[0])
			if !isType(item[1], "PortSpec") {
				return nil, fmt.Errorf("add_service(%s): ports[%q] must be a PortSpec, got %s", name, id, item[1].Type())
			}
			ps := item[1].(*starlarkstruct.Struct)
			num, _ := ps.Attr("number")
			n, err := starlark.AsInt32(num)
			if err != nil || n <= 0 || n > 65535 {
				return nil, fmt.Errorf("add_service(%s): ports[%q].number must be a port number, got %v", name, id, num)
			}
			port := Port{Number: n, Transport: "TCP"}
			if t, _ := ps.Attr("transport_protocol"); t != nil {
				port.Transport, _ = starlark.AsString(t)
			}
			if ap, _ := ps.Attr("application_protocol"); ap != nil {
				port.Application, _ = starlark.AsString(ap)
			}
			s.Ports[id] = port
		}
	}
	if files, _ := cfg.Attr("files"); files != nil {
		d, ok := files.(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("add_service(%s): files must be a dict mount path -> artifact", name)
		}
		for _, item := range d.Items() {
			mount, _ := starlark.AsString(item[0])
			if isType(item[1], "Directory") {
				s.Files[mount] = "(directory)"
				continue
			}
			art, ok := starlark.AsString(item[1])
			if !ok {
				return nil, fmt.Errorf("add_service(%s): files[%q] must be an artifact name or Directory", name, mount)
			}
			if _, exists := r.plan.Artifacts[art]; !exists {
				return nil, fmt.Errorf("add_service(%s): files[%q] names files artifact %q, which does not exist", name, mount, art)
			}
			s.Files[mount] = art
		}
	}
	for _, f := range []struct {
		attr string
		dst  *[]string
	}{{"entrypoint", &s.Entrypoint}, {"cmd", &s.Cmd}} {
		v, _ := cfg.Attr(f.attr)
		if v == nil {
			continue
		}
		l, ok := v.(*starlark.List)
		if !ok {
			return nil, fmt.Errorf("add_service(%s): %s must be a list", name, f.attr)
		}
		for i := range l.Len() {
			c, err := str(l.Index(i), f.attr+" item")
			if err != nil {
				return nil, fmt.Errorf("add_service(%s): %w", name, err)
			}
			*f.dst = append(*f.dst, c)
		}
	}
	if env, _ := cfg.Attr("env_vars"); env != nil {
		d, ok := env.(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("add_service(%s): env_vars must be a dict", name)
		}
		for _, item := range d.Items() {
			k, _ := starlark.AsString(item[0])
			val, err := str(item[1], "env_vars value")
			if err != nil {
				return nil, fmt.Errorf("add_service(%s): env_vars[%q]: %w", name, k, err)
			}
			s.Env[k] = val
		}
	}
	if p, _ := cfg.Attr("privileged"); p != nil {
		s.Privileged = bool(p.Truth())
	}
	return s, nil
}

// renderTemplates renders each template with Go's text/template, as Kurtosis
// does; a missing key is an error here (Kurtosis would print "<no value>").
func (r *Runtime) renderTemplates(th *starlark.Thread, a map[string]starlark.Value) (starlark.Value, error) {
	cfg, ok := a["config"].(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("render_templates: config must be a dict dest -> struct(template, data), got %s", a["config"].Type())
	}
	art, err := r.newArtifact(a["name"])
	if err != nil {
		return nil, err
	}
	for _, item := range cfg.Items() {
		dest, _ := starlark.AsString(item[0])
		spec, ok := item[1].(*starlarkstruct.Struct)
		if !ok {
			return nil, fmt.Errorf("render_templates: config[%q] must be struct(template=..., data=...)", dest)
		}
		tv, err := spec.Attr("template")
		if err != nil {
			return nil, fmt.Errorf("render_templates: config[%q]: %w", dest, err)
		}
		text, err := str(tv, "template")
		if err != nil {
			return nil, fmt.Errorf("render_templates: config[%q]: %w", dest, err)
		}
		dv, err := spec.Attr("data")
		if err != nil {
			return nil, fmt.Errorf("render_templates: config[%q]: %w", dest, err)
		}
		data, err := toGo(th, dv)
		if err != nil {
			return nil, fmt.Errorf("render_templates: config[%q].data: %w", dest, err)
		}
		tmpl, err := template.New(dest).Option("missingkey=error").Parse(text)
		if err != nil {
			return nil, fmt.Errorf("render_templates: config[%q]: %w", dest, err)
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, data); err != nil {
			return nil, fmt.Errorf("render_templates: config[%q]: %w", dest, err)
		}
		art.Files[dest] = buf.String()
	}
	return starlark.String(art.Name), nil
}

func (r *Runtime) newArtifact(name starlark.Value) (*Artifact, error) {
	n := ""
	if name != nil {
		var err error
		if n, err = str(name, "artifact name"); err != nil {
			return nil, err
		}
	} else {
		n = r.plan.newArtifactName()
	}
	if _, dup := r.plan.Artifacts[n]; dup {
		return nil, fmt.Errorf("files artifact %q already exists", n)
	}
	a := &Artifact{Name: n, Files: map[string]string{}}
	r.plan.Artifacts[n] = a
	return a, nil
}

func (r *Runtime) uploadFiles(th *starlark.Thread, a map[string]starlark.Value) (starlark.Value, error) {
	src, err := str(a["src"], "upload_files: src")
	if err != nil {
		return nil, err
	}
	abs, err := r.resolve(callerFile(th), src)
	if err != nil {
		return nil, fmt.Errorf("upload_files: %w", err)
	}
	file, ok := r.localPath(abs)
	if !ok {
		return nil, fmt.Errorf("upload_files: %s is outside the package; not available offline", abs)
	}
	info, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("upload_files: %w", err)
	}
	art, err := r.newArtifact(a["name"])
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		art.Files[filepath.Base(file)] = string(data)
		return starlark.String(art.Name), nil
	}
	err = filepath.WalkDir(file, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(file, p)
		art.Files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("upload_files: %w", err)
	}
	if len(art.Files) == 0 {
		return nil, fmt.Errorf("upload_files: %s is an empty directory", src)
	}
	return starlark.String(art.Name), nil
}

func (r *Runtime) namedArtifact(_ *starlark.Thread, a map[string]starlark.Value) (starlark.Value, error) {
	art, err := r.newArtifact(a["name"])
	if err != nil {
		return nil, err
	}
	return starlark.String(art.Name), nil
}

func (r *Runtime) getFilesArtifact(_ *starlark.Thread, a map[string]starlark.Value) (starlark.Value, error) {
	name, err := str(a["name"], "get_files_artifact: name")
	if err != nil {
		return nil, err
	}
	if _, ok := r.plan.Artifacts[name]; !ok {
		return nil, fmt.Errorf("get_files_artifact: no files artifact %q", name)
	}
	return starlark.String(name), nil
}

// task records run_sh / run_python: mounted files artifacts must exist, and
// every store entry (a path, or StoreSpec(src, name)) becomes a files
// artifact listed in the result's files_artifacts, as Kurtosis returns them.
func (r *Runtime) task(_ *starlark.Thread, a map[string]starlark.Value) (starlark.Value, error) {
	if files, ok := a["files"].(*starlark.Dict); ok {
		for _, item := range files.Items() {
			mount, _ := starlark.AsString(item[0])
			if isType(item[1], "Directory") {
				continue
			}
			art, _ := starlark.AsString(item[1])
			if _, exists := r.plan.Artifacts[art]; !exists {
				return nil, fmt.Errorf("task files[%q] names files artifact %q, which does not exist", mount, art)
			}
		}
	}
	var stored []starlark.Value
	if store, ok := a["store"].(*starlark.List); ok {
		for i := range store.Len() {
			var name starlark.Value
			if spec, ok := store.Index(i).(*starlarkstruct.Struct); ok && isType(spec, "StoreSpec") {
				name, _ = spec.Attr("name")
			}
			art, err := r.newArtifact(name)
			if err != nil {
				return nil, fmt.Errorf("task store[%d]: %w", i, err)
			}
			stored = append(stored, starlark.String(art.Name))
		}
	}
	return starlarkstruct.FromStringDict(starlark.String("TaskResult"), starlark.StringDict{
		"code":            starlark.String("{{kurtosis:task.code}}"),
		"output":          starlark.String("{{kurtosis:task.output}}"),
		"files_artifacts": starlark.NewList(stored),
	}), nil
}

// recipeResult is what exec, request and wait return at interpretation
// time: future references for the recipe's fields (code and output for an
// ExecRecipe, code and body for HTTP recipes) and one "extract.<name>" per
// extractor.
func (r *Runtime) recipeResult(_ *starlark.Thread, a map[string]starlark.Value) (starlark.Value, error) {
	name := ""
	if svc, ok := a["service_name"]; ok {
		name, _ = starlark.AsString(svc)
		if _, exists := r.plan.Services[name]; !exists {
			return nil, fmt.Errorf("service %q does not exist", name)
		}
	}
	recipe, _ := a["recipe"].(*starlarkstruct.Struct)
	fields := []string{"code", "body"}
	if isType(recipe, "ExecRecipe") {
		fields = []string{"code", "output"}
	}
	if recipe != nil {
		if ex, err := recipe.Attr("extract"); err == nil {
			d, ok := ex.(*starlark.Dict)
			if !ok {
				return nil, fmt.Errorf("recipe extract must be a dict name -> jq query, got %s", ex.Type())
			}
			for _, item := range d.Items() {
				k, _ := starlark.AsString(item[0])
				fields = append(fields, "extract."+k)
			}
		}
	}
	d := starlark.NewDict(len(fields))
	for _, f := range fields {
		_ = d.SetKey(starlark.String(f), starlark.String(fmt.Sprintf("{{kurtosis:%s.%s}}", name, f)))
	}
	return d, nil
}

// toGo converts a Starlark value to Go through JSON (numbers stay exact).
func toGo(th *starlark.Thread, v starlark.Value) (any, error) {
	enc, err := starlark.Call(th, starjson.Module.Members["encode"], starlark.Tuple{v}, nil)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(enc.(starlark.String))))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// fromGo converts a JSON-able Go value to Starlark (dicts, lists, ints).
func fromGo(th *starlark.Thread, v any) (starlark.Value, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return starlark.Call(th, starjson.Module.Members["decode"], starlark.Tuple{starlark.String(data)}, nil)
}
