package eip8411_test

import (
	"errors"
	"testing"

	"github.com/klauspost/compress/snappy"

	"github.com/segdiff/segdiff/eip8411"
)

// validDescriptorV2 is the coded cut-then-compress descriptor of a 1 MiB
// mainnet-like body at 32 KiB: 32 data + 32 parity shards.
func validDescriptorV2() eip8411.DescriptorV2 {
	return eip8411.DescriptorV2{
		Version:          eip8411.VersionSegdiff2,
		HashID:           eip8411.HashSHA256,
		Order:            eip8411.OrderCutThenCompress,
		Coding:           eip8411.CodingReedSolomon,
		SegmentSize:      32768,
		RawLength:        1 << 20,
		CompressedLength: 781_776,
		DataShards:       32,
		ParityShards:     32,
		ShardSize:        25_121,
		Root:             [32]byte{1, 2, 3},
	}
}

// maxCompressedLen mirrors consensus-specs' max_compressed_len(n).
func maxCompressedLen(n int) int { return 32 + n + n/6 }

func TestDescriptorV2Validate(t *testing.T) {
	with := func(f func(d *eip8411.DescriptorV2)) eip8411.DescriptorV2 {
		d := validDescriptorV2()
		f(&d)
		return d
	}
	compressThenCut := func(d *eip8411.DescriptorV2) {
		d.Order, d.CompressedLength, d.DataShards, d.ParityShards, d.ShardSize = eip8411.OrderCompressThenCut, 743_188, 23, 23, 32768
	}
	uncoded := func(d *eip8411.DescriptorV2) {
		d.Coding, d.ParityShards, d.ShardSize = eip8411.CodingNone, 0, d.ShardSize-4
	}
	// small cut-then-compress groups of k 1 KiB segments, each compressed to per bytes.
	small := func(k, m, per int) func(d *eip8411.DescriptorV2) {
		return func(d *eip8411.DescriptorV2) {
			d.SegmentSize, d.RawLength, d.CompressedLength = 1024, uint64(k*1024), uint64(k*per)
			d.DataShards, d.ParityShards, d.ShardSize = uint32(k), uint32(m), uint32(4+per)
		}
	}
	tests := []struct {
		name      string
		d         eip8411.DescriptorV2
		wantErr   error
		wantField string
	}{
		{name: "valid cut-then-compress 32+32", d: validDescriptorV2()},
		{name: "valid cut-then-compress uncoded", d: with(uncoded)},
		{name: "valid compress-then-cut 23+23", d: with(compressThenCut)},
		{name: "valid compress-then-cut uncoded", d: with(func(d *eip8411.DescriptorV2) { compressThenCut(d); d.Coding, d.ParityShards = eip8411.CodingNone, 0 })},
		{name: "valid keccak", d: with(func(d *eip8411.DescriptorV2) { d.HashID = eip8411.HashKeccak256 })},
		{name: "valid one parity shard", d: with(func(d *eip8411.DescriptorV2) { d.ParityShards = 1 })},
		{name: "valid 255+1", d: with(small(255, 1, 500))},
		{name: "valid 128+128", d: with(small(128, 128, 600))},
		{name: "valid minimum body, one segment", d: with(func(d *eip8411.DescriptorV2) {
			d.SegmentSize, d.RawLength, d.CompressedLength, d.DataShards, d.ParityShards, d.ShardSize = 1024, 8, 10, 1, 1, 14
		})},
		{name: "valid max body, min segments, uncoded cut-then-compress", d: with(func(d *eip8411.DescriptorV2) {
			uncoded(d)
			d.SegmentSize, d.RawLength, d.CompressedLength, d.DataShards, d.ShardSize = eip8411.MinSegmentSize, eip8411.MaxBodySize, 10_240_000, 10_240, 1100
		})},
		{name: "valid max body, max compressed, uncoded compress-then-cut", d: with(func(d *eip8411.DescriptorV2) {
			d.Order, d.Coding, d.ParityShards = eip8411.OrderCompressThenCut, eip8411.CodingNone, 0
			d.SegmentSize, d.ShardSize, d.RawLength = eip8411.MinSegmentSize, eip8411.MinSegmentSize, eip8411.MaxBodySize
			d.CompressedLength, d.DataShards = eip8411.MaxTotalLength, eip8411.MaxSegments
		})},
		{name: "valid max shard size", d: with(func(d *eip8411.DescriptorV2) {
			d.SegmentSize, d.RawLength, d.DataShards, d.ParityShards = eip8411.MaxSegmentSize, eip8411.MaxSegmentSize, 1, 1
			d.CompressedLength, d.ShardSize = uint64(maxCompressedLen(eip8411.MaxSegmentSize)), eip8411.MaxShardSize
		})},

		{name: "zero descriptor", d: eip8411.DescriptorV2{}, wantErr: eip8411.ErrVersion, wantField: "version"},
		{name: "version 1", d: with(func(d *eip8411.DescriptorV2) { d.Version = eip8411.VersionSegdiff1 }), wantErr: eip8411.ErrVersion, wantField: "version"},
		{name: "version 3", d: with(func(d *eip8411.DescriptorV2) { d.Version = 3 }), wantErr: eip8411.ErrVersion, wantField: "version"},
		{name: "unknown hash", d: with(func(d *eip8411.DescriptorV2) { d.HashID = 2 }), wantErr: eip8411.ErrDescriptor, wantField: "hash_id"},
		{name: "order 0", d: with(func(d *eip8411.DescriptorV2) { d.Order = 0 }), wantErr: eip8411.ErrDescriptor, wantField: "order"},
		{name: "order 3", d: with(func(d *eip8411.DescriptorV2) { d.Order = 3 }), wantErr: eip8411.ErrDescriptor, wantField: "order"},
		{name: "unknown coding", d: with(func(d *eip8411.DescriptorV2) { d.Coding = 2 }), wantErr: eip8411.ErrDescriptor, wantField: "coding"},
		{name: "segment size 0", d: with(func(d *eip8411.DescriptorV2) { d.SegmentSize = 0 }), wantErr: eip8411.ErrDescriptor, wantField: "segment_size"},
		{name: "segment size below min", d: with(func(d *eip8411.DescriptorV2) { d.SegmentSize = eip8411.MinSegmentSize - 1 }), wantErr: eip8411.ErrDescriptor, wantField: "segment_size"},
		{name: "segment size above max", d: with(func(d *eip8411.DescriptorV2) { d.SegmentSize = eip8411.MaxSegmentSize + 1 }), wantErr: eip8411.ErrDescriptor, wantField: "segment_size"},
		{name: "raw length 0", d: with(func(d *eip8411.DescriptorV2) { d.RawLength = 0 }), wantErr: eip8411.ErrDescriptor, wantField: "raw_length"},
		{name: "raw length below a body's offsets", d: with(func(d *eip8411.DescriptorV2) { d.RawLength = 7 }), wantErr: eip8411.ErrDescriptor, wantField: "raw_length"},
		{name: "raw length above MaxBodySize", d: with(func(d *eip8411.DescriptorV2) { d.RawLength = eip8411.MaxBodySize + 1 }), wantErr: eip8411.ErrDescriptor, wantField: "raw_length"},
		{name: "compress-then-cut compressed length 0", d: with(func(d *eip8411.DescriptorV2) { compressThenCut(d); d.CompressedLength = 0 }), wantErr: eip8411.ErrDescriptor, wantField: "compressed_length"},
		{name: "compress-then-cut compressed above max_compressed_len(raw)", d: with(func(d *eip8411.DescriptorV2) {
			compressThenCut(d)
			d.CompressedLength = uint64(maxCompressedLen(1<<20) + 1)
		}), wantErr: eip8411.ErrDescriptor, wantField: "compressed_length"},
		{name: "cut-then-compress compressed below one byte per segment", d: with(func(d *eip8411.DescriptorV2) { d.CompressedLength = 31 }), wantErr: eip8411.ErrDescriptor, wantField: "compressed_length"},
		{name: "cut-then-compress compressed above Σ max_compressed_len", d: with(func(d *eip8411.DescriptorV2) {
			d.CompressedLength = uint64(32*maxCompressedLen(32768) + 1)
		}), wantErr: eip8411.ErrDescriptor, wantField: "compressed_length"},
		{name: "data shards one short", d: with(func(d *eip8411.DescriptorV2) { d.DataShards = 31 }), wantErr: eip8411.ErrDescriptor, wantField: "data_shards"},
		{name: "data shards one extra", d: with(func(d *eip8411.DescriptorV2) { d.DataShards = 33 }), wantErr: eip8411.ErrDescriptor, wantField: "data_shards"},
		{name: "data shards of the other order", d: with(func(d *eip8411.DescriptorV2) { compressThenCut(d); d.DataShards = 32 }), wantErr: eip8411.ErrDescriptor, wantField: "data_shards"},
		{name: "data shards max uint32", d: with(func(d *eip8411.DescriptorV2) { d.DataShards = 1<<32 - 1 }), wantErr: eip8411.ErrDescriptor, wantField: "data_shards"},
		{name: "coded with 256 data shards", d: with(small(256, 1, 500)), wantErr: eip8411.ErrDescriptor, wantField: "data_shards"},
		{name: "uncoded with parity", d: with(func(d *eip8411.DescriptorV2) { uncoded(d); d.ParityShards = 1 }), wantErr: eip8411.ErrDescriptor, wantField: "parity_shards"},
		{name: "coded without parity", d: with(func(d *eip8411.DescriptorV2) { d.ParityShards = 0 }), wantErr: eip8411.ErrDescriptor, wantField: "parity_shards"},
		{name: "parity above data shards", d: with(func(d *eip8411.DescriptorV2) { d.ParityShards = 33 }), wantErr: eip8411.ErrDescriptor, wantField: "parity_shards"},
		{name: "parity max uint32", d: with(func(d *eip8411.DescriptorV2) { d.ParityShards = 1<<32 - 1 }), wantErr: eip8411.ErrDescriptor, wantField: "parity_shards"},
		{name: "k+m above 256", d: with(small(200, 57, 500)), wantErr: eip8411.ErrDescriptor, wantField: "parity_shards"},
		{name: "compress-then-cut shard size != segment size", d: with(func(d *eip8411.DescriptorV2) { compressThenCut(d); d.ShardSize = 32769 }), wantErr: eip8411.ErrDescriptor, wantField: "shard_size"},
		{name: "coded shard size without room for the prefix", d: with(func(d *eip8411.DescriptorV2) { d.ShardSize = 3 }), wantErr: eip8411.ErrDescriptor, wantField: "shard_size"},
		{name: "coded shard size below 4 + mean block", d: with(func(d *eip8411.DescriptorV2) { d.ShardSize = 4 + 24_430 }), wantErr: eip8411.ErrDescriptor, wantField: "shard_size"},
		{name: "coded shard size above 4 + max_compressed_len(segment)", d: with(func(d *eip8411.DescriptorV2) {
			d.ShardSize = uint32(4 + maxCompressedLen(32768) + 1)
		}), wantErr: eip8411.ErrDescriptor, wantField: "shard_size"},
		{name: "uncoded shard size with a prefix's room", d: with(func(d *eip8411.DescriptorV2) {
			uncoded(d)
			d.ShardSize = uint32(maxCompressedLen(32768) + 1)
		}), wantErr: eip8411.ErrDescriptor, wantField: "shard_size"},
		{name: "shard size above what the other blocks leave", d: with(func(d *eip8411.DescriptorV2) {
			d.SegmentSize, d.RawLength, d.CompressedLength, d.DataShards, d.ParityShards, d.ShardSize = 1024, 2048, 100, 2, 2, 4+100
		}), wantErr: eip8411.ErrDescriptor, wantField: "shard_size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDescriptor(t, tt.d, eip8411.DecodeDescriptorV2, eip8411.NewReassemblerV2, tt.wantErr, tt.wantField)
			if err := tt.d.Verify(&eip8411.Shard{Version: eip8411.VersionSegdiff2}); tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Verify = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestDescriptorVersionsDoNotCross: each decoder rejects the other version's
// canonical bytes by length, and the in-memory validators by version.
func TestDescriptorVersionsDoNotCross(t *testing.T) {
	v1, v2 := validDescriptor(), validDescriptorV2()
	if _, err := eip8411.DecodeDescriptorV2(v1.Encode()); !errors.Is(err, eip8411.ErrDecode) {
		t.Errorf("DecodeDescriptorV2(v1 bytes) = %v, want ErrDecode", err)
	}
	if _, err := eip8411.DecodeDescriptor(v2.Encode()); !errors.Is(err, eip8411.ErrDecode) {
		t.Errorf("DecodeDescriptor(v2 bytes) = %v, want ErrDecode", err)
	}
	b := v2.Encode()
	for _, n := range []int{0, 1, eip8411.DescriptorSize, eip8411.DescriptorV2Size - 1, eip8411.DescriptorV2Size + 1} {
		in := make([]byte, n)
		copy(in, b)
		if _, err := eip8411.DecodeDescriptorV2(in); !errors.Is(err, eip8411.ErrDecode) {
			t.Errorf("DecodeDescriptorV2(%d bytes) = %v, want ErrDecode", n, err)
		}
	}
}

// sszDescriptorV2 mirrors the documented container so the canonical encoding
// can be checked against an independent SSZ encoder.
type sszDescriptorV2 struct {
	Version          uint8
	HashID           uint8
	Order            uint8
	Coding           uint8
	SegmentSize      uint32
	RawLength        uint64
	CompressedLength uint64
	DataShards       uint32
	ParityShards     uint32
	ShardSize        uint32
	Root             [32]byte
}

func TestDescriptorV2EncodingIsSSZ(t *testing.T) {
	d := validDescriptorV2()
	d.Root = [32]byte{0xaa, 31: 0xbb}
	checkSSZ(t, d.Encode(), &sszDescriptorV2{
		Version: uint8(d.Version), HashID: uint8(d.HashID), Order: uint8(d.Order), Coding: uint8(d.Coding),
		SegmentSize: d.SegmentSize, RawLength: d.RawLength, CompressedLength: d.CompressedLength,
		DataShards: d.DataShards, ParityShards: d.ParityShards, ShardSize: d.ShardSize, Root: d.Root,
	}, eip8411.DescriptorV2Size)
}

func TestGroupIDV2BindsEveryField(t *testing.T) {
	checkGroupIDsDiffer(t, validDescriptorV2(), map[[32]byte]string{validDescriptor().GroupID(): "segdiff/1"}, map[string]func(d *eip8411.DescriptorV2){
		"version":    func(d *eip8411.DescriptorV2) { d.Version++ },
		"hash":       func(d *eip8411.DescriptorV2) { d.HashID = eip8411.HashKeccak256 },
		"order":      func(d *eip8411.DescriptorV2) { d.Order = eip8411.OrderCompressThenCut },
		"coding":     func(d *eip8411.DescriptorV2) { d.Coding = eip8411.CodingNone },
		"segment":    func(d *eip8411.DescriptorV2) { d.SegmentSize++ },
		"raw":        func(d *eip8411.DescriptorV2) { d.RawLength++ },
		"compressed": func(d *eip8411.DescriptorV2) { d.CompressedLength++ },
		"data":       func(d *eip8411.DescriptorV2) { d.DataShards++ },
		"parity":     func(d *eip8411.DescriptorV2) { d.ParityShards++ },
		"shard":      func(d *eip8411.DescriptorV2) { d.ShardSize++ },
		"root":       func(d *eip8411.DescriptorV2) { d.Root[31] ^= 1 },
	})
}

// TestBoundsDerivationV2 pins the documented derivation of every segdiff/2
// bound.
func TestBoundsDerivationV2(t *testing.T) {
	if want := 4 + maxCompressedLen(eip8411.MaxSegmentSize); eip8411.MaxShardSize != want {
		t.Errorf("MaxShardSize = %d, want 4 + max_compressed_len(MaxSegmentSize) = %d", eip8411.MaxShardSize, want)
	}
	if eip8411.MaxShardSize != 1_223_374 {
		t.Errorf("MaxShardSize = %d, want 1,223,374", eip8411.MaxShardSize)
	}
	if got := eip8411.ProofDepth(eip8411.MaxCodedShards); got != 8 {
		t.Errorf("ProofDepth(MaxCodedShards) = %d, want 8", got)
	}
	// The most shards of an uncoded group: compress-then-cut at the largest
	// compressed body (MaxSegments, as segdiff/1) exceeds cut-then-compress.
	if ctc := (eip8411.MaxBodySize + eip8411.MinSegmentSize - 1) / eip8411.MinSegmentSize; ctc != 10_240 || ctc > eip8411.MaxSegments {
		t.Errorf("cut-then-compress max shards = %d, want 10,240 ≤ MaxSegments %d", ctc, eip8411.MaxSegments)
	}
	if eip8411.ShardFixedSize != 85 || eip8411.DescriptorV2Size != 68 {
		t.Errorf("ShardFixedSize %d, DescriptorV2Size %d", eip8411.ShardFixedSize, eip8411.DescriptorV2Size)
	}
	// The encoder never exceeds the per-segment bound the descriptor allows.
	for _, n := range []int{1, 8, 1000, eip8411.MinSegmentSize, eip8411.DefaultSegmentSize, eip8411.MaxSegmentSize} {
		if got := snappy.MaxEncodedLen(n); got > maxCompressedLen(n) {
			t.Errorf("snappy.MaxEncodedLen(%d) = %d > max_compressed_len %d", n, got, maxCompressedLen(n))
		}
	}
	// The ssz-max tags of Shard match the constants.
	ok := &eip8411.Shard{Version: eip8411.VersionSegdiff2, Proof: make([][32]byte, eip8411.MaxProofDepth), Data: make([]byte, eip8411.MaxShardSize)}
	if b, err := ok.Encode(); err != nil || len(b) != eip8411.ShardFixedSize+32*eip8411.MaxProofDepth+eip8411.MaxShardSize {
		t.Errorf("largest shard: %d bytes, %v", len(b), err)
	}
	for name, s := range map[string]*eip8411.Shard{
		"data above MaxShardSize":   {Data: make([]byte, eip8411.MaxShardSize+1)},
		"proof above MaxProofDepth": {Proof: make([][32]byte, eip8411.MaxProofDepth+1)},
	} {
		if _, err := s.Encode(); err == nil {
			t.Errorf("%s encoded", name)
		}
	}
}

func TestFormatNameV2(t *testing.T) {
	if got := eip8411.FormatName(eip8411.VersionSegdiff2); got != "segdiff/2" {
		t.Errorf("FormatName(2) = %q", got)
	}
	if got := eip8411.FormatName(3); got != "" {
		t.Errorf("FormatName(3) = %q, want empty", got)
	}
	names := map[string]string{
		eip8411.OrderCompressThenCut.String(): "compress-then-cut",
		eip8411.OrderCutThenCompress.String(): "cut-then-compress",
		eip8411.Order(9).String():             "order(9)",
		eip8411.CodingNone.String():           "none",
		eip8411.CodingReedSolomon.String():    "reed-solomon",
		eip8411.Coding(7).String():            "coding(7)",
	}
	for got, want := range names {
		if got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}
