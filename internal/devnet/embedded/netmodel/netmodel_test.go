package netmodel_test

import (
	"slices"
	"testing"

	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
)

func TestRandomRegular(t *testing.T) {
	tests := []struct {
		name    string
		n, d    int
		wantErr bool
	}{
		{name: "study", n: 500, d: 70},
		{name: "small", n: 16, d: 14},
		{name: "odd degree even n", n: 10, d: 3},
		{name: "degree too high", n: 10, d: 10, wantErr: true},
		{name: "odd n·d", n: 9, d: 3, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			edges, err := netmodel.RandomRegular(tt.n, tt.d, 7)
			if (err != nil) != tt.wantErr {
				t.Fatalf("RandomRegular(%d, %d): err = %v, wantErr %v", tt.n, tt.d, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if len(edges) != tt.n*tt.d/2 {
				t.Fatalf("edges = %d, want %d", len(edges), tt.n*tt.d/2)
			}
			deg := make([]int, tt.n)
			seen := map[netmodel.Edge]bool{}
			for _, e := range edges {
				if e.A >= e.B {
					t.Fatalf("edge %v not ordered or a self-loop", e)
				}
				if seen[e] {
					t.Fatalf("duplicate edge %v", e)
				}
				seen[e] = true
				deg[e.A]++
				deg[e.B]++
			}
			for i, d := range deg {
				if d != tt.d {
					t.Fatalf("node %d has degree %d, want %d", i, d, tt.d)
				}
			}
			again, _ := netmodel.RandomRegular(tt.n, tt.d, 7)
			if !slices.Equal(edges, again) {
				t.Fatal("same seed gave a different graph")
			}
			other, _ := netmodel.RandomRegular(tt.n, tt.d, 8)
			if slices.Equal(edges, other) {
				t.Fatal("seeds 7 and 8 gave the same graph")
			}
		})
	}
}

// TestGeoLatency checks the placement and matrix against the prototype's
// recorded figures for n=500, seed 7: all-pairs mean 55.5–55.6 ms, range
// within 6.4–132 ms, and regions near 35/20/10/25/10 %.
func TestGeoLatency(t *testing.T) {
	const nodes, seed = 500, 7
	m, err := netmodel.NewLatency(netmodel.LatencyGeo, nodes, seed, 0)
	if err != nil {
		t.Fatal(err)
	}
	lat := func(a, b int) float64 { return float64(m.Between(a, b).Microseconds()) / 1000 }
	var sum, lo, hi float64 = 0, 1e9, 0
	pairs := 0
	for a := 0; a < nodes; a++ {
		for b := a + 1; b < nodes; b++ {
			l := lat(a, b)
			if l != lat(b, a) {
				t.Fatalf("latency %d→%d = %v but %d→%d = %v", a, b, l, b, a, lat(b, a))
			}
			sum += l
			lo, hi = min(lo, l), max(hi, l)
			pairs++
		}
	}
	mean := sum / float64(pairs)
	if mean < 54 || mean > 57.5 {
		t.Errorf("all-pairs mean one-way latency = %.2f ms, want ≈55.6", mean)
	}
	if lo < 6.4 || hi > 132 {
		t.Errorf("latency range [%.1f, %.1f] ms, want within [6.4, 132]", lo, hi)
	}
	counts := make([]int, len(netmodel.Regions))
	for i := 0; i < nodes; i++ {
		counts[netmodel.RegionOf(seed, i)]++
	}
	want := []int{175, 100, 50, 125, 50}
	for r, got := range counts {
		if got < want[r]*3/4 || got > want[r]*5/4 {
			t.Errorf("region %s holds %d nodes, want ≈%d", netmodel.Regions[r], got, want[r])
		}
	}
}
