package eip8411

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/snappy"
)

// commitV2 commits, as a dishonest builder could, to blocks laid out as d's
// order and coding say (d's Version, HashID, Order, Coding, SegmentSize,
// RawLength and ParityShards are used; the other fields are derived). fix
// edits the derived descriptor (a larger coded ShardSize pads every shard),
// beforeParity edits the data shards before the parity is computed (the code
// stays consistent), afterParity edits any shard after it (the code becomes
// inconsistent). Each may be nil. The descriptor must come out valid.
func commitV2(t testing.TB, d DescriptorV2, blocks [][]byte, beforeParity, afterParity func([][]byte), fix func(*DescriptorV2)) *GroupV2 {
	t.Helper()
	m := int(d.ParityShards)
	shards, size := formDataShards(d.Order, blocks, int(d.SegmentSize), m)
	k := len(shards) - m
	d.DataShards, d.ShardSize, d.CompressedLength = uint32(k), uint32(size), 0
	for _, b := range blocks {
		d.CompressedLength += uint64(len(b))
	}
	if fix != nil {
		fix(&d)
	}
	if m > 0 && int(d.ShardSize) > size { // a fixed-up coded shard size: pad every shard
		for i, s := range shards {
			shards[i] = append(s[:len(s):len(s)], make([]byte, int(d.ShardSize)-size)...)
		}
	}
	if beforeParity != nil {
		beforeParity(shards)
	}
	if m > 0 {
		if err := encodeParity(k, shards); err != nil {
			t.Fatal(err)
		}
	}
	if afterParity != nil {
		afterParity(shards)
	}
	g, err := commitGroupV2(d, blocks, shards)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	return g
}

// rebuildFrom feeds the shards at indices to a new ReassemblerV2 (every one
// must verify), rebuilds, and returns it with the Body and Compressed error,
// which must agree.
func rebuildFrom(t testing.TB, g *GroupV2, indices []int) (*ReassemblerV2, error) {
	t.Helper()
	r, err := NewReassemblerV2(g.Descriptor())
	if err != nil {
		t.Fatal(err)
	}
	shards := g.Shards(1, [32]byte{})
	for _, i := range indices {
		if _, _, err := r.Add(shards[i]); err != nil {
			t.Fatalf("Add(%d): %v (every committed shard verifies)", i, err)
		}
	}
	_, bodyErr := r.Body()
	_, compErr := r.Compressed()
	if (bodyErr == nil) != (compErr == nil) || (bodyErr != nil && bodyErr.Error() != compErr.Error()) {
		t.Fatalf("Body() = %v but Compressed() = %v", bodyErr, compErr)
	}
	return r, bodyErr
}

// rebuildErr is rebuildFrom's error.
func rebuildErr(t testing.TB, g *GroupV2, indices []int) error {
	t.Helper()
	_, err := rebuildFrom(t, g, indices)
	return err
}

func span(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// honestBlocks returns the template descriptor and the snappy blocks of a
// random body of rawLen bytes (1 KiB segments) in the given order.
func honestBlocks(t testing.TB, order Order, coding Coding, m, rawLen int, seed uint64) (DescriptorV2, [][]byte) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	payload := make([]byte, rawLen-bodyFixedSize)
	for i := range payload {
		payload[i] = byte(rng.IntN(16)) // compressible, so blocks differ in length
	}
	raw, err := (&Body{Payload: payload, ExecutionRequests: []byte{}}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	d := DescriptorV2{Version: VersionSegdiff2, Order: order, Coding: coding, SegmentSize: 1024, RawLength: uint64(rawLen), ParityShards: uint32(m)}
	if order == OrderCompressThenCut {
		return d, [][]byte{snappy.Encode(nil, raw)}
	}
	var blocks [][]byte
	for off := 0; off < len(raw); off += 1024 {
		blocks = append(blocks, snappy.Encode(nil, raw[off:min(off+1024, len(raw))]))
	}
	return d, blocks
}

// TestInconsistentCodeRejected commits to a coded group whose shards are not
// one Reed–Solomon codeword — a parity shard that is not the encoding of the
// data, or a data shard changed after the parity was computed — and checks
// that every shard still verifies, yet every rebuild fails with
// ErrInconsistentCode, whichever k (or more) shards it starts from: data
// only, mixed with and without the tampered shard, parity only, all.
func TestInconsistentCodeRejected(t *testing.T) {
	for _, order := range []Order{OrderCompressThenCut, OrderCutThenCompress} {
		d, blocks := honestBlocks(t, order, CodingReedSolomon, 0, 6*1024-100, 1)
		uncoded, _ := formDataShards(d.Order, blocks, int(d.SegmentSize), 0)
		k := len(uncoded)
		d.ParityShards = uint32(k)
		if honest := commitV2(t, d, blocks, nil, nil, nil); rebuildErr(t, honest, span(0, k)) != nil {
			t.Fatalf("%v: honest group does not rebuild", order)
		}
		tampers := map[string]func(s [][]byte){
			"parity 0 not the encoding":       func(s [][]byte) { s[k][7] ^= 0x5a },
			"last parity not the encoding":    func(s [][]byte) { s[2*k-1][len(s[2*k-1])-1] ^= 1 },
			"data 0 changed after the parity": func(s [][]byte) { s[0][9] ^= 0x01 },
			"every parity shard zeroed":       func(s [][]byte) { zero(s[k:]) },
		}
		subsets := map[string][]int{
			"data only":                      span(0, k),
			"k-1 data + tampered parity 0":   append(span(1, k), k),
			"k-1 data + untampered parity 1": append(span(1, k), k+1),
			"parity only":                    span(k, 2*k),
			"all shards":                     span(0, 2*k),
			"half data + half parity":        append(span(k/2, k), span(k, k+k/2)...),
		}
		for tname, tamper := range tampers {
			g := commitV2(t, d, blocks, nil, tamper, nil)
			for sname, subset := range subsets {
				t.Run(fmt.Sprintf("%v/%s/%s", order, tname, sname), func(t *testing.T) {
					err := rebuildErr(t, g, subset)
					var fe *FieldError
					if !errors.Is(err, ErrInconsistentCode) || !errors.As(err, &fe) || fe.Field != "root" {
						t.Fatalf("rebuild = %v, want ErrInconsistentCode on root", err)
					}
					if Reason(err) != "" {
						t.Fatalf("Reason(%v) = %q: a group-level verdict is not a shard rejection", err, Reason(err))
					}
				})
			}
		}
	}
}

func zero(shards [][]byte) {
	for _, s := range shards {
		clear(s)
	}
}

// TestRebuildRejectsMalformedLayout: a consistent code over shards that are
// not a canonical layout of snappy blocks of a Body gives ErrBody naming what
// is wrong; the proofs cannot see any of it.
func TestRebuildRejectsMalformedLayout(t *testing.T) {
	const raw = 3*1024 - 300
	prefixed := func(i int, f func(s []byte)) func([][]byte) { return func(s [][]byte) { f(s[i]) } }
	tests := []struct {
		name         string
		order        Order
		coding       Coding
		blocks       func(blocks [][]byte) [][]byte
		beforeParity func([][]byte)
		fix          func(*DescriptorV2)
		wantField    string
	}{
		{name: "length prefix 0", order: OrderCutThenCompress, coding: CodingReedSolomon,
			beforeParity: prefixed(0, func(s []byte) { binary.LittleEndian.PutUint32(s, 0) }), wantField: "shard[0] length prefix"},
		{name: "length prefix past the shard", order: OrderCutThenCompress, coding: CodingReedSolomon,
			beforeParity: prefixed(1, func(s []byte) { binary.LittleEndian.PutUint32(s, uint32(len(s)-3)) }), wantField: "shard[1] length prefix"},
		{name: "non-zero padding after a block", order: OrderCutThenCompress, coding: CodingReedSolomon,
			beforeParity: prefixed(2, func(s []byte) { s[len(s)-1] = 1 }), wantField: "shard[2] padding"},
		{name: "blocks shorter than compressed_length", order: OrderCutThenCompress, coding: CodingReedSolomon,
			fix: func(d *DescriptorV2) { d.CompressedLength++ }, wantField: "compressed_length"},
		{name: "uncoded blocks shorter than compressed_length", order: OrderCutThenCompress, coding: CodingNone,
			fix: func(d *DescriptorV2) { d.CompressedLength++ }, wantField: "compressed_length"},
		{name: "shard size above 4 + longest block", order: OrderCutThenCompress, coding: CodingReedSolomon,
			fix: func(d *DescriptorV2) { d.ShardSize++ }, wantField: "shard_size"},
		{name: "uncoded shard size above the longest block", order: OrderCutThenCompress, coding: CodingNone,
			fix: func(d *DescriptorV2) { d.ShardSize++ }, wantField: "shard_size"},
		{name: "block not snappy", order: OrderCutThenCompress, coding: CodingReedSolomon,
			blocks: func(b [][]byte) [][]byte { b[1] = bytes.Repeat([]byte{0xff}, len(b[1])); return b }},
		{name: "block decodes to the wrong length", order: OrderCutThenCompress, coding: CodingNone,
			blocks: func(b [][]byte) [][]byte { b[0] = snappy.Encode(nil, make([]byte, 1000)); return b }, wantField: "decoded length"},
		{name: "blocks decode to a non-Body", order: OrderCutThenCompress, coding: CodingReedSolomon,
			blocks: func(b [][]byte) [][]byte {
				b[0] = snappy.Encode(nil, append([]byte{0xff, 0xff, 0, 0}, make([]byte, 1020)...))
				return b
			}},
		{name: "compress-then-cut non-zero padding", order: OrderCompressThenCut, coding: CodingReedSolomon,
			beforeParity: func(s [][]byte) { s[len(s)-3][1023] = 7 }, wantField: "shard[2] padding"}, // k = 3, m = 2
		{name: "compress-then-cut whole block of the wrong length", order: OrderCompressThenCut, coding: CodingNone,
			blocks: func(b [][]byte) [][]byte { return [][]byte{snappy.Encode(nil, make([]byte, raw-1))} }, wantField: "decoded length"},
		{name: "compress-then-cut not snappy", order: OrderCompressThenCut, coding: CodingReedSolomon,
			blocks: func(b [][]byte) [][]byte { return [][]byte{bytes.Repeat([]byte{0x80}, 1500)} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, blocks := honestBlocks(t, tt.order, tt.coding, 0, raw, 2)
			if tt.coding == CodingReedSolomon {
				d.ParityShards = 2
			}
			if tt.blocks != nil {
				blocks = tt.blocks(blocks)
			}
			g := commitV2(t, d, blocks, tt.beforeParity, nil, tt.fix)
			k := int(g.Descriptor().DataShards)
			for _, subset := range [][]int{span(0, g.ShardCount()), span(g.ShardCount()-k, g.ShardCount())} {
				err := rebuildErr(t, g, subset)
				var fe *FieldError
				if !errors.Is(err, ErrBody) || (tt.wantField != "" && (!errors.As(err, &fe) || fe.Field != tt.wantField)) {
					t.Fatalf("rebuild from %v = %v, want ErrBody on %q", subset, err, tt.wantField)
				}
			}
		})
	}
}
