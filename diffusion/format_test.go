package diffusion

import (
	"math/rand/v2"
	"testing"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/eip8411"
)

// The zero Options.Order is documented as compress-then-cut: every segment
// policy, coded ones included, must cut a payload with it.
func TestZeroOrderCuts(t *testing.T) {
	body, err := eip8411.SyntheticBody(rand.New(rand.NewPCG(3, 4)), 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []mode.Mode{mode.Segmented, mode.Tier2, mode.Tier3} {
		p, err := New(m, Options{SegmentSize: 8 << 10})
		if err != nil {
			t.Fatalf("New(%s): %v", m, err)
		}
		g, err := p.Cut(body)
		if err != nil {
			t.Fatalf("%s: Cut with the zero order: %v", m, err)
		}
		if g.Parts() == 0 {
			t.Errorf("%s: no parts", m)
		}
	}
}
