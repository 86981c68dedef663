package diffusion_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/segdiff/segdiff/diffusion"
)

func TestControlRoundTrip(t *testing.T) {
	have, want := diffusion.NewBits(23), diffusion.NewBits(23)
	have.Set(0)
	have.Set(22)
	want.Set(5)
	tests := []diffusion.Control{
		{Parts: 23, Have: have},
		{Parts: 23, Want: want},
		{Parts: 23, Have: have, Want: want},
		{Parts: 64, Have: diffusion.NewBits(64)},
		{Parts: 23, Decoded: true},
		{Parts: 23, Have: have, Decoded: true},
	}
	for _, c := range tests {
		got, err := diffusion.DecodeControl(c.Encode(), c.Parts)
		if err != nil {
			t.Fatalf("DecodeControl(%+v): %v", c, err)
		}
		if !bytes.Equal(got.Have, c.Have) || !bytes.Equal(got.Want, c.Want) || (got.Have == nil) != (c.Have == nil) || got.Decoded != c.Decoded {
			t.Errorf("round trip %+v → %+v", c, got)
		}
	}
	if !have.Has(22) || have.Has(21) || have.Count() != 2 {
		t.Errorf("bitmap %v", have)
	}
}

func TestDecodeControlRejects(t *testing.T) {
	good := diffusion.Control{Parts: 23, Have: diffusion.NewBits(23)}.Encode()
	beyond := bytes.Clone(good)
	beyond[len(beyond)-1] = 0x80 // part 23 of 23
	tests := map[string][]byte{
		"short":             {1, 0},
		"no flag":           {0, 23, 0, 0, 0, 0},
		"unknown flag":      {8, 23, 0, 0, 0, 0},
		"wrong part count":  diffusion.Control{Parts: 22, Have: diffusion.NewBits(22)}.Encode(),
		"truncated bitmap":  good[:len(good)-1],
		"trailing byte":     append(bytes.Clone(good), 0),
		"bit beyond a part": beyond,
	}
	for name, b := range tests {
		if _, err := diffusion.DecodeControl(b, 23); !errors.Is(err, diffusion.ErrControl) {
			t.Errorf("%s: DecodeControl = %v, want ErrControl", name, err)
		}
	}
}

func FuzzDecodeControl(f *testing.F) {
	f.Add(diffusion.Control{Parts: 23, Have: diffusion.NewBits(23), Want: diffusion.NewBits(23)}.Encode(), 23)
	f.Add([]byte{1, 1, 0, 1}, 1)
	f.Add(diffusion.Control{Parts: 64, Decoded: true}.Encode(), 64)
	f.Fuzz(func(t *testing.T, b []byte, parts int) {
		if parts < 0 || parts > diffusion.MaxParts {
			return
		}
		c, err := diffusion.DecodeControl(b, parts)
		if err != nil {
			return
		}
		if !bytes.Equal(c.Encode(), b) {
			t.Fatalf("re-encoded %x, decoded from %x", c.Encode(), b)
		}
	})
}
