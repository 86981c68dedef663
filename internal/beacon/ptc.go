package beacon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	eth2client "github.com/attestantio/go-eth2-client"
	"github.com/attestantio/go-eth2-client/api"
	"github.com/attestantio/go-eth2-client/spec"
	"github.com/attestantio/go-eth2-client/spec/gloas"
	"github.com/attestantio/go-eth2-client/spec/phase0"

	"github.com/segdiff/segdiff/internal/chainview"
)

// ReadPTC returns the payload-timeliness committee's payload_present votes on
// the payload of slot, as included on chain: payload attestations for slot N
// can only be included in the block of slot N+1 (process_payload_attestation
// requires data.slot + 1 == block slot). It fetches the root of the block at
// slot, the block at slot+1 and the committee of slot (committees), and
// counts with CountPTC.
//
// If slot or slot+1 has no block, or the block at slot+1 carries no payload
// attestation for the block at slot, the error wraps chainview.ErrNoVotes.
func ReadPTC(ctx context.Context, n Node, committees *Committees, slot uint64) (chainview.PTCVotes, error) {
	rootResp, err := n.BeaconBlockRoot(ctx, &api.BeaconBlockRootOpts{Block: strconv.FormatUint(slot, 10)})
	if err != nil {
		if isNotFound(err) {
			return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: no block at slot %d: %w", slot, slot, chainview.ErrNoVotes)
		}
		return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: block root: %w", slot, err)
	}
	if rootResp.Data == nil {
		return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: block root: empty response", slot)
	}
	block, err := gloasBlock(ctx, n, slot+1)
	if err != nil {
		return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: %w", slot, err)
	}
	if block == nil {
		return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: no block at slot %d: %w", slot, slot+1, chainview.ErrNoVotes)
	}
	if got := uint64(block.Message.Slot); got != slot+1 {
		return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: asked for block %d, node returned slot %d", slot, slot+1, got)
	}
	committee, err := committees.Of(ctx, slot)
	if err != nil {
		return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: %w", slot, err)
	}
	votes, err := CountPTC(block, phase0.Slot(slot), *rootResp.Data, committee)
	if err != nil {
		return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: %w", slot, err)
	}
	return votes, nil
}

// CountPTC counts, in block (which must be the block of slot+1), the PTC
// positions whose payload_present vote for the block root at slot fork choice
// records, given committee, the PTC of slot (get_ptc: validator by position).
// A member's vote counts at every position it holds: on_payload_attestation_message
// sets all of a duplicated validator's positions, while an aggregate may
// carry one bit per member (Prysm c40b59a sets the first of its positions).
// On a network with fewer than PTC_SIZE validators per slot each member holds
// several positions, and counting bits would put the threshold out of reach.
// Only aggregates whose data.slot == slot and data.beacon_block_root == root
// count; a member voting in several counts once. An aggregate of another
// width than the committee is an error. No matching aggregate → an error
// wrapping chainview.ErrNoVotes.
func CountPTC(block *gloas.SignedBeaconBlock, slot phase0.Slot, root phase0.Root, committee []phase0.ValidatorIndex) (chainview.PTCVotes, error) {
	if block == nil || block.Message == nil || block.Message.Body == nil {
		return chainview.PTCVotes{}, errors.New("count ptc votes: empty block")
	}
	if len(committee) == 0 {
		return chainview.PTCVotes{}, fmt.Errorf("count ptc votes: no committee for slot %d", slot)
	}
	voters := map[phase0.ValidatorIndex]bool{}
	matched := 0
	for i, pa := range block.Message.Body.PayloadAttestations {
		if pa == nil || pa.Data == nil || pa.Data.Slot != slot || pa.Data.BeaconBlockRoot != root {
			continue
		}
		if w := int(pa.PTCSize()); w != len(committee) {
			// PTCBits is Bitvector[PTC_SIZE]: any other width is a preset mismatch.
			return chainview.PTCVotes{}, fmt.Errorf("count ptc votes: payload_attestations[%d] has %d bits, the committee of slot %d has %d positions", i, w, slot, len(committee))
		}
		matched++
		if !pa.Data.PayloadPresent {
			continue
		}
		for pos, v := range committee {
			if set, _ := pa.AttestedAt(uint64(pos)); set {
				voters[v] = true
			}
		}
	}
	if matched == 0 {
		return chainview.PTCVotes{}, fmt.Errorf("block %d has no payload attestation for slot %d root %#x: %w",
			block.Message.Slot, slot, root[:], chainview.ErrNoVotes)
	}
	members := map[phase0.ValidatorIndex]bool{}
	present := 0
	for _, v := range committee {
		members[v] = true
		if voters[v] {
			present++
		}
	}
	return chainview.PTCVotes{
		Slot:           uint64(slot),
		Size:           len(committee),
		PayloadPresent: present,
		Voters:         len(voters),
		Members:        len(members),
		Source:         fmt.Sprintf("chain:%#x", root[:]),
	}, nil
}

// Committees reads payload-timeliness committees from a node's state
// (ptc_window, which holds the committees of the state's previous, current
// and next epochs), one state per epoch. It is safe for concurrent use.
type Committees struct {
	n interface {
		eth2client.BeaconStateProvider
		eth2client.SpecProvider
	}
	mu            sync.Mutex
	slotsPerEpoch uint64
	byEpoch       map[uint64][][]phase0.ValidatorIndex
}

// NewCommittees reads committees from n.
func NewCommittees(n interface {
	eth2client.BeaconStateProvider
	eth2client.SpecProvider
}) *Committees {
	return &Committees{n: n, byEpoch: map[uint64][][]phase0.ValidatorIndex{}}
}

// keptEpochs bounds the cache: the suite and health read recent epochs.
const keptEpochs = 4

// Of returns the PTC of slot: validator indices by position.
func (c *Committees) Of(ctx context.Context, slot uint64) ([]phase0.ValidatorIndex, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slotsPerEpoch == 0 {
		spe, err := SlotsPerEpoch(ctx, c.n)
		if err != nil {
			return nil, fmt.Errorf("ptc of slot %d: %w", slot, err)
		}
		c.slotsPerEpoch = spe
	}
	spe := c.slotsPerEpoch
	epoch := slot / spe
	if w, ok := c.byEpoch[epoch]; ok {
		return w[slot%spe], nil
	}
	resp, err := c.n.BeaconState(ctx, &api.BeaconStateOpts{State: strconv.FormatUint(slot, 10)})
	if err != nil {
		return nil, fmt.Errorf("ptc of slot %d: state at slot %d: %w", slot, slot, err)
	}
	st := resp.Data
	if st == nil || st.Version != spec.DataVersionGloas || st.Gloas == nil {
		version := "unknown"
		if st != nil {
			version = st.Version.String()
		}
		return nil, fmt.Errorf("ptc of slot %d: state at slot %d is %s, want a gloas state with ptc_window", slot, slot, version)
	}
	if got := uint64(st.Gloas.Slot); got/spe != epoch {
		return nil, fmt.Errorf("ptc of slot %d: asked for the state at slot %d, node returned slot %d", slot, slot, got)
	}
	// The window starts at the state's previous epoch: its current
	// epoch's committees are the second SLOTS_PER_EPOCH entries.
	window := st.Gloas.PTCWindow
	if uint64(len(window)) < 2*spe {
		return nil, fmt.Errorf("ptc of slot %d: ptc_window has %d committees, want at least %d", slot, len(window), 2*spe)
	}
	for old := range c.byEpoch {
		if old+keptEpochs < epoch {
			delete(c.byEpoch, old)
		}
	}
	c.byEpoch[epoch] = window[spe : 2*spe]
	return c.byEpoch[epoch][slot%spe], nil
}

func isNotFound(err error) bool {
	var apiErr *api.Error
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound
}
