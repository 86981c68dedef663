package eip8411

import (
	"encoding/binary"
	"fmt"
)

// DecodeSegment parses gossip data (the raw SSZ of a Segment). Errors wrap
// ErrDecode; a *FieldError names the offending offset word when the fixed
// layout is wrong. It does not verify the segment: call Descriptor.Verify.
func DecodeSegment(b []byte) (*Segment, error) {
	return decodeMessage[Segment](b, checkLayout, "segment")
}

// DecodeVerify decodes b and verifies it against d. The segment's Data
// aliases b (see ViewSegment): b must not change while it is in use.
func DecodeVerify(b []byte, d Descriptor) (*Segment, error) {
	return decodeVerify(b, ViewSegment, d.Verify)
}

// ViewSegment parses b as DecodeSegment does, accepting and refusing
// exactly the same inputs, without copying the data: the segment's Data
// aliases b, so b must not change while the segment is in use. Gossip
// receivers verify every copy they receive and keep the message itself,
// and a second copy of each was a sixth of what a simulated network
// allocated (embedded/README.md, "Cost").
func ViewSegment(b []byte) (*Segment, error) {
	proof, data, err := segmentLayout.view(b, checkLayout, "segment")
	if err != nil {
		return nil, err
	}
	s := &Segment{Slot: binary.LittleEndian.Uint64(b[offsetSlot:]), Index: binary.LittleEndian.Uint32(b[offsetIndex:]), Proof: proof, Data: data}
	copy(s.BeaconBlockRoot[:], b[offsetBlockRoot:])
	copy(s.GroupID[:], b[offsetGroupID:])
	return s, nil
}

// decodeMessage checks b's fixed layout with check, then SSZ-decodes it as an M.
func decodeMessage[M any](b []byte, check func([]byte) error, noun string) (*M, error) {
	if err := check(b); err != nil {
		return nil, fmt.Errorf("decode %s: %w", noun, err)
	}
	var m M
	if err := ssz.UnmarshalSSZ(&m, b); err != nil {
		return nil, fmt.Errorf("decode %s: %w: %w", noun, ErrDecode, err)
	}
	return &m, nil
}

// decodeVerify decodes b and verifies the message.
func decodeVerify[M any](b []byte, decode func([]byte) (*M, error), verify func(*M) error) (*M, error) {
	m, err := decode(b)
	if err != nil {
		return nil, err
	}
	if err := verify(m); err != nil {
		return nil, err
	}
	return m, nil
}

// checkLayout validates the fixed part of a Segment encoding without
// allocating: length bounds and both offset words. MessageID uses it to tell
// segments from other data.
func checkLayout(b []byte) error { return segmentLayout.check(b) }

// msgLayout describes the fixed part of a message container: its size, where
// its two offset words sit, and the data list limit.
type msgLayout struct {
	fixed, proofOffAt, dataOffAt, maxData int
}

var (
	segmentLayout = msgLayout{fixed: SegmentFixedSize, proofOffAt: offsetProofOff, dataOffAt: offsetDataOff, maxData: MaxSegmentSize}
	shardLayout   = msgLayout{fixed: ShardFixedSize, proofOffAt: shardOffsetProofOff, dataOffAt: shardOffsetDataOff, maxData: MaxShardSize}
)

// check validates length bounds and both offset words of b: offset(proof) ==
// fixed, offset(data) == fixed + 32·n with n ≤ MaxProofDepth, within b.
func (l msgLayout) check(b []byte) error {
	maxLen := l.fixed + 32*MaxProofDepth + l.maxData
	if len(b) < l.fixed || len(b) > maxLen {
		return fieldErr(ErrDecode, "message length", len(b), "in [%d, %d]", l.fixed, maxLen)
	}
	if off := binary.LittleEndian.Uint32(b[l.proofOffAt:]); off != uint32(l.fixed) {
		return fieldErr(ErrDecode, "offset(proof)", off, "== %d", l.fixed)
	}
	off := binary.LittleEndian.Uint32(b[l.dataOffAt:])
	proofBytes := int64(off) - int64(l.fixed)
	if proofBytes < 0 || proofBytes%32 != 0 || proofBytes/32 > MaxProofDepth || int64(off) > int64(len(b)) {
		return fieldErr(ErrDecode, "offset(data)", off, "%d + 32·n, n ≤ %d, ≤ message length %d", l.fixed, MaxProofDepth, len(b))
	}
	return nil
}

// view checks b's layout with check (the message's full layout check,
// which calls l.check) and returns its proof (copied: at most
// MaxProofDepth digests) and its data (aliasing b), with the SSZ decoder's
// one further bound: the data list's limit. Errors read "decode noun: ...".
func (l msgLayout) view(b []byte, check func([]byte) error, noun string) (proof [][32]byte, data []byte, err error) {
	if err := check(b); err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", noun, err)
	}
	dataOff := int(binary.LittleEndian.Uint32(b[l.dataOffAt:]))
	data = b[dataOff:]
	if len(data) > l.maxData {
		return nil, nil, fmt.Errorf("decode %s: %w", noun, fieldErr(ErrDecode, "data length", len(data), "≤ %d", l.maxData))
	}
	if n := (dataOff - l.fixed) / 32; n > 0 {
		proof = make([][32]byte, n)
		for i := range proof {
			copy(proof[i][:], b[l.fixed+32*i:])
		}
	}
	return proof, data, nil
}
