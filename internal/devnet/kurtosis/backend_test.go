package kurtosis_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/beacon/beacontest"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
)

// writeEnclave writes an endpoints file whose nodes point at a fake beacon
// API and returns its path.
func writeEnclave(t *testing.T, chain *beacontest.Chain, mutate func(*kurtosis.Endpoints)) string {
	t.Helper()
	srv := beacontest.NewServer(t, chain)
	e := sampleEndpoints(srv.URL)
	if mutate != nil {
		mutate(e)
	}
	path := kurtosis.EndpointsPath(t.TempDir(), e.Enclave)
	if err := kurtosis.WriteEndpoints(path, e); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBackend(t *testing.T) {
	genesis := time.Unix(1_760_000_000, 0)
	chain := beacontest.NewChain(genesis)
	root := beacontest.Root(10)
	chain.Put(beacontest.Block(10, beacontest.Root(9)), root)
	chain.Put(beacontest.Block(11, root, beacontest.Attestation(10, root, true, 512, beacontest.Positions(300)...)), beacontest.Root(11))
	t.Setenv(kurtosis.EnvEndpoints, writeEnclave(t, chain, nil))

	d, err := devnet.Open(context.Background(), kurtosis.BackendName, devnet.Config{Mode: devnet.ModeSegmented, Preset: "segmented.yaml"})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer d.Close()
	if d.Backend() != "kurtosis" || d.PrometheusURL() != "http://127.0.0.1:9090" {
		t.Errorf("Backend %q PrometheusURL %q", d.Backend(), d.PrometheusURL())
	}
	nodes, err := d.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0].ID != "cl-1-prysm-geth" || !nodes[0].HasRole(devnet.RoleBuilder) || nodes[1].LinkClass != devnet.LinkDatacenter {
		t.Errorf("Nodes = %+v", nodes)
	}
	timing, err := d.Timing(context.Background())
	if err != nil {
		t.Fatalf("Timing: %v", err)
	}
	if want := (devnet.Timing{Genesis: genesis, SlotDuration: 12 * time.Second, PayloadDueBPS: 5000}); !reflect.DeepEqual(timing, want) {
		t.Errorf("Timing = %+v, want %+v", timing, want)
	}
	votes, err := d.PTC(context.Background(), 10)
	if err != nil {
		t.Fatalf("PTC(10): %v", err)
	}
	if votes.PayloadPresent != 300 || votes.Size != 512 || !votes.Timely() {
		t.Errorf("PTC(10) = %+v", votes)
	}
	if _, err := d.PTC(context.Background(), 11); !errors.Is(err, devnet.ErrNoVotes) {
		t.Errorf("PTC(11) with no block 12: %v, want ErrNoVotes", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestBackendPayloadDueFallback(t *testing.T) {
	chain := beacontest.NewChain(time.Unix(1_760_000_000, 0))
	delete(chain.Spec, "PAYLOAD_DUE_BPS")
	t.Setenv(kurtosis.EnvEndpoints, writeEnclave(t, chain, func(e *kurtosis.Endpoints) { e.PayloadDueBPS = 7500 }))
	d, err := devnet.Open(context.Background(), kurtosis.BackendName, devnet.Config{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer d.Close()
	timing, err := d.Timing(context.Background())
	if err != nil || timing.PayloadDueBPS != 7500 {
		t.Errorf("Timing = %+v, %v; want PayloadDueBPS 7500 from the params", timing, err)
	}

	chain2 := beacontest.NewChain(time.Unix(1_760_000_000, 0))
	delete(chain2.Spec, "PAYLOAD_DUE_BPS")
	t.Setenv(kurtosis.EnvEndpoints, writeEnclave(t, chain2, func(e *kurtosis.Endpoints) { e.PayloadDueBPS = 0 }))
	d2, err := devnet.Open(context.Background(), kurtosis.BackendName, devnet.Config{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer d2.Close()
	if _, err := d2.Timing(context.Background()); err == nil || !strings.Contains(err.Error(), "PAYLOAD_DUE_BPS unknown") {
		t.Errorf("Timing without any PAYLOAD_DUE_BPS: %v", err)
	}
}

func TestBackendOpenErrors(t *testing.T) {
	chain := beacontest.NewChain(time.Unix(1_760_000_000, 0))
	tests := []struct {
		name    string
		cfg     devnet.Config
		mutate  func(*kurtosis.Endpoints)
		wantMsg []string
	}{
		{name: "mode mismatch", cfg: devnet.Config{Mode: devnet.ModeWhole}, wantMsg: []string{`"whole"`, `"segmented"`, "segmented.yaml"}},
		{name: "preset mismatch", cfg: devnet.Config{Preset: "network-params/whole.yaml"}, wantMsg: []string{"whole.yaml", "segmented.yaml"}},
		{name: "no beacon answers", mutate: func(e *kurtosis.Endpoints) {
			for i := range e.Nodes {
				e.Nodes[i].BeaconURL = "http://127.0.0.1:1"
			}
		}, wantMsg: []string{"no beacon API answers", "cl-1-prysm-geth", "cl-2-prysm-geth"}},
		{name: "no beacon urls", mutate: func(e *kurtosis.Endpoints) {
			for i := range e.Nodes {
				e.Nodes[i].BeaconURL = ""
			}
		}, wantMsg: []string{"no node has a beacon_url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(kurtosis.EnvEndpoints, writeEnclave(t, chain, tt.mutate))
			_, err := devnet.Open(context.Background(), kurtosis.BackendName, tt.cfg)
			if err == nil {
				t.Fatal("Open succeeded")
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("Open error %q lacks %q", err, m)
				}
			}
		})
	}
}

// Without SEGDIFF_ENDPOINTS the backend reads .devnet/<SEGDIFF_ENCLAVE or
// segdiff>/endpoints.json relative to the working directory.
func TestBackendDefaultPath(t *testing.T) {
	chain := beacontest.NewChain(time.Unix(1_760_000_000, 0))
	srv := beacontest.NewServer(t, chain)
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv(kurtosis.EnvEndpoints, "")
	t.Setenv(kurtosis.EnvEnclave, "")
	if _, err := devnet.Open(context.Background(), kurtosis.BackendName, devnet.Config{}); err == nil ||
		!strings.Contains(err.Error(), filepath.Join(".devnet", "segdiff", "endpoints.json")) || !strings.Contains(err.Error(), "devnet-up") {
		t.Errorf("Open without a file: %v, want the default path and how to create it", err)
	}
	e := sampleEndpoints(srv.URL)
	e.Enclave = "other"
	if err := kurtosis.WriteEndpoints(kurtosis.EndpointsPath(kurtosis.DefaultEndpointsDir, "other"), e); err != nil {
		t.Fatal(err)
	}
	t.Setenv(kurtosis.EnvEnclave, "other")
	d, err := devnet.Open(context.Background(), kurtosis.BackendName, devnet.Config{})
	if err != nil {
		t.Fatalf("Open with SEGDIFF_ENCLAVE=other: %v", err)
	}
	d.Close()
}

// An attached enclave holds every node's event stream (the standard
// source): nodes without one are reported as gaps, not as readings; a
// row for another mode than the enclave's is skipped with the reason.
func TestBackendStandardSource(t *testing.T) {
	chain := beacontest.NewChain(time.Now().Add(-time.Minute))
	chain.Spec["SLOT_DURATION_MS"] = "1000"
	t.Setenv(kurtosis.EnvEndpoints, writeEnclave(t, chain, nil))
	d, err := devnet.Open(context.Background(), kurtosis.BackendName, devnet.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	std, ok := d.(devnet.Standard)
	if !ok {
		t.Fatal("the kurtosis devnet has no standard source")
	}
	nodes, _ := d.Nodes(context.Background())
	time.Sleep(1100 * time.Millisecond) // into the first measured slot
	snaps, err := std.StandardSnapshots(context.Background(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		s := snaps[n.ID]
		if s == nil || len(s.Slots) != 0 || len(s.Gaps) == 0 {
			t.Fatalf("node %s: %+v, want no readings and gaps", n.ID, s)
		}
		for _, gap := range s.Gaps {
			if !strings.Contains(gap, "event stream never connected: event stream: http status 404") {
				t.Errorf("node %s gap %q", n.ID, gap)
			}
		}
	}
	if got := devnet.SkipReason(kurtosis.BackendName, devnet.Config{Mode: devnet.ModeWhole}); !strings.Contains(got, `enclave "segdiff" runs segmented diffusion (params network-params/segmented.yaml); this row is for whole`) {
		t.Errorf("skip reason %q", got)
	}
	if got := devnet.SkipReason(kurtosis.BackendName, devnet.Config{Mode: devnet.ModeSegmented}); got != "" {
		t.Errorf("a segmented row on a segmented enclave is skipped: %q", got)
	}
}

// Without a slot clock the enclave still opens (the contract may measure
// it), and its standard readings say why there are none.
func TestBackendStandardSourceWithoutTiming(t *testing.T) {
	chain := beacontest.NewChain(time.Now())
	delete(chain.Spec, "SLOT_DURATION_MS")
	delete(chain.Spec, "SECONDS_PER_SLOT")
	t.Setenv(kurtosis.EnvEndpoints, writeEnclave(t, chain, nil))
	d, err := devnet.Open(context.Background(), kurtosis.BackendName, devnet.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.(devnet.Standard).StandardSnapshots(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), `standard readings of enclave "segdiff": no slot clock from node cl-1-prysm-geth`) {
		t.Errorf("error %v", err)
	}
}
