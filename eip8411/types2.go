package eip8411

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// VersionSegdiff2 is format "segdiff/2": a named segment order (compress
// then cut, or cut then compress), an optional systematic Reed–Solomon code
// over the segments, and one Merkle tree over every shard, data and parity.
const VersionSegdiff2 Version = 2

// FormatSegdiff2 is the wire format id of VersionSegdiff2 in the
// payload_diffusion_info metric's format label.
const FormatSegdiff2 = "segdiff/2"

// Order says whether the body is compressed before or after it is cut into
// segments. The zero Order is invalid.
type Order uint8

const (
	// OrderCompressThenCut is segdiff/1's order: the whole SSZ body is
	// snappy-compressed once and the compressed bytes are cut every
	// SegmentSize bytes (a 1 MiB mainnet-like body gives 23 segments of 32 KiB).
	OrderCompressThenCut Order = 1
	// OrderCutThenCompress is the prototype study's default arm: the raw SSZ
	// body is cut every SegmentSize bytes and each segment is snappy-compressed
	// alone (a 1 MiB body gives 32 segments of ≈23 KB at 32 KiB).
	OrderCutThenCompress Order = 2
)

// orderNames names every known Order.
var orderNames = map[Order]string{OrderCompressThenCut: "compress-then-cut", OrderCutThenCompress: "cut-then-compress"}

// String returns "compress-then-cut", "cut-then-compress" or "order(N)".
func (o Order) String() string { return enumName(orderNames, o, "order") }

// Coding selects the erasure code over a group's data shards.
type Coding uint8

const (
	// CodingNone: the group is its data shards; a receiver needs all of them.
	CodingNone Coding = 0
	// CodingReedSolomon: a systematic Reed–Solomon code over GF(2^8) adds
	// ParityShards parity shards; any DataShards of the DataShards+ParityShards
	// shards rebuild the group (the code is specified in README.md).
	CodingReedSolomon Coding = 1
)

// codingNames names every known Coding.
var codingNames = map[Coding]string{CodingNone: "none", CodingReedSolomon: "reed-solomon"}

// String returns "none", "reed-solomon" or "coding(N)".
func (c Coding) String() string { return enumName(codingNames, c, "coding") }

// enumName returns names[v], or "kind(N)" for a value without a name.
func enumName[T ~uint8](names map[T]string, v T, kind string) string {
	if name, ok := names[v]; ok {
		return name
	}
	return kind + "(" + strconv.Itoa(int(v)) + ")"
}

// checkEnum returns a *FieldError wrapping sentinel, naming field and every
// allowed value, when v has no entry in names.
func checkEnum[T ~uint8](sentinel error, field string, v T, names map[T]string) error {
	if _, ok := names[v]; ok {
		return nil
	}
	keys := make([]int, 0, len(names))
	for k := range names {
		keys = append(keys, int(k))
	}
	slices.Sort(keys)
	allowed := make([]string, len(keys))
	for i, k := range keys {
		allowed[i] = fmt.Sprintf("%d (%s)", k, names[T(k)])
	}
	return fieldErr(sentinel, field, v, "one of %s", strings.Join(allowed, ", "))
}

// segdiff/2 size limits, derived like segdiff/1's.
const (
	// DescriptorV2Size is the length of the canonical segdiff/2 descriptor.
	DescriptorV2Size = 68

	// MaxCodedShards bounds DataShards+ParityShards of a coded group: 256,
	// the size of GF(2^8). A Reed–Solomon code over GF(2^8) has at most 256
	// shards; staying inside it also pins the code (klauspost/reedsolomon
	// switches to a different GF(2^16) construction above 256). It makes
	// ProofDepth(MaxCodedShards) = 8 the longest proof of a coded group.
	MaxCodedShards = 256

	// ShardLengthPrefixSize is the length prefix (uint32, little endian) of
	// every data shard of a coded cut-then-compress group.
	ShardLengthPrefixSize = 4

	// MaxShardSize bounds DescriptorV2.ShardSize and a Shard's data: a
	// length prefix plus max_compressed_len(MaxSegmentSize) = 32 + n + n/6,
	// the longest snappy block of one raw segment: 1,223,374 bytes.
	// Compress-then-cut shards never exceed MaxSegmentSize.
	MaxShardSize = ShardLengthPrefixSize + 32 + MaxSegmentSize + MaxSegmentSize/6

	// ShardFixedSize is the SSZ fixed part of a Shard message: version,
	// slot, block root, group id, index and the two list offsets.
	ShardFixedSize = 1 + 8 + 32 + 32 + 4 + 4 + 4
)

// Byte offsets of the Shard message fields in its SSZ encoding.
const (
	shardOffsetVersion   = 0
	shardOffsetSlot      = 1
	shardOffsetBlockRoot = 9
	shardOffsetGroupID   = 41
	shardOffsetIndex     = 73
	shardOffsetProofOff  = 77
	shardOffsetDataOff   = 81
)

// DescriptorV2 is the segdiff/2 commitment the bid carries (as its group id,
// H(0x02 ‖ canonical descriptor)). Its canonical encoding is its SSZ
// encoding, a fixed 68-byte container, little endian:
//
//	offset size field
//	0      1    version            uint8    2
//	1      1    hash_id            uint8
//	2      1    order              uint8    1 compress-then-cut, 2 cut-then-compress
//	3      1    coding             uint8    0 none, 1 reed-solomon
//	4      4    segment_size       uint32   cut unit (compressed bytes, or raw bytes)
//	8      8    raw_length         uint64   SSZ body length
//	16     8    compressed_length  uint64   body as compressed for the wire, no coding
//	24     4    data_shards        uint32   k = number of segments
//	28     4    parity_shards      uint32   m (0 when uncoded)
//	32     4    shard_size         uint32   length of a full shard
//	36     32   root               Bytes32  Merkle root over all k+m shards
//
// The zero DescriptorV2 is invalid. See Validate for the rules.
type DescriptorV2 struct {
	Version          Version
	HashID           HashID
	Order            Order
	Coding           Coding
	SegmentSize      uint32
	RawLength        uint64
	CompressedLength uint64
	DataShards       uint32
	ParityShards     uint32
	ShardSize        uint32
	Root             [32]byte
}

// Shard is one gossip message of a segdiff/2 group (SSZ, via dynamic-ssz):
//
//	offset size field
//	0      1    version            uint8    2
//	1      8    slot               uint64
//	9      32   beacon_block_root  Bytes32
//	41     32   group_id           Bytes32
//	73     4    index              uint32   < data_shards + parity_shards
//	77     4    offset(proof)      = 85
//	81     4    offset(data)       = 85 + 32·len(proof)
//	85     …    proof              List[Bytes32, MaxProofDepth]
//	…      …    data               ByteList[MaxShardSize]
//
// Indices below DataShards carry data shards, the others parity shards. The
// version byte keeps the layout disjoint from segdiff/1's Segment (whose
// offset(proof) word, 84, sits at offset 76), so MessageID tells them apart.
type Shard struct {
	Version         Version
	Slot            uint64
	BeaconBlockRoot [32]byte
	GroupID         [32]byte
	Index           uint32
	Proof           [][32]byte `ssz-max:"14"`
	Data            []byte     `ssz-max:"1223374"`
}
