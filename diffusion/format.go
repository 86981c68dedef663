package diffusion

import (
	"errors"
	"fmt"

	"github.com/klauspost/compress/snappy"

	"github.com/segdiff/segdiff/eip8411"
)

// Layout says how a payload is cut into parts: the segment size, the order
// of compression and cutting, and the erasure code. The zero Order and
// Coding mean segdiff/1: compress the whole body, cut it, no code.
type Layout struct {
	// SegmentSize is the cut unit in bytes.
	SegmentSize int
	// Order is eip8411.OrderCompressThenCut (segdiff/1's) or
	// eip8411.OrderCutThenCompress (the study's default arm: 32 raw segments
	// of 32 KiB for 1 MiB, each compressed alone).
	Order eip8411.Order
	// Coding is eip8411.CodingNone or eip8411.CodingReedSolomon.
	Coding eip8411.Coding
	// Parity is the number of parity shards of a coded group (0: as many as
	// data shards).
	Parity int
}

// v1 reports whether l is segdiff/1: compress-then-cut, uncoded.
func (l Layout) v1() bool {
	return (l.Order == 0 || l.Order == eip8411.OrderCompressThenCut) && l.Coding == eip8411.CodingNone
}

// Group is a payload cut and committed as a policy sends it: segdiff/1
// segments, or segdiff/2 shards when the layout names another order or a
// code.
type Group struct {
	desc       []byte
	id         [32]byte
	raw        int
	compressed int
	wire       int
	parts      int
	v1         *eip8411.Group
	v2         *eip8411.GroupV2
}

// Cut builds body's group under l.
func Cut(body *eip8411.Body, l Layout) (*Group, error) {
	if l.v1() {
		g, err := eip8411.NewGroup(body, eip8411.WithSegmentSize(l.SegmentSize))
		if err != nil {
			return nil, err
		}
		return &Group{desc: g.Descriptor().Encode(), id: g.GroupID(), raw: g.RawSize(), compressed: g.CompressedSize(),
			wire: g.CompressedSize(), parts: int(g.Descriptor().Count), v1: g}, nil
	}
	if l.Order == 0 {
		l.Order = eip8411.OrderCompressThenCut // the zero Order, as documented
	}
	opts := []eip8411.Option{eip8411.WithSegmentSize(l.SegmentSize), eip8411.WithOrder(l.Order), eip8411.WithCoding(l.Coding)}
	if l.Coding != eip8411.CodingNone && l.Parity > 0 {
		opts = append(opts, eip8411.WithParityShards(l.Parity))
	}
	g, err := eip8411.NewGroupV2(body, opts...)
	if err != nil {
		return nil, err
	}
	raw, err := body.Encode()
	if err != nil {
		return nil, err
	}
	d := g.Descriptor()
	return &Group{desc: d.Encode(), id: g.GroupID(), raw: g.RawSize(), compressed: len(snappy.Encode(nil, raw)),
		wire: g.CompressedSize(), parts: g.ShardCount(), v2: g}, nil
}

// Descriptor is the canonical descriptor the bid commits to (its first byte
// is the format version).
func (g *Group) Descriptor() []byte { return g.desc }

// GroupID is the id the bid commits to.
func (g *Group) GroupID() [32]byte { return g.id }

// RawSize is the SSZ body's size.
func (g *Group) RawSize() int { return g.raw }

// CompressedSize is the body compressed whole with snappy: the unit of
// "copies" in every mode, whatever the order of the parts.
func (g *Group) CompressedSize() int { return g.compressed }

// WireSize is the compressed bytes the parts carry without a code (the
// whole snappy body for compress-then-cut; the sum of the compressed
// segments for cut-then-compress).
func (g *Group) WireSize() int { return g.wire }

// Parts is the number of parts (segments, or data and parity shards).
func (g *Group) Parts() int { return g.parts }

// CompressedBody is the body compressed whole (segdiff/1 groups only: whole
// payloads travel this way).
func (g *Group) CompressedBody() ([]byte, error) {
	if g.v1 == nil {
		return nil, errors.New("whole envelope of a segdiff/2 group: whole payloads use segdiff/1")
	}
	return g.v1.Compressed(), nil
}

// Messages encodes the group's parts for slot and block root.
func (g *Group) Messages(slot uint64, blockRoot [32]byte) ([][]byte, error) {
	if g.v1 != nil {
		return g.v1.EncodedSegments(slot, blockRoot)
	}
	return g.v2.EncodedShards(slot, blockRoot)
}

// Commitment is what an installed block commits its payload to; payload
// messages are verified against it.
type Commitment struct {
	Slot      uint64
	BlockRoot [32]byte
	// Descriptor is the canonical descriptor; exactly one of V1 and V2 holds
	// it decoded.
	Descriptor []byte
	V1         *eip8411.Descriptor
	V2         *eip8411.DescriptorV2
}

// NewCommitment decodes a canonical descriptor of either version.
func NewCommitment(slot uint64, blockRoot [32]byte, descriptor []byte) (Commitment, error) {
	c := Commitment{Slot: slot, BlockRoot: blockRoot, Descriptor: descriptor}
	if len(descriptor) == 0 {
		return c, fmt.Errorf("commitment: %w", eip8411.ErrDecode)
	}
	switch eip8411.Version(descriptor[0]) {
	case eip8411.VersionSegdiff1:
		d, err := eip8411.DecodeDescriptor(descriptor)
		if err != nil {
			return c, fmt.Errorf("commitment: %w", err)
		}
		c.V1 = &d
	case eip8411.VersionSegdiff2:
		d, err := eip8411.DecodeDescriptorV2(descriptor)
		if err != nil {
			return c, fmt.Errorf("commitment: %w", err)
		}
		c.V2 = &d
	default:
		return c, fmt.Errorf("commitment: descriptor version %d: %w", descriptor[0], eip8411.ErrVersion)
	}
	return c, nil
}

// GroupID is the committed group id.
func (c Commitment) GroupID() [32]byte {
	if c.V2 != nil {
		return c.V2.GroupID()
	}
	return c.V1.GroupID()
}

// Parts is the number of parts of the committed group; Need how many of
// them rebuild the payload.
func (c Commitment) Parts() int {
	if c.V2 != nil {
		return int(c.V2.ShardCount())
	}
	return int(c.V1.Count)
}

// Need is how many distinct parts rebuild the payload.
func (c Commitment) Need() int {
	if c.V2 != nil {
		return int(c.V2.NeededShards())
	}
	return int(c.V1.Count)
}

// part is one verified part: its index and decoded form.
type part struct {
	index int
	seg   *eip8411.Segment
	shard *eip8411.Shard
}

// VerifyPart decodes a part message and checks it against the commitment:
// it names the block, and its index, size and Merkle proof match.
func VerifyPart(data []byte, c Commitment) (part, error) {
	if c.V2 != nil {
		s, err := eip8411.DecodeVerifyShard(data, *c.V2)
		if err != nil {
			return part{}, err
		}
		if s.BeaconBlockRoot != c.BlockRoot {
			return part{}, errWrongBlock
		}
		return part{index: int(s.Index), shard: s}, nil
	}
	seg, err := VerifySegment(data, c)
	if err != nil {
		return part{}, err
	}
	return part{index: int(seg.Index), seg: seg}, nil
}

// assembler rebuilds one payload from verified parts.
type assembler struct {
	v1 *eip8411.Reassembler
	v2 *eip8411.ReassemblerV2
}

func newAssembler(c Commitment) (*assembler, error) {
	if c.V2 != nil {
		r, err := eip8411.NewReassemblerV2(*c.V2)
		return &assembler{v2: r}, err
	}
	r, err := eip8411.NewReassembler(*c.V1)
	return &assembler{v1: r}, err
}

// add adds p; complete is true once the parts held rebuild the payload.
func (a *assembler) add(p part) (complete, dup bool, err error) {
	if a.v2 != nil {
		return a.v2.Add(p.shard)
	}
	return a.v1.Add(p.seg)
}

// body rebuilds and decodes the payload; for a coded group it checks the
// code's consistency (eip8411.ErrInconsistentCode).
func (a *assembler) body() error {
	var err error
	if a.v2 != nil {
		_, err = a.v2.Body()
	} else {
		_, err = a.v1.Body()
	}
	return err
}
