package kurtosistest

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/attestantio/go-eth2-client/spec/phase0"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/segdiff/segdiff/internal/beacon/beacontest"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/metrics/metricstest"
)

// Enclave is what `segdiff devnet up` leaves for the suite, faked: an
// endpoints file naming nodes whose metrics (package metricstest), beacon
// API (package beacontest) and execution JSON-RPC answer on loopback. The
// "kurtosis" backend attaches to it unchanged, in this process or in a
// suite started as a subprocess (SEGDIFF_ENDPOINTS=Enclave.EndpointsPath).
type Enclave struct {
	// EndpointsPath is the endpoints file, in a test temporary directory.
	EndpointsPath string
	// Endpoints is what the file holds.
	Endpoints *kurtosis.Endpoints
	// Streams are a live enclave's event streams by node id (nil for the
	// others): what each node emitted, and when, for a test to hold the
	// suite's figures to.
	Streams map[string]*beacontest.Stream
}

// EnclaveConfig describes a fake enclave. Zero values take the defaults
// named per field.
type EnclaveConfig struct {
	// Network is the nodes' metrics history (metricstest's defaults: a
	// builder and eight receivers revealing six slots; Mode "segmented").
	Network metricstest.Network
	// Chain is every node's beacon API (default: HealthyEpochs epochs of
	// HealthySlotsPerEpoch slots of beacontest.HealthyChain at the
	// network's genesis).
	Chain *beacontest.Chain
	// LackingEL names the node whose EL does not hold slot 5's block
	// (default: every EL holds every bid's block).
	LackingEL string
	// Client, when set, makes the enclave live (live.go): its nodes run
	// this kind of client, on a clock that starts when the suite attaches,
	// with the network's history as events and counters in real time.
	// Nil serves the network's contract series only, all at once.
	Client *Client
	// Clients, when set with Client, gives some nodes another kind of
	// client (by node id): a mixed devnet.
	Clients map[string]Client
	// AvailableLag, with Client, delays every receiver's
	// execution_payload_available event this long after the completion its
	// contract series carry: a client whose two sources disagree.
	AvailableLag time.Duration
	// NoBuilderRole gives the network's builder node the proposer role
	// only, as on a devnet whose proposers build their own payloads.
	NoBuilderRole bool
}

// The default fake chain: 6 epochs of 8 slots, so "the chain has finished
// 3 epochs" judges epochs 2..4.
const (
	HealthyEpochs        = 6
	HealthySlotsPerEpoch = 8
)

// StartEnclave serves cfg's enclave until t's cleanup. Every slot's bid
// commits to an execution block hash the ELs hold (but LackingEL's lacks
// slot 5's).
func StartEnclave(t testing.TB, cfg EnclaveConfig) *Enclave {
	t.Helper()
	net := cfg.Network
	if net.Mode == "" {
		net.Mode = string(devnet.ModeSegmented)
	}
	served, err := net.Serve()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(served.Close)
	if cfg.Client != nil {
		return startLive(t, cfg)
	}
	chain := cfg.Chain
	if chain == nil {
		chain = beacontest.HealthyChain(net.SlotStart(0), HealthyEpochs, HealthySlotsPerEpoch)
	}
	blocks := bidBlocks(chain, net)
	bn := beacontest.NewServer(t, chain)
	e := &kurtosis.Endpoints{Version: kurtosis.EndpointsVersion, Enclave: "fake", Mode: devnet.Mode(net.Mode),
		SecondsPerSlot: 12, PayloadDueBPS: 5000, WrittenAt: time.Now().UTC(),
		PrometheusURL: "http://127.0.0.1:9"} // unused: the suite scrapes nodes directly
	for _, n := range served.Nodes {
		node := devnet.Node{ID: n.ID, Roles: []devnet.Role{devnet.RoleNode}, LinkClass: devnet.LinkHome,
			MetricsURL: n.MetricsURL, BeaconURL: bn.URL, Client: "fake"}
		if n.Builder {
			node.Roles = []devnet.Role{devnet.RoleBuilder, devnet.RoleProposer}
			if cfg.NoBuilderRole {
				node.Roles = []devnet.Role{devnet.RoleNode, devnet.RoleProposer}
			}
		}
		if n.Datacenter {
			node.LinkClass = devnet.LinkDatacenter
		}
		e.Nodes = append(e.Nodes, kurtosis.EndpointNode{Node: node, CLService: "cl-" + n.ID, ELRPCURL: serveEL(t, blocks, cfg.LackingEL == n.ID)})
	}
	return writeEnclave(t, e)
}

// bidBlocks makes every slot's bid commit to an execution block and
// returns the blocks by hash.
func bidBlocks(chain *beacontest.Chain, net metricstest.Network) map[common.Hash]uint64 {
	blocks := map[common.Hash]uint64{}
	for slot := uint64(1); slot <= uint64(max(net.Slots, 6))+1; slot++ {
		h := executionHeader(slot).Hash()
		chain.SetBidBlockHash(slot, phase0.Hash32(h))
		blocks[h] = slot
	}
	return blocks
}

// serveEL serves a fake EL holding blocks (but slot 5's when lacking).
func serveEL(t testing.TB, blocks map[common.Hash]uint64, lacking bool) string {
	missing := uint64(0)
	if lacking {
		missing = 5
	}
	el := httptest.NewServer(fakeEL(blocks, missing))
	t.Cleanup(el.Close)
	return el.URL
}

// writeEnclave writes e's endpoints file into a test directory.
func writeEnclave(t testing.TB, e *kurtosis.Endpoints) *Enclave {
	path := filepath.Join(t.TempDir(), "endpoints.json")
	if err := kurtosis.WriteEndpoints(path, e); err != nil {
		t.Fatal(err)
	}
	return &Enclave{EndpointsPath: path, Endpoints: e}
}

// executionHeader is the fake execution block of slot.
func executionHeader(slot uint64) *types.Header {
	return &types.Header{Number: new(big.Int).SetUint64(slot), Difficulty: new(big.Int)}
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
			result = executionHeader(slot)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
}
