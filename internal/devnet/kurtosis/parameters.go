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
	packageSources  string
	sourcesCache    string
	progressSlots   uint64
	stallSlots      uint64
	chainTimeout    time.Duration
	chainPoll       time.Duration
	dockerHost      string
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

// WithPackageSources runs the package from local sources instead of
// letting Kurtosis clone ethereum-package and the packages it imports from
// GitHub: dir holds ethereum-package.tar.gz, postgres-package.tar.gz,
// redis-package.tar.gz, prometheus-package.tar.gz, db-adminer-package.tar.gz
// (each unpacking to a folder of its own name) and a SHA256SUMS listing
// them. Up checks every archive against SHA256SUMS before anything else,
// unpacks them once into a directory under WithSourcesCache keyed by their
// hashes, and runs a staged copy of the package whose kurtosis.yml replaces
// those five packages by the unpacked trees; the package directory itself
// is only read. Default "" (clone from GitHub, as the package pins).
func WithPackageSources(dir string) Parameter {
	return parameterFunc(func(p *parameters) { p.packageSources = dir })
}

// WithSourcesCache is where WithPackageSources unpacks the archives (one
// subdirectory per set of archive hashes, reused by later runs). Default
// <user cache dir>/segdiff/package-sources.
func WithSourcesCache(dir string) Parameter {
	return parameterFunc(func(p *parameters) { p.sourcesCache = dir })
}

// WithProgressSlots is how many slots every CL's head must advance before
// Up succeeds: from the time the package starts the CLs Up polls each CL's
// head against the wall-clock slot and fails as soon as one stalls (see
// WithStallSlots). 0 turns the watch off: Up returns once the package run
// finished. Default 2.
func WithProgressSlots(n uint64) Parameter {
	return parameterFunc(func(p *parameters) { p.progressSlots = n })
}

// WithStallSlots is when a CL counts as stalled: its head is more than n
// slots behind the wall clock and has not advanced for n slots. Up then
// fails naming the node and quoting the last error line of its container
// log. Default 2.
func WithStallSlots(n uint64) Parameter {
	return parameterFunc(func(p *parameters) { p.stallSlots = n })
}

// WithChainTimeout bounds the wait for chain progress after the package run
// finished (genesis may still be ahead). Default 10 min.
func WithChainTimeout(d time.Duration) Parameter {
	return parameterFunc(func(p *parameters) { p.chainTimeout = d })
}

// WithChainPollInterval is how often the chain watch reads every CL's head.
// Default 1 s.
func WithChainPollInterval(d time.Duration) Parameter {
	return parameterFunc(func(p *parameters) { p.chainPoll = d })
}

// WithDockerHost is the Docker Engine API the chain watch reads a stalled
// node's container log from: "unix:///path" or "tcp://host:port" (plain
// HTTP). Default $DOCKER_HOST, else unix:///var/run/docker.sock.
func WithDockerHost(host string) Parameter {
	return parameterFunc(func(p *parameters) { p.dockerHost = host })
}

func parseAndCheckParameters(params ...Parameter) (*parameters, error) {
	p := &parameters{
		packageDir:      "kurtosis",
		manifest:        "client-patches/clients.yaml",
		endpointsDir:    ".devnet",
		log:             os.Stderr,
		connectTimeout:  10 * time.Second,
		teardownTimeout: 2 * time.Minute,
		progressSlots:   2,
		stallSlots:      2,
		chainTimeout:    10 * time.Minute,
		chainPoll:       time.Second,
		dockerHost:      os.Getenv("DOCKER_HOST"),
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
	case p.stallSlots == 0:
		return nil, errors.New("stall slots must be at least 1")
	case p.chainTimeout <= 0:
		return nil, errors.New("chain timeout must be positive")
	case p.chainPoll <= 0:
		return nil, errors.New("chain poll interval must be positive")
	}
	if p.dockerHost == "" {
		p.dockerHost = defaultDockerHost
	}
	return p, nil
}
