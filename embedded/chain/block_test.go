package embedded

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

func testDescriptor() eip8411.Descriptor {
	return eip8411.Descriptor{Version: eip8411.VersionSegdiff1, Count: 23, SegmentSize: 32 << 10, TotalLength: 746262, Root: [32]byte{1, 2, 3}}
}

func TestBlockRoundTrip(t *testing.T) {
	b := block{Slot: 7, Proposer: 42, Descriptor: testDescriptor()}
	got, err := decodeBlock(b.encode())
	if err != nil {
		t.Fatalf("decodeBlock: %v", err)
	}
	if got != b || got.root() != b.root() {
		t.Fatalf("round trip: got %+v, want %+v", got, b)
	}
	for _, bad := range [][]byte{nil, make([]byte, blockSize), b.encode()[:blockSize-1]} {
		if _, err := decodeBlock(bad); err == nil {
			t.Errorf("decodeBlock(%d bytes) accepted garbage", len(bad))
		}
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	root := [32]byte{9}
	data := encodeEnvelope(5, root, []byte("payload"))
	slot, gotRoot, body, err := decodeEnvelope(data)
	if err != nil || slot != 5 || gotRoot != root || string(body) != "payload" {
		t.Fatalf("decodeEnvelope = %d, %x, %q, %v", slot, gotRoot, body, err)
	}
	if s, ok := payloadSlot(data); !ok || s != 5 {
		t.Errorf("payloadSlot = %d, %v; want 5", s, ok)
	}
	if _, _, _, err := decodeEnvelope(data[:envelopeHeader-1]); err == nil {
		t.Error("decodeEnvelope accepted a short header")
	}
}

func FuzzDecodeBlock(f *testing.F) {
	f.Add(block{Slot: 1, Descriptor: testDescriptor()}.encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := decodeBlock(data)
		if err != nil {
			return
		}
		// A decoded block re-encodes to the same header.
		if !bytes.Equal(b.encode()[:blockHeaderLen], data[:blockHeaderLen]) {
			t.Fatalf("re-encoded header differs")
		}
	})
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add(encodeEnvelope(3, [32]byte{1}, []byte{1, 2, 3}))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, data []byte) {
		slot, root, body, err := decodeEnvelope(data)
		if err != nil {
			return
		}
		if !bytes.Equal(encodeEnvelope(slot, root, body), data) {
			t.Fatalf("re-encoded envelope differs")
		}
	})
}

// A whole envelope is checked against the installed bid's commitment: the
// right bytes pass; a flipped byte, a cut body or another block's root fail.
func TestVerifyWhole(t *testing.T) {
	body, err := eip8411.SyntheticBody(rand.New(rand.NewPCG(1, 2)), 64<<10)
	if err != nil {
		t.Fatalf("SyntheticBody: %v", err)
	}
	g, err := eip8411.NewGroup(body)
	if err != nil {
		t.Fatalf("NewGroup: %v", err)
	}
	blk := block{Slot: 3, Descriptor: g.Descriptor()}
	st := &nodeSlot{blk: blk, root: blk.root()}
	good := g.Compressed()
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"committed bytes", encodeEnvelope(3, st.root, good), nil},
		{"flipped byte", encodeEnvelope(3, st.root, flipped), eip8411.ErrProof},
		{"cut body", encodeEnvelope(3, st.root, good[:len(good)-1]), eip8411.ErrSize},
		{"other block", encodeEnvelope(3, [32]byte{9}, good), errWrongBlock},
		{"short", []byte{1, 2, 3}, eip8411.ErrDecode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := verifyWhole(tt.data, st)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("verifyWhole = %v, want %v", err, tt.want)
			}
		})
	}
}
