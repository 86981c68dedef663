package eip8411

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// maxCompressedLen is consensus-specs' max_compressed_len(n) = 32 + n + n/6:
// the longest snappy block a conforming encoder emits for n bytes.
func maxCompressedLen(n uint64) uint64 { return 32 + n + n/6 }

// Encode returns the canonical 68-byte encoding of d (its SSZ encoding; see
// the DescriptorV2 layout). It does not validate d.
func (d DescriptorV2) Encode() []byte {
	b := make([]byte, DescriptorV2Size)
	b[0] = byte(d.Version)
	b[1] = byte(d.HashID)
	b[2] = byte(d.Order)
	b[3] = byte(d.Coding)
	binary.LittleEndian.PutUint32(b[4:], d.SegmentSize)
	binary.LittleEndian.PutUint64(b[8:], d.RawLength)
	binary.LittleEndian.PutUint64(b[16:], d.CompressedLength)
	binary.LittleEndian.PutUint32(b[24:], d.DataShards)
	binary.LittleEndian.PutUint32(b[28:], d.ParityShards)
	binary.LittleEndian.PutUint32(b[32:], d.ShardSize)
	copy(b[36:], d.Root[:])
	return b
}

// DecodeDescriptorV2 parses a canonical segdiff/2 descriptor and validates it.
func DecodeDescriptorV2(b []byte) (DescriptorV2, error) {
	if len(b) != DescriptorV2Size {
		return DescriptorV2{}, fmt.Errorf("decode descriptor: %w", fieldErr(ErrDecode, "descriptor length", len(b), "== %d", DescriptorV2Size))
	}
	d := DescriptorV2{
		Version:          Version(b[0]),
		HashID:           HashID(b[1]),
		Order:            Order(b[2]),
		Coding:           Coding(b[3]),
		SegmentSize:      binary.LittleEndian.Uint32(b[4:]),
		RawLength:        binary.LittleEndian.Uint64(b[8:]),
		CompressedLength: binary.LittleEndian.Uint64(b[16:]),
		DataShards:       binary.LittleEndian.Uint32(b[24:]),
		ParityShards:     binary.LittleEndian.Uint32(b[28:]),
		ShardSize:        binary.LittleEndian.Uint32(b[32:]),
	}
	copy(d.Root[:], b[36:])
	if err := d.Validate(); err != nil {
		return DescriptorV2{}, fmt.Errorf("decode descriptor: %w", err)
	}
	return d, nil
}

// Validate checks that d is a descriptor an honest builder could have
// produced, field by field in layout order; the first violation is returned
// as a *FieldError naming the field (ErrVersion for the version, ErrDescriptor
// otherwise):
//
//   - version == 2; hash_id is SHA-256 or Keccak-256; order and coding known;
//   - segment_size in [MinSegmentSize, MaxSegmentSize];
//   - raw_length in [8, MaxBodySize] (an SSZ Body is at least its two offsets);
//   - compressed_length: compress-then-cut in [1, max_compressed_len(raw_length)];
//     cut-then-compress in [k, Σ max_compressed_len(raw segment)] (each block ≥ 1 byte);
//   - data_shards == k: ceil(compressed_length / segment_size) for
//     compress-then-cut, ceil(raw_length / segment_size) for cut-then-compress;
//   - parity_shards: 0 when uncoded; coded in [1, data_shards] with
//     data_shards + parity_shards ≤ MaxCodedShards (so data_shards < MaxCodedShards);
//   - shard_size: compress-then-cut == segment_size; cut-then-compress ==
//     p + the longest compressed segment, where p is ShardLengthPrefixSize when
//     coded and 0 when not, so shard_size − p lies in
//     [ceil(compressed_length / k), min(max_compressed_len(segment_size), compressed_length − (k−1))].
//
// Together these bound the shard count by MaxSegments, the proof depth by
// MaxProofDepth (8 when coded) and the shard data by MaxShardSize.
func (d DescriptorV2) Validate() error {
	if d.Version != VersionSegdiff2 {
		return fieldErr(ErrVersion, "version", d.Version, "%d", VersionSegdiff2)
	}
	for _, err := range []error{
		checkEnum(ErrDescriptor, "hash_id", d.HashID, hashNames),
		checkEnum(ErrDescriptor, "order", d.Order, orderNames),
		checkEnum(ErrDescriptor, "coding", d.Coding, codingNames),
	} {
		if err != nil {
			return err
		}
	}
	if d.SegmentSize < MinSegmentSize || d.SegmentSize > MaxSegmentSize {
		return fieldErr(ErrDescriptor, "segment_size", d.SegmentSize, "in [%d, %d]", MinSegmentSize, MaxSegmentSize)
	}
	if d.RawLength < bodyFixedSize || d.RawLength > MaxBodySize {
		return fieldErr(ErrDescriptor, "raw_length", d.RawLength, "in [%d, %d]", bodyFixedSize, MaxBodySize)
	}
	seg := uint64(d.SegmentSize)
	var k uint64
	switch d.Order {
	case OrderCompressThenCut:
		if hi := maxCompressedLen(d.RawLength); d.CompressedLength == 0 || d.CompressedLength > hi {
			return fieldErr(ErrDescriptor, "compressed_length", d.CompressedLength, "in [1, max_compressed_len(raw_length)] = [1, %d]", hi)
		}
		k = ceilDiv(d.CompressedLength, seg)
	default: // OrderCutThenCompress
		k = ceilDiv(d.RawLength, seg)
		last := d.RawLength - (k-1)*seg
		if hi := (k-1)*maxCompressedLen(seg) + maxCompressedLen(last); d.CompressedLength < k || d.CompressedLength > hi {
			return fieldErr(ErrDescriptor, "compressed_length", d.CompressedLength, "in [data_shards, Σ max_compressed_len(segment)] = [%d, %d]", k, hi)
		}
	}
	if uint64(d.DataShards) != k {
		return fieldErr(ErrDescriptor, "data_shards", d.DataShards, "== %d (%v, segment_size %d)", k, d.Order, d.SegmentSize)
	}
	if err := d.validateParity(); err != nil {
		return err
	}
	return d.validateShardSize()
}

func (d DescriptorV2) validateParity() error {
	if d.Coding == CodingNone {
		if d.ParityShards != 0 {
			return fieldErr(ErrDescriptor, "parity_shards", d.ParityShards, "0 (coding none)")
		}
		return nil
	}
	if d.DataShards >= MaxCodedShards {
		return fieldErr(ErrDescriptor, "data_shards", d.DataShards, "< %d (coding %v)", MaxCodedShards, d.Coding)
	}
	if hi := min(d.DataShards, MaxCodedShards-d.DataShards); d.ParityShards == 0 || d.ParityShards > hi {
		return fieldErr(ErrDescriptor, "parity_shards", d.ParityShards, "in [1, min(data_shards, %d - data_shards)] = [1, %d]", MaxCodedShards, hi)
	}
	return nil
}

func (d DescriptorV2) validateShardSize() error {
	if d.Order == OrderCompressThenCut {
		if d.ShardSize != d.SegmentSize {
			return fieldErr(ErrDescriptor, "shard_size", d.ShardSize, "== segment_size %d", d.SegmentSize)
		}
		return nil
	}
	prefix := d.prefixSize()
	k := uint64(d.DataShards)
	lo := prefix + ceilDiv(d.CompressedLength, k)
	hi := prefix + min(maxCompressedLen(uint64(d.SegmentSize)), d.CompressedLength-(k-1))
	if s := uint64(d.ShardSize); s < lo || s > hi {
		return fieldErr(ErrDescriptor, "shard_size", d.ShardSize, "in [%d, %d] (%d-byte prefix + longest compressed segment)", lo, hi, prefix)
	}
	return nil
}

// prefixSize is the length prefix of each data shard: ShardLengthPrefixSize
// for a coded cut-then-compress group, 0 otherwise.
func (d DescriptorV2) prefixSize() uint64 {
	if d.Order == OrderCutThenCompress && d.Coding == CodingReedSolomon {
		return ShardLengthPrefixSize
	}
	return 0
}

func ceilDiv(a, b uint64) uint64 { return (a + b - 1) / b }

// GroupID returns H(0x02 ‖ canonical descriptor) with d's hash function: the
// value the bid commits to and every Shard names. d should be valid; an
// unknown hash id falls back to SHA-256.
func (d DescriptorV2) GroupID() [32]byte {
	return hashParts(newHash(d.HashID), domainGroup, d.Encode())
}

// ShardCount returns DataShards + ParityShards: the number of Merkle leaves
// and of distinct Shard messages.
func (d DescriptorV2) ShardCount() uint32 { return d.DataShards + d.ParityShards }

// NeededShards returns how many distinct shards rebuild the group:
// DataShards, for coded and uncoded groups alike (uncoded: all of them).
func (d DescriptorV2) NeededShards() uint32 { return d.DataShards }

// ShardLen returns the allowed data length of shard index as [lo, hi]
// (lo == hi when the length is exact): ShardSize for every shard of a coded
// group; for an uncoded compress-then-cut group SegmentSize except the last,
// which is the remainder; for an uncoded cut-then-compress group
// [1, ShardSize] (the compressed segment, authenticated by the proof). It
// returns (0, 0) when index ≥ ShardCount().
func (d DescriptorV2) ShardLen(index uint32) (lo, hi int) {
	switch {
	case index >= d.ShardCount():
		return 0, 0
	case d.Coding == CodingReedSolomon:
		return int(d.ShardSize), int(d.ShardSize)
	case d.Order == OrderCutThenCompress:
		return 1, int(d.ShardSize)
	case index < d.DataShards-1:
		return int(d.SegmentSize), int(d.SegmentSize)
	default:
		n := int(d.CompressedLength - uint64(d.DataShards-1)*uint64(d.SegmentSize))
		return n, n
	}
}

// rawSegmentLen returns the raw length of segment i of a cut-then-compress
// group: SegmentSize, the last the remainder.
func (d DescriptorV2) rawSegmentLen(i int) int {
	if i < int(d.DataShards)-1 {
		return int(d.SegmentSize)
	}
	return int(d.RawLength - uint64(d.DataShards-1)*uint64(d.SegmentSize))
}

// Verify checks s against d (the descriptor of the block s names), in this
// order: d valid, version == 2, group id equal to d.GroupID(), index <
// ShardCount(), data length within ShardLen(index), proof length ==
// ProofDepth(ShardCount()), and the proof leads to d.Root. Errors are
// *FieldError wrapping ErrVersion, ErrGroupMismatch, ErrIndexRange, ErrSize,
// ErrProof or ErrDescriptor. Slot and block root are not checked: the caller
// found d by them.
func (d DescriptorV2) Verify(s *Shard) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("verify shard: %w", err)
	}
	return verifyShard(d, d.GroupID(), s)
}

func verifyShard(d DescriptorV2, groupID [32]byte, s *Shard) error {
	if s == nil {
		return fmt.Errorf("verify shard: %w", fieldErr(ErrDecode, "shard", "nil", "a shard"))
	}
	if s.Version != VersionSegdiff2 {
		return fmt.Errorf("verify shard: %w", fieldErr(ErrVersion, "version", s.Version, "%d", VersionSegdiff2))
	}
	if s.GroupID != groupID {
		return fmt.Errorf("verify shard: %w", fieldErr(ErrGroupMismatch, "group_id", hex.EncodeToString(s.GroupID[:]), "%x", groupID))
	}
	n := d.ShardCount()
	if s.Index >= n {
		return fmt.Errorf("verify shard: %w", fieldErr(ErrIndexRange, "index", s.Index, "< %d", n))
	}
	if lo, hi := d.ShardLen(s.Index); len(s.Data) < lo || len(s.Data) > hi {
		want := fmt.Sprintf("== %d", lo)
		if lo != hi {
			want = fmt.Sprintf("in [%d, %d]", lo, hi)
		}
		return fmt.Errorf("verify shard %d: %w", s.Index, fieldErr(ErrSize, "data length", len(s.Data), "%s", want))
	}
	if want := ProofDepth(n); len(s.Proof) != want {
		return fmt.Errorf("verify shard %d: %w", s.Index, fieldErr(ErrProof, "proof length", len(s.Proof), "== %d", want))
	}
	if root := rootFromProof(newHash(d.HashID), s.Data, s.Index, s.Proof); root != d.Root {
		return fmt.Errorf("verify shard %d: %w", s.Index, fieldErr(ErrProof, "proof", hex.EncodeToString(root[:]), "root %x", d.Root))
	}
	return nil
}
