package eip8411

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// MainnetCompressionRatio is the snappy ratio of the published 1 MiB payload
// (746 KB compressed / 1 MiB raw ≈ 0.71) that SyntheticBody imitates.
const MainnetCompressionRatio = 0.71

// syntheticRandomWordShare is the share of 32-byte words SyntheticBody fills
// with uniformly random bytes; calibrated so that a 1 MiB body compresses to
// MainnetCompressionRatio (see TestSyntheticBodyRatio).
const syntheticRandomWordShare = 0.625

// SyntheticBody returns a Body whose SSZ encoding is exactly rawSize bytes
// (≥ 8, ≤ MaxBodySize) and which snappy compresses like a mainnet payload.
//
// Compressibility comes from the shape of ABI-encoded calldata: the payload is
// a sequence of 32-byte words; a share syntheticRandomWordShare of them are
// random (hashes, signatures: incompressible), the rest are either a left-
// padded address drawn from a small per-body table of 64 addresses (a hot
// contract or token; compressible by back-reference) or a left-padded small
// integer (mostly zero bytes). The share is calibrated for a ≈ 0.71 snappy
// ratio at 1 MiB; the ratio holds to within a few percent from ~64 KiB up.
// ExecutionRequests is empty. The result depends only on rng's stream.
func SyntheticBody(rng *rand.Rand, rawSize int) (*Body, error) {
	if rawSize < bodyFixedSize || rawSize > MaxBodySize {
		return nil, fmt.Errorf("synthetic body: %w", fieldErr(ErrOption, "raw size", rawSize, "in [%d, %d]", bodyFixedSize, MaxBodySize))
	}
	var addrs [64][20]byte
	for i := range addrs {
		fillRandom(rng, addrs[i][:])
	}
	payload := make([]byte, rawSize-bodyFixedSize)
	var word [32]byte
	for off := 0; off < len(payload); off += len(word) {
		word = [32]byte{}
		switch r := rng.Float64(); {
		case r < syntheticRandomWordShare:
			fillRandom(rng, word[:])
		case r < syntheticRandomWordShare+(1-syntheticRandomWordShare)/2:
			copy(word[12:], addrs[rng.IntN(len(addrs))][:])
		default:
			binary.BigEndian.PutUint32(word[28:], uint32(rng.IntN(1<<20)))
		}
		copy(payload[off:], word[:])
	}
	return &Body{Payload: payload, ExecutionRequests: []byte{}}, nil
}

func fillRandom(rng *rand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], rng.Uint64())
		copy(b[i:], w[:])
	}
}

// studyZeroWordShare is the share of 32-byte words MainnetLikeWords leaves
// zero but for three random trailing bytes (a small left-padded ABI integer):
// the published study's generator (testing/gossipsim payload.go), whose 0.41
// reproduces a real mainnet payload's snappy ratio of 1.40:1.
const studyZeroWordShare = 0.41

// MainnetLikeWords fills b with the published study's mainnet-like payload
// bytes, word by word: each 32-byte word is, with probability 0.41, zero but
// for 3 random trailing bytes, and otherwise 32 random bytes, so that snappy
// compresses it about 1.40:1 (compressed/raw ≈ 0.71). A trailing partial word
// is a prefix of such a word. It is the calldata generator of the transaction
// load (package load); SyntheticBody keeps its own calibrated mix, so the
// embedded devnet's payloads are unchanged.
func MainnetLikeWords(rng *rand.Rand, b []byte) {
	var word [32]byte
	for off := 0; off < len(b); off += len(word) {
		if rng.Float64() < studyZeroWordShare {
			word = [32]byte{}
			v := rng.Uint32()
			word[29], word[30], word[31] = byte(v>>16), byte(v>>8), byte(v)
		} else {
			fillRandom(rng, word[:])
		}
		copy(b[off:], word[:])
	}
}
