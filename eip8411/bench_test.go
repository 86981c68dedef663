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

// BenchmarkBuildCodedGroup1MiB measures the segdiff/2 builder for a 1 MiB
// mainnet-like body at 32 KiB with Reed–Solomon m = k (23+23 shards
// compress-then-cut, 32+32 cut-then-compress): SSZ encode → snappy → shards →
// parity → Merkle root and proofs → encoded shard messages. Throughput is in
// raw body bytes.
func BenchmarkBuildCodedGroup1MiB(b *testing.B) {
	body := mustBody(b, 1, 1<<20)
	for _, order := range orders {
		b.Run(order.String(), func(b *testing.B) {
			b.SetBytes(1 << 20)
			b.ReportAllocs()
			for b.Loop() {
				g, err := eip8411.NewGroupV2(body, eip8411.WithOrder(order), eip8411.WithCoding(eip8411.CodingReedSolomon))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := g.EncodedShards(testSlot, testRoot); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRebuildCodedGroup1MiB measures a receiver of the same groups:
// verify and store k decoded shards, rebuild, check code consistency
// (re-encode the parity, recompute the root over k+m shards), decompress and
// SSZ-decode. "data" holds the k data shards (nothing to reconstruct);
// "parity" holds the last k shards, all parity (every data shard
// reconstructed).
func BenchmarkRebuildCodedGroup1MiB(b *testing.B) {
	body := mustBody(b, 1, 1<<20)
	for _, order := range orders {
		g, err := eip8411.NewGroupV2(body, eip8411.WithOrder(order), eip8411.WithCoding(eip8411.CodingReedSolomon))
		if err != nil {
			b.Fatal(err)
		}
		shards := g.Shards(testSlot, testRoot)
		k := int(g.Descriptor().DataShards)
		for _, sub := range []struct {
			name   string
			shards []*eip8411.Shard
		}{{"data", shards[:k]}, {"parity", shards[len(shards)-k:]}} {
			subset := sub.shards
			b.Run(order.String()+"/"+sub.name, func(b *testing.B) {
				b.SetBytes(1 << 20)
				b.ReportAllocs()
				for b.Loop() {
					r, err := eip8411.NewReassemblerV2(g.Descriptor())
					if err != nil {
						b.Fatal(err)
					}
					for _, s := range subset {
						if _, _, err := r.Add(s); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := r.Body(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkVerifyShard measures decoding and verifying one parity shard of
// the coded cut-then-compress 1 MiB group (≈25 KB, proof depth 6).
func BenchmarkVerifyShard(b *testing.B) {
	_, g := mustGroupV2(b, 1, 1<<20, eip8411.WithCoding(eip8411.CodingReedSolomon))
	enc, err := g.EncodedShards(testSlot, testRoot)
	if err != nil {
		b.Fatal(err)
	}
	data, d := enc[40], g.Descriptor()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eip8411.DecodeVerifyShard(data, d); err != nil {
			b.Fatal(err)
		}
	}
}
