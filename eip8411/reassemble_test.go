package eip8411_test

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

func TestReassemblerDuplicatesAndCompletion(t *testing.T) {
	g, segs := tamperGroup(t)
	r, err := eip8411.NewReassembler(g.Descriptor())
	if err != nil {
		t.Fatal(err)
	}
	if r.GroupID() != g.GroupID() || r.Descriptor() != g.Descriptor() {
		t.Fatal("reassembler names another group")
	}
	if _, err := r.Body(); !errors.Is(err, eip8411.ErrIncomplete) {
		t.Fatalf("Body() before any segment = %v, want ErrIncomplete", err)
	}
	steps := []addStep{
		{3, false, false}, {3, false, true}, {0, false, false}, {4, false, false},
		{0, false, true}, {1, false, false}, {2, true, false}, {2, true, true}, {4, true, true},
	}
	runAddSteps(t, func(i int) (bool, bool, error) { return r.Add(clone(segs[i])) }, steps, func(n int) {
		if n != 5 {
			return
		}
		if got := r.Missing(); len(got) != 2 || got[0] != 1 || got[1] != 2 {
			t.Fatalf("Missing() = %v, want [1 2]", got)
		}
		if _, err := r.Compressed(); !errors.Is(err, eip8411.ErrIncomplete) {
			t.Fatalf("Compressed() incomplete = %v", err)
		}
	})
	if !r.Complete() || r.Received() != 5 || len(r.Missing()) != 0 {
		t.Fatalf("Complete %v Received %d Missing %v", r.Complete(), r.Received(), r.Missing())
	}
	b1, err := r.Body()
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := r.Body()
	if b1 != b2 {
		t.Fatal("Body() decoded twice")
	}
	// A tampered duplicate after completion is still rejected, not "dup".
	bad := clone(segs[1])
	bad.Data[0] ^= 1
	if complete, dup, err := r.Add(bad); !errors.Is(err, eip8411.ErrProof) || dup || !complete {
		t.Fatalf("tampered Add after completion = (%v, %v, %v)", complete, dup, err)
	}
}

func TestReassemblerSegmentsOfOtherGroup(t *testing.T) {
	g, _ := tamperGroup(t)
	_, other := mustGroup(t, 2, 9000, eip8411.WithSegmentSize(1024))
	r, _ := eip8411.NewReassembler(g.Descriptor())
	for _, s := range other.Segments(testSlot, testRoot) {
		if _, _, err := r.Add(s); !errors.Is(err, eip8411.ErrGroupMismatch) {
			t.Fatalf("Add(other group) = %v, want ErrGroupMismatch", err)
		}
	}
	if r.Received() != 0 {
		t.Fatal("foreign segment stored")
	}
}

// TestReassemblerConcurrent decodes and feeds every segment twice from
// several goroutines; run with -race.
func TestReassemblerConcurrent(t *testing.T) {
	body, g := mustGroup(t, 4, 300_000, eip8411.WithSegmentSize(4096))
	segs, err := g.EncodedSegments(testSlot, testRoot)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := eip8411.NewReassembler(g.Descriptor())
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		fresh     int
		dups      int
		completes int
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w % 2; i < len(segs); i += 2 {
				s, err := eip8411.DecodeSegment(segs[i]) // shared codec, concurrently
				if err != nil {
					t.Error(err)
					return
				}
				complete, dup, err := r.Add(s)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if dup {
					dups++
				} else {
					fresh++
					if complete {
						completes++
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if fresh != len(segs) || dups != len(segs) || completes != 1 {
		t.Fatalf("fresh %d dups %d completing adds %d, want %d %d 1", fresh, dups, completes, len(segs), len(segs))
	}
	got, err := r.Body()
	if err != nil || !bytes.Equal(got.Payload, body.Payload) {
		t.Fatalf("Body() = %v", err)
	}
}

func TestVerifyCompressed(t *testing.T) {
	body, g := mustGroup(t, 8, 50_000, eip8411.WithSegmentSize(2048))
	d := g.Descriptor()
	compressed := append([]byte(nil), g.Compressed()...)
	if err := d.VerifyCompressed(compressed); err != nil {
		t.Fatalf("VerifyCompressed(honest) = %v", err)
	}
	got, err := eip8411.DecompressBody(compressed)
	if err != nil || !bytes.Equal(got.Payload, body.Payload) {
		t.Fatalf("DecompressBody = %v", err)
	}
	tests := []struct {
		name    string
		data    []byte
		wantErr error
	}{
		{name: "byte flipped", data: func() []byte { b := append([]byte(nil), compressed...); b[len(b)/2] ^= 1; return b }(), wantErr: eip8411.ErrProof},
		{name: "truncated", data: compressed[:len(compressed)-1], wantErr: eip8411.ErrSize},
		{name: "extended", data: append(append([]byte(nil), compressed...), 0), wantErr: eip8411.ErrSize},
		{name: "empty", data: nil, wantErr: eip8411.ErrSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := d.VerifyCompressed(tt.data); !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
	if err := (eip8411.Descriptor{}).VerifyCompressed(compressed); !errors.Is(err, eip8411.ErrVersion) {
		t.Fatalf("zero descriptor: err = %v, want ErrVersion", err)
	}
}
