package embedded

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/segdiff/segdiff/eip8411"
)

// Topics of the simulated network. The payload topics carry the Fulu-style
// suffix; the fork digest is fixed because the simulation has one fork.
const (
	topicBlock     = "/eth2/00000000/beacon_block/ssz_snappy"
	topicWhole     = "/eth2/00000000/execution_payload/ssz_snappy"
	topicSegment   = "/eth2/00000000/execution_payload_segment/ssz_snappy"
	blockSize      = 4 << 10 // a Gloas block without payload; padding stands in for attestations
	blockHeaderLen = 8 + 4 + eip8411.DescriptorSize
	envelopeHeader = 8 + 32 // whole-mode envelope: slot ‖ beacon block root
)

// block is the simulated beacon block: it names its slot and proposer and
// carries the bid's commitment, the payload's segment-group descriptor (the
// bid itself commits to its group id). Its root is the SHA-256 of the header.
type block struct {
	Slot       uint64
	Proposer   uint32
	Descriptor eip8411.Descriptor
}

// encode lays out slot (LE) ‖ proposer (LE) ‖ descriptor ‖ zero padding to
// blockSize.
func (b block) encode() []byte {
	out := make([]byte, blockSize)
	binary.LittleEndian.PutUint64(out[0:], b.Slot)
	binary.LittleEndian.PutUint32(out[8:], b.Proposer)
	copy(out[12:], b.Descriptor.Encode())
	return out
}

// root is the beacon block root segments and envelopes name.
func (b block) root() [32]byte {
	return sha256.Sum256(b.encode()[:blockHeaderLen])
}

func decodeBlock(data []byte) (block, error) {
	if len(data) != blockSize {
		return block{}, fmt.Errorf("decode block: %d bytes, want %d", len(data), blockSize)
	}
	d, err := eip8411.DecodeDescriptor(data[12:blockHeaderLen])
	if err != nil {
		return block{}, fmt.Errorf("decode block descriptor: %w", err)
	}
	return block{
		Slot:       binary.LittleEndian.Uint64(data[0:]),
		Proposer:   binary.LittleEndian.Uint32(data[8:]),
		Descriptor: d,
	}, nil
}

// envelope is whole mode's gossip data: slot (LE) ‖ beacon block root ‖ the
// snappy-compressed body, like a SignedExecutionPayloadEnvelope naming its
// block (no signature: the simulation trusts its builder).
func encodeEnvelope(slot uint64, root [32]byte, compressed []byte) []byte {
	out := make([]byte, envelopeHeader+len(compressed))
	binary.LittleEndian.PutUint64(out, slot)
	copy(out[8:], root[:])
	copy(out[envelopeHeader:], compressed)
	return out
}

var errShortEnvelope = errors.New("envelope shorter than its header")

func decodeEnvelope(data []byte) (slot uint64, root [32]byte, compressed []byte, err error) {
	if len(data) < envelopeHeader {
		return 0, root, nil, errShortEnvelope
	}
	copy(root[:], data[8:envelopeHeader])
	return binary.LittleEndian.Uint64(data), root, data[envelopeHeader:], nil
}

// payloadSlot reads the slot of any payload-topic message: both the segment
// SSZ container and the whole envelope start with the slot (uint64 LE).
func payloadSlot(data []byte) (uint64, bool) {
	if len(data) < 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(data), true
}

// contentID is the 20-byte content message id of the block and whole
// topics: Prysm's shape, SHA-256(domain ‖ len(topic) ‖ topic ‖ data)[:20],
// hashed over the wire bytes (Prysm hashes the decompressed bytes; the id's
// width on the wire, which is what control bytes measure, is the same).
func contentID(topic string, data []byte) string {
	h := sha256.New()
	h.Write([]byte{0x01, 0x00, 0x00, 0x00}) // MESSAGE_DOMAIN_VALID_SNAPPY
	var l [8]byte
	binary.LittleEndian.PutUint64(l[:], uint64(len(topic)))
	h.Write(l[:])
	h.Write([]byte(topic))
	h.Write(data)
	return string(h.Sum(nil)[:20])
}
