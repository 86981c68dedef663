package embedded_test

import (
	mathrand "math/rand"
	"slices"
	"testing"
	"time"

	"github.com/segdiff/segdiff/devnet"
	"github.com/segdiff/segdiff/embedded"
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
			edges, err := embedded.RandomRegular(tt.n, tt.d, 7)
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
			seen := map[embedded.Edge]bool{}
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
			again, _ := embedded.RandomRegular(tt.n, tt.d, 7)
			if !slices.Equal(edges, again) {
				t.Fatal("same seed gave a different graph")
			}
			other, _ := embedded.RandomRegular(tt.n, tt.d, 8)
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
	c := embedded.DefaultConfig()
	c.Nodes = 500
	lat := embedded.LatencyMatrix(c)
	var sum, lo, hi float64 = 0, 1e9, 0
	pairs := 0
	for a := 0; a < c.Nodes; a++ {
		for b := a + 1; b < c.Nodes; b++ {
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
	counts := make([]int, len(embedded.Regions))
	for i := 0; i < c.Nodes; i++ {
		counts[embedded.RegionOf(c.Seed, i)]++
	}
	want := []int{175, 100, 50, 125, 50}
	for r, got := range counts {
		if got < want[r]*3/4 || got > want[r]*5/4 {
			t.Errorf("region %s holds %d nodes, want ≈%d", embedded.Regions[r], got, want[r])
		}
	}
}

func TestPTCCommittee(t *testing.T) {
	tests := []struct {
		name        string
		total, size int
	}{
		{name: "study", total: 499 * 32, size: 512},
		{name: "small", total: 15 * 32, size: 512},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := embedded.PTCCommittee(7, 3, tt.total, tt.size)
			if len(c) != tt.size {
				t.Fatalf("committee size %d, want %d", len(c), tt.size)
			}
			distinct := map[int]bool{}
			for _, v := range c {
				if v < 0 || v >= tt.total {
					t.Fatalf("member %d outside [0, %d)", v, tt.total)
				}
				distinct[v] = true
			}
			// 1/32 of the validators are candidates and each is accepted with
			// probability 32/2048, so 512 positions must repeat members.
			if len(distinct) == len(c) {
				t.Error("no duplicate members: the draw is not with replacement")
			}
			if !slices.Equal(c, embedded.PTCCommittee(7, 3, tt.total, tt.size)) {
				t.Error("same seed and slot gave a different committee")
			}
			if slices.Equal(c, embedded.PTCCommittee(7, 4, tt.total, tt.size)) {
				t.Error("slots 3 and 4 drew the same committee")
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(*embedded.Config)
		wantErr bool
	}{
		{name: "default", mod: func(*embedded.Config) {}},
		{name: "degree not above Dhi", mod: func(c *embedded.Config) { c.Degree = 12 }, wantErr: true},
		{name: "unknown mode", mod: func(c *embedded.Config) { c.Mode = "flood" }, wantErr: true},
		{name: "unknown class", mod: func(c *embedded.Config) { c.BuilderClass = "fibre" }, wantErr: true},
		{name: "reveal after slot", mod: func(c *embedded.Config) { c.RevealOffset = c.SlotDuration }, wantErr: true},
		{name: "custom class", mod: func(c *embedded.Config) { c.NodeClass = devnet.LinkCustom; c.CustomUpMbps = 20 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := embedded.DefaultConfig()
			tt.mod(&c)
			if err := c.Validate(); (err != nil) != tt.wantErr {
				t.Fatalf("Validate() = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
	if _, err := embedded.Preset("nope"); err == nil {
		t.Error(`Preset("nope") succeeded`)
	}
}

// TestFirstSlotStart: slot 1 starts within one heartbeat period after the
// mesh settled, and the reveal falls at the same seeded phase of the
// routers' heartbeat however long the settling took.
func TestFirstSlotStart(t *testing.T) {
	routers := time.Date(2000, 1, 1, 0, 0, 5, 0, time.UTC)
	hb := embedded.HeartbeatInterval
	phaseOf := func(c embedded.Config, start time.Time) time.Duration {
		return start.Add(c.RevealOffset).Sub(routers) % hb
	}
	phases := map[time.Duration]bool{}
	for _, seed := range []int64{1, 7, 8, 9, 10} {
		c := embedded.DefaultConfig()
		c.Seed = seed
		var want time.Duration = -1
		for _, settled := range []time.Duration{0, 2500 * time.Millisecond, 2501 * time.Millisecond, 4285 * time.Millisecond, 63 * time.Second} {
			now := routers.Add(settled)
			got := embedded.FirstSlotStart(c, routers, now)
			if got.Before(now) || got.Sub(now) >= hb {
				t.Errorf("seed %d, settled after %v: slot 1 at %v, want within [now, now+%v)", seed, settled, got.Sub(routers), hb)
			}
			p := phaseOf(c, got)
			if want < 0 {
				want = p
			} else if p != want {
				t.Errorf("seed %d, settled after %v: reveal phase %v, want %v as for the other settle times", seed, settled, p, want)
			}
		}
		phases[want] = true
	}
	if len(phases) < 2 {
		t.Errorf("five seeds gave one reveal phase %v: the phase does not follow the seed", phases)
	}
}

// TestSeedGlobalRand: this test binary sets randseednop=0, so seeding takes
// and restarts the global stream.
func TestSeedGlobalRand(t *testing.T) {
	if !embedded.SeedGlobalRand(42) {
		t.Fatal("seedGlobalRand(42) reports the global source unseeded")
	}
	a := mathrand.Int63()
	embedded.SeedGlobalRand(42)
	if b := mathrand.Int63(); a != b {
		t.Errorf("same seed, first draws %d and %d", a, b)
	}
}

func TestMedianSlotWall(t *testing.T) {
	s := time.Second
	tests := []struct {
		walls []time.Duration
		want  time.Duration
	}{
		{nil, 0},
		{[]time.Duration{7 * s}, 7 * s},
		{[]time.Duration{486 * s, 614 * s}, 550 * s},
		{[]time.Duration{210 * s, 183 * s, 216 * s}, 210 * s},
		{[]time.Duration{4 * s, 1 * s, 3 * s, 2 * s}, 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		r := &embedded.Result{SlotWall: tt.walls}
		if got := r.MedianSlotWall(); got != tt.want {
			t.Errorf("MedianSlotWall(%v) = %v, want %v", tt.walls, got, tt.want)
		}
	}
}
