package steps_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/attestantio/go-eth2-client/spec/phase0"
	"github.com/cucumber/godog"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/segdiff/segdiff/beacon/beacontest"
	"github.com/segdiff/segdiff/devnet"
	"github.com/segdiff/segdiff/devnet/kurtosis"
	"github.com/segdiff/segdiff/report"
	"github.com/segdiff/segdiff/steps"
)

// TestFeaturesRunUnchangedAgainstKurtosisBackend attaches the real
// "kurtosis" backend to an endpoints file naming fake nodes: the fake
// backend's metrics servers and a fake beacon API serving a healthy chain
// whose blocks carry 400 of 512 payload_present votes per slot, and fake
// ELs that hold every bid's block. Every @kurtosis scenario must pass, the
// @embedded-only ones must not run.
func TestFeaturesRunUnchangedAgainstKurtosisBackend(t *testing.T) {
	attachKurtosis(t, beacontest.HealthyChain(time.Unix(1_800_000_000, 0), healthEpochs, healthSlotsPerEpoch), "")
	status, out, s := runKurtosis(t, "../features")
	if status != 0 {
		t.Fatalf("status %d:\n%s", status, out)
	}
	run := s.Results()
	if len(run.Scenarios) != 9 {
		t.Fatalf("ran %d scenarios, want the 9 @kurtosis ones: %+v", len(run.Scenarios), run.Scenarios)
	}
	for _, sc := range run.Scenarios {
		if sc.Status != report.StatusPassed {
			t.Errorf("scenario %q: %s %s", sc.Name, sc.Status, sc.Error)
		}
		for _, v := range sc.Verdicts {
			if v.Check == "PTC payload_present votes per warm slot" && v.Measured != 400 {
				t.Errorf("PTC votes measured %v, want 400 from the fake chain", v.Measured)
			}
		}
	}
}

// The fake chain of the Kurtosis-backend tests: 6 epochs of 8 slots, so
// "the chain has finished 3 epochs" judges epochs 2..4.
const (
	healthEpochs        = 6
	healthSlotsPerEpoch = 8
)

// attachKurtosis writes an endpoints file naming the fake backend's nodes,
// each with chain's beacon API and a fake EL, and points the kurtosis
// backend at it. Every slot's bid commits to a block hash the ELs hold,
// except that the EL of node lacking does not hold slot 5's.
func attachKurtosis(t *testing.T, chain *beacontest.Chain, lacking string) {
	t.Helper()
	fake, err := openFake(context.Background(), devnet.Config{Mode: devnet.ModeSegmented, Preset: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	blocks := map[common.Hash]uint64{}
	for slot := uint64(1); slot <= fakeSlots+1; slot++ {
		h := (&types.Header{Number: new(big.Int).SetUint64(slot), Difficulty: new(big.Int)}).Hash()
		chain.SetBidBlockHash(slot, phase0.Hash32(h))
		blocks[h] = slot
	}
	bn := beacontest.NewServer(t, chain)
	nodes, _ := fake.Nodes(context.Background())
	e := &kurtosis.Endpoints{Version: kurtosis.EndpointsVersion, Enclave: "test", Mode: devnet.ModeSegmented,
		SecondsPerSlot: 12, PayloadDueBPS: 5000, WrittenAt: time.Now(),
		PrometheusURL: "http://127.0.0.1:9"} // unused: the suite scrapes nodes directly
	for _, n := range nodes {
		n.BeaconURL = bn.URL
		missing := uint64(0)
		if n.ID == lacking {
			missing = 5
		}
		el := httptest.NewServer(fakeEL(blocks, missing))
		t.Cleanup(el.Close)
		e.Nodes = append(e.Nodes, kurtosis.EndpointNode{Node: n, CLService: "cl-" + n.ID, ELRPCURL: el.URL})
	}
	path := filepath.Join(t.TempDir(), "endpoints.json")
	if err := kurtosis.WriteEndpoints(path, e); err != nil {
		t.Fatal(err)
	}
	t.Setenv(kurtosis.EnvEndpoints, path)
}

// runKurtosis runs the @kurtosis scenarios of paths against the attached
// kurtosis backend and returns godog's status, its output with the suite's
// log, and the suite.
func runKurtosis(t *testing.T, paths ...string) (int, string, *steps.Suite) {
	t.Helper()
	var log, out bytes.Buffer
	s := steps.New(steps.Config{Backend: kurtosis.BackendName, ReportsDir: t.TempDir(), RunID: "kt",
		PollInterval: 10 * time.Millisecond, WaitTimeout: 2 * time.Second, Log: &log})
	status := godog.TestSuite{
		TestSuiteInitializer: s.InitializeTestSuite,
		ScenarioInitializer:  s.InitializeScenario,
		Options: &godog.Options{Format: "progress", Output: &out, Paths: paths,
			Tags: "@kurtosis && ~@slow", Strict: true, NoColors: true},
	}.Run()
	return status, out.String() + log.String(), s
}

// fakeEL answers eth_getBlockByHash for blocks (hash → slot), but not for
// the block of slot missing, with a header; anything else with null.
func fakeEL(blocks map[common.Hash]uint64, missing uint64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "eth_getBlockByHash" || len(req.Params) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var h common.Hash
		_ = json.Unmarshal(req.Params[0], &h)
		var result any
		if slot, ok := blocks[h]; ok && slot != missing {
			result = &types.Header{Number: new(big.Int).SetUint64(slot), Difficulty: new(big.Int)}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
}
