// Package beacontest serves a fake beacon API for tests: the endpoints
// go-eth2-client's HTTP service calls on New (/eth/v1/node/syncing,
// /eth/v1/node/version) and for genesis, spec, blocks (by slot or "head"),
// block roots, finality checkpoints, attestation rewards and signed
// execution payload envelopes, with bodies marshalled by go-eth2-client's
// own types as a real node serves them, and states (/eth/v2/debug/beacon/
// states/{slot}) that carry only what the readers use: the slot and the
// payload-timeliness committees (ptc_window). health.go builds whole chains for
// the glamsterdam health checks; events.go serves a node's /eth/v1/events
// on a schedule (and drops it once, or never emits).
package beacontest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apiv1 "github.com/attestantio/go-eth2-client/api/v1"
	"github.com/attestantio/go-eth2-client/spec/altair"
	"github.com/attestantio/go-eth2-client/spec/gloas"
	"github.com/attestantio/go-eth2-client/spec/phase0"
)

// Chain is the fake node's state. Fields may be set before the server
// handles requests; use Put to add blocks while it runs.
type Chain struct {
	mu      sync.Mutex
	Genesis time.Time
	// Spec is served verbatim as /eth/v1/config/spec (string values, as the
	// real API serves them).
	Spec map[string]string
	// Finalized returns the finalized epoch in the state at slot; nil
	// serves no finality checkpoints (404).
	Finalized func(slot uint64) uint64
	// Rewards are the attestation rewards per epoch; a missing epoch is
	// 404, as a node answers for an epoch it has not processed.
	Rewards map[uint64][]apiv1.ValidatorAttestationRewards
	// PTC returns the payload-timeliness committee of slot (validator index
	// by position); nil serves IdentityPTC, position i held by validator i.
	PTC func(slot uint64) []phase0.ValidatorIndex
	// Clock, when set, gives the genesis served instead of Genesis: a
	// chain whose slots start when the suite attaches (events.go).
	Clock     *Clock
	blocks    map[uint64]*gloas.SignedBeaconBlock
	roots     map[uint64]phase0.Root
	envelopes map[uint64][]byte // encoded responses
}

// NewChain returns a chain with the given genesis and mainnet-like Gloas
// spec values (12 s slots, PAYLOAD_DUE_BPS 5000, PTC_SIZE 512).
func NewChain(genesis time.Time) *Chain {
	return &Chain{
		Genesis: genesis,
		Spec: map[string]string{
			"SECONDS_PER_SLOT": "12",
			"SLOT_DURATION_MS": "12000",
			"PAYLOAD_DUE_BPS":  "5000",
			"PTC_SIZE":         "512",
			"SLOTS_PER_EPOCH":  "32",
		},
		Rewards: map[uint64][]apiv1.ValidatorAttestationRewards{},
		blocks:  map[uint64]*gloas.SignedBeaconBlock{},
		roots:   map[uint64]phase0.Root{},
	}
}

// Put stores block (keyed by its slot) under root.
func (c *Chain) Put(block *gloas.SignedBeaconBlock, root phase0.Root) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blocks[uint64(block.Message.Slot)] = block
	c.roots[uint64(block.Message.Slot)] = root
}

// Root returns a distinct, recognisable root for slot.
func Root(slot uint64) phase0.Root {
	var r phase0.Root
	r[0] = 0xb1
	for i := range 8 {
		r[31-i] = byte(slot >> (8 * i))
	}
	return r
}

// Block builds a complete Gloas block for slot with the given payload
// attestations; every field the JSON decoder requires is populated.
func Block(slot uint64, parent phase0.Root, atts ...*gloas.PayloadAttestation) *gloas.SignedBeaconBlock {
	if atts == nil {
		atts = []*gloas.PayloadAttestation{}
	}
	return &gloas.SignedBeaconBlock{
		Message: &gloas.BeaconBlock{
			Slot:          phase0.Slot(slot),
			ProposerIndex: 7,
			ParentRoot:    parent,
			Body: &gloas.BeaconBlockBody{
				ETH1Data:              &phase0.ETH1Data{BlockHash: make([]byte, 32)},
				ProposerSlashings:     []*phase0.ProposerSlashing{},
				AttesterSlashings:     []*gloas.AttesterSlashing{},
				Attestations:          []*gloas.Attestation{},
				Deposits:              []*phase0.Deposit{},
				VoluntaryExits:        []*phase0.SignedVoluntaryExit{},
				SyncAggregate:         &altair.SyncAggregate{SyncCommitteeBits: make([]byte, 64)},
				BLSToExecutionChanges: nil,
				SignedExecutionPayloadBid: &gloas.SignedExecutionPayloadBid{
					Message: &gloas.ExecutionPayloadBid{Slot: phase0.Slot(slot), ParentBlockRoot: parent},
				},
				PayloadAttestations:     atts,
				ParentExecutionRequests: &gloas.ExecutionRequests{},
			},
		},
	}
}

// Attestation builds a payload attestation for (slot, root) with the given
// PTC positions set in a bitvector of ptcSize bits.
func Attestation(slot uint64, root phase0.Root, present bool, ptcSize int, positions ...int) *gloas.PayloadAttestation {
	pa := &gloas.PayloadAttestation{
		AggregationBits: make([]byte, (ptcSize+7)/8),
		Data: &gloas.PayloadAttestationData{
			BeaconBlockRoot: root, Slot: phase0.Slot(slot), PayloadPresent: present, BlobDataAvailable: present,
		},
	}
	for _, p := range positions {
		if err := pa.SetAttestedAt(uint64(p), true); err != nil {
			panic(fmt.Sprintf("beacontest: position %d: %v", p, err))
		}
	}
	return pa
}

// Positions returns 0..n-1, for "the first n members voted".
func Positions(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// NewServer starts an httptest server for chain, closed at test cleanup.
func NewServer(t testing.TB, chain *Chain) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(chain)
	t.Cleanup(srv.Close)
	return srv
}

// ServeHTTP implements the beacon API subset.
func (c *Chain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	path := r.URL.Path
	switch {
	case path == "/eth/v1/node/syncing":
		writeData(w, &apiv1.SyncState{HeadSlot: 1, SyncDistance: 0, IsSyncing: false}, "")
	case path == "/eth/v1/node/version":
		writeData(w, map[string]string{"version": "beacontest/v0.0.0"}, "")
	case path == "/eth/v1/beacon/genesis":
		genesis := c.Genesis
		if c.Clock != nil {
			genesis = c.Clock.Genesis()
		}
		writeData(w, &apiv1.Genesis{GenesisTime: genesis}, "")
	case strings.HasPrefix(path, envelopesPath):
		c.serveEnvelope(w, strings.TrimPrefix(path, envelopesPath))
	case path == "/eth/v1/config/spec":
		writeData(w, c.Spec, "")
	case strings.HasPrefix(path, "/eth/v1/beacon/blocks/") && strings.HasSuffix(path, "/root"):
		slot, ok := c.slotOf(w, strings.TrimSuffix(strings.TrimPrefix(path, "/eth/v1/beacon/blocks/"), "/root"))
		if !ok {
			return
		}
		root := c.roots[slot]
		writeData(w, map[string]string{"root": fmt.Sprintf("%#x", root[:])}, "")
	case strings.HasPrefix(path, "/eth/v2/beacon/blocks/"):
		slot, ok := c.slotOf(w, strings.TrimPrefix(path, "/eth/v2/beacon/blocks/"))
		if !ok {
			return
		}
		writeData(w, c.blocks[slot], "gloas")
	case strings.HasPrefix(path, "/eth/v2/debug/beacon/states/"):
		c.serveState(w, strings.TrimPrefix(path, "/eth/v2/debug/beacon/states/"))
	case strings.HasPrefix(path, "/eth/v1/beacon/states/") && strings.HasSuffix(path, "/finality_checkpoints"):
		c.serveFinality(w, strings.TrimSuffix(strings.TrimPrefix(path, "/eth/v1/beacon/states/"), "/finality_checkpoints"))
	case strings.HasPrefix(path, "/eth/v1/beacon/rewards/attestations/") && r.Method == http.MethodPost:
		c.serveRewards(w, strings.TrimPrefix(path, "/eth/v1/beacon/rewards/attestations/"))
	default:
		writeError(w, http.StatusNotFound, "unknown endpoint "+path)
	}
}

func (c *Chain) slotOf(w http.ResponseWriter, id string) (uint64, bool) {
	if id == "head" {
		if len(c.blocks) == 0 {
			writeError(w, http.StatusNotFound, "NOT_FOUND: no head block")
			return 0, false
		}
		var head uint64
		for s := range c.blocks {
			head = max(head, s)
		}
		return head, true
	}
	slot, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, "block id must be a slot in this fake: "+id)
		return 0, false
	}
	if _, ok := c.blocks[slot]; !ok {
		writeError(w, http.StatusNotFound, "NOT_FOUND: beacon block at slot "+id)
		return 0, false
	}
	return slot, true
}

func (c *Chain) serveFinality(w http.ResponseWriter, state string) {
	slot, err := strconv.ParseUint(state, 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, "state id must be a slot in this fake: "+state)
		return
	}
	if c.Finalized == nil {
		writeError(w, http.StatusNotFound, "NOT_FOUND: no finality in this fake")
		return
	}
	fin := phase0.Epoch(c.Finalized(slot))
	writeData(w, &apiv1.Finality{
		Finalized:         &phase0.Checkpoint{Epoch: fin, Root: Root(uint64(fin) * 32)},
		Justified:         &phase0.Checkpoint{Epoch: fin + 1, Root: Root(uint64(fin+1) * 32)},
		PreviousJustified: &phase0.Checkpoint{Epoch: fin, Root: Root(uint64(fin) * 32)},
	}, "")
}

// IdentityPTC is a committee of size distinct members: position i is
// validator i (a network with PTC_SIZE validators or more per slot).
func IdentityPTC(size int) []phase0.ValidatorIndex {
	out := make([]phase0.ValidatorIndex, size)
	for i := range out {
		out[i] = phase0.ValidatorIndex(i)
	}
	return out
}

// SmallPTC is the committee of a small network: members distinct validators
// (100, 101, ...) holding size positions between them, position i held by
// member i mod members, as the balance-weighted draw with replacement gives
// when a slot's committees have fewer validators than PTC_SIZE.
func SmallPTC(size, members int) []phase0.ValidatorIndex {
	out := make([]phase0.ValidatorIndex, size)
	for i := range out {
		out[i] = phase0.ValidatorIndex(100 + i%members)
	}
	return out
}

// FirstPositions returns each of the first n members' first position in
// committee, as Prysm c40b59a sets one bit per voting member.
func FirstPositions(committee []phase0.ValidatorIndex, n int) []int {
	seen := map[phase0.ValidatorIndex]bool{}
	var out []int
	for i, v := range committee {
		if len(out) == n {
			break
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, i)
		}
	}
	return out
}

func (c *Chain) committee(slot uint64) []phase0.ValidatorIndex {
	if c.PTC != nil {
		return c.PTC(slot)
	}
	size, err := strconv.Atoi(c.Spec["PTC_SIZE"])
	if err != nil {
		size = 512
	}
	return IdentityPTC(size)
}

// serveState serves the state at a slot with its slot and ptc_window (the
// committees of the previous, current and next epoch); every other field is
// the zero value the JSON decoder accepts.
func (c *Chain) serveState(w http.ResponseWriter, id string) {
	slot, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, "state id must be a slot in this fake: "+id)
		return
	}
	spe, err := strconv.ParseUint(c.Spec["SLOTS_PER_EPOCH"], 10, 64)
	if err != nil || spe == 0 {
		writeError(w, http.StatusInternalServerError, "SLOTS_PER_EPOCH missing from the fake's spec")
		return
	}
	// window[k] is the committee of the slot k - SLOTS_PER_EPOCH after the
	// state's epoch starts (before genesis: the first slot's).
	start := (slot / spe) * spe
	window := make([][]phase0.ValidatorIndex, 3*spe)
	for k := range window {
		window[k] = c.committee(max(start+uint64(k), spe) - spe)
	}
	keys := func() []phase0.BLSPubKey { return make([]phase0.BLSPubKey, 512) }
	writeData(w, &gloas.BeaconState{
		Slot: phase0.Slot(slot), PTCWindow: window,
		Fork: &phase0.Fork{}, LatestBlockHeader: &phase0.BeaconBlockHeader{}, ETH1Data: &phase0.ETH1Data{BlockHash: make([]byte, 32)},
		JustificationBits:           make([]byte, 1),
		PreviousJustifiedCheckpoint: &phase0.Checkpoint{}, CurrentJustifiedCheckpoint: &phase0.Checkpoint{}, FinalizedCheckpoint: &phase0.Checkpoint{},
		CurrentSyncCommittee: &altair.SyncCommittee{Pubkeys: keys()}, NextSyncCommittee: &altair.SyncCommittee{Pubkeys: keys()},
		LatestExecutionPayloadBid: &gloas.ExecutionPayloadBid{},
	}, "gloas")
}

func (c *Chain) serveRewards(w http.ResponseWriter, id string) {
	epoch, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, "epoch must be a number: "+id)
		return
	}
	total, ok := c.Rewards[epoch]
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("NOT_FOUND: no attestation rewards for epoch %d", epoch))
		return
	}
	writeData(w, &apiv1.AttestationRewards{IdealRewards: []apiv1.IdealAttestationRewards{}, TotalRewards: total}, "")
}

func writeData(w http.ResponseWriter, data any, version string) {
	body := map[string]any{"data": data}
	if version != "" {
		body["version"] = version
		body["execution_optimistic"] = false
		body["finalized"] = false
		w.Header().Set("Eth-Consensus-Version", version)
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(body); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg})
}
