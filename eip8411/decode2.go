package eip8411

import "encoding/binary"

// DecodeShard parses gossip data (the raw SSZ of a Shard). Errors wrap
// ErrDecode, or ErrVersion when the version byte is not 2; a *FieldError
// names the offending field or offset word. It does not verify the shard:
// call DescriptorV2.Verify.
func DecodeShard(b []byte) (*Shard, error) { return decodeMessage[Shard](b, checkShardLayout, "shard") }

// DecodeVerifyShard decodes b and verifies it against d. The shard's Data
// aliases b (see ViewShard): b must not change while it is in use.
func DecodeVerifyShard(b []byte, d DescriptorV2) (*Shard, error) {
	return decodeVerify(b, ViewShard, d.Verify)
}

// ViewShard parses b as DecodeShard does, accepting and refusing exactly
// the same inputs, without copying the data: the shard's Data aliases b,
// so b must not change while the shard is in use (ViewSegment says why).
func ViewShard(b []byte) (*Shard, error) {
	proof, data, err := shardLayout.view(b, checkShardLayout, "shard")
	if err != nil {
		return nil, err
	}
	s := &Shard{Version: Version(b[shardOffsetVersion]), Slot: binary.LittleEndian.Uint64(b[shardOffsetSlot:]),
		Index: binary.LittleEndian.Uint32(b[shardOffsetIndex:]), Proof: proof, Data: data}
	copy(s.BeaconBlockRoot[:], b[shardOffsetBlockRoot:])
	copy(s.GroupID[:], b[shardOffsetGroupID:])
	return s, nil
}

// checkShardLayout validates the fixed part of a Shard encoding without
// allocating: length bounds, the version byte and both offset words.
func checkShardLayout(b []byte) error {
	if err := shardLayout.check(b); err != nil {
		return err
	}
	if v := Version(b[shardOffsetVersion]); v != VersionSegdiff2 {
		return fieldErr(ErrVersion, "version", v, "%d", VersionSegdiff2)
	}
	return nil
}

// MessageSlot returns the slot a segment (segdiff/1) or shard (segdiff/2)
// message names, from its fixed layout alone (nothing decoded or hashed):
// cheap enough for a tracer attributing every received message. ok is
// false for anything else.
func MessageSlot(b []byte) (slot uint64, ok bool) {
	if checkShardLayout(b) == nil {
		return binary.LittleEndian.Uint64(b[shardOffsetSlot:]), true
	}
	if checkLayout(b) == nil {
		return binary.LittleEndian.Uint64(b[offsetSlot:]), true
	}
	return 0, false
}
