package eip8411

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/klauspost/reedsolomon"
)

// rsEncoders caches one Reed–Solomon encoder per (data, parity) shape;
// klauspost/reedsolomon encoders are safe for concurrent use.
var rsEncoders sync.Map // [2]int → reedsolomon.Encoder

// rsEncoder returns the systematic GF(2^8) code of README.md for k data and
// m parity shards (k+m ≤ MaxCodedShards): klauspost/reedsolomon's default
// matrix, a Vandermonde matrix made systematic. No option that changes the
// matrix or the field (Cauchy, PAR1, Jerasure, Leopard) may be used here.
func rsEncoder(k, m int) (reedsolomon.Encoder, error) {
	key := [2]int{k, m}
	if enc, ok := rsEncoders.Load(key); ok {
		return enc.(reedsolomon.Encoder), nil
	}
	enc, err := reedsolomon.New(k, m)
	if err != nil {
		return nil, fmt.Errorf("new reed-solomon code %d+%d: %w", k, m, err)
	}
	actual, _ := rsEncoders.LoadOrStore(key, enc)
	return actual.(reedsolomon.Encoder), nil
}

// encodeParity overwrites shards[k:] (allocated, ShardSize each) with the
// parity of shards[:k].
func encodeParity(k int, shards [][]byte) error {
	enc, err := rsEncoder(k, len(shards)-k)
	if err != nil {
		return err
	}
	if err := enc.Encode(shards); err != nil {
		return fmt.Errorf("encode parity: %w", err)
	}
	return nil
}

// formDataShards lays out a group's data shards from its snappy blocks
// (README "segdiff/2 shard formation"):
//
//   - compress-then-cut (blocks is the one whole-body block): the block cut
//     every SegmentSize bytes; coded, the last shard is zero-padded to
//     SegmentSize;
//   - cut-then-compress (one block per raw segment): uncoded, shard i is block
//     i as is; coded, shard i is u32le(len(block i)) ‖ block i, zero-padded to
//     ShardSize = 4 + the longest block.
//
// Coded groups get m more zeroed shards of ShardSize, for the parity; all
// k+m shards share one allocation. It returns the shards and ShardSize.
func formDataShards(order Order, blocks [][]byte, segmentSize, parity int) ([][]byte, int) {
	if order == OrderCompressThenCut {
		whole := blocks[0]
		k := (len(whole) + segmentSize - 1) / segmentSize
		if parity > 0 { // one padded buffer: the tail of the last data shard stays zero
			whole = append(make([]byte, 0, (k+parity)*segmentSize), whole...)[:(k+parity)*segmentSize]
		}
		shards := make([][]byte, k+parity)
		for i := range shards {
			shards[i] = whole[i*segmentSize : min((i+1)*segmentSize, len(whole))]
		}
		return shards, segmentSize
	}
	longest := 0
	for _, b := range blocks {
		longest = max(longest, len(b))
	}
	if parity == 0 {
		return blocks, longest
	}
	size := ShardLengthPrefixSize + longest
	buf := make([]byte, (len(blocks)+parity)*size)
	shards := make([][]byte, len(blocks)+parity)
	for i := range shards {
		shards[i] = buf[i*size : (i+1)*size]
		if i < len(blocks) {
			binary.LittleEndian.PutUint32(shards[i], uint32(len(blocks[i])))
			copy(shards[i][ShardLengthPrefixSize:], blocks[i])
		}
	}
	return shards, size
}

// blocksOf undoes formDataShards on the k data shards of a group d commits
// to and returns its snappy blocks (aliasing data). It checks what the proofs
// cannot: the lengths the descriptor states and a canonical layout (length
// prefixes in range, zero padding, ShardSize exactly 4 + the longest block).
// Errors wrap ErrBody: the builder committed to shards that are not a layout
// of compressed segments.
func blocksOf(d DescriptorV2, data [][]byte) ([][]byte, error) {
	if d.Order == OrderCompressThenCut {
		whole := make([]byte, 0, len(data)*int(d.SegmentSize))
		for _, s := range data {
			whole = append(whole, s...)
		}
		n := int(d.CompressedLength)
		if len(whole) < n {
			return nil, fieldErr(ErrBody, "compressed_length", len(whole), "== %d", n)
		}
		if !allZero(whole[n:]) {
			return nil, fieldErr(ErrBody, fmt.Sprintf("shard[%d] padding", len(data)-1), "non-zero", "zero bytes after compressed_length")
		}
		return [][]byte{whole[:n]}, nil
	}
	prefix := int(d.prefixSize())
	blocks := make([][]byte, len(data))
	total, longest := 0, 0
	for i, s := range data {
		n := len(s)
		if prefix > 0 {
			n = int(binary.LittleEndian.Uint32(s))
			if n == 0 || n > len(s)-prefix {
				return nil, fieldErr(ErrBody, fmt.Sprintf("shard[%d] length prefix", i), n, "in [1, %d]", len(s)-prefix)
			}
			if !allZero(s[prefix+n:]) {
				return nil, fieldErr(ErrBody, fmt.Sprintf("shard[%d] padding", i), "non-zero", "zero bytes")
			}
		}
		blocks[i] = s[prefix : prefix+n]
		total += n
		longest = max(longest, n)
	}
	if uint64(total) != d.CompressedLength {
		return nil, fieldErr(ErrBody, "compressed_length", total, "== Σ block lengths %d", d.CompressedLength)
	}
	if longest+prefix != int(d.ShardSize) {
		return nil, fieldErr(ErrBody, "shard_size", d.ShardSize, "== %d-byte prefix + longest block = %d", prefix, longest+prefix)
	}
	return blocks, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
