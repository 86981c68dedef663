// Package chain is the embedded devnet's chain side: the simulated beacon
// block and its topic, the slot clock, the proposer draw and the
// payload-timeliness committee. Everything here is pure and seeded.
package chain

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/segdiff/segdiff/eip8411"
)

// BlockTopic is the beacon block topic. The fork digest is fixed: the
// simulation has one fork.
const BlockTopic = "/eth2/00000000/beacon_block/ssz_snappy"

const (
	// BlockSize is a Gloas block without its payload; padding stands in for
	// attestations.
	BlockSize      = 4 << 10
	blockHeaderLen = 8 + 4 + eip8411.DescriptorSize
)

// Block is the simulated beacon block: it names its slot and proposer and
// carries the bid's commitment, the payload's segment-group descriptor (the
// bid itself commits to its group id). Its root is the SHA-256 of the
// header.
type Block struct {
	Slot       uint64
	Proposer   uint32
	Descriptor eip8411.Descriptor
}

// Encode lays out slot (LE) ‖ proposer (LE) ‖ descriptor ‖ zero padding to
// BlockSize.
func (b Block) Encode() []byte {
	out := make([]byte, BlockSize)
	binary.LittleEndian.PutUint64(out[0:], b.Slot)
	binary.LittleEndian.PutUint32(out[8:], b.Proposer)
	copy(out[12:], b.Descriptor.Encode())
	return out
}

// Root is the beacon block root payload messages name.
func (b Block) Root() [32]byte {
	return sha256.Sum256(b.Encode()[:blockHeaderLen])
}

// DecodeBlock reads a block made by Encode.
func DecodeBlock(data []byte) (Block, error) {
	if len(data) != BlockSize {
		return Block{}, fmt.Errorf("decode block: %d bytes, want %d", len(data), BlockSize)
	}
	d, err := eip8411.DecodeDescriptor(data[12:blockHeaderLen])
	if err != nil {
		return Block{}, fmt.Errorf("decode block descriptor: %w", err)
	}
	return Block{
		Slot:       binary.LittleEndian.Uint64(data[0:]),
		Proposer:   binary.LittleEndian.Uint32(data[8:]),
		Descriptor: d,
	}, nil
}
