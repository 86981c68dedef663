package eip8411

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/snappy"
)

// Reassembler collects the segments of one group (created from the installed
// block's descriptor), in any order, and rebuilds the Body. Memory is bounded
// by the descriptor: one buffer of TotalLength (≤ MaxTotalLength) bytes,
// allocated at the first accepted segment, plus one bit per segment. It is
// safe for concurrent use.
type Reassembler struct {
	desc    Descriptor
	groupID [32]byte

	mu       sync.Mutex
	buf      []byte
	have     []bool
	received int
	body     *Body
}

// NewReassembler returns a Reassembler for d; d must be valid.
func NewReassembler(d Descriptor) (*Reassembler, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("new reassembler: %w", err)
	}
	return &Reassembler{desc: d, groupID: d.GroupID(), have: make([]bool, d.Count)}, nil
}

// Descriptor returns the descriptor the Reassembler verifies against.
func (r *Reassembler) Descriptor() Descriptor { return r.desc }

// GroupID returns the descriptor's group id.
func (r *Reassembler) GroupID() [32]byte { return r.groupID }

// Add verifies s against the descriptor and stores it. dup is true (and err
// nil) for a valid segment whose index is already held; complete is true
// once every segment is held (also on later duplicate calls). An invalid
// segment returns the Verify error and changes nothing.
func (r *Reassembler) Add(s *Segment) (complete, dup bool, err error) {
	if err := verify(r.desc, r.groupID, s); err != nil {
		return r.Complete(), false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.have[s.Index] {
		return r.received == len(r.have), true, nil
	}
	if r.buf == nil {
		r.buf = make([]byte, r.desc.TotalLength)
	}
	copy(r.buf[int(s.Index)*int(r.desc.SegmentSize):], s.Data)
	r.have[s.Index] = true
	r.received++
	return r.received == len(r.have), false, nil
}

// Complete reports whether every segment is held.
func (r *Reassembler) Complete() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.received == len(r.have)
}

// Received returns how many distinct segments are held.
func (r *Reassembler) Received() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.received
}

// Missing returns the indices not yet held, ascending.
func (r *Reassembler) Missing() []uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []uint32
	for i, ok := range r.have {
		if !ok {
			out = append(out, uint32(i))
		}
	}
	return out
}

// Compressed returns a copy of the reassembled snappy-compressed body, or
// ErrIncomplete.
func (r *Reassembler) Compressed() ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.received != len(r.have) {
		return nil, fmt.Errorf("reassemble: %w: %d of %d segments", ErrIncomplete, r.received, len(r.have))
	}
	return append([]byte(nil), r.buf...), nil
}

// Body decompresses and SSZ-decodes the reassembled bytes (once; later calls
// return the same *Body, which callers must not modify). Errors wrap
// ErrIncomplete or ErrBody; ErrBody means the builder committed to bytes
// that are not a snappy-compressed Body.
func (r *Reassembler) Body() (*Body, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.received != len(r.have) {
		return nil, fmt.Errorf("reassemble: %w: %d of %d segments", ErrIncomplete, r.received, len(r.have))
	}
	if r.body != nil {
		return r.body, nil
	}
	body, err := DecompressBody(r.buf)
	if err != nil {
		return nil, fmt.Errorf("reassemble: %w", err)
	}
	r.body = body
	return body, nil
}

// DecompressBody turns a compressed body (as committed by a descriptor) into
// a Body: it checks the snappy length header against MaxBodySize before
// allocating, decodes strictly (standard snappy block format, no s2
// extensions) and SSZ-decodes. Errors wrap ErrBody.
func DecompressBody(compressed []byte) (*Body, error) {
	n, err := snappy.DecodedLen(compressed)
	if err != nil {
		return nil, fmt.Errorf("decompress body: %w: %w", ErrBody, err)
	}
	if n < bodyFixedSize || n > MaxBodySize {
		return nil, fmt.Errorf("decompress body: %w", fieldErr(ErrBody, "decoded length", n, "in [%d, %d]", bodyFixedSize, MaxBodySize))
	}
	raw, err := snappy.DecodeStrict(nil, compressed)
	if err != nil {
		return nil, fmt.Errorf("decompress body: %w: %w", ErrBody, err)
	}
	return DecodeBody(raw)
}
