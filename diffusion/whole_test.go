package diffusion

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

func TestEnvelopeRoundTrip(t *testing.T) {
	root := [32]byte{9}
	data := EncodeEnvelope(5, root, []byte("payload"))
	slot, gotRoot, body, err := DecodeEnvelope(data)
	if err != nil || slot != 5 || gotRoot != root || string(body) != "payload" {
		t.Fatalf("decodeEnvelope = %d, %x, %q, %v", slot, gotRoot, body, err)
	}
	if s, ok := payloadSlot(data); !ok || s != 5 {
		t.Errorf("payloadSlot = %d, %v; want 5", s, ok)
	}
	if _, _, _, err := DecodeEnvelope(data[:envelopeHeader-1]); err == nil {
		t.Error("decodeEnvelope accepted a short header")
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add(EncodeEnvelope(3, [32]byte{1}, []byte{1, 2, 3}))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, data []byte) {
		slot, root, body, err := DecodeEnvelope(data)
		if err != nil {
			return
		}
		if !bytes.Equal(EncodeEnvelope(slot, root, body), data) {
			t.Fatalf("re-encoded envelope differs")
		}
	})
}

// A whole envelope is checked against the installed bid's commitment: the
// right bytes pass; a flipped byte, a cut body or another block's root fail.
func TestVerifyEnvelope(t *testing.T) {
	body, err := eip8411.SyntheticBody(rand.New(rand.NewPCG(1, 2)), 64<<10)
	if err != nil {
		t.Fatalf("SyntheticBody: %v", err)
	}
	g, err := eip8411.NewGroup(body)
	if err != nil {
		t.Fatalf("NewGroup: %v", err)
	}
	st, err := NewCommitment(3, [32]byte{7}, g.Descriptor().Encode())
	if err != nil {
		t.Fatal(err)
	}
	good := g.Compressed()
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"committed bytes", EncodeEnvelope(3, st.BlockRoot, good), nil},
		{"flipped byte", EncodeEnvelope(3, st.BlockRoot, flipped), eip8411.ErrProof},
		{"cut body", EncodeEnvelope(3, st.BlockRoot, good[:len(good)-1]), eip8411.ErrSize},
		{"other block", EncodeEnvelope(3, [32]byte{9}, good), errWrongBlock},
		{"short", []byte{1, 2, 3}, eip8411.ErrDecode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyEnvelope(tt.data, st)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("VerifyEnvelope = %v, want %v", err, tt.want)
			}
		})
	}
}
