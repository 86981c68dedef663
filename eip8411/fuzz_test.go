package eip8411_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

// fuzzGroup is a fixed 7-segment group (1 KiB segments, short last one) of
// incompressible bytes.
func fuzzGroup(t testing.TB) (*eip8411.Body, *eip8411.Group) {
	body := &eip8411.Body{Payload: randomBytes(newRand(77), 6*1024+500), ExecutionRequests: []byte{1, 2, 3}}
	g, err := eip8411.NewGroup(body, eip8411.WithSegmentSize(1024))
	if err != nil {
		t.Fatal(err)
	}
	return body, g
}

// FuzzDecodeVerify decodes and verifies arbitrary bytes against a fixed
// descriptor: it must never panic, and an accepted segment must carry exactly
// the committed bytes of its index. MessageID must be total and parseable.
func FuzzDecodeVerify(f *testing.F) {
	_, g := fuzzGroup(f)
	d := g.Descriptor()
	enc, err := g.EncodedSegments(testSlot, testRoot)
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range enc {
		f.Add(b)
		f.Add(b[:len(b)-1])
		f.Add(append(append([]byte(nil), b...), 0))
	}
	f.Add([]byte{})
	f.Add(make([]byte, eip8411.SegmentFixedSize))
	f.Add(bytes.Repeat([]byte{0xff}, 200))
	compressed := g.Compressed()
	f.Fuzz(func(t *testing.T, data []byte) {
		id := eip8411.MessageID(data)
		if _, err := eip8411.ParseMessageID(id); err != nil {
			t.Fatalf("ParseMessageID(MessageID(data)): %v", err)
		}
		s, err := eip8411.DecodeVerify(data, d)
		if err != nil {
			if eip8411.Reason(err) == "" {
				t.Fatalf("error without a reason label: %v", err)
			}
			return
		}
		start := int(s.Index) * int(d.SegmentSize)
		end := min(start+int(d.SegmentSize), len(compressed))
		if !bytes.Equal(s.Data, compressed[start:end]) {
			t.Fatalf("accepted segment %d with data that is not the committed bytes", s.Index)
		}
		if len(id) != eip8411.StructuralIDSize {
			t.Fatalf("accepted segment has a %d-byte id", len(id))
		}
	})
}

// FuzzReassemble drives a Reassembler with a script of valid, duplicate,
// tampered and arbitrary segments: it must never panic, never accept a
// tampered or foreign segment, report duplicates and completion exactly, and
// rebuild the body once complete.
func FuzzReassemble(f *testing.F) {
	body, g := fuzzGroup(f)
	segs := g.Segments(testSlot, testRoot)
	valid0, _ := segs[0].Encode()
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6}, []byte{})
	f.Add([]byte{6, 5, 4, 4, 3, 2, 1, 0, 0}, valid0)
	f.Add([]byte{0x80, 0xc1, 0x42, 0x03, 0xff}, []byte("garbage"))
	f.Add([]byte{0xc0, 0xc0, 0xc0}, valid0)
	f.Fuzz(func(t *testing.T, script, raw []byte) {
		r, err := eip8411.NewReassembler(g.Descriptor())
		if err != nil {
			t.Fatal(err)
		}
		if len(script) > 64 { // longer scripts add nothing but slow minimization
			script = script[:64]
		}
		arbitrary, derr := eip8411.DecodeSegment(raw) // decoded once; reused by op 3
		held := map[int]bool{}
		for n, op := range script {
			idx := int(op&0x3f) % len(segs)
			var complete, dup bool
			switch op >> 6 {
			case 0, 1: // a valid segment, maybe already held
				complete, dup, err = r.Add(segs[idx])
				if err != nil || dup != held[idx] {
					t.Fatalf("op %d: Add(valid %d) = (dup %v, %v), held %v", n, idx, dup, err, held[idx])
				}
				held[idx] = true
			case 2: // a tampered copy: one data byte flipped
				s := *segs[idx]
				s.Data = append([]byte(nil), s.Data...)
				s.Data[(n*31)%len(s.Data)] ^= byte(n | 1)
				complete, dup, err = r.Add(&s)
				if err == nil || dup {
					t.Fatalf("op %d: tampered segment %d accepted (dup %v)", n, idx, dup)
				}
			case 3: // arbitrary bytes, decoded
				if derr != nil {
					continue
				}
				s := arbitrary
				complete, dup, err = r.Add(s)
				if err != nil {
					break
				}
				want := segs[s.Index]
				if !bytes.Equal(s.Data, want.Data) {
					t.Fatalf("op %d: arbitrary bytes accepted as segment %d", n, s.Index)
				}
				if dup != held[int(s.Index)] {
					t.Fatalf("op %d: dup = %v, held %v", n, dup, held[int(s.Index)])
				}
				held[int(s.Index)] = true
			}
			if complete != (len(held) == len(segs)) || r.Received() != len(held) {
				t.Fatalf("op %d: complete %v received %d, held %d of %d", n, complete, r.Received(), len(held), len(segs))
			}
		}
		got, err := r.Body()
		if len(held) < len(segs) {
			if err == nil {
				t.Fatal("Body() succeeded while incomplete")
			}
			return
		}
		if err != nil || !bytes.Equal(got.Payload, body.Payload) || !bytes.Equal(got.ExecutionRequests, body.ExecutionRequests) {
			t.Fatalf("Body() after completion: %v", err)
		}
	})
}

// FuzzDecodeDescriptorV2 decodes arbitrary bytes as a segdiff/2 descriptor:
// it must never panic; an accepted descriptor must re-encode to the same
// bytes, validate, and imply bounded shards (count ≤ MaxSegments, proof depth
// ≤ MaxProofDepth, every shard length ≤ MaxShardSize).
func FuzzDecodeDescriptorV2(f *testing.F) {
	f.Add(validDescriptorV2().Encode())
	for _, order := range orders {
		for _, coding := range codings {
			_, g := mustGroupV2(f, 1, 50_000, eip8411.WithOrder(order), eip8411.WithCoding(coding), eip8411.WithSegmentSize(4096))
			f.Add(g.Descriptor().Encode())
		}
	}
	f.Add(validDescriptor().Encode())
	f.Add(make([]byte, eip8411.DescriptorV2Size))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := eip8411.DecodeDescriptorV2(data)
		if err != nil {
			if eip8411.Reason(err) != eip8411.ReasonDecode {
				t.Fatalf("error %v does not count as decode", err)
			}
			return
		}
		if !bytes.Equal(d.Encode(), data) || d.Validate() != nil {
			t.Fatalf("accepted %x does not round-trip", data)
		}
		n := d.ShardCount()
		if n > eip8411.MaxSegments || eip8411.ProofDepth(n) > eip8411.MaxProofDepth || n < d.NeededShards() {
			t.Fatalf("%d shards (need %d), proof depth %d", n, d.NeededShards(), eip8411.ProofDepth(n))
		}
		if d.Coding == eip8411.CodingReedSolomon && n > eip8411.MaxCodedShards {
			t.Fatalf("coded group of %d shards", n)
		}
		for _, i := range []uint32{0, n / 2, n - 1} {
			if lo, hi := d.ShardLen(i); lo < 1 || lo > hi || hi > eip8411.MaxShardSize {
				t.Fatalf("ShardLen(%d) = [%d, %d]", i, lo, hi)
			}
		}
		if _, err := eip8411.NewReassemblerV2(d); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDecodeVerifyShard decodes and verifies arbitrary bytes against a fixed
// coded descriptor: it must never panic, an accepted shard must carry exactly
// the committed bytes of its index, and its message id must be the
// version-2 structural id naming that index.
func FuzzDecodeVerifyShard(f *testing.F) {
	_, g, _ := codedGroup(f)
	d := g.Descriptor()
	enc, err := g.EncodedShards(testSlot, testRoot)
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range enc {
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	_, segs := tamperGroup(f)
	f.Add(mustEncode(f, segs[0]))
	f.Add(make([]byte, eip8411.ShardFixedSize))
	shards := g.Shards(testSlot, testRoot)
	f.Fuzz(func(t *testing.T, data []byte) {
		id := eip8411.MessageID(data)
		parts, err := eip8411.ParseMessageID(id)
		if err != nil {
			t.Fatalf("ParseMessageID(MessageID(data)): %v", err)
		}
		s, err := eip8411.DecodeVerifyShard(data, d)
		if err != nil {
			if eip8411.Reason(err) == "" {
				t.Fatalf("error without a reason label: %v", err)
			}
			return
		}
		if !bytes.Equal(s.Data, shards[s.Index].Data) {
			t.Fatalf("accepted shard %d with data that is not the committed bytes", s.Index)
		}
		if parts.Version != eip8411.VersionSegdiff2 || parts.Index != s.Index || parts.GroupID != d.GroupID() {
			t.Fatalf("accepted shard %d has id %+v", s.Index, parts)
		}
	})
}

// FuzzParseMessageID parses arbitrary ids: it must never panic, accept only
// 20-byte content ids and 97-byte structural ids of version 1 or 2, and an
// accepted structural id must be rebuilt exactly from its parts.
func FuzzParseMessageID(f *testing.F) {
	_, segs := tamperGroup(f)
	_, _, shards := codedGroup(f)
	f.Add(eip8411.MessageID(mustEncode(f, segs[0])))
	f.Add(eip8411.MessageID(mustEncode(f, shards[0])))
	f.Add(eip8411.MessageID([]byte("whole")))
	f.Add("")
	f.Fuzz(func(t *testing.T, id string) {
		p, err := eip8411.ParseMessageID(id)
		if err != nil {
			return
		}
		if !p.Structural {
			if len(id) != eip8411.ContentIDSize || string(p.Content[:]) != id {
				t.Fatalf("content id %x parsed as %+v", id, p)
			}
			return
		}
		if p.Version != eip8411.VersionSegdiff1 && p.Version != eip8411.VersionSegdiff2 {
			t.Fatalf("accepted version %d", p.Version)
		}
		b := []byte{byte(p.Version)}
		b = binary.LittleEndian.AppendUint64(b, p.Slot)
		b = append(append(b, p.BeaconBlockRoot[:]...), p.GroupID[:]...)
		b = binary.LittleEndian.AppendUint32(b, p.Index)
		if string(append(b, p.Content[:]...)) != id {
			t.Fatalf("id %x does not rebuild from %+v", id, p)
		}
	})
}

// FuzzReassembleV2 drives a ReassemblerV2 of a coded group with a script of
// valid, duplicate, tampered and arbitrary shards: it must never panic or
// accept a tampered or foreign shard, must report duplicates exactly and
// completion as soon as k distinct shards are held, and must then rebuild
// the body from whichever shards it holds.
func FuzzReassembleV2(f *testing.F) {
	body, g, shards := codedGroup(f)
	k := int(g.Descriptor().DataShards)
	valid7 := mustEncode(f, shards[7])
	f.Add([]byte{7, 6, 5, 4, 3}, []byte{})
	f.Add([]byte{0, 1, 2, 3, 4, 4, 0}, valid7)
	f.Add([]byte{0x80, 0xc1, 0x42, 0x03, 0xff}, []byte("garbage"))
	f.Add([]byte{0xc0, 0xc0, 0x45, 0x46, 0x47, 0x01}, valid7)
	f.Fuzz(func(t *testing.T, script, raw []byte) {
		r, err := eip8411.NewReassemblerV2(g.Descriptor())
		if err != nil {
			t.Fatal(err)
		}
		if len(script) > 64 {
			script = script[:64]
		}
		arbitrary, derr := eip8411.DecodeShard(raw)
		held := map[int]bool{}
		for n, op := range script {
			idx := int(op&0x3f) % len(shards)
			var complete, dup bool
			switch op >> 6 {
			case 0, 1: // a valid shard, maybe already held
				complete, dup, err = r.Add(shards[idx])
				if err != nil || dup != held[idx] {
					t.Fatalf("op %d: Add(valid %d) = (dup %v, %v), held %v", n, idx, dup, err, held[idx])
				}
				held[idx] = true
			case 2: // a tampered copy: one data byte flipped
				s := cloneShard(shards[idx])
				s.Data[(n*31)%len(s.Data)] ^= byte(n | 1)
				complete, dup, err = r.Add(s)
				if err == nil || dup {
					t.Fatalf("op %d: tampered shard %d accepted (dup %v)", n, idx, dup)
				}
			case 3: // arbitrary bytes, decoded
				if derr != nil {
					continue
				}
				complete, dup, err = r.Add(arbitrary)
				if err != nil {
					break
				}
				if !bytes.Equal(arbitrary.Data, shards[arbitrary.Index].Data) || dup != held[int(arbitrary.Index)] {
					t.Fatalf("op %d: arbitrary bytes accepted as shard %d (dup %v)", n, arbitrary.Index, dup)
				}
				held[int(arbitrary.Index)] = true
			}
			if complete != (len(held) >= k) || r.Received() != len(held) {
				t.Fatalf("op %d: complete %v received %d, held %d, k %d", n, complete, r.Received(), len(held), k)
			}
		}
		got, err := r.Body()
		if len(held) < k {
			if !errors.Is(err, eip8411.ErrIncomplete) {
				t.Fatalf("Body() with %d of %d shards = %v", len(held), k, err)
			}
			return
		}
		if err != nil || !bytes.Equal(got.Payload, body.Payload) {
			t.Fatalf("Body() after completion: %v", err)
		}
	})
}

// FuzzViewAgreesWithDecode holds the copy-free views to the SSZ decoder:
// for any bytes, ViewSegment and DecodeSegment (ViewShard and DecodeShard)
// both refuse, with the same error class, or both accept the same message.
func FuzzViewAgreesWithDecode(f *testing.F) {
	_, g := fuzzGroup(f)
	segs, err := g.EncodedSegments(testSlot, testRoot)
	if err != nil {
		f.Fatal(err)
	}
	_, cg, _ := codedGroup(f)
	shards, err := cg.EncodedShards(testSlot, testRoot)
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range append(segs[:2:2], shards[:2]...) {
		f.Add(b)
		f.Add(b[:len(b)-1])
		f.Add(append(append([]byte(nil), b...), 0))
	}
	// Data past its list limit while the message stays under the layout's
	// bound (a short proof leaves room): only the decoder's limit refuses it.
	long := make([]byte, eip8411.SegmentFixedSize+eip8411.MaxSegmentSize+1)
	binary.LittleEndian.PutUint32(long[76:], eip8411.SegmentFixedSize)
	binary.LittleEndian.PutUint32(long[80:], eip8411.SegmentFixedSize)
	f.Add(long)
	f.Add([]byte{})
	f.Add(make([]byte, eip8411.ShardFixedSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, "segment", data, eip8411.DecodeSegment, eip8411.ViewSegment)
		agree(t, "shard", data, eip8411.DecodeShard, eip8411.ViewShard)
	})
}

// agree checks that view parses data exactly as decode does.
func agree[M any](t *testing.T, noun string, data []byte, decode, view func([]byte) (*M, error)) {
	t.Helper()
	want, werr := decode(data)
	got, gerr := view(data)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s: decode error %v, view error %v", noun, werr, gerr)
	}
	if werr != nil {
		for _, class := range []error{eip8411.ErrDecode, eip8411.ErrVersion} {
			if errors.Is(werr, class) != errors.Is(gerr, class) {
				t.Fatalf("%s: decode error %v, view error %v: not the same class", noun, werr, gerr)
			}
		}
		if eip8411.Reason(werr) != eip8411.Reason(gerr) {
			t.Fatalf("%s: reasons %q and %q", noun, eip8411.Reason(werr), eip8411.Reason(gerr))
		}
		return
	}
	if fmt.Sprintf("%v", *want) != fmt.Sprintf("%v", *got) {
		t.Fatalf("%s: decode %+v, view %+v", noun, *want, *got)
	}
}
