package node

import (
	"bytes"
	"testing"
)

func TestPartsShare(t *testing.T) {
	first := []byte("part three of slot ten")
	equal := bytes.Clone(first)
	again := bytes.Clone(first)
	other := []byte("another encoding that also verified")

	p := NewParts()
	steps := []struct {
		name  string
		slot  uint64
		index int
		data  []byte
		want  []byte // the slice (identity, not content) Share returns
	}{
		{"first arrival is held", 10, 3, first, first},
		{"equal content gets the held copy", 10, 3, equal, first},
		{"different content keeps its own", 10, 3, other, other},
		{"another index is its own entry", 10, 4, equal, equal},
		{"a newer slot is held", 14, 3, other, other},
		{"a slot kept-slots behind the newest is not indexed", 10, 5, equal, equal},
		// Had (10, 5) been indexed, equal content would get equal back.
		{"... so its equal content keeps its own", 10, 5, again, again},
	}
	for _, s := range steps {
		got := p.Share(s.slot, s.index, s.data)
		if &got[0] != &s.want[0] {
			t.Errorf("%s: Share(%d, %d) returned another slice than the expected one", s.name, s.slot, s.index)
		}
	}
	// Slot 14 pruned slot 10's entries: only (14, 3) is left.
	if n := len(p.held); n != 1 {
		t.Errorf("held %d parts after slot 14 arrived, want 1 (slot 10 pruned)", n)
	}
}
