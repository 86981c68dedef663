package eip8411_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/klauspost/compress/snappy"

	"github.com/segdiff/segdiff/eip8411"
)

// TestRoundTripV2 builds groups for both orders × (uncoded, coded) over body
// and segment sizes, sends every shard through the wire and reassembles.
func TestRoundTripV2(t *testing.T) {
	sizes := []int{8, 100, 1023, 1025, 4097, 32769, 100_003, 1 << 20}
	segSizes := []int{eip8411.MinSegmentSize, 3000, eip8411.DefaultSegmentSize, eip8411.MaxSegmentSize}
	for _, order := range orders {
		for _, coding := range codings {
			for _, size := range sizes {
				for _, segSize := range segSizes {
					if coding == eip8411.CodingReedSolomon && (size+segSize-1)/segSize > 100 {
						continue // k+k may exceed 256: TestNewGroupV2Errors covers the rejection
					}
					name := fmt.Sprintf("%v/%v/%d/%d", order, coding, size, segSize)
					t.Run(name, func(t *testing.T) {
						seed := uint64(size*7 + segSize)
						body, g := mustGroupV2(t, seed, size, eip8411.WithOrder(order), eip8411.WithCoding(coding), eip8411.WithSegmentSize(segSize))
						checkGroupV2(t, body, g, seed)
						if d := g.Descriptor(); d.Coding == eip8411.CodingReedSolomon && d.ParityShards != d.DataShards {
							t.Fatalf("default parity shards = %d, want k = %d", d.ParityShards, d.DataShards)
						}
					})
				}
			}
		}
	}
	t.Run("keccak", func(t *testing.T) {
		body, g := mustGroupV2(t, 5, 70_000, eip8411.WithHash(eip8411.HashKeccak256), eip8411.WithCoding(eip8411.CodingReedSolomon), eip8411.WithSegmentSize(4096))
		checkGroupV2(t, body, g, 5)
	})
}

// checkGroupV2 checks the descriptor against the builder's sizes, encodes
// every shard, decodes and verifies it from bytes, feeds the shards to a
// ReassemblerV2 in a seeded random order (all of them, so completion must
// come at exactly the k-th) and compares the rebuilt blocks and body.
func checkGroupV2(t *testing.T, body *eip8411.Body, g *eip8411.GroupV2, seed uint64) {
	t.Helper()
	d := g.Descriptor()
	raw, err := body.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if g.RawSize() != len(raw) || int(d.RawLength) != len(raw) {
		t.Fatalf("RawSize %d, RawLength %d, want %d", g.RawSize(), d.RawLength, len(raw))
	}
	checkBlocks(t, d, g.Compressed(), raw)
	if g.ShardCount() != int(d.ShardCount()) || d.ShardCount() != d.DataShards+d.ParityShards {
		t.Fatalf("ShardCount %d, descriptor %+v", g.ShardCount(), d)
	}
	enc, err := g.EncodedShards(testSlot, testRoot)
	if err != nil {
		t.Fatal(err)
	}
	shards := make([]*eip8411.Shard, len(enc))
	for i, b := range enc {
		s, err := eip8411.DecodeVerifyShard(b, d)
		if err != nil {
			t.Fatalf("DecodeVerifyShard(shard %d of %d): %v", i, len(enc), err)
		}
		if s.Version != eip8411.VersionSegdiff2 || s.Slot != testSlot || s.BeaconBlockRoot != testRoot || s.GroupID != g.GroupID() || s.Index != uint32(i) {
			t.Fatalf("shard %d header = (%d, %d, %x, %x, %d)", i, s.Version, s.Slot, s.BeaconBlockRoot, s.GroupID, s.Index)
		}
		shards[i] = s
	}
	r, err := eip8411.NewReassemblerV2(d)
	if err != nil {
		t.Fatal(err)
	}
	for n, i := range newRand(seed).Perm(len(shards)) {
		complete, dup, err := r.Add(shards[i])
		if err != nil || dup || complete != (n+1 >= int(d.DataShards)) {
			t.Fatalf("Add(%d) #%d = (%v, %v, %v), k = %d", i, n, complete, dup, err, d.DataShards)
		}
	}
	blocks, err := r.Compressed()
	if err != nil {
		t.Fatalf("Compressed(): %v", err)
	}
	for i := range blocks {
		if !bytes.Equal(blocks[i], g.Compressed()[i]) {
			t.Fatalf("rebuilt block %d differs from the builder's", i)
		}
	}
	got, err := r.Body()
	if err != nil {
		t.Fatalf("Body(): %v", err)
	}
	if !bytes.Equal(got.Payload, body.Payload) || !bytes.Equal(got.ExecutionRequests, body.ExecutionRequests) {
		t.Fatalf("reassembled body differs (payload %d/%d bytes)", len(got.Payload), len(body.Payload))
	}
}

// checkBlocks checks the builder's snappy blocks against the order's
// definition: one block of the whole body, or one per raw segment; their
// lengths sum to CompressedLength.
func checkBlocks(t *testing.T, d eip8411.DescriptorV2, blocks [][]byte, raw []byte) {
	t.Helper()
	total := 0
	var decoded []byte
	for i, b := range blocks {
		total += len(b)
		out, err := snappy.Decode(nil, b)
		if err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		if d.Order == eip8411.OrderCutThenCompress && len(out) != min(int(d.SegmentSize), len(raw)-len(decoded)) {
			t.Fatalf("block %d decodes to %d bytes, want a %d-byte segment", i, len(out), d.SegmentSize)
		}
		decoded = append(decoded, out...)
	}
	wantBlocks := 1
	if d.Order == eip8411.OrderCutThenCompress {
		wantBlocks = int(d.DataShards)
	}
	if len(blocks) != wantBlocks || total != int(d.CompressedLength) || !bytes.Equal(decoded, raw) {
		t.Fatalf("%d blocks of %d bytes (want %d blocks of %d) decoding to the body: %v", len(blocks), total, wantBlocks, d.CompressedLength, bytes.Equal(decoded, raw))
	}
}

func TestNewGroupV2SSZ(t *testing.T) {
	rng := newRand(3)
	body := &eip8411.Body{Payload: randomBytes(rng, 70_000), ExecutionRequests: randomBytes(rng, 5_000)}
	opts := []eip8411.Option{eip8411.WithSegmentSize(8192), eip8411.WithCoding(eip8411.CodingReedSolomon), eip8411.WithParityShards(3)}
	g, err := eip8411.NewGroupV2(body, opts...)
	if err != nil {
		t.Fatal(err)
	}
	checkGroupV2(t, body, g, 3)
	raw, err := body.Encode()
	if err != nil {
		t.Fatal(err)
	}
	g2, err := eip8411.NewGroupV2SSZ(raw, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if g2.GroupID() != g.GroupID() {
		t.Fatalf("NewGroupV2SSZ group id %x, NewGroupV2 %x", g2.GroupID(), g.GroupID())
	}
}

// TestNewGroupV2Defaults: cut-then-compress, no coding, 32 KiB, SHA-256.
func TestNewGroupV2Defaults(t *testing.T) {
	_, g := mustGroupV2(t, 1, 100_000)
	d := g.Descriptor()
	if d.Order != eip8411.OrderCutThenCompress || d.Coding != eip8411.CodingNone || d.SegmentSize != eip8411.DefaultSegmentSize || d.HashID != eip8411.HashSHA256 || d.DataShards != 4 || d.ParityShards != 0 {
		t.Fatalf("defaults: %+v", d)
	}
}

func TestNewGroupV2Errors(t *testing.T) {
	rs := eip8411.WithCoding(eip8411.CodingReedSolomon)
	small := mustBody(t, 1, 1000)        // one segment at 32 KiB
	k300 := mustBody(t, 2, 300*1024)     // 300 segments of 1 KiB
	k200 := mustBody(t, 3, 200*1024-100) // 200 segments of 1 KiB
	tests := []struct {
		name      string
		body      *eip8411.Body
		ssz       []byte
		opts      []eip8411.Option
		wantErr   error
		wantField string
	}{
		{name: "nil body", wantErr: eip8411.ErrBody, wantField: "body"},
		{name: "ssz not a body", ssz: []byte{1, 2, 3}, wantErr: eip8411.ErrBody},
		{name: "segment size below minimum", body: small, opts: []eip8411.Option{eip8411.WithSegmentSize(1023)}, wantErr: eip8411.ErrOption, wantField: "segment size"},
		{name: "unknown hash", body: small, opts: []eip8411.Option{eip8411.WithHash(7)}, wantErr: eip8411.ErrOption, wantField: "hash id"},
		{name: "order 0", body: small, opts: []eip8411.Option{eip8411.WithOrder(0)}, wantErr: eip8411.ErrOption, wantField: "order"},
		{name: "unknown coding", body: small, opts: []eip8411.Option{eip8411.WithCoding(5)}, wantErr: eip8411.ErrOption, wantField: "coding"},
		{name: "parity 0", body: small, opts: []eip8411.Option{rs, eip8411.WithParityShards(0)}, wantErr: eip8411.ErrOption, wantField: "parity shards"},
		{name: "parity 256", body: small, opts: []eip8411.Option{rs, eip8411.WithParityShards(256)}, wantErr: eip8411.ErrOption, wantField: "parity shards"},
		{name: "parity without coding", body: small, opts: []eip8411.Option{eip8411.WithParityShards(1)}, wantErr: eip8411.ErrOption, wantField: "parity shards"},
		{name: "parity above k", body: small, opts: []eip8411.Option{rs, eip8411.WithParityShards(2)}, wantErr: eip8411.ErrOption, wantField: "parity shards"},
		{name: "k = 300 coded", body: k300, opts: []eip8411.Option{rs, eip8411.WithSegmentSize(1024), eip8411.WithParityShards(1)}, wantErr: eip8411.ErrOption, wantField: "data shards"},
		{name: "k = 200, default m = k exceeds 256", body: k200, opts: []eip8411.Option{rs, eip8411.WithSegmentSize(1024)}, wantErr: eip8411.ErrOption, wantField: "parity shards"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := buildErr(tt.body, tt.ssz, tt.opts, eip8411.NewGroupV2, eip8411.NewGroupV2SSZ)
			if tt.wantField == "" {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			checkFieldErrs(t, tt.wantErr, tt.wantField, err)
		})
	}
	// The same k = 200 body builds with an explicit m ≤ 56.
	if _, err := eip8411.NewGroupV2(k200, rs, eip8411.WithSegmentSize(1024), eip8411.WithParityShards(56)); err != nil {
		t.Fatalf("k = 200, m = 56: %v", err)
	}
}

// TestNewGroupRejectsV2Options: segdiff/1's builder refuses options it cannot
// honour instead of ignoring them.
func TestNewGroupRejectsV2Options(t *testing.T) {
	body := mustBody(t, 1, 1000)
	for name, opt := range map[string]eip8411.Option{
		"order":         eip8411.WithOrder(eip8411.OrderCompressThenCut),
		"coding":        eip8411.WithCoding(eip8411.CodingNone),
		"parity shards": eip8411.WithParityShards(1),
	} {
		_, err := eip8411.NewGroup(body, opt)
		var fe *eip8411.FieldError
		if !errors.Is(err, eip8411.ErrOption) || !errors.As(err, &fe) || fe.Got != name {
			t.Errorf("NewGroup(With %s) = %v, want ErrOption naming %q", name, err, name)
		}
	}
}

// TestMainnetLikeSizesV2 measures the figures README.md quotes for the 1 MiB
// mainnet-like body at 32 KiB: shards, bytes per shard and bytes on the wire
// (encoded Shard messages) for k and for k+m shards. Run with -v to see them.
func TestMainnetLikeSizesV2(t *testing.T) {
	body := mustBody(t, 1, 1<<20)
	g1, err := eip8411.NewGroup(body)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("segdiff/1: %d segments, compressed %d B", g1.Descriptor().Count, g1.CompressedSize())
	t.Logf("%-18s %-13s %3s %3s %10s %11s %11s %11s %11s", "order", "coding", "k", "m", "shard B", "compressed", "wire k", "wire k+m", "mean block")
	for _, order := range orders {
		for _, coding := range codings {
			g, err := eip8411.NewGroupV2(body, eip8411.WithOrder(order), eip8411.WithCoding(coding))
			if err != nil {
				t.Fatal(err)
			}
			d := g.Descriptor()
			enc, err := g.EncodedShards(testSlot, testRoot)
			if err != nil {
				t.Fatal(err)
			}
			wireK, wireAll := 0, 0
			for i, b := range enc {
				if i < int(d.DataShards) {
					wireK += len(b)
				}
				wireAll += len(b)
			}
			wantK := map[eip8411.Order]uint32{eip8411.OrderCompressThenCut: 23, eip8411.OrderCutThenCompress: 32}[order]
			if d.DataShards != wantK || (coding == eip8411.CodingReedSolomon) != (d.ParityShards == wantK) {
				t.Errorf("%v/%v: %d+%d shards, want %d data shards, m = k when coded", order, coding, d.DataShards, d.ParityShards, wantK)
			}
			if order == eip8411.OrderCompressThenCut {
				checkSameCutsAsV1(t, g, g1)
			}
			mean := float64(g.CompressedSize()) / float64(len(g.Compressed()))
			if order == eip8411.OrderCutThenCompress && (mean < 22_000 || mean > 26_000) {
				t.Errorf("cut-then-compress mean block %.0f B, want ≈23–25 KB", mean)
			}
			t.Logf("%-18v %-13v %3d %3d %10d %11d %11d %11d %11.0f", order, coding, d.DataShards, d.ParityShards, d.ShardSize, g.CompressedSize(), wireK, wireAll, mean)
		}
	}
}

// checkSameCutsAsV1: a compress-then-cut group's data shards are segdiff/1's
// segments (the last zero-padded when coded).
func checkSameCutsAsV1(t *testing.T, g *eip8411.GroupV2, g1 *eip8411.Group) {
	t.Helper()
	if g.CompressedSize() != g1.CompressedSize() {
		t.Fatalf("compressed %d, segdiff/1 %d", g.CompressedSize(), g1.CompressedSize())
	}
	segs := g1.Segments(testSlot, testRoot)
	for i, s := range g.Shards(testSlot, testRoot)[:len(segs)] {
		if !bytes.HasPrefix(s.Data, segs[i].Data) || !allZero(s.Data[len(segs[i].Data):]) {
			t.Fatalf("shard %d is not segdiff/1 segment %d (+ zero padding)", i, i)
		}
	}
}

func allZero(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }
