package eip8411

import (
	"crypto/sha256"
	"hash"
	"math/bits"

	"golang.org/x/crypto/sha3"
)

// Domain bytes separating the three hash uses (Prysm prototype convention).
const (
	domainLeaf  = 0x00
	domainNode  = 0x01
	domainGroup = 0x02
)

// newHash returns a fresh hash.Hash for id; id must have been validated.
func newHash(id HashID) hash.Hash {
	if id == HashKeccak256 {
		return sha3.NewLegacyKeccak256()
	}
	return sha256.New()
}

// hashParts returns H(domain ‖ parts...) using h (which it resets).
func hashParts(h hash.Hash, domain byte, parts ...[]byte) [32]byte {
	h.Reset()
	h.Write([]byte{domain})
	for _, p := range parts {
		h.Write(p)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// ProofDepth returns ceil(log2(count)): the exact proof length for a group of
// count segments (0 for a single segment).
func ProofDepth(count uint32) int {
	if count <= 1 {
		return 0
	}
	return bits.Len32(count - 1)
}

// merkleTree holds every level of the tree, leaves first, the leaf level
// padded with zero digests to a power of two.
type merkleTree [][][32]byte

// buildTree hashes the segments of data (cut at size) into a tree.
func buildTree(id HashID, data []byte, size int, count int) merkleTree {
	segments := make([][]byte, count)
	for i := range segments {
		segments[i] = data[i*size : min((i+1)*size, len(data))]
	}
	return buildTreeLeaves(id, segments)
}

// buildTreeLeaves hashes one leaf per element of leaves into a tree.
func buildTreeLeaves(id HashID, leafData [][]byte) merkleTree {
	h := newHash(id)
	width := 1 << ProofDepth(uint32(len(leafData)))
	leaves := make([][32]byte, width) // padding stays the zero digest
	for i, d := range leafData {
		leaves[i] = hashParts(h, domainLeaf, d)
	}
	tree := merkleTree{leaves}
	for level := leaves; len(level) > 1; {
		next := make([][32]byte, len(level)/2)
		for j := range next {
			next[j] = hashParts(h, domainNode, level[2*j][:], level[2*j+1][:])
		}
		tree = append(tree, next)
		level = next
	}
	return tree
}

func (t merkleTree) root() [32]byte { return t[len(t)-1][0] }

// proof returns the sibling path of leaf index, bottom up.
func (t merkleTree) proof(index int) [][32]byte {
	p := make([][32]byte, 0, len(t)-1)
	for _, level := range t[:len(t)-1] {
		p = append(p, level[index^1])
		index >>= 1
	}
	return p
}

// rootFromProof recomputes the root from a leaf's data, its index and proof.
func rootFromProof(h hash.Hash, data []byte, index uint32, proof [][32]byte) [32]byte {
	node := hashParts(h, domainLeaf, data)
	for _, sib := range proof {
		if index&1 == 0 {
			node = hashParts(h, domainNode, node[:], sib[:])
		} else {
			node = hashParts(h, domainNode, sib[:], node[:])
		}
		index >>= 1
	}
	return node
}
