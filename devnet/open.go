package devnet

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Mode is how the builder's payload is diffused.
type Mode string

// Diffusion modes.
const (
	ModeWhole          Mode = "whole"           // one gossip message carrying the whole compressed payload
	ModeSegmented      Mode = "segmented"       // EIP-8411 segments as independent messages
	ModeSegmentedBatch Mode = "segmented-batch" // segments, one copy of each before a second of any
)

// ParseMode checks s names a known mode.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeWhole, ModeSegmented, ModeSegmentedBatch:
		return m, nil
	}
	return "", fmt.Errorf("unknown diffusion mode %q (want %s, %s or %s)", s, ModeWhole, ModeSegmented, ModeSegmentedBatch)
}

// Config selects a devnet. The suite opens one devnet per distinct Config and
// shares it between scenarios, so Config must be comparable and its String
// stable. Zero values mean the backend's defaults.
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
	return fmt.Sprintf("mode=%s nodes=%s seed=%s preset=%s", c.Mode, orDefault(int64(c.Nodes)), orDefault(c.Seed), c.Preset)
}

// Opener starts (or attaches to) a devnet of one backend.
type Opener func(ctx context.Context, cfg Config) (Devnet, error)

var (
	openersMu sync.RWMutex
	openers   = map[string]Opener{}
)

// Register makes a backend available to Open under name. Backends call it
// from init; registering a name twice panics, as it is a programming error.
func Register(name string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if _, dup := openers[name]; dup {
		panic("devnet: backend registered twice: " + name)
	}
	openers[name] = open
}

// Backends lists the registered backend names, sorted.
func Backends() []string {
	openersMu.RLock()
	defer openersMu.RUnlock()
	names := make([]string, 0, len(openers))
	for n := range openers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Open starts or attaches to a devnet of the named backend.
func Open(ctx context.Context, backend string, cfg Config) (Devnet, error) {
	openersMu.RLock()
	open, ok := openers[backend]
	openersMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("open devnet: unknown backend %q (registered: %s)", backend, strings.Join(Backends(), ", "))
	}
	d, err := open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s devnet (%s): %w", backend, cfg, err)
	}
	return d, nil
}
