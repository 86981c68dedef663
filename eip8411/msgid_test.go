package eip8411_test

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

func TestMessageIDStructural(t *testing.T) {
	g, segs := tamperGroup(t)
	ids := map[string]int{}
	for i, s := range segs {
		data, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		id := eip8411.MessageID(data)
		if len(id) != eip8411.StructuralIDSize {
			t.Fatalf("len(MessageID) = %d, want %d", len(id), eip8411.StructuralIDSize)
		}
		if prev, dup := ids[id]; dup {
			t.Fatalf("segments %d and %d share an id", prev, i)
		}
		ids[id] = i
		p, err := eip8411.ParseMessageID(id)
		if err != nil {
			t.Fatal(err)
		}
		want := eip8411.MessageIDParts{
			Structural: true, Version: eip8411.VersionSegdiff1, Slot: testSlot, BeaconBlockRoot: testRoot,
			GroupID: g.GroupID(), Index: uint32(i), Content: eip8411.ContentID(data),
		}
		if p != want {
			t.Fatalf("ParseMessageID = %+v, want %+v", p, want)
		}
		// Altair-style digest: SHA-256(0x01000000 ‖ data)[:20].
		sum := sha256.Sum256(append([]byte{1, 0, 0, 0}, data...))
		if string(p.Content[:]) != string(sum[:20]) {
			t.Fatalf("content id %x, want %x", p.Content, sum[:20])
		}
	}
}

// TestMessageIDGarbageDoesNotCollide checks the reason for the content
// suffix: a forged message with the same (slot, root, group, index) gets a
// different id, so it cannot make the honest segment "seen".
func TestMessageIDGarbageDoesNotCollide(t *testing.T) {
	_, segs := tamperGroup(t)
	honest, _ := segs[2].Encode()
	forged := clone(segs[2])
	forged.Data[0] ^= 1
	bad, _ := forged.Encode()
	a, b := eip8411.MessageID(honest), eip8411.MessageID(bad)
	if a == b {
		t.Fatal("forged segment has the honest segment's id")
	}
	if a[:eip8411.StructuralIDSize-eip8411.ContentIDSize] != b[:eip8411.StructuralIDSize-eip8411.ContentIDSize] {
		t.Fatal("structural prefixes differ for the same (slot, root, group, index)")
	}
}

func TestMessageIDFallback(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{name: "empty", data: nil},
		{name: "short", data: []byte("hello")},
		{name: "84 zero bytes", data: make([]byte, 84)},
		{name: "whole-mode payload", data: []byte(strings.Repeat("payload", 100))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := eip8411.MessageID(tt.data)
			if len(id) != eip8411.ContentIDSize {
				t.Fatalf("len = %d, want %d", len(id), eip8411.ContentIDSize)
			}
			p, err := eip8411.ParseMessageID(id)
			if err != nil || p.Structural || p.Content != eip8411.ContentID(tt.data) {
				t.Fatalf("ParseMessageID = %+v, %v", p, err)
			}
		})
	}
}

func TestParseMessageIDErrors(t *testing.T) {
	_, segs := tamperGroup(t)
	data, _ := segs[0].Encode()
	valid := eip8411.MessageID(data)
	tests := []struct {
		name    string
		id      string
		wantErr error
	}{
		{name: "empty", id: "", wantErr: eip8411.ErrMessageID},
		{name: "19 bytes", id: valid[:19], wantErr: eip8411.ErrMessageID},
		{name: "56-byte prototype id", id: valid[:56], wantErr: eip8411.ErrMessageID},
		{name: "one byte too long", id: valid + "x", wantErr: eip8411.ErrMessageID},
		{name: "unknown version", id: "\x09" + valid[1:], wantErr: eip8411.ErrVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := eip8411.ParseMessageID(tt.id); !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestMessageSlot(t *testing.T) {
	body := mustBody(t, 3, 100<<10)
	g1, err := eip8411.NewGroup(body)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := eip8411.NewGroupV2(body, eip8411.WithCoding(eip8411.CodingReedSolomon))
	if err != nil {
		t.Fatal(err)
	}
	// Slot 2 puts 0x02 in a segment's first byte, the shard version byte:
	// the layouts still tell them apart.
	for _, slot := range []uint64{2, 7, 1 << 40} {
		segs, _ := g1.EncodedSegments(slot, [32]byte{1})
		shards, _ := g2.EncodedShards(slot, [32]byte{1})
		for _, m := range [][]byte{segs[0], segs[len(segs)-1], shards[0], shards[len(shards)-1]} {
			if got, ok := eip8411.MessageSlot(m); !ok || got != slot {
				t.Errorf("MessageSlot = %d, %v; want %d", got, ok, slot)
			}
		}
	}
	if _, ok := eip8411.MessageSlot([]byte{2, 0, 0, 0, 0, 0, 0, 0, 9}); ok {
		t.Error("MessageSlot read a slot from junk")
	}
}
