package chain_test

import (
	"slices"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet/embedded/chain"
)

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
			c := chain.PTCCommittee(7, 3, tt.total, tt.size)
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
			if !slices.Equal(c, chain.PTCCommittee(7, 3, tt.total, tt.size)) {
				t.Error("same seed and slot gave a different committee")
			}
			if slices.Equal(c, chain.PTCCommittee(7, 4, tt.total, tt.size)) {
				t.Error("slots 3 and 4 drew the same committee")
			}
		})
	}
}

// TestFirstSlotStart: slot 1 starts within one heartbeat period after the
// mesh settled, and the reveal falls at the same seeded phase of the
// routers' heartbeat however long the settling took.
func TestFirstSlotStart(t *testing.T) {
	routers := time.Date(2000, 1, 1, 0, 0, 5, 0, time.UTC)
	const hb, revealOffset = 700 * time.Millisecond, 3 * time.Second
	phaseOf := func(start time.Time) time.Duration {
		return start.Add(revealOffset).Sub(routers) % hb
	}
	phases := map[time.Duration]bool{}
	for _, seed := range []int64{1, 7, 8, 9, 10} {
		var want time.Duration = -1
		for _, settled := range []time.Duration{0, 2500 * time.Millisecond, 2501 * time.Millisecond, 4285 * time.Millisecond, 63 * time.Second} {
			now := routers.Add(settled)
			got := chain.FirstSlotStart(seed, hb, revealOffset, routers, now)
			if got.Before(now) || got.Sub(now) >= hb {
				t.Errorf("seed %d, settled after %v: slot 1 at %v, want within [now, now+%v)", seed, settled, got.Sub(routers), hb)
			}
			p := phaseOf(got)
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
