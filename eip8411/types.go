package eip8411

// Version identifies a wire format; it is the first byte of the canonical
// descriptor and of every structural message id.
type Version uint8

// VersionSegdiff1 is format "segdiff/1": snappy-compressed SSZ body, fixed-size
// segments, H(0x00‖leaf)/H(0x01‖l‖r) Merkle tree, group id in the bid.
const VersionSegdiff1 Version = 1

// FormatSegdiff1 is the wire format id reported in the payload_diffusion_info
// metric's format label.
const FormatSegdiff1 = "segdiff/1"

// FormatName returns the wire format id of v ("segdiff/1", "segdiff/2"), or
// "" when v is not a known version.
func FormatName(v Version) string {
	switch v {
	case VersionSegdiff1:
		return FormatSegdiff1
	case VersionSegdiff2:
		return FormatSegdiff2
	default:
		return ""
	}
}

// HashID selects the hash function of the Merkle tree and the group id.
type HashID uint8

const (
	// HashSHA256 is SHA-256 (the default).
	HashSHA256 HashID = 0
	// HashKeccak256 is legacy Keccak-256 (as used by the execution layer).
	HashKeccak256 HashID = 1
)

// hashNames names every known HashID.
var hashNames = map[HashID]string{HashSHA256: "sha256", HashKeccak256: "keccak256"}

// String returns "sha256", "keccak256" or "hash(N)".
func (h HashID) String() string { return enumName(hashNames, h, "hash") }

// Size limits. Every bound is derived from a consensus-layer limit so that a
// descriptor cannot claim more than a valid Gloas envelope could need.
const (
	// MaxPayloadSize is MAX_PAYLOAD_SIZE (consensus-specs configs/mainnet.yaml,
	// 10 MiB): the largest uncompressed gossip message, hence the largest SSZ
	// body that could travel as a whole envelope.
	MaxPayloadSize = 10 * 1024 * 1024

	// MaxBodySize bounds the SSZ encoding of a [Body]: it must fit the same
	// gossip limit as the whole-message envelope it replaces.
	MaxBodySize = MaxPayloadSize

	// MaxTotalLength bounds Descriptor.TotalLength (the snappy-compressed body
	// length). It is the consensus-specs p2p max_compressed_len(n) =
	// 32 + n + n/6 for n = MaxBodySize, i.e. 12,233,418 bytes — the longest
	// snappy block a conforming encoder emits for the largest body. Any claim
	// above it cannot be an honest compression of a body that fits gossip.
	MaxTotalLength = 32 + MaxBodySize + MaxBodySize/6

	// MinSegmentSize is the smallest allowed segment size (1 KiB). It fixes
	// MaxSegments and MaxProofDepth for the largest body; already at 1 KiB
	// the per-segment overhead (84-byte header + 32 bytes per proof level)
	// is ~40 % for a 1 MiB payload, and the prototype study saw no latency
	// gain below 16 KiB.
	MinSegmentSize = 1 << 10

	// MaxSegmentSize is the largest allowed segment size (1 MiB): beyond it a
	// segment is a sizeable fraction of the whole payload and pipelining is lost.
	MaxSegmentSize = 1 << 20

	// DefaultSegmentSize is the segment size used unless WithSegmentSize says
	// otherwise: 32 KiB, the setting of the published 500-node study.
	DefaultSegmentSize = 32 << 10

	// MaxSegments is ceil(MaxTotalLength / MinSegmentSize) = 11,947: the most
	// segments a valid descriptor can have.
	MaxSegments = (MaxTotalLength + MinSegmentSize - 1) / MinSegmentSize

	// MaxProofDepth is ceil(log2(MaxSegments)) = 14: the longest Merkle proof.
	MaxProofDepth = 14

	// MaxExecutionRequestsSize bounds Body.ExecutionRequests: the largest SSZ
	// ExecutionRequests container (Electra): 3 offsets + 8192 deposit requests
	// × 192 B + 16 withdrawal requests × 76 B + 2 consolidation requests ×
	// 116 B = 1,574,324 bytes.
	MaxExecutionRequestsSize = 3*4 + 8192*192 + 16*76 + 2*116

	// bodyFixedSize is the SSZ fixed part of Body: two 4-byte offsets.
	bodyFixedSize = 8

	// MaxBodyPayloadSize bounds Body.Payload: the body limit minus the fixed part.
	MaxBodyPayloadSize = MaxBodySize - bodyFixedSize
)

// Body is the SSZ container the builder holds at bid time and that is
// segmented: the execution payload and the execution requests, each as opaque
// SSZ bytes. Its SSZ encoding is two offsets followed by the two byte lists;
// the whole encoding is additionally bounded by MaxBodySize.
type Body struct {
	Payload           []byte `ssz-max:"10485752"`
	ExecutionRequests []byte `ssz-max:"1574324"`
}

// DescriptorSize is the length of the canonical descriptor encoding.
const DescriptorSize = 50

// Descriptor is the segmentation commitment carried (as its group id) by the
// bid and (whole) by the embedded devnet's block message. Its canonical
// encoding is its SSZ encoding (a fixed 50-byte container, little endian):
//
//	offset size field
//	0      1    version       uint8
//	1      1    hash_id       uint8
//	2      4    count         uint32   segments K
//	6      4    segment_size  uint32   bytes per segment (last may be short)
//	10     8    total_length  uint64   snappy-compressed body length
//	18     32   root          Bytes32  Merkle root
//
// The zero Descriptor is invalid.
type Descriptor struct {
	Version     Version
	HashID      HashID
	Count       uint32
	SegmentSize uint32
	TotalLength uint64
	Root        [32]byte
}

// SegmentFixedSize is the SSZ fixed part of a Segment message: slot,
// block root, group id, index and the two list offsets.
const SegmentFixedSize = 8 + 32 + 32 + 4 + 4 + 4

// Byte offsets of the Segment message fields in its SSZ encoding.
const (
	offsetSlot      = 0
	offsetBlockRoot = 8
	offsetGroupID   = 40
	offsetIndex     = 72
	offsetProofOff  = 76
	offsetDataOff   = 80
)

// Segment is one gossip message of a group (SSZ, via dynamic-ssz):
//
//	offset size field
//	0      8    slot               uint64
//	8      32   beacon_block_root  Bytes32
//	40     32   group_id           Bytes32
//	72     4    index              uint32
//	76     4    offset(proof)      = 84
//	80     4    offset(data)       = 84 + 32·len(proof)
//	84     …    proof              List[Bytes32, MaxProofDepth]
//	…      …    data               ByteList[MaxSegmentSize]
//
// Slot and BeaconBlockRoot name the block whose bid committed to GroupID; the
// receiver looks that block up and verifies against its descriptor.
type Segment struct {
	Slot            uint64
	BeaconBlockRoot [32]byte
	GroupID         [32]byte
	Index           uint32
	Proof           [][32]byte `ssz-max:"14"`
	Data            []byte     `ssz-max:"1048576"`
}

// MessageIDParts is a parsed message id. Structural is false for a plain
// content id (the fallback for data that is not a segment); then only
// Content is set.
type MessageIDParts struct {
	Structural      bool
	Version         Version
	Slot            uint64
	BeaconBlockRoot [32]byte
	GroupID         [32]byte
	Index           uint32
	Content         [ContentIDSize]byte
}
