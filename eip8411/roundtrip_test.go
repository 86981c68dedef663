package eip8411_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

func TestRoundTrip(t *testing.T) {
	sizes := []int{8, 9, 100, 1023, 1024, 1025, 4097, 32767, 32768, 32769, 100_003, 1 << 20, 2 << 20}
	segSizes := []int{eip8411.MinSegmentSize, 3000, 4096, eip8411.DefaultSegmentSize, 100_000, eip8411.MaxSegmentSize}
	for _, size := range sizes {
		for _, segSize := range segSizes {
			for _, hash := range []eip8411.HashID{eip8411.HashSHA256, eip8411.HashKeccak256} {
				if hash == eip8411.HashKeccak256 && segSize != eip8411.DefaultSegmentSize {
					continue // Keccak only needs one segment size
				}
				t.Run("", func(t *testing.T) {
					seed := uint64(size*7 + segSize)
					body, g := mustGroup(t, seed, size, eip8411.WithSegmentSize(segSize), eip8411.WithHash(hash))
					checkGroup(t, body, g, segSize, seed)
				})
			}
		}
	}
}

// checkGroup encodes every segment, decodes and verifies it from bytes, feeds
// the segments to a Reassembler in a seeded random order and compares the
// rebuilt body.
func checkGroup(t *testing.T, body *eip8411.Body, g *eip8411.Group, segSize int, seed uint64) {
	t.Helper()
	d := g.Descriptor()
	raw, err := body.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if g.RawSize() != len(raw) {
		t.Fatalf("RawSize = %d, want %d", g.RawSize(), len(raw))
	}
	wantCount := (g.CompressedSize() + segSize - 1) / segSize
	if int(d.Count) != wantCount || int(d.SegmentSize) != segSize || int(d.TotalLength) != g.CompressedSize() {
		t.Fatalf("descriptor %+v, want count %d size %d total %d", d, wantCount, segSize, g.CompressedSize())
	}
	enc, err := g.EncodedSegments(testSlot, testRoot)
	if err != nil {
		t.Fatal(err)
	}
	segs := make([]*eip8411.Segment, len(enc))
	for i, b := range enc {
		s, err := eip8411.DecodeVerify(b, d)
		if err != nil {
			t.Fatalf("DecodeVerify(segment %d of %d): %v", i, len(enc), err)
		}
		if s.Slot != testSlot || s.BeaconBlockRoot != testRoot || s.GroupID != g.GroupID() || s.Index != uint32(i) {
			t.Fatalf("segment %d header = (%d, %x, %x, %d)", i, s.Slot, s.BeaconBlockRoot, s.GroupID, s.Index)
		}
		segs[i] = s
	}
	r, err := eip8411.NewReassembler(d)
	if err != nil {
		t.Fatal(err)
	}
	order := newRand(seed).Perm(len(segs))
	for n, i := range order {
		complete, dup, err := r.Add(segs[i])
		if err != nil || dup || complete != (n == len(segs)-1) {
			t.Fatalf("Add(%d) #%d = (%v, %v, %v)", i, n, complete, dup, err)
		}
	}
	compressed, err := r.Compressed()
	if err != nil || !bytes.Equal(compressed, g.Compressed()) {
		t.Fatalf("Compressed() differs from the builder's (err %v)", err)
	}
	got, err := r.Body()
	if err != nil {
		t.Fatalf("Body(): %v", err)
	}
	if !bytes.Equal(got.Payload, body.Payload) || !bytes.Equal(got.ExecutionRequests, body.ExecutionRequests) {
		t.Fatalf("reassembled body differs (payload %d/%d bytes)", len(got.Payload), len(body.Payload))
	}
}

func TestRoundTripExecutionRequests(t *testing.T) {
	rng := newRand(3)
	body := &eip8411.Body{Payload: randomBytes(rng, 70_000), ExecutionRequests: randomBytes(rng, 5_000)}
	g, err := eip8411.NewGroup(body, eip8411.WithSegmentSize(8192))
	if err != nil {
		t.Fatal(err)
	}
	checkGroup(t, body, g, 8192, 3)

	raw, err := body.Encode()
	if err != nil {
		t.Fatal(err)
	}
	g2, err := eip8411.NewGroupSSZ(raw, eip8411.WithSegmentSize(8192))
	if err != nil {
		t.Fatal(err)
	}
	if g2.GroupID() != g.GroupID() {
		t.Fatalf("NewGroupSSZ group id %x, NewGroup %x", g2.GroupID(), g.GroupID())
	}
}

func TestNewGroupErrors(t *testing.T) {
	tests := []struct {
		name    string
		body    *eip8411.Body
		ssz     []byte
		opts    []eip8411.Option
		wantErr error
	}{
		{name: "nil body", wantErr: eip8411.ErrBody},
		{name: "segment size below minimum", body: &eip8411.Body{}, opts: []eip8411.Option{eip8411.WithSegmentSize(1023)}, wantErr: eip8411.ErrOption},
		{name: "segment size above maximum", body: &eip8411.Body{}, opts: []eip8411.Option{eip8411.WithSegmentSize(1<<20 + 1)}, wantErr: eip8411.ErrOption},
		{name: "unknown hash", body: &eip8411.Body{}, opts: []eip8411.Option{eip8411.WithHash(7)}, wantErr: eip8411.ErrOption},
		{name: "body above MaxBodySize", body: &eip8411.Body{Payload: make([]byte, eip8411.MaxBodyPayloadSize), ExecutionRequests: []byte{1}}, wantErr: eip8411.ErrBody},
		{name: "ssz not a body", ssz: []byte{1, 2, 3}, wantErr: eip8411.ErrBody},
		{name: "ssz bad offsets", ssz: []byte{9, 0, 0, 0, 8, 0, 0, 0}, wantErr: eip8411.ErrBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := buildErr(tt.body, tt.ssz, tt.opts, eip8411.NewGroup, eip8411.NewGroupSSZ)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestMaxBody checks that the largest, incompressible body still yields a
// valid descriptor: MaxTotalLength is not too tight for honest builders.
func TestMaxBody(t *testing.T) {
	if testing.Short() {
		t.Skip("10 MiB body")
	}
	body := &eip8411.Body{Payload: randomBytes(newRand(9), eip8411.MaxBodyPayloadSize), ExecutionRequests: []byte{}}
	g, err := eip8411.NewGroup(body, eip8411.WithSegmentSize(eip8411.MinSegmentSize))
	if err != nil {
		t.Fatalf("NewGroup(max body): %v", err)
	}
	d := g.Descriptor()
	if d.TotalLength > eip8411.MaxTotalLength || d.Count > eip8411.MaxSegments {
		t.Fatalf("descriptor %+v exceeds bounds", d)
	}
	if got := eip8411.ProofDepth(d.Count); got > eip8411.MaxProofDepth {
		t.Fatalf("proof depth %d > %d", got, eip8411.MaxProofDepth)
	}
}
