package eip8411_test

import (
	"errors"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

// tamperGroup is a 5-segment group (4 full 1 KiB segments and a short last
// one) of incompressible bytes, shared by the tampering tests.
func tamperGroup(t testing.TB) (*eip8411.Group, []*eip8411.Segment) {
	t.Helper()
	body := &eip8411.Body{Payload: randomBytes(newRand(11), 4*1024+300), ExecutionRequests: []byte{}}
	g, err := eip8411.NewGroup(body, eip8411.WithSegmentSize(1024))
	if err != nil {
		t.Fatal(err)
	}
	if g.Descriptor().Count != 5 {
		t.Fatalf("count = %d, want 5", g.Descriptor().Count)
	}
	return g, g.Segments(testSlot, testRoot)
}

// clone deep-copies a segment so tests can mutate it.
func clone(s *eip8411.Segment) *eip8411.Segment {
	c := *s
	c.Proof = append([][32]byte(nil), s.Proof...)
	c.Data = append([]byte(nil), s.Data...)
	return &c
}

func TestVerifyTampering(t *testing.T) {
	g, segs := tamperGroup(t)
	last := len(segs) - 1
	tests := []struct {
		name      string
		index     int
		mutate    func(s *eip8411.Segment)
		wantErr   error
		wantField string
	}{
		{name: "valid first", index: 0, mutate: func(*eip8411.Segment) {}},
		{name: "valid last (short)", index: last, mutate: func(*eip8411.Segment) {}},
		{name: "data byte flipped", index: 2, mutate: func(s *eip8411.Segment) { s.Data[17] ^= 0x01 }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "last data byte flipped", index: last, mutate: func(s *eip8411.Segment) { s.Data[len(s.Data)-1] ^= 0x80 }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "proof element flipped", index: 1, mutate: func(s *eip8411.Segment) { s.Proof[1][31] ^= 0x01 }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "proof truncated", index: 1, mutate: func(s *eip8411.Segment) { s.Proof = s.Proof[:len(s.Proof)-1] }, wantErr: eip8411.ErrProof, wantField: "proof length"},
		{name: "proof extended", index: 1, mutate: func(s *eip8411.Segment) { s.Proof = append(s.Proof, [32]byte{}) }, wantErr: eip8411.ErrProof, wantField: "proof length"},
		{name: "proof empty", index: 1, mutate: func(s *eip8411.Segment) { s.Proof = nil }, wantErr: eip8411.ErrProof, wantField: "proof length"},
		{name: "index out of range", index: 1, mutate: func(s *eip8411.Segment) { s.Index = 5 }, wantErr: eip8411.ErrIndexRange, wantField: "index"},
		{name: "index max uint32", index: 1, mutate: func(s *eip8411.Segment) { s.Index = 1<<32 - 1 }, wantErr: eip8411.ErrIndexRange, wantField: "index"},
		{name: "index swapped with another segment's data", index: 1, mutate: func(s *eip8411.Segment) { s.Data = clone(segs[3]).Data }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "index swapped, proof kept", index: 1, mutate: func(s *eip8411.Segment) { s.Index = 3 }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "full data under the last index", index: 1, mutate: func(s *eip8411.Segment) { s.Index = uint32(last) }, wantErr: eip8411.ErrSize, wantField: "data length"},
		{name: "group mismatch", index: 0, mutate: func(s *eip8411.Segment) { s.GroupID[0] ^= 0xff }, wantErr: eip8411.ErrGroupMismatch, wantField: "group_id"},
		{name: "oversize data", index: 0, mutate: func(s *eip8411.Segment) { s.Data = append(s.Data, 0) }, wantErr: eip8411.ErrSize, wantField: "data length"},
		{name: "undersize data", index: 0, mutate: func(s *eip8411.Segment) { s.Data = s.Data[:1023] }, wantErr: eip8411.ErrSize, wantField: "data length"},
		{name: "oversize last", index: last, mutate: func(s *eip8411.Segment) { s.Data = append(s.Data, 0) }, wantErr: eip8411.ErrSize, wantField: "data length"},
		{name: "undersize last", index: last, mutate: func(s *eip8411.Segment) { s.Data = s.Data[:len(s.Data)-1] }, wantErr: eip8411.ErrSize, wantField: "data length"},
		{name: "empty data", index: 0, mutate: func(s *eip8411.Segment) { s.Data = nil }, wantErr: eip8411.ErrSize, wantField: "data length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := clone(segs[tt.index])
			tt.mutate(s)
			// Check the in-memory path and the wire path (encode → DecodeVerify).
			err := g.Descriptor().Verify(s)
			b, encErr := s.Encode()
			if encErr != nil {
				t.Fatal(encErr)
			}
			_, wireErr := eip8411.DecodeVerify(b, g.Descriptor())
			checkFieldErrs(t, tt.wantErr, tt.wantField, err, wireErr)
			// A Reassembler must reject the same segment and stay empty.
			r, err := eip8411.NewReassembler(g.Descriptor())
			if err != nil {
				t.Fatal(err)
			}
			_, dup, addErr := r.Add(s)
			if (addErr == nil) != (tt.wantErr == nil) || dup {
				t.Fatalf("Add = (dup %v, %v), want error %v", dup, addErr, tt.wantErr)
			}
			if tt.wantErr != nil && r.Received() != 0 {
				t.Fatalf("Received() = %d after a rejected segment", r.Received())
			}
		})
	}
}

func TestVerifyAgainstOtherDescriptor(t *testing.T) {
	g, segs := tamperGroup(t)
	_, other := mustGroup(t, 5, 6000, eip8411.WithSegmentSize(1024))
	if err := other.Descriptor().Verify(segs[0]); !errors.Is(err, eip8411.ErrGroupMismatch) {
		t.Fatalf("segment of group %x verified against %x: err = %v", g.GroupID(), other.GroupID(), err)
	}
	// Same segments claimed under a forged group id of a descriptor with
	// another root still fail: the group id binds the root.
	d := g.Descriptor()
	d.Root[0] ^= 1
	s := clone(segs[0])
	s.GroupID = d.GroupID()
	if err := d.Verify(s); !errors.Is(err, eip8411.ErrProof) {
		t.Fatalf("forged root: err = %v, want ErrProof", err)
	}
	if err := d.Verify(nil); !errors.Is(err, eip8411.ErrDecode) {
		t.Fatalf("nil segment: err = %v, want ErrDecode", err)
	}
}

func TestDecodeSegmentErrors(t *testing.T) {
	_, segs := tamperGroup(t)
	valid, err := segs[0].Encode()
	if err != nil {
		t.Fatal(err)
	}
	patch := func(off int, v ...byte) []byte { return patched(valid, off, v...) }
	tests := []struct {
		name string
		data []byte
	}{
		{name: "empty", data: nil},
		{name: "fixed part truncated", data: valid[:eip8411.SegmentFixedSize-1]},
		{name: "proof offset wrong", data: patch(76, 85)},
		{name: "data offset inside proof", data: patch(80, 100)},
		{name: "data offset past end", data: patch(80, 0xff, 0xff, 0xff, 0x00)},
		{name: "data offset below fixed part", data: patch(80, 10, 0, 0, 0)},
		{name: "proof longer than MaxProofDepth", data: append(append(patch(80, byte((84+32*15)&0xff), byte((84+32*15)>>8)), make([]byte, 32*15)...), 1)},
		{name: "data above MaxSegmentSize", data: append(append([]byte(nil), valid...), make([]byte, eip8411.MaxSegmentSize)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := eip8411.DecodeSegment(tt.data); !errors.Is(err, eip8411.ErrDecode) {
				t.Fatalf("err = %v, want ErrDecode", err)
			}
			if got := eip8411.Reason(func() error { _, err := eip8411.DecodeSegment(tt.data); return err }()); got != eip8411.ReasonDecode {
				t.Fatalf("Reason = %q, want %q", got, eip8411.ReasonDecode)
			}
		})
	}
}

func TestReason(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{err: nil, want: ""},
		{err: errors.New("other"), want: ""},
		{err: &eip8411.FieldError{Err: eip8411.ErrIndexRange}, want: eip8411.ReasonIndexRange},
		{err: &eip8411.FieldError{Err: eip8411.ErrSize}, want: eip8411.ReasonSize},
		{err: &eip8411.FieldError{Err: eip8411.ErrProof}, want: eip8411.ReasonProof},
		{err: &eip8411.FieldError{Err: eip8411.ErrGroupMismatch}, want: eip8411.ReasonGroupMismatch},
		{err: &eip8411.FieldError{Err: eip8411.ErrDescriptor}, want: eip8411.ReasonDecode},
		{err: eip8411.ErrVersion, want: eip8411.ReasonDecode},
	}
	for _, tt := range tests {
		if got := eip8411.Reason(tt.err); got != tt.want {
			t.Errorf("Reason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
