package beacon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

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
// slot and the block at slot+1 and counts with CountPTC.
//
// If slot or slot+1 has no block, or the block at slot+1 carries no payload
// attestation for the block at slot, the error wraps chainview.ErrNoVotes.
// The committee size is PTC_SIZE from the spec when present, else the
// aggregation bitvector's width.
func ReadPTC(ctx context.Context, n Node, slot uint64) (chainview.PTCVotes, error) {
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
	blockResp, err := n.SignedBeaconBlock(ctx, &api.SignedBeaconBlockOpts{Block: strconv.FormatUint(slot+1, 10)})
	if err != nil {
		if isNotFound(err) {
			return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: no block at slot %d: %w", slot, slot+1, chainview.ErrNoVotes)
		}
		return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: block %d: %w", slot, slot+1, err)
	}
	block := blockResp.Data
	if block == nil || block.Version != spec.DataVersionGloas || block.Gloas == nil || block.Gloas.Message == nil || block.Gloas.Message.Body == nil {
		version := "unknown"
		if block != nil {
			version = block.Version.String()
		}
		return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: block %d is %s, want a gloas block", slot, slot+1, version)
	}
	if got := uint64(block.Gloas.Message.Slot); got != slot+1 {
		return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: asked for block %d, node returned slot %d", slot, slot+1, got)
	}
	size := 0
	if sp, err := n.Spec(ctx, &api.SpecOpts{}); err == nil {
		if v, ok, _ := specUint(sp.Data, "PTC_SIZE"); ok {
			size = int(v)
		}
	}
	votes, err := CountPTC(block.Gloas, phase0.Slot(slot), *rootResp.Data, size)
	if err != nil {
		return chainview.PTCVotes{}, fmt.Errorf("read ptc votes of slot %d: %w", slot, err)
	}
	return votes, nil
}

// CountPTC counts, in block (which must be the block of slot+1), the PTC
// positions that voted payload_present for the block root at slot. Only
// aggregates whose data.slot == slot and data.beacon_block_root == root count;
// a position set in several such aggregates counts once, as fork choice
// records one vote per position. ptcSize 0 means "the bitvector's width";
// a bitvector of another width than ptcSize is an error.
// No matching aggregate → an error wrapping chainview.ErrNoVotes.
func CountPTC(block *gloas.SignedBeaconBlock, slot phase0.Slot, root phase0.Root, ptcSize int) (chainview.PTCVotes, error) {
	if block == nil || block.Message == nil || block.Message.Body == nil {
		return chainview.PTCVotes{}, errors.New("count ptc votes: empty block")
	}
	var present []bool
	matched := 0
	width := 0
	for i, pa := range block.Message.Body.PayloadAttestations {
		if pa == nil || pa.Data == nil || pa.Data.Slot != slot || pa.Data.BeaconBlockRoot != root {
			continue
		}
		w := int(pa.PTCSize())
		if width == 0 {
			width = w
			present = make([]bool, w)
		} else if w != width {
			return chainview.PTCVotes{}, fmt.Errorf("count ptc votes: payload_attestations[%d] has %d bits, earlier aggregates %d", i, w, width)
		}
		matched++
		if !pa.Data.PayloadPresent {
			continue
		}
		for pos := range w {
			if set, _ := pa.AttestedAt(uint64(pos)); set {
				present[pos] = true
			}
		}
	}
	if matched == 0 {
		return chainview.PTCVotes{}, fmt.Errorf("block %d has no payload attestation for slot %d root %#x: %w",
			block.Message.Slot, slot, root[:], chainview.ErrNoVotes)
	}
	if ptcSize == 0 {
		ptcSize = width
	}
	if width != ptcSize {
		// PTCBits is Bitvector[PTC_SIZE]: any other width is a preset mismatch.
		return chainview.PTCVotes{}, fmt.Errorf("count ptc votes: aggregation bits cover %d positions, PTC_SIZE is %d", width, ptcSize)
	}
	count := 0
	for _, p := range present {
		if p {
			count++
		}
	}
	return chainview.PTCVotes{
		Slot:           uint64(slot),
		Size:           ptcSize,
		PayloadPresent: count,
		Source:         fmt.Sprintf("chain:%#x", root[:]),
	}, nil
}

func isNotFound(err error) bool {
	var apiErr *api.Error
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound
}
