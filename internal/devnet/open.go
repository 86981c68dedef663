package devnet

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/internal/stress"
)

// Mode is how the builder's payload is diffused (package mode holds the
// list).
type Mode = mode.Mode

// Diffusion modes (see package mode for every mode).
const (
	ModeWhole          = mode.Whole
	ModeSegmented      = mode.Segmented
	ModeSegmentedBatch = mode.SegmentedBatch
)

// ParseMode checks s names a known mode.
func ParseMode(s string) (Mode, error) { return mode.Parse(s) }

// Config selects a devnet. The suite opens one devnet per distinct Config and
// shares it between scenarios, keyed by its String, which is canonical. Zero
// values mean the backend's defaults.
type Config struct {
	// Mode of payload diffusion. A backend that cannot choose it (Kurtosis:
	// the enclave's params fix it) fails Open when it differs from what runs.
	Mode Mode
	// Nodes in the network (embedded only).
	Nodes int
	// Seed fixes topology, link classes and placement (embedded only).
	Seed int64
	// Preset names a backend-specific preset, e.g. a network-params file for
	// Kurtosis or a named embedded configuration ("ci", "study-500").
	Preset string
	// Stress is the stress the devnet runs under, parsed once where it was
	// written (a feature's sentence): roles, faults and sizes of the design's
	// stress list; empty for none. A backend that cannot apply it fails its
	// config check (CheckConfig) or Open.
	Stress stress.Set
}

// String is the canonical key of c, used to share devnets between scenarios
// and shown in reports; zero values read "default" (the backend's choice),
// not a literal 0.
func (c Config) String() string {
	orDefault := func(v int64) string {
		if v == 0 {
			return "default"
		}
		return strconv.FormatInt(v, 10)
	}
	s := fmt.Sprintf("mode=%s nodes=%s seed=%s preset=%s", c.Mode, orDefault(int64(c.Nodes)), orDefault(c.Seed), c.Preset)
	if len(c.Stress) > 0 {
		s += " stress=" + c.Stress.String()
	}
	return s
}

// Opener starts (or attaches to) a devnet of one backend.
type Opener func(ctx context.Context, cfg Config) (Devnet, error)

// backend is one registered backend.
type backend struct {
	open        Opener
	preflight   func(ctx context.Context) error
	shutdown    func() error
	checkConfig func(cfg Config) error
	skip        func(cfg Config) string
}

// BackendOption adds an optional hook to a backend at registration.
type BackendOption func(*backend)

// WithPreflight gives the backend a check that runs before any devnet
// opens (Preflight): a missing enclave, engine or tool fails the run at
// once, with its cause, instead of every scenario failing one by one.
func WithPreflight(f func(ctx context.Context) error) BackendOption {
	return func(b *backend) { b.preflight = f }
}

// WithConfigCheck gives the backend a check of a whole Config (CheckConfig):
// its preset, and whatever else the backend would refuse when opening it,
// so that a mistyped preset or an impossible network fails before any
// devnet opens instead of when the first scenario opens one.
func WithConfigCheck(f func(cfg Config) error) BackendOption {
	return func(b *backend) { b.checkConfig = f }
}

// WithSkip gives the backend a check of whether a Config applies to the
// devnet it attaches to: "" when it does, else why not (an enclave whose
// params run another mode). The suite skips a scenario selecting a devnet
// that does not apply, with that reason, as it skips another backend's
// scenarios; Open still refuses such a Config.
func WithSkip(f func(cfg Config) string) BackendOption {
	return func(b *backend) { b.skip = f }
}

// SkipReason is why backend would not run a scenario on cfg's devnet (see
// WithSkip), "" when it would or has no such check.
func SkipReason(backend string, cfg Config) string {
	b, err := lookup(backend)
	if err != nil || b.skip == nil {
		return ""
	}
	return b.skip(cfg)
}

// WithShutdown gives the backend a hook that releases what it holds
// beyond its devnets (a built binary, temporary files) when the process is
// done with it (Shutdown).
func WithShutdown(f func() error) BackendOption {
	return func(b *backend) { b.shutdown = f }
}

var (
	backendsMu sync.RWMutex
	backends   = map[string]backend{}
)

// Register makes a backend available to Open under name. Backends call it
// from init; registering a name twice panics, as it is a programming error.
func Register(name string, open Opener, opts ...BackendOption) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if _, dup := backends[name]; dup {
		panic("devnet: backend registered twice: " + name)
	}
	b := backend{open: open}
	for _, o := range opts {
		o(&b)
	}
	backends[name] = b
}

// Backends lists the registered backend names, sorted.
func Backends() []string {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	names := make([]string, 0, len(backends))
	for n := range backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ErrUnknownBackend is returned (wrapped) for a backend name nobody
// registered.
var ErrUnknownBackend = errors.New("unknown devnet backend")

func lookup(name string) (backend, error) {
	backendsMu.RLock()
	b, ok := backends[name]
	backendsMu.RUnlock()
	if !ok {
		return backend{}, fmt.Errorf("%w %q (registered: %s)", ErrUnknownBackend, name, strings.Join(Backends(), ", "))
	}
	return b, nil
}

// Known returns nil when a backend of that name is registered, else an
// error (wrapping ErrUnknownBackend) listing the registered ones.
func Known(name string) error {
	_, err := lookup(name)
	return err
}

// Preflight checks that backend is registered and runs its preflight hook,
// if it has one, before anything opens.
func Preflight(ctx context.Context, name string) error {
	b, err := lookup(name)
	if err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	if b.preflight == nil {
		return nil
	}
	if err := b.preflight(ctx); err != nil {
		return fmt.Errorf("preflight %s backend: %w", name, err)
	}
	return nil
}

// CheckConfig checks, before anything opens, that backend would open cfg:
// it knows cfg's preset and accepts the rest. A backend without a config
// check accepts any (Kurtosis matches the preset against the enclave's
// params when it attaches).
func CheckConfig(backend string, cfg Config) error {
	b, err := lookup(backend)
	if err != nil {
		return err
	}
	if b.checkConfig == nil {
		return nil
	}
	return b.checkConfig(cfg)
}

// Shutdown runs every backend's shutdown hook; call it once the process
// opens no more devnets. Errors are joined.
func Shutdown() error {
	backendsMu.RLock()
	var hooks []func() error
	for _, b := range backends {
		if b.shutdown != nil {
			hooks = append(hooks, b.shutdown)
		}
	}
	backendsMu.RUnlock()
	var errs []error
	for _, h := range hooks {
		errs = append(errs, h())
	}
	return errors.Join(errs...)
}

// Open starts or attaches to a devnet of the named backend.
func Open(ctx context.Context, name string, cfg Config) (Devnet, error) {
	b, err := lookup(name)
	if err != nil {
		return nil, fmt.Errorf("open devnet: %w", err)
	}
	d, err := b.open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s devnet (%s): %w", name, cfg, err)
	}
	return d, nil
}
