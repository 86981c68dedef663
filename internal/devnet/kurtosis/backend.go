package kurtosis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/segdiff/segdiff/internal/beacon"
	"github.com/segdiff/segdiff/internal/devnet"
)

// BackendName is the name the suite opens this backend by (DEVNET=kurtosis).
const BackendName = "kurtosis"

func init() { devnet.Register(BackendName, Open, devnet.WithPreflight(preflight)) }

// preflight fails a run at once when there is no enclave to attach to.
func preflight(context.Context) error {
	_, err := ReadEndpoints(endpointsPath())
	return err
}

// endpointsPath is SEGDIFF_ENDPOINTS, else
// .devnet/<SEGDIFF_ENCLAVE or "segdiff">/endpoints.json.
func endpointsPath() string {
	if path := os.Getenv(EnvEndpoints); path != "" {
		return path
	}
	enclave := os.Getenv(EnvEnclave)
	if enclave == "" {
		enclave = DefaultEnclave
	}
	return EndpointsPath(DefaultEndpointsDir, enclave)
}

// beaconTimeout bounds each beacon API request of an attached devnet.
const beaconTimeout = 10 * time.Second

// Open attaches to a running enclave through its endpoints file: the path in
// SEGDIFF_ENDPOINTS, else .devnet/<SEGDIFF_ENCLAVE or "segdiff">/endpoints.json.
// The enclave's params fix the diffusion mode, so a cfg.Mode that differs is
// an error naming both; a cfg.Preset must name the params file `up` used
// (path or base name). cfg.Nodes and cfg.Seed do not apply. Open connects to
// the first node whose beacon API answers; Close only detaches.
func Open(ctx context.Context, cfg devnet.Config) (devnet.Devnet, error) {
	e, err := ReadEndpoints(endpointsPath())
	if err != nil {
		return nil, err
	}
	return Attach(ctx, e, cfg)
}

// Attach is Open with the endpoints already read.
func Attach(ctx context.Context, e *Endpoints, cfg devnet.Config) (devnet.Devnet, error) {
	if len(cfg.Stress) > 0 {
		return nil, fmt.Errorf("attach to enclave %q: stress %q is set by the params file (segdiff.link_classes, per-participant segdiff.role), not by a scenario: %w", e.Enclave, cfg.Stress, errors.ErrUnsupported)
	}
	if cfg.Mode != "" && cfg.Mode != e.Mode {
		return nil, fmt.Errorf("attach to enclave %q: the suite wants mode %q but the enclave runs mode %q (set by its params %s; start a matching devnet with `make devnet-up PARAMS=...`)",
			e.Enclave, cfg.Mode, e.Mode, e.ParamsFile)
	}
	if cfg.Preset != "" && cfg.Preset != e.ParamsFile && filepath.Base(cfg.Preset) != filepath.Base(e.ParamsFile) {
		return nil, fmt.Errorf("attach to enclave %q: the suite wants preset %q but the enclave was started with params %q", e.Enclave, cfg.Preset, e.ParamsFile)
	}
	life, cancel := context.WithCancel(context.Background())
	var errs []error
	for _, n := range e.Nodes {
		if n.BeaconURL == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			cancel()
			return nil, fmt.Errorf("attach to enclave %q: %w", e.Enclave, err)
		}
		c, err := beacon.New(life, beacon.WithAddress(n.BeaconURL), beacon.WithTimeout(beaconTimeout))
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", n.ID, err))
			continue
		}
		return &kurtosisDevnet{endpoints: e, beacon: c, beaconNode: n.ID, cancel: cancel}, nil
	}
	cancel()
	if len(errs) == 0 {
		return nil, fmt.Errorf("attach to enclave %q: no node has a beacon_url", e.Enclave)
	}
	return nil, fmt.Errorf("attach to enclave %q: no beacon API answers: %w", e.Enclave, errors.Join(errs...))
}

// kurtosisDevnet is an attached enclave; safe for concurrent use (the
// endpoints are read-only, the beacon client is concurrency-safe).
type kurtosisDevnet struct {
	endpoints  *Endpoints
	beacon     *beacon.Client
	beaconNode string
	closeOnce  sync.Once
	cancel     context.CancelFunc
}

func (d *kurtosisDevnet) Backend() string { return BackendName }

func (d *kurtosisDevnet) Nodes(context.Context) ([]devnet.Node, error) {
	out := make([]devnet.Node, len(d.endpoints.Nodes))
	for i, n := range d.endpoints.Nodes {
		out[i] = n.Node
		out[i].Roles = append([]devnet.Role(nil), n.Roles...)
	}
	return out, nil // ReadEndpoints checked they are sorted by ID
}

// Timing reads genesis and slot duration from the beacon API; when the node
// does not expose PAYLOAD_DUE_BPS, the value the params configured is used.
func (d *kurtosisDevnet) Timing(ctx context.Context) (devnet.Timing, error) {
	t, err := d.beacon.Timing(ctx)
	if err != nil {
		return devnet.Timing{}, fmt.Errorf("timing from node %s: %w", d.beaconNode, err)
	}
	if t.PayloadDueBPS == 0 {
		if d.endpoints.PayloadDueBPS == 0 {
			return devnet.Timing{}, fmt.Errorf("timing from node %s: PAYLOAD_DUE_BPS unknown: the node's spec lacks it and enclave %q's params set none",
				d.beaconNode, d.endpoints.Enclave)
		}
		t.PayloadDueBPS = uint64(d.endpoints.PayloadDueBPS)
	}
	return t, nil
}

func (d *kurtosisDevnet) PTC(ctx context.Context, slot uint64) (devnet.PTCVotes, error) {
	v, err := d.beacon.PTC(ctx, slot)
	if err != nil {
		return devnet.PTCVotes{}, fmt.Errorf("ptc from node %s: %w", d.beaconNode, err)
	}
	return v, nil
}

func (d *kurtosisDevnet) PrometheusURL() string { return d.endpoints.PrometheusURL }

// Close detaches; the enclave keeps running (`segdiff devnet down` removes it).
func (d *kurtosisDevnet) Close() error {
	d.closeOnce.Do(d.cancel)
	return nil
}
