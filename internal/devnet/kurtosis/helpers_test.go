package kurtosis_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
)

const testPackageID = "github.com/segdiff/segdiff-test/kurtosis"

// writePackage lays out a minimal local Starlark package.
func writePackage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"kurtosis.yml":       "name: " + testPackageID + "\ndescription: test package\n",
		"main.star":          "helper = import_module(\"./src/helper.star\")\n\ndef run(plan, args={}):\n    return helper.out(plan)\n",
		"src/helper.star":    "def out(plan):\n    return struct()\n",
		".kurtosisignore":    "ignored/\n",
		"ignored/secret.txt": "not uploaded\n",
	}
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const testParams = `participants:
  - el_type: geth
    cl_type: prysm
    count: 2
network_params:
  gloas_fork_epoch: 0
  heze_fork_epoch: 18446744073709551615
segdiff:
  mode: segmented
`

// runOutput is what main.star returns for the two-node params.
func runOutput(t *testing.T, mutate func(map[string]any)) string {
	t.Helper()
	out := map[string]any{
		"segdiff_nodes": []any{
			map[string]any{"id": "cl-2-prysm-geth", "cl_service": "cl-2-prysm-geth", "el_service": "el-2-geth-prysm", "client": "prysm", "link_class": "home", "roles": []any{"node"}, "diffusion_role": "withholder"},
			map[string]any{"id": "cl-1-prysm-geth", "cl_service": "cl-1-prysm-geth", "el_service": "el-1-geth-prysm", "client": "prysm", "link_class": "datacenter", "roles": []any{"node", "proposer", "builder"}},
		},
		"prometheus_service": "segdiff-prometheus",
		"grafana_service":    "segdiff-grafana",
		"mode":               "segmented",
		"seconds_per_slot":   12,
		"slot_duration_ms":   12000,
		"payload_due_bps":    5000,
		"network_id":         "3151908",
		"shaping":            []any{},
	}
	if mutate != nil {
		mutate(out)
	}
	b, err := json.MarshalIndent(out, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// addServices registers the services of runOutput on the fake.
func addServices(a *kurtosistest.APIContainer) {
	a.AddService("cl-1-prysm-geth", map[string]uint32{"http": 33001, "metrics": 33002, "tcp-discovery": 33005})
	a.AddService("el-1-geth-prysm", map[string]uint32{"rpc": 33003, "metrics": 33004, "ws": 33006})
	a.AddService("cl-2-prysm-geth", map[string]uint32{"http": 33101, "metrics": 33102})
	a.AddService("el-2-geth-prysm", map[string]uint32{"rpc": 33103})
	a.AddService("segdiff-prometheus", map[string]uint32{"http": 33010})
	a.AddService("segdiff-grafana", map[string]uint32{"dashboards": 33011})
}

func successScript(t *testing.T) []*kurtosistest.Line {
	return kurtosistest.Lines(
		kurtosistest.Interpreting(),
		kurtosistest.Instruction(1, 2, "add_service", "Adding service cl-1-prysm-geth", "Service 'cl-1-prysm-geth' added"),
		kurtosistest.Instruction(2, 2, "add_service", "Adding service segdiff-prometheus", "Service 'segdiff-prometheus' added"),
		[]*kurtosistest.Line{kurtosistest.Success(runOutput(t, nil))},
	)
}

// syncBuffer is a log writer safe to read while Up runs in a goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// upParams are the parameters every Up test uses.
func upParams(t *testing.T, enclave, pkg, params, endpointsDir string, log *syncBuffer) []kurtosis.Parameter {
	return []kurtosis.Parameter{
		kurtosis.WithEnclave(enclave),
		kurtosis.WithPackageDir(pkg),
		kurtosis.WithParamsFile(params),
		kurtosis.WithEndpointsDir(endpointsDir),
		kurtosis.WithManifest(filepath.Join(t.TempDir(), "absent-clients.yaml")),
		kurtosis.WithLog(log),
		kurtosis.WithConnectTimeout(5 * time.Second),
		kurtosis.WithTeardownTimeout(10 * time.Second),
		// The fake services serve no beacon API; chain_test.go watches.
		kurtosis.WithProgressSlots(0),
	}
}
