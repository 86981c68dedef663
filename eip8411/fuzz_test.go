package eip8411_test

import (
	"bytes"
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
