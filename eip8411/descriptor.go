package eip8411

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// Encode returns the canonical 50-byte encoding of d (its SSZ encoding; see
// the Descriptor layout). It does not validate d.
func (d Descriptor) Encode() []byte {
	b := make([]byte, DescriptorSize)
	b[0] = byte(d.Version)
	b[1] = byte(d.HashID)
	binary.LittleEndian.PutUint32(b[2:], d.Count)
	binary.LittleEndian.PutUint32(b[6:], d.SegmentSize)
	binary.LittleEndian.PutUint64(b[10:], d.TotalLength)
	copy(b[18:], d.Root[:])
	return b
}

// DecodeDescriptor parses a canonical descriptor and validates it.
func DecodeDescriptor(b []byte) (Descriptor, error) {
	if len(b) != DescriptorSize {
		return Descriptor{}, fmt.Errorf("decode descriptor: %w", fieldErr(ErrDecode, "descriptor length", len(b), "== %d", DescriptorSize))
	}
	d := Descriptor{
		Version:     Version(b[0]),
		HashID:      HashID(b[1]),
		Count:       binary.LittleEndian.Uint32(b[2:]),
		SegmentSize: binary.LittleEndian.Uint32(b[6:]),
		TotalLength: binary.LittleEndian.Uint64(b[10:]),
	}
	copy(d.Root[:], b[18:])
	if err := d.Validate(); err != nil {
		return Descriptor{}, fmt.Errorf("decode descriptor: %w", err)
	}
	return d, nil
}

// Validate checks that d is a descriptor an honest builder could have
// produced: known version and hash, segment size within
// [MinSegmentSize, MaxSegmentSize], 0 < total length ≤ MaxTotalLength and
// count == ceil(total_length / segment_size) (so count ≤ MaxSegments and the
// proof depth ≤ MaxProofDepth).
func (d Descriptor) Validate() error {
	switch d.Version {
	case VersionSegdiff1:
	default:
		return fieldErr(ErrVersion, "version", d.Version, "%d", VersionSegdiff1)
	}
	switch d.HashID {
	case HashSHA256, HashKeccak256:
	default:
		return fieldErr(ErrDescriptor, "hash_id", d.HashID, "%d or %d", HashSHA256, HashKeccak256)
	}
	if d.SegmentSize < MinSegmentSize || d.SegmentSize > MaxSegmentSize {
		return fieldErr(ErrDescriptor, "segment_size", d.SegmentSize, "in [%d, %d]", MinSegmentSize, MaxSegmentSize)
	}
	if d.TotalLength == 0 || d.TotalLength > MaxTotalLength {
		return fieldErr(ErrDescriptor, "total_length", d.TotalLength, "in [1, %d]", MaxTotalLength)
	}
	want := (d.TotalLength + uint64(d.SegmentSize) - 1) / uint64(d.SegmentSize)
	if uint64(d.Count) != want {
		return fieldErr(ErrDescriptor, "count", d.Count, "== ceil(total_length/segment_size) = %d", want)
	}
	return nil
}

// GroupID returns H(0x02 ‖ canonical descriptor) with d's hash function: the
// value the bid commits to and every Segment names. d should be valid; an
// unknown hash id falls back to SHA-256.
func (d Descriptor) GroupID() [32]byte {
	return hashParts(newHash(d.HashID), domainGroup, d.Encode())
}

// SegmentLen returns the exact data length of segment index: SegmentSize for
// all but the last segment, the remainder for the last. It returns 0 when
// index ≥ Count.
func (d Descriptor) SegmentLen(index uint32) int {
	if index >= d.Count {
		return 0
	}
	if index < d.Count-1 {
		return int(d.SegmentSize)
	}
	return int(d.TotalLength - uint64(d.Count-1)*uint64(d.SegmentSize))
}

// Verify checks s against d (the descriptor of the block s names): d valid,
// group id equal to d.GroupID(), index < count, data length exact, proof
// length == ProofDepth(count), and the proof leads to d.Root. Errors are
// *FieldError wrapping ErrGroupMismatch, ErrIndexRange, ErrSize, ErrProof,
// ErrDescriptor or ErrVersion. It does not check slot or block root: the
// caller found d by them.
func (d Descriptor) Verify(s *Segment) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("verify segment: %w", err)
	}
	return verify(d, d.GroupID(), s)
}

func verify(d Descriptor, groupID [32]byte, s *Segment) error {
	if s == nil {
		return fmt.Errorf("verify segment: %w", fieldErr(ErrDecode, "segment", "nil", "a segment"))
	}
	if s.GroupID != groupID {
		return fmt.Errorf("verify segment: %w", fieldErr(ErrGroupMismatch, "group_id", hex.EncodeToString(s.GroupID[:]), "%x", groupID))
	}
	if s.Index >= d.Count {
		return fmt.Errorf("verify segment: %w", fieldErr(ErrIndexRange, "index", s.Index, "< %d", d.Count))
	}
	if want := d.SegmentLen(s.Index); len(s.Data) != want {
		return fmt.Errorf("verify segment %d: %w", s.Index, fieldErr(ErrSize, "data length", len(s.Data), "== %d", want))
	}
	if want := ProofDepth(d.Count); len(s.Proof) != want {
		return fmt.Errorf("verify segment %d: %w", s.Index, fieldErr(ErrProof, "proof length", len(s.Proof), "== %d", want))
	}
	if root := rootFromProof(newHash(d.HashID), s.Data, s.Index, s.Proof); root != d.Root {
		return fmt.Errorf("verify segment %d: %w", s.Index, fieldErr(ErrProof, "proof", hex.EncodeToString(root[:]), "root %x", d.Root))
	}
	return nil
}

// VerifyCompressed checks that compressed (a whole, unsegmented payload) is
// exactly the byte string d commits to: length == TotalLength and the Merkle
// root of its segments == d.Root. It needs no re-compression, so it holds
// whatever snappy encoder the builder used. Errors wrap ErrSize or ErrProof.
func (d Descriptor) VerifyCompressed(compressed []byte) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("verify compressed body: %w", err)
	}
	if uint64(len(compressed)) != d.TotalLength {
		return fmt.Errorf("verify compressed body: %w", fieldErr(ErrSize, "total_length", len(compressed), "== %d", d.TotalLength))
	}
	tree := buildTree(d.HashID, compressed, int(d.SegmentSize), int(d.Count))
	if root := tree.root(); root != d.Root {
		return fmt.Errorf("verify compressed body: %w", fieldErr(ErrProof, "root", hex.EncodeToString(root[:]), "%x", d.Root))
	}
	return nil
}
