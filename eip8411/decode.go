package eip8411

import (
	"encoding/binary"
	"fmt"
)

// DecodeSegment parses gossip data (the raw SSZ of a Segment). Errors wrap
// ErrDecode; a *FieldError names the offending offset word when the fixed
// layout is wrong. It does not verify the segment: call Descriptor.Verify.
func DecodeSegment(b []byte) (*Segment, error) {
	if err := checkLayout(b); err != nil {
		return nil, fmt.Errorf("decode segment: %w", err)
	}
	var s Segment
	if err := ssz.UnmarshalSSZ(&s, b); err != nil {
		return nil, fmt.Errorf("decode segment: %w: %w", ErrDecode, err)
	}
	return &s, nil
}

// DecodeVerify decodes b and verifies it against d.
func DecodeVerify(b []byte, d Descriptor) (*Segment, error) {
	s, err := DecodeSegment(b)
	if err != nil {
		return nil, err
	}
	if err := d.Verify(s); err != nil {
		return nil, err
	}
	return s, nil
}

// checkLayout validates the fixed part of a Segment encoding without
// allocating: length bounds and both offset words. MessageID uses it to tell
// segments from other data.
func checkLayout(b []byte) error {
	const maxLen = SegmentFixedSize + 32*MaxProofDepth + MaxSegmentSize
	if len(b) < SegmentFixedSize || len(b) > maxLen {
		return fieldErr(ErrDecode, "message length", len(b), "in [%d, %d]", SegmentFixedSize, maxLen)
	}
	if off := binary.LittleEndian.Uint32(b[offsetProofOff:]); off != SegmentFixedSize {
		return fieldErr(ErrDecode, "offset(proof)", off, "== %d", SegmentFixedSize)
	}
	off := binary.LittleEndian.Uint32(b[offsetDataOff:])
	proofBytes := int64(off) - SegmentFixedSize
	if proofBytes < 0 || proofBytes%32 != 0 || proofBytes/32 > MaxProofDepth || int64(off) > int64(len(b)) {
		return fieldErr(ErrDecode, "offset(data)", off, "84 + 32·n, n ≤ %d, ≤ message length %d", MaxProofDepth, len(b))
	}
	return nil
}
