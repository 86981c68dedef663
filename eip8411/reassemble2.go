package eip8411

import (
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/klauspost/compress/snappy"
)

// ReassemblerV2 collects the shards of one segdiff/2 group (created from the
// installed block's descriptor), in any order, and rebuilds the Body once it
// holds NeededShards() distinct shards: any k of the k+m shards of a coded
// group, all k of an uncoded one. Memory is bounded by the descriptor: at
// most ShardCount() shards of at most ShardSize bytes, each copied when
// accepted, plus the rebuild's working set. It is safe for concurrent use.
//
// Rebuilding (in Body or Compressed, once, under the lock) checks, in order: code
// consistency for a coded group (missing data shards are reconstructed, the
// parity re-encoded from the data, and the Merkle root over all k+m shards
// recomputed; a root other than the descriptor's is ErrInconsistentCode),
// then the shard layout (length prefixes, zero padding, lengths summing to
// CompressedLength; ErrBody), then decompression (each block's decoded length
// checked against the descriptor before allocating, strict snappy, the total
// exactly RawLength; ErrBody) and the SSZ decoding of the Body (ErrBody).
// Either outcome is final: the same for every subset of shards the group
// could be rebuilt from.
type ReassemblerV2 struct {
	desc    DescriptorV2
	groupID [32]byte

	mu       sync.Mutex
	shards   [][]byte // ShardCount() entries; nil while missing
	received int
	done     bool     // rebuilt (with enough shards): blocks and body, or err, are final
	blocks   [][]byte // snappy blocks
	body     *Body
	err      error
}

// NewReassemblerV2 returns a ReassemblerV2 for d; d must be valid.
func NewReassemblerV2(d DescriptorV2) (*ReassemblerV2, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("new reassembler: %w", err)
	}
	return &ReassemblerV2{desc: d, groupID: d.GroupID(), shards: make([][]byte, d.ShardCount())}, nil
}

// Descriptor returns the descriptor the ReassemblerV2 verifies against.
func (r *ReassemblerV2) Descriptor() DescriptorV2 { return r.desc }

// GroupID returns the descriptor's group id.
func (r *ReassemblerV2) GroupID() [32]byte { return r.groupID }

// Add verifies s against the descriptor (DescriptorV2.Verify's checks) and
// stores a copy of its data. dup is true (and err nil) for a valid shard
// whose index is already held; complete is true once NeededShards() distinct
// shards are held (also on later calls): the group can then be rebuilt. An
// invalid shard returns the Verify error and changes nothing.
func (r *ReassemblerV2) Add(s *Shard) (complete, dup bool, err error) {
	if err := verifyShard(r.desc, r.groupID, s); err != nil {
		return r.Complete(), false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shards[s.Index] != nil {
		return r.completeLocked(), true, nil
	}
	r.shards[s.Index] = append([]byte(nil), s.Data...)
	r.received++
	return r.completeLocked(), false, nil
}

func (r *ReassemblerV2) completeLocked() bool { return r.received >= int(r.desc.NeededShards()) }

// Complete reports whether enough shards are held to rebuild the group.
func (r *ReassemblerV2) Complete() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.completeLocked()
}

// Received returns how many distinct shards are held.
func (r *ReassemblerV2) Received() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.received
}

// Missing returns the shard indices not yet held, ascending.
func (r *ReassemblerV2) Missing() []uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []uint32
	for i, s := range r.shards {
		if s == nil {
			out = append(out, uint32(i))
		}
	}
	return out
}

// Compressed rebuilds the group if needed and returns a copy of its snappy
// blocks (one for compress-then-cut, DataShards for cut-then-compress; their
// lengths sum to CompressedLength). Errors are Body's.
func (r *ReassemblerV2) Compressed() ([][]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.rebuildLocked(); err != nil {
		return nil, err
	}
	out := make([][]byte, len(r.blocks))
	for i, b := range r.blocks {
		out[i] = append([]byte(nil), b...)
	}
	return out, nil
}

// Body rebuilds, decompresses and SSZ-decodes the group (once; later calls
// return the same *Body, which callers must not modify, or the same error).
// Errors wrap ErrIncomplete, ErrInconsistentCode or ErrBody; after
// ErrInconsistentCode or ErrBody the payload must not be used, and no rebuilt
// shard may be relayed.
func (r *ReassemblerV2) Body() (*Body, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.rebuildLocked(); err != nil {
		return nil, err
	}
	return r.body, nil
}

// rebuildLocked rebuilds, checks and decodes the group once, setting blocks
// and body or the final err; before enough shards are held it returns
// ErrIncomplete (not final).
func (r *ReassemblerV2) rebuildLocked() error {
	if r.done {
		return r.err
	}
	if !r.completeLocked() {
		return fmt.Errorf("reassemble: %w: %d of %d needed shards", ErrIncomplete, r.received, r.desc.NeededShards())
	}
	r.done = true
	data, err := rebuildData(r.desc, r.shards)
	if err == nil {
		r.blocks, err = blocksOf(r.desc, data)
	}
	if err == nil {
		r.body, err = decompressBlocks(r.desc, r.blocks)
	}
	if err != nil {
		r.blocks, r.body, r.err = nil, nil, fmt.Errorf("reassemble: %w", err)
	}
	return r.err
}

// rebuildData returns the k data shards of a group from held (ShardCount()
// entries, nil when missing, at least k present; not modified). For a coded
// group it reconstructs the missing data shards, re-encodes all parity from
// the data and checks that the Merkle root over the k+m shards is d.Root;
// otherwise the held shards were not one codeword and it returns
// ErrInconsistentCode — whichever k shards were held.
func rebuildData(d DescriptorV2, held [][]byte) ([][]byte, error) {
	k := int(d.DataShards)
	if d.Coding == CodingNone {
		return held[:k], nil
	}
	enc, err := rsEncoder(k, int(d.ParityShards))
	if err != nil {
		return nil, err
	}
	shards := append([][]byte(nil), held...)
	if err := enc.ReconstructData(shards); err != nil {
		return nil, fmt.Errorf("rebuild data shards: %w", err)
	}
	for i := k; i < len(shards); i++ {
		shards[i] = make([]byte, d.ShardSize) // fresh: the held parity is compared through the root
	}
	if err := enc.Encode(shards); err != nil {
		return nil, fmt.Errorf("re-encode parity: %w", err)
	}
	if root := buildTreeLeaves(d.HashID, shards).root(); root != d.Root {
		return nil, fmt.Errorf("check code consistency: %w", fieldErr(ErrInconsistentCode, "root", hex.EncodeToString(root[:]), "%x (the descriptor's root)", d.Root))
	}
	return shards[:k], nil
}

// decompressBlocks decodes the snappy blocks of a group d commits to into its
// Body: each block's decoded length must be exactly its raw length (RawLength
// for the whole-body block, the raw segment length for cut-then-compress),
// checked before decoding into one RawLength buffer; decoding is strict
// (standard snappy, no s2 extensions). Errors wrap ErrBody.
func decompressBlocks(d DescriptorV2, blocks [][]byte) (*Body, error) {
	raw := make([]byte, d.RawLength)
	off := 0
	for i, b := range blocks {
		want := int(d.RawLength)
		if d.Order == OrderCutThenCompress {
			want = d.rawSegmentLen(i)
		}
		n, err := snappy.DecodedLen(b)
		if err != nil {
			return nil, fmt.Errorf("decompress block %d: %w: %w", i, ErrBody, err)
		}
		if n != want {
			return nil, fmt.Errorf("decompress block %d: %w", i, fieldErr(ErrBody, "decoded length", n, "== %d", want))
		}
		if _, err := snappy.DecodeStrict(raw[off:off+n:off+n], b); err != nil {
			return nil, fmt.Errorf("decompress block %d: %w: %w", i, ErrBody, err)
		}
		off += n
	}
	return DecodeBody(raw)
}
