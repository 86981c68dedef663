package starlarktest

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// argSpec is one builtin's signature in Kurtosis 1.20.0
// (core/server/api_container/server/startosis_engine, tag 1.20.0).
type argSpec struct {
	required []string
	optional []string
}

// descriptionArg is accepted by every plan instruction.
const descriptionArg = "description"

// planBuiltins are the `plan.` instructions.
var planBuiltins = map[string]argSpec{
	"add_service":         {[]string{"name", "config"}, []string{"force_update"}},
	"add_services":        {[]string{"configs"}, []string{"force_update"}},
	"get_service":         {[]string{"name"}, nil},
	"get_services":        {nil, nil},
	"set_service":         {[]string{"name", "config"}, nil},
	"remove_service":      {[]string{"name"}, nil},
	"start_service":       {[]string{"name"}, nil},
	"stop_service":        {[]string{"name"}, nil},
	"exec":                {[]string{"service_name", "recipe"}, []string{"acceptable_codes", "skip_code_check"}},
	"request":             {[]string{"service_name", "recipe"}, []string{"acceptable_codes", "skip_code_check"}},
	"wait":                {[]string{"service_name", "recipe", "field", "assertion", "target_value"}, []string{"interval", "timeout"}},
	"verify":              {[]string{"value", "assertion", "target_value"}, nil},
	"print":               {[]string{"msg"}, nil},
	"upload_files":        {[]string{"src"}, []string{"name"}},
	"render_templates":    {[]string{"config"}, []string{"name"}},
	"store_service_files": {[]string{"service_name", "src"}, []string{"name", "depends_on"}},
	"run_sh": {[]string{"run"}, []string{"name", "image", "files", "store", "env_vars", "wait", "acceptable_codes",
		"skip_code_check", "node_selectors", "tolerations", "privileged", "host_pid_namespace", "bind_mounts"}},
	"run_python": {[]string{"run"}, []string{"name", "args", "packages", "image", "files", "store", "wait",
		"acceptable_codes", "skip_code_check", "node_selectors", "tolerations"}},
	"get_files_artifact": {[]string{"name"}, nil},
	"get_cluster_type":   {nil, nil},
}

// typeConstructors are the predeclared types. The reference table marks no
// PortSpec argument as required.
var typeConstructors = map[string]argSpec{
	"ServiceConfig": {[]string{"image"}, []string{"ports", "public_ports", "files", "entrypoint", "cmd", "env_vars",
		"private_ip_address_placeholder", "cpu_allocation", "memory_allocation", "max_cpu", "min_cpu", "max_memory",
		"min_memory", "ready_conditions", "labels", "user", "tolerations", "node_selectors", "files_to_be_moved",
		"tini_enabled", "tty_enabled", "devices", "publish_udp", "capabilities", "gpu", "privileged", "bind_mounts",
		"host_pid_namespace"}},
	"PortSpec":              {nil, []string{"number", "transport_protocol", "application_protocol", "wait", "url"}},
	"ReadyCondition":        {[]string{"recipe", "field", "assertion", "target_value"}, []string{"interval", "timeout"}},
	"ExecRecipe":            {[]string{"command"}, []string{"extract"}},
	"GetHttpRequestRecipe":  {[]string{"port_id", "endpoint"}, []string{"extract", "headers"}},
	"PostHttpRequestRecipe": {[]string{"port_id", "endpoint"}, []string{"extract", "headers", "body", "content_type"}},
	"ImageBuildSpec":        {[]string{"image_name", "build_context_dir"}, []string{"build_file", "target_stage", "build_args"}},
	"ImageSpec":             {[]string{"image"}, []string{"registry", "username", "password"}},
	"NixBuildSpec":          {[]string{"flake_location_dir", "build_context_dir", "image_name"}, []string{"flake_output"}},
	"Directory":             {nil, []string{"artifact_names", "persistent_key", "size"}},
	"StoreSpec":             {[]string{"src"}, []string{"name"}},
	"User":                  {[]string{"uid"}, []string{"gid"}},
	"Toleration":            {nil, []string{"key", "operator", "value", "effect", "toleration_seconds"}},
	"GpuConfig":             {nil, []string{"count", "device_ids", "shm_size", "ulimits", "driver"}},
}

// unpack binds args against spec with go.starlark.net's own checks: an
// unknown keyword ("unexpected keyword argument") or a missing required
// argument ("missing argument for x") fails as in Kurtosis.
func unpack(fn string, spec argSpec, extra []string, args starlark.Tuple, kwargs []starlark.Tuple) (map[string]starlark.Value, error) {
	names := append(append(append([]string{}, spec.required...), spec.optional...), extra...)
	vals := make([]starlark.Value, len(names))
	pairs := make([]any, 0, 2*len(names))
	for i, n := range names {
		if i >= len(spec.required) {
			n += "?"
		}
		pairs = append(pairs, n, &vals[i])
	}
	if err := starlark.UnpackArgs(fn, args, kwargs, pairs...); err != nil {
		return nil, err
	}
	out := make(map[string]starlark.Value, len(names))
	for i, n := range names {
		if vals[i] != nil && vals[i] != starlark.None {
			out[n] = vals[i]
		}
	}
	return out, nil
}

// constructor returns a struct whose constructor is the type name and whose
// fields are the arguments given.
func constructor(name string, spec argSpec) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		vals, err := unpack(b.Name(), spec, nil, args, kwargs)
		if err != nil {
			return nil, err
		}
		d := starlark.StringDict{}
		for k, v := range vals {
			d[k] = v
		}
		return starlarkstruct.FromStringDict(starlark.String(name), d), nil
	})
}

// isType reports whether v was built by the named type constructor.
func isType(v starlark.Value, name string) bool {
	s, ok := v.(*starlarkstruct.Struct)
	return ok && s.Constructor() == starlark.String(name)
}

// planModule is the `plan` argument of run().
func (r *Runtime) planModule() *starlarkstruct.Module {
	impls := map[string]func(*starlark.Thread, map[string]starlark.Value) (starlark.Value, error){
		"add_service":      r.addService,
		"add_services":     r.addServices,
		"get_service":      r.getService,
		"render_templates": r.renderTemplates,
		"upload_files":     r.uploadFiles,
		"get_cluster_type": func(*starlark.Thread, map[string]starlark.Value) (starlark.Value, error) {
			return starlark.String(r.clusterType), nil
		},
		"store_service_files": r.namedArtifact,
		"get_files_artifact":  r.getFilesArtifact,
		"run_sh":              r.task,
		"run_python":          r.task,
		"exec":                r.recipeResult,
		"request":             r.recipeResult,
		"wait":                r.recipeResult,
	}
	members := starlark.StringDict{}
	names := make([]string, 0, len(planBuiltins))
	for n := range planBuiltins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		spec := planBuiltins[name]
		impl := impls[name]
		members[name] = starlark.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			vals, err := unpack(b.Name(), spec, []string{descriptionArg}, args, kwargs)
			if err != nil {
				return nil, err
			}
			r.plan.Instructions = append(r.plan.Instructions, Instruction{Name: name, Args: vals, Position: callerPosition(thread)})
			if impl == nil {
				return starlark.None, nil
			}
			return impl(thread, vals)
		})
	}
	return &starlarkstruct.Module{Name: "plan", Members: members}
}

func callerPosition(thread *starlark.Thread) string {
	if thread.CallStackDepth() < 2 {
		return ""
	}
	return thread.CallFrame(1).Pos.String()
}

func str(v starlark.Value, what string) (string, error) {
	s, ok := starlark.AsString(v)
	if !ok {
		return "", fmt.Errorf("%s must be a string, got %s", what, v.Type())
	}
	return s, nil
}
