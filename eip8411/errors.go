package eip8411

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by decoding and verification wraps
// exactly one of them (usually inside a *FieldError); test with errors.Is.
var (
	// ErrDecode: the bytes are not a well-formed Segment message or descriptor.
	ErrDecode = errors.New("malformed encoding")
	// ErrVersion: the format version is not one this package knows.
	ErrVersion = errors.New("unknown format version")
	// ErrDescriptor: a descriptor field is outside its bounds or inconsistent.
	ErrDescriptor = errors.New("descriptor out of bounds")
	// ErrIndexRange: the segment index is not below the descriptor's count.
	ErrIndexRange = errors.New("segment index out of range")
	// ErrSize: the segment data length differs from what the descriptor implies.
	ErrSize = errors.New("segment data size wrong")
	// ErrProof: the proof has the wrong length or does not lead to the root.
	ErrProof = errors.New("segment proof invalid")
	// ErrGroupMismatch: the segment names a group other than the descriptor's.
	ErrGroupMismatch = errors.New("segment group mismatch")
	// ErrIncomplete: the reassembler does not hold every segment yet.
	ErrIncomplete = errors.New("group incomplete")
	// ErrBody: the reassembled bytes do not decompress or decode to a Body.
	ErrBody = errors.New("invalid body")
	// ErrInconsistentCode: the shards rebuilt from a coded segdiff/2 group are
	// not the code the descriptor's root commits to (re-encoding the rebuilt
	// data gives another root). The payload must not be used or relayed.
	ErrInconsistentCode = errors.New("inconsistent erasure code")
	// ErrMessageID: a message id has neither the structural nor the content layout.
	ErrMessageID = errors.New("invalid message id")
	// ErrOption: an Option value is out of range.
	ErrOption = errors.New("invalid option")
)

// FieldError reports which field failed, with the value seen and the bound
// it violated. Unwrap returns the sentinel (Err), so errors.Is works on it.
type FieldError struct {
	Err   error  // one of the sentinels above
	Field string // field name as in the wire layout, e.g. "index", "data", "proof[3]"
	Got   string // offending value (decimal, or hex for roots)
	Want  string // bound or expected value, e.g. "< 32", "== 32768"
}

// Error formats "<sentinel>: <field> = <got>, want <want>".
func (e *FieldError) Error() string {
	if e.Want == "" {
		return fmt.Sprintf("%v: %s = %s", e.Err, e.Field, e.Got)
	}
	return fmt.Sprintf("%v: %s = %s, want %s", e.Err, e.Field, e.Got, e.Want)
}

// Unwrap returns the sentinel.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(sentinel error, field string, got any, want string, args ...any) *FieldError {
	return &FieldError{Err: sentinel, Field: field, Got: fmt.Sprint(got), Want: fmt.Sprintf(want, args...)}
}

// Rejection reasons, as used by the payload_diffusion_segments_rejected_total
// metric's reason label.
const (
	ReasonIndexRange    = "index_range"
	ReasonSize          = "size"
	ReasonProof         = "proof"
	ReasonGroupMismatch = "group_mismatch"
	ReasonDecode        = "decode"
)

// Reason maps an error from DecodeSegment, Descriptor.Verify or
// Reassembler.Add to its metric reason label; descriptor and version errors
// count as "decode". It returns "" for nil and for errors from elsewhere.
func Reason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrIndexRange):
		return ReasonIndexRange
	case errors.Is(err, ErrSize):
		return ReasonSize
	case errors.Is(err, ErrProof):
		return ReasonProof
	case errors.Is(err, ErrGroupMismatch):
		return ReasonGroupMismatch
	case errors.Is(err, ErrDecode), errors.Is(err, ErrVersion), errors.Is(err, ErrDescriptor):
		return ReasonDecode
	default:
		return ""
	}
}
