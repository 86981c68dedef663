package node

import (
	"math"
	"sync"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/segdiff/segdiff/diffusion"
	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/internal/devnet/embedded/seeds"
)

// newLossNode is a node as the driver makes it (node.New, seeds.Loss),
// without a host: Drop, Role and PeerRole read only the spec.
func newLossNode(t *testing.T, spec Spec) *Node {
	t.Helper()
	p, err := diffusion.New(mode.Segmented, diffusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(spec, nil, p, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return n
}

const lossDraws = 200_000

// Each kind drops its stated share, within five binomial standard
// deviations over 200 000 draws, and the other kind (set to 0) never drops.
func TestDropShare(t *testing.T) {
	const p = 0.05
	tests := []struct {
		name        string
		loss        Loss
		lossy, kept diffusion.Loss
	}{
		{"data", Loss{Data: p}, diffusion.LossData, diffusion.LossRequest},
		{"requests", Loss{Requests: p}, diffusion.LossRequest, diffusion.LossData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newLossNode(t, Spec{Index: 3, Loss: tt.loss, LossRand: seeds.Loss(7, 3)})
			dropped, other := 0, 0
			for range lossDraws {
				if n.Drop(tt.lossy) {
					dropped++
				}
				if n.Drop(tt.kept) {
					other++
				}
			}
			mean, sd := lossDraws*p, math.Sqrt(lossDraws*p*(1-p))
			if dev := math.Abs(float64(dropped) - mean); dev > 5*sd {
				t.Errorf("dropped %d of %d (%.4f), want %.0f ± %.0f (5σ)", dropped, lossDraws, float64(dropped)/lossDraws, mean, 5*sd)
			}
			if other != 0 {
				t.Errorf("the other kind (p = 0) dropped %d of %d", other, lossDraws)
			}
			t.Logf("dropped %d of %d (%.4f)", dropped, lossDraws, float64(dropped)/lossDraws)
		})
	}
}

// p = 0 never drops, with or without a stream, and a node without a stream
// never drops whatever p.
func TestDropNever(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
	}{
		{"p = 0", Spec{LossRand: seeds.Loss(7, 1)}},
		{"no stream", Spec{Loss: Loss{Data: 0.5, Requests: 0.5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newLossNode(t, tt.spec)
			for range lossDraws {
				if n.Drop(diffusion.LossData) || n.Drop(diffusion.LossRequest) {
					t.Fatal("dropped an arrival")
				}
			}
		})
	}
}

// The draws are reproducible: two nodes on the same seed and index drop the
// same arrivals; another index draws another sequence.
func TestDropReproducible(t *testing.T) {
	loss := Loss{Data: 0.3, Requests: 0.2}
	a := newLossNode(t, Spec{Index: 2, Loss: loss, LossRand: seeds.Loss(11, 2)})
	b := newLossNode(t, Spec{Index: 2, Loss: loss, LossRand: seeds.Loss(11, 2)})
	c := newLossNode(t, Spec{Index: 5, Loss: loss, LossRand: seeds.Loss(11, 5)})
	differ := 0
	for i := range 10_000 {
		kind := diffusion.Loss(i % 2)
		da, db, dc := a.Drop(kind), b.Drop(kind), c.Drop(kind)
		if da != db {
			t.Fatalf("draw %d: same seed dropped %v and %v", i, da, db)
		}
		if da != dc {
			differ++
		}
	}
	if differ == 0 {
		t.Error("nodes 2 and 5 drew identical sequences")
	}
}

// Drop is safe for concurrent use (the policy calls it from the router's
// and its own goroutines), and concurrency does not change the draws: the
// same stream split over goroutines drops as many arrivals as drawn in turn.
func TestDropConcurrent(t *testing.T) {
	loss := Loss{Data: 0.1, Requests: 0.1}
	const workers, each = 8, 5_000
	seq := newLossNode(t, Spec{Loss: loss, LossRand: seeds.Loss(3, 0)})
	want := 0
	for range workers * each {
		if seq.Drop(diffusion.LossData) {
			want++
		}
	}
	par := newLossNode(t, Spec{Loss: loss, LossRand: seeds.Loss(3, 0)})
	var mu sync.Mutex
	got := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			k := 0
			for range each {
				if par.Drop(diffusion.LossData) {
					k++
				}
			}
			mu.Lock()
			got += k
			mu.Unlock()
		})
	}
	wg.Wait()
	if got != want {
		t.Errorf("concurrent draws dropped %d, in turn %d", got, want)
	}
}

// Role is the spec's; PeerRole asks the spec's function, and is Relay
// without one (a client cannot know its peers' roles).
func TestRoles(t *testing.T) {
	n := newLossNode(t, Spec{Role: diffusion.Mute})
	if n.Role() != diffusion.Mute {
		t.Errorf("Role = %+v, want mute", n.Role())
	}
	if r := n.PeerRole("anyone"); r != diffusion.Relay {
		t.Errorf("PeerRole without a function = %+v, want relay", r)
	}
	n = newLossNode(t, Spec{PeerRole: func(p peer.ID) diffusion.Role {
		if p == "w" {
			return diffusion.Withholder
		}
		return diffusion.Relay
	}})
	if r := n.PeerRole("w"); r != diffusion.Withholder {
		t.Errorf("PeerRole(w) = %+v, want withholder", r)
	}
	if r := n.PeerRole("x"); r != diffusion.Relay {
		t.Errorf("PeerRole(x) = %+v, want relay", r)
	}
}
