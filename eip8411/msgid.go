package eip8411

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// ContentIDSize is the length of the content digest in every message id.
const ContentIDSize = 20

// StructuralIDSize is the length of a structural message id:
// version(1) ‖ slot(8, LE) ‖ block root(32) ‖ group id(32) ‖ index(4, LE) ‖
// content(20).
const StructuralIDSize = 1 + 8 + 32 + 32 + 4 + ContentIDSize

// contentDomain prefixes the content digest: Altair's
// MESSAGE_DOMAIN_VALID_SNAPPY (0x01000000). Unlike Altair the topic is not
// hashed, because the id function is installed per topic.
var contentDomain = [4]byte{0x01, 0x00, 0x00, 0x00}

// ContentID returns SHA-256(0x01000000 ‖ data)[:20].
func ContentID(data []byte) [ContentIDSize]byte {
	h := sha256.New()
	h.Write(contentDomain[:])
	h.Write(data)
	var sum [32]byte
	h.Sum(sum[:0])
	var id [ContentIDSize]byte
	copy(id[:], sum[:])
	return id
}

// MessageID returns the gossip message id of raw message data: for a
// well-formed Segment (segdiff/1) or Shard (segdiff/2) layout (fixed offsets
// and, for a Shard, the version byte checked; nothing decoded) the 97-byte
// structural id; for anything else the 20-byte ContentID. The two layouts are
// disjoint, so one id function serves a topic carrying either. Use it as the
// body of a pubsub.MsgIdFunction on the segment topic:
//
//	pubsub.WithTopicMessageIdFn(func(m *pb.Message) string { return eip8411.MessageID(m.Data) })
func MessageID(data []byte) string {
	content := ContentID(data)
	switch {
	case checkLayout(data) == nil:
		return structuralID(VersionSegdiff1, data[offsetSlot:], content)
	case checkShardLayout(data) == nil:
		return structuralID(VersionSegdiff2, data[shardOffsetSlot:], content)
	default:
		return string(content[:])
	}
}

// structuralID returns version ‖ header[:76] ‖ content, where header starts at
// the slot and holds slot, block root, group id and index contiguously, as
// both message layouts do.
func structuralID(v Version, header []byte, content [ContentIDSize]byte) string {
	var id [StructuralIDSize]byte
	id[0] = byte(v)
	copy(id[1:77], header[:76])
	copy(id[77:], content[:])
	return string(id[:])
}

// ParseMessageID splits an id made by MessageID. A 20-byte id parses as a
// content id (Structural false); a structural id of version 1 or 2 gives
// slot, block root, group id and index (a segment index for version 1, a
// shard index < data_shards + parity_shards for version 2). Errors wrap
// ErrMessageID or ErrVersion.
func ParseMessageID(id string) (MessageIDParts, error) {
	var p MessageIDParts
	switch len(id) {
	case ContentIDSize:
		copy(p.Content[:], id)
		return p, nil
	case StructuralIDSize:
	default:
		return p, fmt.Errorf("parse message id: %w", fieldErr(ErrMessageID, "length", len(id), "%d or %d", ContentIDSize, StructuralIDSize))
	}
	switch v := Version(id[0]); v {
	case VersionSegdiff1, VersionSegdiff2:
		p.Structural = true
		p.Version = v
		p.Slot = binary.LittleEndian.Uint64([]byte(id[1:9]))
		copy(p.BeaconBlockRoot[:], id[9:41])
		copy(p.GroupID[:], id[41:73])
		p.Index = binary.LittleEndian.Uint32([]byte(id[73:77]))
		copy(p.Content[:], id[77:])
		return p, nil
	default:
		return MessageIDParts{}, fmt.Errorf("parse message id: %w", fieldErr(ErrVersion, "version", v, "%d or %d", VersionSegdiff1, VersionSegdiff2))
	}
}
