package eip8411_test

import (
	"errors"
	"testing"
	"testing/quick"

	"github.com/segdiff/segdiff/eip8411"
)

// TestPropertyAnyPermutationReassembles: for random bodies, segment sizes and
// orders (with duplicates interleaved), the Reassembler rebuilds the body.
func TestPropertyAnyPermutationReassembles(t *testing.T) {
	prop := func(seed uint64, sizeSel uint32, segSel uint16) bool {
		size := 8 + int(sizeSel%(300<<10))
		segSize := eip8411.MinSegmentSize + int(segSel)%(64<<10)
		body, g := mustGroup(t, seed, size, eip8411.WithSegmentSize(segSize))
		segs := g.Segments(testSlot, testRoot)
		rng := newRand(seed ^ 0xabcdef)
		r, err := eip8411.NewReassembler(g.Descriptor())
		if err != nil {
			t.Log(err)
			return false
		}
		held := map[int]bool{}
		for _, i := range rng.Perm(len(segs)) {
			for _, j := range []int{i, rng.IntN(len(segs))} { // a fresh one, then maybe a duplicate
				complete, dup, err := r.Add(segs[j])
				if err != nil || dup != held[j] {
					t.Logf("Add(%d): dup %v err %v (held %v)", j, dup, err, held[j])
					return false
				}
				held[j] = true
				if complete != (len(held) == len(segs)) {
					return false
				}
			}
		}
		got, err := r.Body()
		return err == nil && string(got.Payload) == string(body.Payload)
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 40}); err != nil {
		t.Fatal(err)
	}
}

// TestPropertySingleBitFlipRejected flips every bit of every authenticated
// byte of an encoded segment (group id, index, offsets, proof, data) and
// expects DecodeVerify to fail. Slot and block root are unauthenticated
// hints by design: the receiver picks the descriptor by them, so a flip there
// is caught by the lookup, not by Verify; the test asserts exactly that.
func TestPropertySingleBitFlipRejected(t *testing.T) {
	g, segs := tamperGroup(t)
	d := g.Descriptor()
	for _, idx := range []int{0, 2, len(segs) - 1} {
		data, err := segs[idx].Encode()
		if err != nil {
			t.Fatal(err)
		}
		// Every bit for the header and proof, a seeded sample of data bits.
		rng := newRand(uint64(idx))
		positions := make([]int, 0, 2000)
		for bit := 0; bit < (eip8411.SegmentFixedSize+32*len(segs[idx].Proof))*8; bit++ {
			positions = append(positions, bit)
		}
		for range 500 {
			positions = append(positions, rng.IntN(len(data)*8))
		}
		for _, bit := range positions {
			b := append([]byte(nil), data...)
			b[bit/8] ^= 1 << (bit % 8)
			_, err := eip8411.DecodeVerify(b, d)
			hint := bit/8 < 40 // slot (0..7) and beacon_block_root (8..39)
			if hint {
				if err != nil {
					t.Fatalf("segment %d bit %d (hint field): err = %v, want accepted", idx, bit, err)
				}
				continue
			}
			if err == nil {
				t.Fatalf("segment %d: flipping bit %d (byte %d) was accepted", idx, bit, bit/8)
			}
			if eip8411.Reason(err) == "" {
				t.Fatalf("segment %d bit %d: error %v has no reason label", idx, bit, err)
			}
			var fe *eip8411.FieldError
			if !errors.As(err, &fe) && !errors.Is(err, eip8411.ErrDecode) {
				t.Fatalf("segment %d bit %d: untyped error %v", idx, bit, err)
			}
		}
	}
}
