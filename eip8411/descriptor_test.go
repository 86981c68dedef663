package eip8411_test

import (
	"errors"
	"testing"

	"github.com/klauspost/compress/snappy"

	"github.com/segdiff/segdiff/eip8411"
)

func validDescriptor() eip8411.Descriptor {
	return eip8411.Descriptor{
		Version:     eip8411.VersionSegdiff1,
		HashID:      eip8411.HashSHA256,
		Count:       23,
		SegmentSize: 32768,
		TotalLength: 746_000,
		Root:        [32]byte{1, 2, 3},
	}
}

func TestDescriptorValidate(t *testing.T) {
	with := func(f func(d *eip8411.Descriptor)) eip8411.Descriptor {
		d := validDescriptor()
		f(&d)
		return d
	}
	tests := []struct {
		name      string
		d         eip8411.Descriptor
		wantErr   error
		wantField string
	}{
		{name: "valid", d: validDescriptor()},
		{name: "valid keccak", d: with(func(d *eip8411.Descriptor) { d.HashID = eip8411.HashKeccak256 })},
		{name: "valid single short segment", d: with(func(d *eip8411.Descriptor) { d.TotalLength, d.Count = 1, 1 })},
		{name: "valid max total, min segments", d: with(func(d *eip8411.Descriptor) {
			d.TotalLength, d.SegmentSize, d.Count = eip8411.MaxTotalLength, eip8411.MinSegmentSize, eip8411.MaxSegments
		})},
		{name: "valid max segment size", d: with(func(d *eip8411.Descriptor) {
			d.SegmentSize, d.TotalLength, d.Count = eip8411.MaxSegmentSize, 3*eip8411.MaxSegmentSize, 3
		})},
		{name: "zero descriptor", d: eip8411.Descriptor{}, wantErr: eip8411.ErrVersion, wantField: "version"},
		{name: "version 2", d: with(func(d *eip8411.Descriptor) { d.Version = 2 }), wantErr: eip8411.ErrVersion, wantField: "version"},
		{name: "unknown hash", d: with(func(d *eip8411.Descriptor) { d.HashID = 2 }), wantErr: eip8411.ErrDescriptor, wantField: "hash_id"},
		{name: "segment size 0", d: with(func(d *eip8411.Descriptor) { d.SegmentSize = 0 }), wantErr: eip8411.ErrDescriptor, wantField: "segment_size"},
		{name: "segment size below min", d: with(func(d *eip8411.Descriptor) { d.SegmentSize = eip8411.MinSegmentSize - 1 }), wantErr: eip8411.ErrDescriptor, wantField: "segment_size"},
		{name: "segment size above max", d: with(func(d *eip8411.Descriptor) { d.SegmentSize = eip8411.MaxSegmentSize + 1 }), wantErr: eip8411.ErrDescriptor, wantField: "segment_size"},
		{name: "total length 0", d: with(func(d *eip8411.Descriptor) { d.TotalLength, d.Count = 0, 0 }), wantErr: eip8411.ErrDescriptor, wantField: "total_length"},
		{name: "total length just above max compressed", d: with(func(d *eip8411.Descriptor) {
			d.TotalLength = eip8411.MaxTotalLength + 1
			d.Count = uint32((d.TotalLength + uint64(d.SegmentSize) - 1) / uint64(d.SegmentSize))
		}), wantErr: eip8411.ErrDescriptor, wantField: "total_length"},
		{name: "loose 256 MiB claim", d: with(func(d *eip8411.Descriptor) {
			d.TotalLength, d.SegmentSize, d.Count = 256<<20, 1<<20, 256
		}), wantErr: eip8411.ErrDescriptor, wantField: "total_length"},
		{name: "count one short", d: with(func(d *eip8411.Descriptor) { d.Count = 22 }), wantErr: eip8411.ErrDescriptor, wantField: "count"},
		{name: "count one extra", d: with(func(d *eip8411.Descriptor) { d.Count = 24 }), wantErr: eip8411.ErrDescriptor, wantField: "count"},
		{name: "count max uint32", d: with(func(d *eip8411.Descriptor) { d.Count = 1<<32 - 1 }), wantErr: eip8411.ErrDescriptor, wantField: "count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDescriptor(t, tt.d, eip8411.DecodeDescriptor, eip8411.NewReassembler, tt.wantErr, tt.wantField)
		})
	}
}

func TestDecodeDescriptorLength(t *testing.T) {
	b := validDescriptor().Encode()
	for _, n := range []int{0, 1, eip8411.DescriptorSize - 1, eip8411.DescriptorSize + 1} {
		in := make([]byte, n)
		copy(in, b)
		if _, err := eip8411.DecodeDescriptor(in); !errors.Is(err, eip8411.ErrDecode) {
			t.Errorf("DecodeDescriptor(%d bytes) = %v, want ErrDecode", n, err)
		}
	}
}

// sszDescriptor mirrors the documented container so the canonical encoding
// can be checked against an independent SSZ encoder.
type sszDescriptor struct {
	Version     uint8
	HashID      uint8
	Count       uint32
	SegmentSize uint32
	TotalLength uint64
	Root        [32]byte
}

func TestDescriptorEncodingIsSSZ(t *testing.T) {
	d := validDescriptor()
	d.Root = [32]byte{0xaa, 31: 0xbb}
	checkSSZ(t, d.Encode(), &sszDescriptor{
		Version: uint8(d.Version), HashID: uint8(d.HashID), Count: d.Count,
		SegmentSize: d.SegmentSize, TotalLength: d.TotalLength, Root: d.Root,
	}, eip8411.DescriptorSize)
}

func TestGroupIDBindsEveryField(t *testing.T) {
	checkGroupIDsDiffer(t, validDescriptor(), map[[32]byte]string{}, map[string]func(d *eip8411.Descriptor){
		"hash":    func(d *eip8411.Descriptor) { d.HashID = eip8411.HashKeccak256 },
		"count":   func(d *eip8411.Descriptor) { d.Count++ },
		"size":    func(d *eip8411.Descriptor) { d.SegmentSize++ },
		"total":   func(d *eip8411.Descriptor) { d.TotalLength++ },
		"root":    func(d *eip8411.Descriptor) { d.Root[31] ^= 1 },
		"version": func(d *eip8411.Descriptor) { d.Version++ },
	})
}

// TestBoundsDerivation pins the documented derivation of every bound.
func TestBoundsDerivation(t *testing.T) {
	// consensus-specs p2p-interface max_compressed_len(n) = 32 + n + n // 6.
	if want := 32 + eip8411.MaxBodySize + eip8411.MaxBodySize/6; eip8411.MaxTotalLength != want {
		t.Errorf("MaxTotalLength = %d, want max_compressed_len(%d) = %d", eip8411.MaxTotalLength, eip8411.MaxBodySize, want)
	}
	if eip8411.MaxTotalLength != 12_233_418 {
		t.Errorf("MaxTotalLength = %d, want 12,233,418", eip8411.MaxTotalLength)
	}
	// The encoder in use must never exceed the bound.
	if got := snappy.MaxEncodedLen(eip8411.MaxBodySize); got > eip8411.MaxTotalLength {
		t.Errorf("snappy.MaxEncodedLen(MaxBodySize) = %d > MaxTotalLength %d", got, eip8411.MaxTotalLength)
	}
	if want := (eip8411.MaxTotalLength + eip8411.MinSegmentSize - 1) / eip8411.MinSegmentSize; eip8411.MaxSegments != want {
		t.Errorf("MaxSegments = %d, want %d", eip8411.MaxSegments, want)
	}
	if got := eip8411.ProofDepth(eip8411.MaxSegments); got != eip8411.MaxProofDepth {
		t.Errorf("ProofDepth(MaxSegments) = %d, want MaxProofDepth %d", got, eip8411.MaxProofDepth)
	}
	if eip8411.MaxBodySize != 10*1024*1024 {
		t.Errorf("MaxBodySize = %d, want MAX_PAYLOAD_SIZE 10485760", eip8411.MaxBodySize)
	}
	if eip8411.MaxExecutionRequestsSize != 1_574_324 {
		t.Errorf("MaxExecutionRequestsSize = %d", eip8411.MaxExecutionRequestsSize)
	}
	// The ssz-max tags must match the constants.
	ok := &eip8411.Body{Payload: make([]byte, eip8411.MaxBodyPayloadSize)}
	if _, err := ok.Encode(); err != nil {
		t.Errorf("body of MaxBodySize: %v", err)
	}
	over := &eip8411.Body{ExecutionRequests: make([]byte, eip8411.MaxExecutionRequestsSize+1)}
	if _, err := over.Encode(); err == nil {
		t.Errorf("execution requests of %d bytes encoded", eip8411.MaxExecutionRequestsSize+1)
	}
}

func TestProofDepth(t *testing.T) {
	tests := []struct {
		count uint32
		want  int
	}{{0, 0}, {1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {32, 5}, {33, 6}, {11947, 14}, {16384, 14}, {16385, 15}}
	for _, tt := range tests {
		if got := eip8411.ProofDepth(tt.count); got != tt.want {
			t.Errorf("ProofDepth(%d) = %d, want %d", tt.count, got, tt.want)
		}
	}
}

func TestFormatName(t *testing.T) {
	if got := eip8411.FormatName(eip8411.VersionSegdiff1); got != "segdiff/1" {
		t.Errorf("FormatName(1) = %q", got)
	}
	if got := eip8411.FormatName(0); got != "" {
		t.Errorf("FormatName(0) = %q, want empty", got)
	}
}
