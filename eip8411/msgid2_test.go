package eip8411_test

import (
	"errors"
	"testing"

	"github.com/segdiff/segdiff/eip8411"
)

func TestMessageIDV2Structural(t *testing.T) {
	_, g, shards := codedGroup(t)
	ids := map[string]int{}
	for i, s := range shards {
		data := mustEncode(t, s)
		id := eip8411.MessageID(data)
		if len(id) != eip8411.StructuralIDSize || id[0] != byte(eip8411.VersionSegdiff2) {
			t.Fatalf("shard %d: id of %d bytes, version %d", i, len(id), id[0])
		}
		if prev, dup := ids[id]; dup {
			t.Fatalf("shards %d and %d share an id", prev, i)
		}
		ids[id] = i
		p, err := eip8411.ParseMessageID(id)
		if err != nil {
			t.Fatal(err)
		}
		want := eip8411.MessageIDParts{
			Structural: true, Version: eip8411.VersionSegdiff2, Slot: testSlot, BeaconBlockRoot: testRoot,
			GroupID: g.GroupID(), Index: uint32(i), Content: eip8411.ContentID(data),
		}
		if p != want {
			t.Fatalf("ParseMessageID = %+v, want %+v", p, want)
		}
	}
	// The content suffix keeps a forged shard out of the honest one's id.
	forged := cloneShard(shards[6])
	forged.Data[0] ^= 1
	bad, honest := mustEncode(t, forged), mustEncode(t, shards[6])
	a, b := eip8411.MessageID(honest), eip8411.MessageID(bad)
	if a == b || a[:77] != b[:77] {
		t.Fatal("forged shard: want the same structural prefix and a different id")
	}
}

// TestMessageIDVersionsDisjoint: a segdiff/1 segment keeps its version-1 id
// (unchanged by segdiff/2) and a shard gets a version-2 id; a shard whose
// version byte is not 2 falls back to the content id. The layouts cannot
// both match: segdiff/1 needs bytes 76..79 == 84,0,0,0 and a shard has 85 at
// byte 77 (its offset(proof) word).
func TestMessageIDVersionsDisjoint(t *testing.T) {
	_, segs := tamperGroup(t)
	_, _, shards := codedGroup(t)
	seg, shard := mustEncode(t, segs[1]), mustEncode(t, shards[1])
	if id := eip8411.MessageID(seg); len(id) != eip8411.StructuralIDSize || id[0] != 1 {
		t.Fatalf("segment id version %d", id[0])
	}
	if id := eip8411.MessageID(shard); len(id) != eip8411.StructuralIDSize || id[0] != 2 {
		t.Fatalf("shard id version %d", id[0])
	}
	for _, v := range []byte{0, 1, 3, 0xff} {
		b := append([]byte(nil), shard...)
		b[0] = v
		if id := eip8411.MessageID(b); len(id) != eip8411.ContentIDSize {
			t.Fatalf("shard with version byte %d: %d-byte id, want the content id", v, len(id))
		}
	}
}

func TestParseMessageIDV2Errors(t *testing.T) {
	_, _, shards := codedGroup(t)
	valid := eip8411.MessageID(mustEncode(t, shards[0]))
	for _, v := range []byte{0, 3, 0x41} {
		if _, err := eip8411.ParseMessageID(string([]byte{v}) + valid[1:]); !errors.Is(err, eip8411.ErrVersion) {
			t.Errorf("version %d: err = %v, want ErrVersion", v, err)
		}
	}
	if _, err := eip8411.ParseMessageID(valid[:96]); !errors.Is(err, eip8411.ErrMessageID) {
		t.Errorf("96 bytes: err = %v, want ErrMessageID", err)
	}
}
