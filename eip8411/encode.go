package eip8411

import (
	"fmt"

	"github.com/klauspost/compress/snappy"
	dynssz "github.com/pk910/dynamic-ssz"
)

// ssz is the shared dynamic-ssz codec; all limits are static ssz-max tags.
var ssz = dynssz.NewDynSsz(nil)

// Encode returns the SSZ encoding of b, or an error if it exceeds a list
// limit or MaxBodySize.
func (b *Body) Encode() ([]byte, error) {
	out, err := ssz.MarshalSSZ(b)
	if err != nil {
		return nil, fmt.Errorf("encode body: %w", err)
	}
	if len(out) > MaxBodySize {
		return nil, fmt.Errorf("encode body: %w", fieldErr(ErrBody, "body length", len(out), "<= %d", MaxBodySize))
	}
	return out, nil
}

// DecodeBody decodes the SSZ encoding of a Body; errors wrap ErrBody.
func DecodeBody(b []byte) (*Body, error) {
	if len(b) > MaxBodySize {
		return nil, fmt.Errorf("decode body: %w", fieldErr(ErrBody, "body length", len(b), "<= %d", MaxBodySize))
	}
	var body Body
	if err := ssz.UnmarshalSSZ(&body, b); err != nil {
		return nil, fmt.Errorf("decode body: %w: %w", ErrBody, err)
	}
	return &body, nil
}

// Encode returns the SSZ encoding of s: the gossip message data.
func (s *Segment) Encode() ([]byte, error) { return marshalMessage(s, "segment") }

// marshalMessage returns the SSZ encoding of a gossip message container.
func marshalMessage(v any, noun string) ([]byte, error) {
	out, err := ssz.MarshalSSZ(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", noun, err)
	}
	return out, nil
}

// Option configures NewGroup and NewGroupV2. WithSegmentSize and WithHash
// apply to both; WithOrder, WithCoding and WithParityShards only to
// NewGroupV2 (NewGroup rejects them with ErrOption).
type Option func(*options) error

type options struct {
	segmentSize int
	hash        HashID
	order       Order
	coding      Coding
	parity      int    // 0: ParityShards = DataShards
	v2Only      string // the first segdiff/2-only option applied, for NewGroup's error
}

// WithSegmentSize sets the segment size in bytes; default DefaultSegmentSize
// (32 KiB). It must lie in [MinSegmentSize, MaxSegmentSize]; a power of two
// is not required.
func WithSegmentSize(n int) Option {
	return func(o *options) error {
		if n < MinSegmentSize || n > MaxSegmentSize {
			return fieldErr(ErrOption, "segment size", n, "in [%d, %d]", MinSegmentSize, MaxSegmentSize)
		}
		o.segmentSize = n
		return nil
	}
}

// WithHash sets the hash function; default HashSHA256.
func WithHash(id HashID) Option {
	return func(o *options) error {
		if id != HashSHA256 && id != HashKeccak256 {
			return fieldErr(ErrOption, "hash id", id, "%d or %d", HashSHA256, HashKeccak256)
		}
		o.hash = id
		return nil
	}
}

// Group is a body prepared for segmented diffusion: its compressed bytes,
// descriptor and Merkle tree. It is immutable and safe for concurrent use.
type Group struct {
	desc       Descriptor
	id         [32]byte
	rawSize    int
	compressed []byte
	tree       merkleTree
}

// NewGroup encodes body as SSZ, compresses it and commits to its segments.
func NewGroup(body *Body, opts ...Option) (*Group, error) {
	raw, err := encodeGroupBody(body)
	if err != nil {
		return nil, err
	}
	return newGroup(raw, opts)
}

// NewGroupSSZ is NewGroup for an already SSZ-encoded Body; it checks that
// bodySSZ decodes as a Body.
func NewGroupSSZ(bodySSZ []byte, opts ...Option) (*Group, error) {
	if _, err := DecodeBody(bodySSZ); err != nil {
		return nil, fmt.Errorf("new group: %w", err)
	}
	return newGroup(bodySSZ, opts)
}

// encodeGroupBody returns the SSZ encoding of a non-nil body.
func encodeGroupBody(body *Body) ([]byte, error) {
	if body == nil {
		return nil, fmt.Errorf("new group: %w", fieldErr(ErrBody, "body", "nil", "a body"))
	}
	raw, err := body.Encode()
	if err != nil {
		return nil, fmt.Errorf("new group: %w", err)
	}
	return raw, nil
}

// applyOptions returns the defaults (DefaultSegmentSize, SHA-256,
// cut-then-compress, no coding) overridden by opts.
func applyOptions(opts []Option) (options, error) {
	o := options{segmentSize: DefaultSegmentSize, hash: HashSHA256, order: OrderCutThenCompress, coding: CodingNone}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return options{}, fmt.Errorf("new group: %w", err)
		}
	}
	return o, nil
}

func newGroup(raw []byte, opts []Option) (*Group, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	if o.v2Only != "" {
		return nil, fmt.Errorf("new group: %w", fieldErr(ErrOption, "option", o.v2Only, "a segdiff/1 option (segment size, hash); use NewGroupV2"))
	}
	compressed := snappy.Encode(nil, raw)
	count := (len(compressed) + o.segmentSize - 1) / o.segmentSize
	tree := buildTree(o.hash, compressed, o.segmentSize, count)
	d := Descriptor{
		Version:     VersionSegdiff1,
		HashID:      o.hash,
		Count:       uint32(count),
		SegmentSize: uint32(o.segmentSize),
		TotalLength: uint64(len(compressed)),
		Root:        tree.root(),
	}
	if err := d.Validate(); err != nil { // unreachable for a body ≤ MaxBodySize
		return nil, fmt.Errorf("new group: %w", err)
	}
	return &Group{desc: d, id: d.GroupID(), rawSize: len(raw), compressed: compressed, tree: tree}, nil
}

// Descriptor returns the group's descriptor.
func (g *Group) Descriptor() Descriptor { return g.desc }

// GroupID returns the descriptor's group id (what the bid commits to).
func (g *Group) GroupID() [32]byte { return g.id }

// RawSize returns the SSZ body length in bytes.
func (g *Group) RawSize() int { return g.rawSize }

// CompressedSize returns the snappy-compressed body length (= TotalLength):
// the unit of "payload copies".
func (g *Group) CompressedSize() int { return len(g.compressed) }

// Compressed returns the compressed body; callers must not modify it.
func (g *Group) Compressed() []byte { return g.compressed }

// Segments returns the K segment messages for the block (slot, blockRoot) in
// index order. Their Data alias the group's compressed bytes: do not modify.
func (g *Group) Segments(slot uint64, blockRoot [32]byte) []*Segment {
	out := make([]*Segment, g.desc.Count)
	size := int(g.desc.SegmentSize)
	for i := range out {
		end := min((i+1)*size, len(g.compressed))
		out[i] = &Segment{
			Slot:            slot,
			BeaconBlockRoot: blockRoot,
			GroupID:         g.id,
			Index:           uint32(i),
			Proof:           g.tree.proof(i),
			Data:            g.compressed[i*size : end],
		}
	}
	return out
}

// EncodedSegments returns the SSZ encoding (gossip data) of every segment for
// the block (slot, blockRoot), in index order.
func (g *Group) EncodedSegments(slot uint64, blockRoot [32]byte) ([][]byte, error) {
	return encodeAll(g.Segments(slot, blockRoot), "segment")
}

// encodeAll returns the encoding of every message, in order.
func encodeAll[M interface{ Encode() ([]byte, error) }](msgs []M, noun string) ([][]byte, error) {
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		b, err := m.Encode()
		if err != nil {
			return nil, fmt.Errorf("encode %s %d: %w", noun, i, err)
		}
		out[i] = b
	}
	return out, nil
}
