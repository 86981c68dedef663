package eip8411_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	gosnappy "github.com/golang/snappy"
	"github.com/klauspost/compress/snappy"

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

// TestMainnetLikeWordsRatio checks the study generator's shape and its snappy
// ratio at 1 MiB: 1.40:1 ± 2 % with golang/snappy, the block encoder Prysm's
// gossip uses and the study measured with (746,262 B per MiB there). The
// klauspost encoder (this repository's, s2.EncodeSnappyBetter) finds more
// matches in the same bytes: about 1.47:1.
func TestMainnetLikeWordsRatio(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		b := make([]byte, 1<<20)
		eip8411.MainnetLikeWords(newRand(seed), b)
		ratio := float64(len(b)) / float64(len(gosnappy.Encode(nil, b)))
		if math.Abs(ratio-1.40) > 0.02*1.40 {
			t.Errorf("seed %d: golang/snappy raw/compressed %.3f, want 1.40 ± 2 %%", seed, ratio)
		}
		better := float64(len(b)) / float64(len(snappy.Encode(nil, b)))
		if better < ratio || better > 1.55 {
			t.Errorf("seed %d: klauspost raw/compressed %.3f, want between %.3f and 1.55", seed, better, ratio)
		}
		zero := 0
		for off := 0; off < len(b); off += 32 {
			if bytes.Equal(b[off:off+29], make([]byte, 29)) {
				zero++
			}
		}
		if share := float64(zero) / float64(len(b)/32); math.Abs(share-0.41) > 0.01 {
			t.Errorf("seed %d: zero-word share %.3f, want 0.41 ± 0.01", seed, share)
		}
		t.Logf("seed %d: raw/compressed %.3f (golang/snappy), %.3f (klauspost)", seed, ratio, better)
	}
	// A partial trailing word and an empty slice are filled without panics.
	eip8411.MainnetLikeWords(newRand(1), make([]byte, 45))
	eip8411.MainnetLikeWords(newRand(1), nil)
}
