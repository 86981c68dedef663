package kurtosis

import (
	"errors"
	"io"
	"os"
	"time"
)

// Parameter configures Up, Down and Status.
type Parameter interface {
	apply(*parameters)
}

type parameterFunc func(*parameters)

func (f parameterFunc) apply(p *parameters) { f(p) }

type parameters struct {
	enclave         string
	paramsFile      string
	packageDir      string
	manifest        string
	check           func(path string) error
	endpointsDir    string
	log             io.Writer
	connectTimeout  time.Duration
	teardownTimeout time.Duration
	privileged      bool
	fresh           bool
}

// WithEnclave names the enclave. Required.
func WithEnclave(name string) Parameter {
	return parameterFunc(func(p *parameters) { p.enclave = name })
}

// WithParamsFile is the network-params YAML passed to the package. Required
// by Up.
func WithParamsFile(path string) Parameter {
	return parameterFunc(func(p *parameters) { p.paramsFile = path })
}

// WithPackageDir is the local Starlark package (a directory with
// kurtosis.yml). Default "kurtosis".
func WithPackageDir(dir string) Parameter {
	return parameterFunc(func(p *parameters) { p.packageDir = dir })
}

// WithManifest is the client-patches manifest that resolves "@clients/<name>"
// image references. Default "client-patches/clients.yaml"; it is read only
// when the params reference it.
func WithManifest(path string) Parameter {
	return parameterFunc(func(p *parameters) { p.manifest = path })
}

// WithParamsCheck runs check on the params file before anything else (the
// params package's checker). Default none.
func WithParamsCheck(check func(path string) error) Parameter {
	return parameterFunc(func(p *parameters) { p.check = check })
}

// WithEndpointsDir is where Up writes <enclave>/endpoints.json. Default
// ".devnet".
func WithEndpointsDir(dir string) Parameter {
	return parameterFunc(func(p *parameters) { p.endpointsDir = dir })
}

// WithLog receives progress (instructions, info, warnings). Default os.Stderr.
func WithLog(w io.Writer) Parameter {
	return parameterFunc(func(p *parameters) { p.log = w })
}

// WithConnectTimeout bounds connecting to the engine. Default 10 s.
func WithConnectTimeout(d time.Duration) Parameter {
	return parameterFunc(func(p *parameters) { p.connectTimeout = d })
}

// WithTeardownTimeout bounds destroying an enclave, which runs on its own
// context so it outlives a cancelled one. Default 2 min.
func WithTeardownTimeout(d time.Duration) Parameter {
	return parameterFunc(func(p *parameters) { p.teardownTimeout = d })
}

// WithAllowPrivilegedMode lets the package start privileged containers (the
// CLI's --privileged; link-class shaping needs it). Default false.
func WithAllowPrivilegedMode(allow bool) Parameter {
	return parameterFunc(func(p *parameters) { p.privileged = allow })
}

// WithFresh destroys a same-named enclave before Up instead of reusing it.
// Default false: Up re-runs the package in an existing enclave.
func WithFresh(fresh bool) Parameter {
	return parameterFunc(func(p *parameters) { p.fresh = fresh })
}

func parseAndCheckParameters(params ...Parameter) (*parameters, error) {
	p := &parameters{
		packageDir:      "kurtosis",
		manifest:        "client-patches/clients.yaml",
		endpointsDir:    ".devnet",
		log:             os.Stderr,
		connectTimeout:  10 * time.Second,
		teardownTimeout: 2 * time.Minute,
	}
	for _, param := range params {
		if param != nil {
			param.apply(p)
		}
	}
	switch {
	case p.enclave == "":
		return nil, errors.New("no enclave name specified")
	case p.log == nil:
		return nil, errors.New("no log writer specified")
	case p.connectTimeout <= 0:
		return nil, errors.New("connect timeout must be positive")
	case p.teardownTimeout <= 0:
		return nil, errors.New("teardown timeout must be positive")
	}
	return p, nil
}
