// Package eip8411 implements the segmented execution-payload wire formats the
// segdiff suite diffuses: format "segdiff/1", derived from the Prysm
// prototype's ExecutionPayloadSegment format (format B in
// shared/reference/eip8411-and-gloas.md §3), not the EIP-8411 draft's
// PayloadChunk format (format A, §2); and format "segdiff/2", which names the
// segment order and adds a systematic Reed–Solomon code (see "segdiff/2"
// below and README.md).
//
// # Pipeline (builder side)
//
//  1. The builder holds a [Body] (payload ‖ execution requests) and encodes it
//     as SSZ with dynamic-ssz.
//  2. The SSZ bytes are compressed whole with the snappy block format.
//  3. The compressed bytes are cut into K segments of [Descriptor.SegmentSize]
//     bytes (default [DefaultSegmentSize] = 32 KiB); the last may be short.
//  4. A binary Merkle tree over the segments gives the root; the
//     [Descriptor] (version, hash id, count, segment size, total length,
//     root) is what the bid commits to, by its group id
//     H(0x02 ‖ canonical descriptor) ([Descriptor.GroupID]).
//  5. After the block carrying the bid exists, every segment is wrapped in a
//     [Segment] message naming (slot, beacon block root, group id, index) with
//     its Merkle proof, and gossiped. No descriptor and no signature travel
//     with a segment: the receiver takes the descriptor from the installed
//     block.
//
// [NewGroup] and [NewGroupSSZ] do steps 1–4; [Group.Segments] and
// [Group.EncodedSegments] do step 5.
//
// # Receiver side
//
// [DecodeSegment] parses gossip data; [Descriptor.Verify] checks it against
// the installed block's descriptor and returns typed errors ([*FieldError]
// wrapping the sentinels in errors.go; [Reason] maps them to the metric
// reason labels). A [Reassembler] per group accepts verified segments in any
// order, reports duplicates and completion, and rebuilds the [Body].
// For a whole (unsegmented) payload, [Descriptor.VerifyCompressed] checks the
// compressed bytes against the commitment and [DecompressBody] decodes them.
//
// # Gossip data and message ids
//
// The gossip message data on the segment topic is the raw SSZ encoding of a
// [Segment] — no snappy framing. The segment data is already snappy
// compressed, so a second pass would only add its header; the embedded
// devnet therefore sends raw SSZ, and "received bytes" equal SSZ bytes.
// [MessageID] is a pubsub MsgIdFunction body for that data: a structural
// prefix (version, slot, block root, group id, index) read at fixed offsets,
// followed by a 20-byte content digest, so a garbage message cannot occupy
// the id of the honest segment; [ParseMessageID] inverts it for tracers.
//
// # segdiff/2
//
// [NewGroupV2] builds a [GroupV2] in either [Order]: compress-then-cut
// (segdiff/1's: snappy the whole body, cut the compressed bytes) or
// cut-then-compress (the prototype study's default: cut the raw body, snappy
// each segment alone), optionally coded with [CodingReedSolomon] (k data + m
// parity shards, any k rebuild; [WithParityShards], default m = k). One
// Merkle tree commits to all k+m shards; the [DescriptorV2] names order,
// coding, lengths and shard counts. Shards travel as [Shard] messages, a
// container with a version byte whose layout is disjoint from [Segment]'s.
// A [ReassemblerV2] completes at k distinct verified shards and, when asked
// for the [Body], rebuilds the data, re-encodes the parity and recomputes the
// root over every shard: a mismatch is [ErrInconsistentCode], and such a
// payload must be neither used nor relayed.
//
// # Versions and formats
//
// The first byte of the canonical descriptor and of every structural message
// id is the format [Version]: [VersionSegdiff1] or [VersionSegdiff2], each
// with its own descriptor type ([Descriptor], [DescriptorV2]) whose Validate
// rejects the other version with [ErrVersion]; [ParseMessageID] and
// [FormatName] switch on the version and reject unknown ones. To add format A (EIP-8411 draft PayloadChunk) later: give it
// a new Version constant, a descriptor validation rule (plain scheme, 16 KiB
// chunks, ≤ 2048 chunks, hash_tree_root commitment), its own chunk container
// and decoder, and a case in each switch; segdiff/1 stays unchanged.
//
// All functions are safe for concurrent use; a [Reassembler] and a
// [ReassemblerV2] serialise their own state with a mutex.
package eip8411
