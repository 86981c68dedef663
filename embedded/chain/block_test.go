package chain

import (
	"bytes"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

func testDescriptor() eip8411.Descriptor {
	return eip8411.Descriptor{Version: eip8411.VersionSegdiff1, Count: 23, SegmentSize: 32 << 10, TotalLength: 746262, Root: [32]byte{1, 2, 3}}
}

func TestBlockRoundTrip(t *testing.T) {
	b := Block{Slot: 7, Proposer: 42, Descriptor: testDescriptor()}
	got, err := DecodeBlock(b.Encode())
	if err != nil {
		t.Fatalf("decodeBlock: %v", err)
	}
	if got != b || got.Root() != b.Root() {
		t.Fatalf("round trip: got %+v, want %+v", got, b)
	}
	for _, bad := range [][]byte{nil, make([]byte, BlockSize), b.Encode()[:BlockSize-1]} {
		if _, err := DecodeBlock(bad); err == nil {
			t.Errorf("DecodeBlock(%d bytes) accepted garbage", len(bad))
		}
	}
}

func FuzzDecodeBlock(f *testing.F) {
	f.Add(Block{Slot: 1, Descriptor: testDescriptor()}.Encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBlock(data)
		if err != nil {
			return
		}
		// A decoded block re-encodes to the same header.
		if !bytes.Equal(b.Encode()[:blockHeaderLen], data[:blockHeaderLen]) {
			t.Fatalf("re-encoded header differs")
		}
	})
}
