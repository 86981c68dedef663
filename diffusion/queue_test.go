package diffusion_test

import (
	"fmt"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/segdiff/segdiff/diffusion"
)

// A flood of fabricated messages from one peer never grows the queue past
// its bound, and never takes the place reserved for another peer.
func TestPendingBoundedUnderFlood(t *testing.T) {
	q := diffusion.NewPending[string](256, 32)
	for i := range 100_000 {
		q.Add(uint64(i%7), "flooder", fmt.Sprintf("fake-%d", i))
		if q.Len() > 256 {
			t.Fatalf("queue holds %d, bound 256", q.Len())
		}
	}
	if q.PeerLen("flooder") != 32 {
		t.Fatalf("flooder holds %d, its share is 32", q.PeerLen("flooder"))
	}
	if !q.Add(3, "honest", "segment-3") {
		t.Fatal("the honest peer's copy was crowded out")
	}
	// Many flooders fill the total, never beyond it.
	for i := range 100 {
		for j := range 100 {
			q.Add(1, peer.ID(fmt.Sprintf("f%d", i)), fmt.Sprint(j))
		}
	}
	if q.Len() != 256 {
		t.Fatalf("queue holds %d, want its bound 256", q.Len())
	}
	got := q.Release(3)
	found := false
	for _, m := range got {
		found = found || m == "segment-3"
	}
	if !found {
		t.Fatalf("release of slot 3 lost the honest message: %d messages", len(got))
	}
	if q.Len() != 256-len(got) || q.PeerLen("honest") != 0 {
		t.Fatalf("after release: %d buffered, honest %d", q.Len(), q.PeerLen("honest"))
	}
}
