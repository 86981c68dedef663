package eip8411

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzRebuildV2 commits, with a consistent code, to arbitrary bytes as the
// compressed blocks of a small group (either order, coded or not) and
// rebuilds it from a rotating subset of shards: the rebuild must never panic
// or report an inconsistent code, must fail with ErrBody unless the blocks
// are a snappy layout of a Body of raw_length bytes, and a success must
// return exactly the committed blocks.
func FuzzRebuildV2(f *testing.F) {
	for _, order := range []Order{OrderCompressThenCut, OrderCutThenCompress} {
		d, blocks := honestBlocks(f, order, CodingNone, 0, 2000, 3)
		f.Add(bytes.Join(blocks, nil), uint16(len(blocks[0])), byte(order)-1, byte(1), uint16(d.RawLength), byte(0))
	}
	f.Add([]byte{0x08, 0x1c, 0x08, 0, 0, 0, 0x08, 0, 0, 0}, uint16(5), byte(2), byte(1), uint16(8), byte(1))
	f.Fuzz(func(t *testing.T, blob []byte, cut uint16, order, coding byte, rawLen uint16, start byte) {
		d := DescriptorV2{Version: VersionSegdiff2, Order: Order(order%2 + 1), Coding: Coding(coding % 2), SegmentSize: 1024, RawLength: uint64(rawLen)}
		var blocks [][]byte
		switch {
		case d.RawLength < bodyFixedSize || d.RawLength > 2048 || len(blob) == 0 || len(blob) > 3000:
			return
		case d.Order == OrderCompressThenCut:
			blocks = [][]byte{blob}
		case d.RawLength <= 1024:
			blocks = [][]byte{blob}
		default: // two raw segments: blob cut in two non-empty blocks
			c := 1 + int(cut)%max(len(blob)-1, 1)
			if c >= len(blob) {
				return
			}
			blocks = [][]byte{blob[:c], blob[c:]}
		}
		if d.Coding == CodingReedSolomon {
			d.ParityShards = 1
		}
		m := int(d.ParityShards)
		shards, size := formDataShards(d.Order, blocks, int(d.SegmentSize), m)
		d.DataShards, d.ShardSize, d.CompressedLength = uint32(len(shards)-m), uint32(size), uint64(len(blob))
		if d.Validate() != nil {
			return
		}
		g := commitV2(t, d, blocks, nil, nil, nil)
		n, k := g.ShardCount(), int(d.DataShards)
		subset := make([]int, k)
		for i := range subset {
			subset[i] = (int(start) + i) % n
		}
		r, err := rebuildFrom(t, g, subset)
		if err != nil {
			if !errors.Is(err, ErrBody) || errors.Is(err, ErrInconsistentCode) {
				t.Fatalf("rebuild = %v, want ErrBody", err)
			}
			return
		}
		body, _ := r.Body()
		raw, err := body.Encode()
		if err != nil || len(raw) != int(d.RawLength) {
			t.Fatalf("body of %d bytes (%v), raw_length %d", len(raw), err, d.RawLength)
		}
		got, err := r.Compressed()
		if err != nil || !bytes.Equal(bytes.Join(got, nil), blob) || len(got) != len(blocks) {
			t.Fatalf("Compressed() = %d blocks, %v", len(got), err)
		}
	})
}
