package eip8411

import (
	"errors"
	"testing"

	"github.com/klauspost/compress/snappy"
)

// commitRaw builds a valid descriptor and segments over arbitrary "compressed"
// bytes, as a dishonest builder could.
func commitRaw(t *testing.T, compressed []byte) (Descriptor, []*Segment) {
	t.Helper()
	const size = MinSegmentSize
	count := (len(compressed) + size - 1) / size
	tree := buildTree(HashSHA256, compressed, size, count)
	g := &Group{compressed: compressed, tree: tree}
	g.desc = Descriptor{Version: VersionSegdiff1, Count: uint32(count), SegmentSize: size, TotalLength: uint64(len(compressed)), Root: tree.root()}
	if err := g.desc.Validate(); err != nil {
		t.Fatal(err)
	}
	g.id = g.desc.GroupID()
	return g.desc, g.Segments(1, [32]byte{})
}

// TestBodyRejectsDishonestCommitment: segments that verify against the
// descriptor but do not form a snappy-compressed Body give ErrBody.
func TestBodyRejectsDishonestCommitment(t *testing.T) {
	trailing := append(snappy.Encode(nil, make([]byte, 16)), 0x01) // trailing garbage
	tests := []struct {
		name       string
		compressed []byte
	}{
		{name: "not snappy", compressed: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{name: "decoded length above MaxBodySize", compressed: append(snappyHeader(MaxBodySize+1), 0)},
		{name: "decoded length below the body's fixed part", compressed: snappy.Encode(nil, []byte{1, 2, 3})},
		{name: "snappy but not a Body", compressed: snappy.Encode(nil, []byte{200, 0, 0, 0, 8, 0, 0, 0, 1, 2})},
		{name: "trailing garbage", compressed: trailing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, segs := commitRaw(t, tt.compressed)
			r, err := NewReassembler(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range segs {
				if _, _, err := r.Add(s); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := r.Body(); !errors.Is(err, ErrBody) {
				t.Fatalf("Body() = %v, want ErrBody", err)
			}
		})
	}
}

// snappyHeader returns the varint length header of a snappy block.
func snappyHeader(n int) []byte {
	var b []byte
	for u := uint64(n); ; u >>= 7 {
		if u < 0x80 {
			return append(b, byte(u))
		}
		b = append(b, byte(u)|0x80)
	}
}
