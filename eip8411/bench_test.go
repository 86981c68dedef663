package eip8411_test

import (
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

// BenchmarkSegmentAndCommit1MiB measures the builder path for a 1 MiB body:
// SSZ encode → snappy → 32 KiB segments → Merkle root and proofs → encoded
// segment messages. Throughput is in raw body bytes.
func BenchmarkSegmentAndCommit1MiB(b *testing.B) {
	body := mustBody(b, 1, 1<<20)
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		g, err := eip8411.NewGroup(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := g.EncodedSegments(testSlot, testRoot); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifySegment measures decoding and verifying one 32 KiB segment
// of a 1 MiB body (proof depth 5).
func BenchmarkVerifySegment(b *testing.B) {
	_, g := mustGroup(b, 1, 1<<20)
	enc, err := g.EncodedSegments(testSlot, testRoot)
	if err != nil {
		b.Fatal(err)
	}
	data, d := enc[3], g.Descriptor()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eip8411.DecodeVerify(data, d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReassemble1MiB measures a receiver rebuilding a 1 MiB body from
// decoded segments: verify + store every segment, then decompress and decode.
func BenchmarkReassemble1MiB(b *testing.B) {
	_, g := mustGroup(b, 1, 1<<20)
	segs := g.Segments(testSlot, testRoot)
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		r, err := eip8411.NewReassembler(g.Descriptor())
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range segs {
			if _, _, err := r.Add(s); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := r.Body(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMessageID measures the gossip id of one encoded 32 KiB segment.
func BenchmarkMessageID(b *testing.B) {
	_, g := mustGroup(b, 1, 1<<20)
	enc, err := g.EncodedSegments(testSlot, testRoot)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(enc[0])))
	b.ReportAllocs()
	for b.Loop() {
		if id := eip8411.MessageID(enc[0]); len(id) != eip8411.StructuralIDSize {
			b.Fatal("not a structural id")
		}
	}
}
