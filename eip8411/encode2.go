package eip8411

import (
	"cmp"
	"fmt"

	"github.com/klauspost/compress/snappy"
)

// Encode returns the SSZ encoding of s: the gossip message data.
func (s *Shard) Encode() ([]byte, error) { return marshalMessage(s, "shard") }

// WithOrder sets the segment order of a segdiff/2 group; default
// OrderCutThenCompress (the prototype study's default arm). NewGroupV2 only.
func WithOrder(order Order) Option {
	return enumOption("order", order, orderNames, func(o *options) { o.order = order })
}

// WithCoding sets the erasure code of a segdiff/2 group; default CodingNone.
// With CodingReedSolomon the parity shard count defaults to the data shard
// count (the tier 3: 32 data + 32 parity). NewGroupV2 only.
func WithCoding(c Coding) Option {
	return enumOption("coding", c, codingNames, func(o *options) { o.coding = c })
}

// enumOption returns a segdiff/2-only Option that checks v is known and sets it.
func enumOption[T ~uint8](field string, v T, names map[T]string, set func(*options)) Option {
	return func(o *options) error {
		if err := checkEnum(ErrOption, field, v, names); err != nil {
			return err
		}
		set(o)
		o.v2Only = cmp.Or(o.v2Only, field)
		return nil
	}
}

// WithParityShards sets the number m of parity shards of a Reed–Solomon
// coded group; default m = k, the number of data shards. NewGroupV2 checks,
// once k is known, that coding is CodingReedSolomon, 1 ≤ m ≤ k and
// k + m ≤ MaxCodedShards. NewGroupV2 only.
func WithParityShards(m int) Option {
	return func(o *options) error {
		if m < 1 || m >= MaxCodedShards {
			return fieldErr(ErrOption, "parity shards", m, "in [1, %d]", MaxCodedShards-1)
		}
		o.parity = m
		o.v2Only = cmp.Or(o.v2Only, "parity shards")
		return nil
	}
}

// GroupV2 is a body prepared for segdiff/2 diffusion: its snappy blocks, its
// k data and m parity shards, descriptor and Merkle tree. It is immutable
// and safe for concurrent use.
type GroupV2 struct {
	desc   DescriptorV2
	id     [32]byte
	blocks [][]byte // snappy blocks: one (compress-then-cut) or k (cut-then-compress)
	shards [][]byte // the k+m Merkle leaves
	tree   merkleTree
}

// NewGroupV2 encodes body as SSZ, compresses and cuts it in the configured
// order (WithOrder, default cut-then-compress), erasure-codes it if asked
// (WithCoding, WithParityShards) and commits to every shard. WithSegmentSize
// and WithHash apply as for NewGroup. Errors wrap ErrBody or ErrOption.
func NewGroupV2(body *Body, opts ...Option) (*GroupV2, error) {
	raw, err := encodeGroupBody(body)
	if err != nil {
		return nil, err
	}
	return newGroupV2(raw, opts)
}

// NewGroupV2SSZ is NewGroupV2 for an already SSZ-encoded Body; it checks
// that bodySSZ decodes as a Body.
func NewGroupV2SSZ(bodySSZ []byte, opts ...Option) (*GroupV2, error) {
	if _, err := DecodeBody(bodySSZ); err != nil {
		return nil, fmt.Errorf("new group: %w", err)
	}
	return newGroupV2(bodySSZ, opts)
}

func newGroupV2(raw []byte, opts []Option) (*GroupV2, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	size := o.segmentSize
	var blocks [][]byte
	if o.order == OrderCompressThenCut {
		blocks = [][]byte{snappy.Encode(nil, raw)}
	} else {
		blocks = make([][]byte, (len(raw)+size-1)/size)
		for i := range blocks {
			blocks[i] = snappy.Encode(nil, raw[i*size:min((i+1)*size, len(raw))])
		}
	}
	compressed := 0
	for _, b := range blocks {
		compressed += len(b)
	}
	k := len(blocks)
	if o.order == OrderCompressThenCut {
		k = (compressed + size - 1) / size
	}
	m, err := parityCount(o, k)
	if err != nil {
		return nil, fmt.Errorf("new group: %w", err)
	}
	shards, shardSize := formDataShards(o.order, blocks, size, m)
	if m > 0 {
		if err := encodeParity(k, shards); err != nil {
			return nil, fmt.Errorf("new group: %w", err)
		}
	}
	d := DescriptorV2{
		Version:          VersionSegdiff2,
		HashID:           o.hash,
		Order:            o.order,
		Coding:           o.coding,
		SegmentSize:      uint32(size),
		RawLength:        uint64(len(raw)),
		CompressedLength: uint64(compressed),
		DataShards:       uint32(k),
		ParityShards:     uint32(m),
		ShardSize:        uint32(shardSize),
	}
	return commitGroupV2(d, blocks, shards)
}

// parityCount returns m for k data shards under o, or an ErrOption error.
func parityCount(o options, k int) (int, error) {
	if o.coding == CodingNone {
		if o.parity != 0 {
			return 0, fieldErr(ErrOption, "parity shards", o.parity, "unset with coding %v", CodingNone)
		}
		return 0, nil
	}
	if k >= MaxCodedShards {
		return 0, fieldErr(ErrOption, "data shards", k, "< %d for %v: raise the segment size", MaxCodedShards, o.coding)
	}
	m := cmp.Or(o.parity, k)
	if hi := min(k, MaxCodedShards-k); m > hi {
		return 0, fieldErr(ErrOption, "parity shards", m, "in [1, min(k, %d - k)] = [1, %d] for k = %d", MaxCodedShards, hi, k)
	}
	return m, nil
}

// commitGroupV2 builds the Merkle tree over shards, sets d.Root and
// validates d. Tests use it to commit to shards an honest builder would not
// produce.
func commitGroupV2(d DescriptorV2, blocks, shards [][]byte) (*GroupV2, error) {
	tree := buildTreeLeaves(d.HashID, shards)
	d.Root = tree.root()
	if err := d.Validate(); err != nil { // unreachable for a body ≤ MaxBodySize and valid options
		return nil, fmt.Errorf("new group: %w", err)
	}
	return &GroupV2{desc: d, id: d.GroupID(), blocks: blocks, shards: shards, tree: tree}, nil
}

// Descriptor returns the group's descriptor.
func (g *GroupV2) Descriptor() DescriptorV2 { return g.desc }

// GroupID returns the descriptor's group id (what the bid commits to).
func (g *GroupV2) GroupID() [32]byte { return g.id }

// RawSize returns the SSZ body length in bytes (= RawLength).
func (g *GroupV2) RawSize() int { return int(g.desc.RawLength) }

// CompressedSize returns the body's length as compressed for the wire with no
// coding (= CompressedLength): the snappy block of the whole body
// (compress-then-cut) or the sum of the compressed segments' lengths
// (cut-then-compress), without length prefixes, padding, parity or message
// headers. It is the unit of "payload copies" for the group.
func (g *GroupV2) CompressedSize() int { return int(g.desc.CompressedLength) }

// Compressed returns the body's snappy blocks: one for compress-then-cut, k
// (one per raw segment, in order) for cut-then-compress; their lengths sum to
// CompressedSize. Callers must not modify them.
func (g *GroupV2) Compressed() [][]byte { return g.blocks }

// ShardCount returns k+m, the number of shards and Shard messages.
func (g *GroupV2) ShardCount() int { return len(g.shards) }

// Shards returns the k+m shard messages (data, then parity) for the block
// (slot, blockRoot) in index order. Their Data alias the group's shards: do
// not modify.
func (g *GroupV2) Shards(slot uint64, blockRoot [32]byte) []*Shard {
	out := make([]*Shard, len(g.shards))
	for i, data := range g.shards {
		out[i] = &Shard{
			Version:         VersionSegdiff2,
			Slot:            slot,
			BeaconBlockRoot: blockRoot,
			GroupID:         g.id,
			Index:           uint32(i),
			Proof:           g.tree.proof(i),
			Data:            data,
		}
	}
	return out
}

// EncodedShards returns the SSZ encoding (gossip data) of every shard for the
// block (slot, blockRoot), in index order.
func (g *GroupV2) EncodedShards(slot uint64, blockRoot [32]byte) ([][]byte, error) {
	return encodeAll(g.Shards(slot, blockRoot), "shard")
}
