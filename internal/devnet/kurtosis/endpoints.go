package kurtosis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"

	"github.com/segdiff/segdiff/internal/atomicfile"
	"github.com/segdiff/segdiff/internal/devnet"
)

// Environment variables the "kurtosis" backend reads.
const (
	// EnvEndpoints is the endpoints file path; it wins over EnvEnclave.
	EnvEndpoints = "SEGDIFF_ENDPOINTS"
	// EnvEnclave names the enclave whose default endpoints file is read;
	// default DefaultEnclave.
	EnvEnclave = "SEGDIFF_ENCLAVE"
	// DefaultEnclave is the enclave name when none is given (matches the
	// Makefile's ENCLAVE default).
	DefaultEnclave = "segdiff"
	// DefaultEndpointsDir is where Up writes endpoints files.
	DefaultEndpointsDir = ".devnet"
)

// EndpointsPath returns <dir>/<enclave>/endpoints.json.
func EndpointsPath(dir, enclave string) string {
	return filepath.Join(dir, enclave, "endpoints.json")
}

// WriteEndpoints writes e to path atomically (atomicfile.Write), creating
// the directory.
func WriteEndpoints(path string, e *Endpoints) error {
	if err := e.check(); err != nil {
		return fmt.Errorf("write endpoints %s: %w", path, err)
	}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("write endpoints %s: %w", path, err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write endpoints %s: %w", path, err)
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("write endpoints %s: %w", path, err)
	}
	return nil
}

// ReadEndpoints reads and checks the endpoints file at path.
func ReadEndpoints(path string) (*Endpoints, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read endpoints: %w (run `make devnet-up` first, or set %s)", err, EnvEndpoints)
	}
	e, err := ParseEndpoints(data)
	if err != nil {
		return nil, fmt.Errorf("read endpoints %s: %w", path, err)
	}
	return e, nil
}

// ParseEndpoints decodes and checks an endpoints file's content. Unknown
// keys are errors, so a typo does not silently drop a URL.
func ParseEndpoints(data []byte) (*Endpoints, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e Endpoints
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadEndpoints, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the JSON object", ErrBadEndpoints)
	}
	if err := e.check(); err != nil {
		return nil, err
	}
	return &e, nil
}

func (e *Endpoints) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadEndpoints}, args...)...)
	}
	if e.Version != EndpointsVersion {
		return bad("version: %d, want %d", e.Version, EndpointsVersion)
	}
	if e.Enclave == "" {
		return bad("enclave: empty")
	}
	if _, err := devnet.ParseMode(string(e.Mode)); err != nil {
		return bad("mode: %v", err)
	}
	if e.SecondsPerSlot <= 0 && e.SlotDurationMS <= 0 {
		return bad("seconds_per_slot: %d, want > 0", e.SecondsPerSlot)
	}
	if e.PayloadDueBPS < 0 || e.PayloadDueBPS > 10000 {
		return bad("payload_due_bps: %d, want 0..10000", e.PayloadDueBPS)
	}
	if len(e.Nodes) == 0 {
		return bad("nodes: empty")
	}
	if !sort.SliceIsSorted(e.Nodes, func(i, j int) bool { return e.Nodes[i].ID < e.Nodes[j].ID }) {
		return bad("nodes: not sorted by id")
	}
	for i, n := range e.Nodes {
		switch {
		case n.ID == "":
			return bad("nodes[%d].id: empty", i)
		case i > 0 && e.Nodes[i-1].ID == n.ID:
			return bad("nodes[%d].id: %q repeated", i, n.ID)
		case len(n.Roles) == 0:
			return bad("nodes[%d].roles: empty", i)
		}
		if err := checkURL(n.MetricsURL, true); err != nil {
			return bad("nodes[%d].metrics_url: %v", i, err)
		}
		for key, u := range map[string]string{"beacon_url": n.BeaconURL, "el_rpc_url": n.ELRPCURL, "el_metrics_url": n.ELMetricsURL} {
			if err := checkURL(u, false); err != nil {
				return bad("nodes[%d].%s: %v", i, key, err)
			}
		}
	}
	if err := checkURL(e.PrometheusURL, true); err != nil {
		return bad("prometheus_url: %v", err)
	}
	if err := checkURL(e.GrafanaURL, false); err != nil {
		return bad("grafana_url: %v", err)
	}
	return nil
}

func checkURL(s string, required bool) error {
	if s == "" {
		if required {
			return fmt.Errorf("empty")
		}
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL with a host", s)
	}
	return nil
}
