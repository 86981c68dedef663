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
	BlockSize = 4 << 10
	// blockFixed is slot ‖ proposer ‖ descriptor length.
	blockFixed = 8 + 4 + 2
	// maxDescriptor bounds the descriptor a block carries.
	maxDescriptor = 256
)

// Block is the simulated beacon block: it names its slot and proposer and
// carries the bid's commitment, the payload group's canonical descriptor
// (segdiff/1 or segdiff/2, told apart by its first byte; the bid itself
// commits to its group id). Its root is the SHA-256 of the header.
type Block struct {
	Slot       uint64
	Proposer   uint32
	Descriptor []byte
}

// Encode lays out slot (LE) ‖ proposer (LE) ‖ descriptor length (u16 LE) ‖
// descriptor ‖ zero padding to BlockSize. The descriptor must be at most
// 256 bytes.
func (b Block) Encode() []byte {
	out := make([]byte, BlockSize)
	binary.LittleEndian.PutUint64(out[0:], b.Slot)
	binary.LittleEndian.PutUint32(out[8:], b.Proposer)
	binary.LittleEndian.PutUint16(out[12:], uint16(len(b.Descriptor)))
	copy(out[blockFixed:], b.Descriptor)
	return out
}

// Root is the beacon block root payload messages name.
func (b Block) Root() [32]byte {
	return sha256.Sum256(b.Encode()[:blockFixed+len(b.Descriptor)])
}

// DecodeBlock reads a block made by Encode; the descriptor is checked by
// whoever installs the block.
func DecodeBlock(data []byte) (Block, error) {
	if len(data) != BlockSize {
		return Block{}, fmt.Errorf("decode block: %d bytes, want %d", len(data), BlockSize)
	}
	n := int(binary.LittleEndian.Uint16(data[12:]))
	if n == 0 || n > maxDescriptor {
		return Block{}, fmt.Errorf("decode block: descriptor of %d bytes, want 1..%d: %w", n, maxDescriptor, eip8411.ErrDecode)
	}
	for _, b := range data[blockFixed+n:] {
		if b != 0 {
			return Block{}, fmt.Errorf("decode block: non-zero padding: %w", eip8411.ErrDecode)
		}
	}
	return Block{
		Slot:       binary.LittleEndian.Uint64(data[0:]),
		Proposer:   binary.LittleEndian.Uint32(data[8:]),
		Descriptor: append([]byte(nil), data[blockFixed:blockFixed+n]...),
	}, nil
}
