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
	"github.com/segdiff/segdiff/internal/watch"
	"github.com/segdiff/segdiff/metrics"
)

// BackendName is the name the suite opens this backend by (DEVNET=kurtosis).
const BackendName = "kurtosis"

func init() {
	devnet.Register(BackendName, Open, devnet.WithPreflight(preflight), devnet.WithSkip(skip))
}

// skip says why a scenario row for another diffusion mode than the
// enclave's does not run on it (its params fix the mode): a suite run
// against a whole-message enclave runs the whole rows of the features and
// skips the segmented ones, and the other way round. An unreadable
// endpoints file is the preflight's to report.
func skip(cfg devnet.Config) string {
	e, err := ReadEndpoints(endpointsPath())
	if err != nil || cfg.Mode == "" || cfg.Mode == e.Mode {
		return ""
	}
	return fmt.Sprintf("enclave %q runs %s diffusion (params %s); this row is for %s", e.Enclave, e.Mode, e.ParamsFile, cfg.Mode)
}

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
// the first node whose beacon API answers and subscribes to every node's
// event stream (the standard source, package watch) before it returns, so
// that the first measured slot comes after the subscriptions; Close only
// detaches.
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
		d := &kurtosisDevnet{endpoints: e, beacon: c, beaconNode: n.ID, cancel: cancel}
		d.startWatch(ctx)
		return d, nil
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
	// watch is the standard source, or nil with watchErr saying why.
	watch    *watch.Watch
	watchErr error
}

// startWatch subscribes to every node's event stream. A devnet that cannot
// be watched still opens: the contract may measure it, and a check that
// needs the standard source fails with watchErr.
func (d *kurtosisDevnet) startWatch(ctx context.Context) {
	timing, err := d.beacon.Timing(ctx)
	if err != nil {
		d.watchErr = fmt.Errorf("no slot clock from node %s: %w", d.beaconNode, err)
		return
	}
	nodes, _ := d.Nodes(ctx)
	if d.watch, err = watch.Start(ctx, nodes, timing, watch.WithSizer(d.beacon), watch.WithProposers(d.beacon)); err != nil {
		d.watchErr = err
	}
}

// StandardSnapshots implements devnet.Standard.
func (d *kurtosisDevnet) StandardSnapshots(ctx context.Context, nodes []devnet.Node) (map[string]*metrics.Snapshot, error) {
	if d.watch == nil {
		return nil, fmt.Errorf("standard readings of enclave %q: %w", d.endpoints.Enclave, d.watchErr)
	}
	return d.watch.Snapshots(ctx, nodes)
}

func (d *kurtosisDevnet) Backend() string { return BackendName }

func (d *kurtosisDevnet) Nodes(context.Context) ([]devnet.Node, error) {
	return d.endpoints.DevnetNodes(), nil
}

// DevnetNodes returns the nodes as the devnet interface has them, sorted by
// id (ReadEndpoints checked they are).
func (e *Endpoints) DevnetNodes() []devnet.Node {
	out := make([]devnet.Node, len(e.Nodes))
	for i, n := range e.Nodes {
		out[i] = n.Node
		out[i].Roles = append([]devnet.Role(nil), n.Roles...)
	}
	return out
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
	d.closeOnce.Do(func() {
		if d.watch != nil {
			d.watch.Close()
		}
		d.cancel()
	})
	return nil
}
