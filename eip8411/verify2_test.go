package eip8411_test

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

// codedGroup is a coded cut-then-compress group of incompressible bytes: 5
// data shards (4 full 1 KiB segments and a short last one) + 3 parity shards.
func codedGroup(t testing.TB) (*eip8411.Body, *eip8411.GroupV2, []*eip8411.Shard) {
	t.Helper()
	body := &eip8411.Body{Payload: randomBytes(newRand(11), 4*1024+300), ExecutionRequests: []byte{}}
	g, err := eip8411.NewGroupV2(body, eip8411.WithSegmentSize(1024), eip8411.WithCoding(eip8411.CodingReedSolomon), eip8411.WithParityShards(3))
	if err != nil {
		t.Fatal(err)
	}
	if d := g.Descriptor(); d.DataShards != 5 || d.ParityShards != 3 {
		t.Fatalf("shards = %d+%d, want 5+3", d.DataShards, d.ParityShards)
	}
	return body, g, g.Shards(testSlot, testRoot)
}

func TestVerifyShardTampering(t *testing.T) {
	_, g, shards := codedGroup(t)
	d := g.Descriptor()
	n := len(shards)
	tests := []struct {
		name      string
		index     int
		mutate    func(s *eip8411.Shard)
		wantErr   error
		wantField string
	}{
		{name: "valid first data", index: 0, mutate: func(*eip8411.Shard) {}},
		{name: "valid last data (short block, padded)", index: 4, mutate: func(*eip8411.Shard) {}},
		{name: "valid parity", index: n - 1, mutate: func(*eip8411.Shard) {}},
		{name: "data byte flipped", index: 2, mutate: func(s *eip8411.Shard) { s.Data[17] ^= 0x01 }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "length prefix flipped", index: 1, mutate: func(s *eip8411.Shard) { s.Data[0] ^= 0x01 }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "padding byte set", index: 4, mutate: func(s *eip8411.Shard) { s.Data[len(s.Data)-1] = 1 }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "parity byte flipped", index: 6, mutate: func(s *eip8411.Shard) { s.Data[100] ^= 0x80 }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "proof element flipped", index: 5, mutate: func(s *eip8411.Shard) { s.Proof[2][0] ^= 0x01 }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "proof truncated", index: 1, mutate: func(s *eip8411.Shard) { s.Proof = s.Proof[:len(s.Proof)-1] }, wantErr: eip8411.ErrProof, wantField: "proof length"},
		{name: "proof extended", index: 1, mutate: func(s *eip8411.Shard) { s.Proof = append(s.Proof, [32]byte{}) }, wantErr: eip8411.ErrProof, wantField: "proof length"},
		{name: "proof empty", index: 1, mutate: func(s *eip8411.Shard) { s.Proof = nil }, wantErr: eip8411.ErrProof, wantField: "proof length"},
		{name: "index k+m", index: 1, mutate: func(s *eip8411.Shard) { s.Index = uint32(n) }, wantErr: eip8411.ErrIndexRange, wantField: "index"},
		{name: "index max uint32", index: 1, mutate: func(s *eip8411.Shard) { s.Index = 1<<32 - 1 }, wantErr: eip8411.ErrIndexRange, wantField: "index"},
		{name: "data shard claimed as parity", index: 1, mutate: func(s *eip8411.Shard) { s.Index = 6 }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "parity shard claimed as data", index: 6, mutate: func(s *eip8411.Shard) { s.Index = 1 }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "another shard's data", index: 1, mutate: func(s *eip8411.Shard) { s.Data = cloneShard(shards[3]).Data }, wantErr: eip8411.ErrProof, wantField: "proof"},
		{name: "group mismatch", index: 0, mutate: func(s *eip8411.Shard) { s.GroupID[0] ^= 0xff }, wantErr: eip8411.ErrGroupMismatch, wantField: "group_id"},
		{name: "version 1", index: 0, mutate: func(s *eip8411.Shard) { s.Version = eip8411.VersionSegdiff1 }, wantErr: eip8411.ErrVersion, wantField: "version"},
		{name: "oversize data", index: 0, mutate: func(s *eip8411.Shard) { s.Data = append(s.Data, 0) }, wantErr: eip8411.ErrSize, wantField: "data length"},
		{name: "undersize data", index: 4, mutate: func(s *eip8411.Shard) { s.Data = s.Data[:len(s.Data)-1] }, wantErr: eip8411.ErrSize, wantField: "data length"},
		{name: "unpadded last block", index: 4, mutate: func(s *eip8411.Shard) { s.Data = s.Data[:4+310] }, wantErr: eip8411.ErrSize, wantField: "data length"},
		{name: "empty data", index: 7, mutate: func(s *eip8411.Shard) { s.Data = nil }, wantErr: eip8411.ErrSize, wantField: "data length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := cloneShard(shards[tt.index])
			tt.mutate(s)
			checkShardVerdict(t, d, s, tt.wantErr, tt.wantField)
		})
	}
}

// checkShardVerdict checks Verify, the wire path (encode → DecodeVerifyShard)
// and a ReassemblerV2 against the expected verdict.
func checkShardVerdict(t *testing.T, d eip8411.DescriptorV2, s *eip8411.Shard, wantErr error, wantField string) {
	t.Helper()
	verifyErr := d.Verify(s)
	_, wireErr := eip8411.DecodeVerifyShard(mustEncode(t, s), d)
	checkFieldErrs(t, wantErr, wantField, verifyErr, wireErr)
	if wantErr != nil && (eip8411.Reason(verifyErr) == "" || eip8411.Reason(wireErr) == "") {
		t.Fatalf("errors %v, %v lack a reason label", verifyErr, wireErr)
	}
	r, err := eip8411.NewReassemblerV2(d)
	if err != nil {
		t.Fatal(err)
	}
	_, dup, addErr := r.Add(s)
	if (addErr == nil) != (wantErr == nil) || dup {
		t.Fatalf("Add = (dup %v, %v), want error %v", dup, addErr, wantErr)
	}
	if wantErr != nil && r.Received() != 0 {
		t.Fatalf("Received() = %d after a rejected shard", r.Received())
	}
}

// TestVerifyShardLengthRules covers the uncoded length rules: exact cuts for
// compress-then-cut, [1, shard_size] for cut-then-compress.
func TestVerifyShardLengthRules(t *testing.T) {
	body := &eip8411.Body{Payload: randomBytes(newRand(12), 3*1024), ExecutionRequests: []byte{}}
	for _, order := range orders {
		g, err := eip8411.NewGroupV2(body, eip8411.WithOrder(order), eip8411.WithSegmentSize(1024))
		if err != nil {
			t.Fatal(err)
		}
		d := g.Descriptor()
		shards := g.Shards(testSlot, testRoot)
		last := shards[len(shards)-1]
		t.Run(order.String(), func(t *testing.T) {
			checkShardVerdict(t, d, last, nil, "")
			grown := cloneShard(last)
			grown.Data = append(grown.Data, make([]byte, int(d.ShardSize)+1-len(grown.Data))...)
			checkShardVerdict(t, d, grown, eip8411.ErrSize, "data length")
			empty := cloneShard(last)
			empty.Data = nil
			checkShardVerdict(t, d, empty, eip8411.ErrSize, "data length")
			short := cloneShard(shards[0])
			short.Data = short.Data[:len(short.Data)-1]
			if order == eip8411.OrderCompressThenCut { // cuts are exact
				checkShardVerdict(t, d, short, eip8411.ErrSize, "data length")
			} else { // a shorter block is in range: only the proof tells
				checkShardVerdict(t, d, short, eip8411.ErrProof, "proof")
			}
		})
	}
}

func TestDecodeShardErrors(t *testing.T) {
	_, _, shards := codedGroup(t)
	_, segs := tamperGroup(t)
	valid, segment := mustEncode(t, shards[0]), mustEncode(t, segs[0])
	patch := func(off int, v ...byte) []byte { return patched(valid, off, v...) }
	tests := []struct {
		name    string
		data    []byte
		wantErr error
	}{
		{name: "empty", data: nil, wantErr: eip8411.ErrDecode},
		{name: "fixed part truncated", data: valid[:eip8411.ShardFixedSize-1], wantErr: eip8411.ErrDecode},
		{name: "a segdiff/1 segment", data: segment, wantErr: eip8411.ErrDecode},
		{name: "version 1", data: patch(0, 1), wantErr: eip8411.ErrVersion},
		{name: "version 0", data: patch(0, 0), wantErr: eip8411.ErrVersion},
		{name: "proof offset wrong", data: patch(77, 84), wantErr: eip8411.ErrDecode},
		{name: "data offset inside proof", data: patch(81, 100), wantErr: eip8411.ErrDecode},
		{name: "data offset past end", data: patch(81, 0xff, 0xff, 0xff, 0x00), wantErr: eip8411.ErrDecode},
		{name: "data offset below fixed part", data: patch(81, 10, 0, 0, 0), wantErr: eip8411.ErrDecode},
		{name: "proof longer than MaxProofDepth", data: append(append(patch(81, byte((85+32*15)&0xff), byte((85+32*15)>>8)), make([]byte, 32*15)...), 1), wantErr: eip8411.ErrDecode},
		{name: "data above MaxShardSize", data: append(append([]byte(nil), valid...), make([]byte, eip8411.MaxShardSize)...), wantErr: eip8411.ErrDecode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := eip8411.DecodeShard(tt.data)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got := eip8411.Reason(err); got != eip8411.ReasonDecode {
				t.Fatalf("Reason = %q, want %q", got, eip8411.ReasonDecode)
			}
		})
	}
	// And the other way: a shard is not a segdiff/1 segment.
	if _, err := eip8411.DecodeSegment(valid); !errors.Is(err, eip8411.ErrDecode) {
		t.Fatalf("DecodeSegment(shard) = %v, want ErrDecode", err)
	}
}

func TestReassemblerV2DuplicatesAndCompletion(t *testing.T) {
	body, g, shards := codedGroup(t)
	r, err := eip8411.NewReassemblerV2(g.Descriptor())
	if err != nil {
		t.Fatal(err)
	}
	if r.GroupID() != g.GroupID() || r.Descriptor() != g.Descriptor() || g.Descriptor().NeededShards() != 5 {
		t.Fatal("reassembler names another group")
	}
	if _, err := r.Body(); !errors.Is(err, eip8411.ErrIncomplete) {
		t.Fatalf("Body() before any shard = %v, want ErrIncomplete", err)
	}
	steps := []addStep{
		{7, false, false}, {7, false, true}, {0, false, false}, {5, false, false}, {0, false, true},
		{2, false, false}, {6, true, false}, {6, true, true}, {1, true, false}, {3, true, false},
	}
	runAddSteps(t, func(i int) (bool, bool, error) { return r.Add(cloneShard(shards[i])) }, steps, func(n int) {
		if n != 5 {
			return
		}
		if got := r.Missing(); len(got) != 5 || got[0] != 1 || got[4] != 6 {
			t.Fatalf("Missing() = %v, want [1 2 3 4 6]", got)
		}
		if _, err := r.Compressed(); !errors.Is(err, eip8411.ErrIncomplete) {
			t.Fatalf("Compressed() incomplete = %v", err)
		}
	})
	if !r.Complete() || r.Received() != 7 || len(r.Missing()) != 1 {
		t.Fatalf("Complete %v Received %d Missing %v", r.Complete(), r.Received(), r.Missing())
	}
	b1, err := r.Body()
	if err != nil || !bytes.Equal(b1.Payload, body.Payload) {
		t.Fatalf("Body() = %v", err)
	}
	if b2, _ := r.Body(); b1 != b2 {
		t.Fatal("Body() decoded twice")
	}
	bad := cloneShard(shards[4])
	bad.Data[5] ^= 1
	if complete, dup, err := r.Add(bad); !errors.Is(err, eip8411.ErrProof) || dup || !complete {
		t.Fatalf("tampered Add after completion = (%v, %v, %v)", complete, dup, err)
	}
}

func TestReassemblerV2ShardsOfOtherGroup(t *testing.T) {
	_, g, _ := codedGroup(t)
	_, other := mustGroupV2(t, 2, 9000, eip8411.WithSegmentSize(1024), eip8411.WithCoding(eip8411.CodingReedSolomon))
	r, _ := eip8411.NewReassemblerV2(g.Descriptor())
	for _, s := range other.Shards(testSlot, testRoot) {
		if _, _, err := r.Add(s); !errors.Is(err, eip8411.ErrGroupMismatch) {
			t.Fatalf("Add(other group) = %v, want ErrGroupMismatch", err)
		}
	}
	if _, _, err := r.Add(nil); !errors.Is(err, eip8411.ErrDecode) {
		t.Fatalf("Add(nil) = %v, want ErrDecode", err)
	}
	if r.Received() != 0 {
		t.Fatal("foreign shard stored")
	}
}

// TestReassemblerV2Concurrent decodes and feeds every shard twice from
// several goroutines while others call Body; run with -race.
func TestReassemblerV2Concurrent(t *testing.T) {
	body, g := mustGroupV2(t, 4, 300_000, eip8411.WithSegmentSize(8192), eip8411.WithCoding(eip8411.CodingReedSolomon))
	enc, err := g.EncodedShards(testSlot, testRoot)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := eip8411.NewReassemblerV2(g.Descriptor())
	var (
		wg          sync.WaitGroup
		mu          sync.Mutex
		fresh, dups int
	)
	for w := range 4 {
		wg.Go(func() {
			for i := w % 2; i < len(enc); i += 2 {
				s, err := eip8411.DecodeShard(enc[i])
				if err != nil {
					t.Error(err)
					return
				}
				complete, dup, err := r.Add(s)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = r.Body() // racing rebuilds: ErrIncomplete or the body
				mu.Lock()
				if dup {
					dups++
				} else {
					fresh++
				}
				if complete && r.Received() < int(g.Descriptor().NeededShards()) { // Received only grows
					t.Errorf("complete with %d shards held", r.Received())
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if fresh != len(enc) || dups != len(enc) {
		t.Fatalf("fresh %d dups %d, want %d each", fresh, dups, len(enc))
	}
	got, err := r.Body()
	if err != nil || !bytes.Equal(got.Payload, body.Payload) {
		t.Fatalf("Body() = %v", err)
	}
}
