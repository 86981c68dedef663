package eip8411_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

// TestSyntheticBodyRatio checks the documented compressibility: a 1 MiB body
// compresses to within ±3 % (relative) of the mainnet ratio 0.71.
func TestSyntheticBodyRatio(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		_, g := mustGroup(t, seed, 1<<20)
		ratio := float64(g.CompressedSize()) / float64(g.RawSize())
		if math.Abs(ratio-eip8411.MainnetCompressionRatio) > 0.03*eip8411.MainnetCompressionRatio {
			t.Errorf("seed %d: ratio %.4f, want %.2f ± 3 %%", seed, ratio, eip8411.MainnetCompressionRatio)
		}
		t.Logf("seed %d: 1 MiB → %d bytes (ratio %.4f)", seed, g.CompressedSize(), ratio)
	}
}

func TestSyntheticBody(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		wantErr error
	}{
		{name: "minimum", size: 8},
		{name: "odd", size: 12_345},
		{name: "1 MiB", size: 1 << 20},
		{name: "too small", size: 7, wantErr: eip8411.ErrOption},
		{name: "negative", size: -1, wantErr: eip8411.ErrOption},
		{name: "too large", size: eip8411.MaxBodySize + 1, wantErr: eip8411.ErrOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := eip8411.SyntheticBody(newRand(1), tt.size)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw, err := b.Encode()
			if err != nil || len(raw) != tt.size {
				t.Fatalf("SSZ size = %d (%v), want %d", len(raw), err, tt.size)
			}
			again, _ := eip8411.SyntheticBody(newRand(1), tt.size)
			if !bytes.Equal(again.Payload, b.Payload) {
				t.Fatal("same seed, different body")
			}
			if tt.size > 64 {
				other, _ := eip8411.SyntheticBody(newRand(2), tt.size)
				if bytes.Equal(other.Payload, b.Payload) {
					t.Fatal("different seeds, same body")
				}
			}
		})
	}
}
