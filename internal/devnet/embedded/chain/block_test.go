package chain

import (
	"bytes"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

func testDescriptor() []byte {
	return eip8411.Descriptor{Version: eip8411.VersionSegdiff1, Count: 23, SegmentSize: 32 << 10, TotalLength: 746262, Root: [32]byte{1, 2, 3}}.Encode()
}

func TestBlockRoundTrip(t *testing.T) {
	b := Block{Slot: 7, Proposer: 42, Descriptor: testDescriptor()}
	got, err := DecodeBlock(b.Encode())
	if err != nil {
		t.Fatalf("DecodeBlock: %v", err)
	}
	if got.Slot != b.Slot || got.Proposer != b.Proposer || !bytes.Equal(got.Descriptor, b.Descriptor) || got.Root() != b.Root() {
		t.Fatalf("round trip: got %+v, want %+v", got, b)
	}
	other := Block{Slot: 7, Proposer: 42, Descriptor: append(testDescriptor()[:49], 9)}
	if other.Root() == b.Root() {
		t.Error("different descriptors give the same block root")
	}
	padded := b.Encode()
	padded[BlockSize-1] = 1
	for name, bad := range map[string][]byte{"nil": nil, "zeros (no descriptor)": make([]byte, BlockSize), "short": b.Encode()[:BlockSize-1], "dirty padding": padded} {
		if _, err := DecodeBlock(bad); err == nil {
			t.Errorf("DecodeBlock(%s) accepted it", name)
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
		if !bytes.Equal(b.Encode(), data) {
			t.Fatalf("re-encoded block differs")
		}
	})
}
