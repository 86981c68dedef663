package diffusion

import (
	"testing"

	"github.com/segdiff/segdiff/diffusion/mode"
)

// A node that completes a payload drops its reassembly state (the parts'
// copies and the decoded body) but keeps serving the parts it holds; later
// parts count as duplicates. At 500 nodes the kept state was two thirds of
// the live heap.
func TestCompletedSlotReleasesReassembly(t *testing.T) {
	t.Run("phase", func(t *testing.T) {
		f := newFixture(t, mode.Tier2)
		n, env := newPhaseNode(t, f, Relay)
		g := n.newGroup(f.commit)
		for i, m := range f.msgs {
			n.part(g, "m1", m)
			if done := i == len(f.msgs)-1; g.done != done || (g.reasm == nil) != done {
				t.Fatalf("after part %d of %d: done %v, reassembler kept %v", i+1, len(f.msgs), g.done, g.reasm != nil)
			}
		}
		if env.ev.completed != 1 {
			t.Errorf("completed %d times, want 1", env.ev.completed)
		}
		if g.msgs[0] == nil || !g.held.Has(len(f.msgs)-1) {
			t.Error("the parts held for serving were dropped with the reassembler")
		}
	})
	t.Run("segmented", func(t *testing.T) {
		f := newFixture(t, mode.Segmented)
		env := newFakeEnv(Relay)
		env.commit[f.slot] = f.commit
		n := f.policy.NewNode(env).(*segmentedNode)
		for _, m := range f.msgs {
			p, err := n.verify(m, f.commit)
			if err != nil {
				t.Fatal(err)
			}
			n.deliver(f.slot, p)
		}
		if env.ev.completed != 1 || len(n.reasm) != 0 || !n.done[f.slot] {
			t.Fatalf("completed %d, assemblers kept %d, done %v; want 1, 0, true", env.ev.completed, len(n.reasm), n.done[f.slot])
		}
		dups := env.ev.dups
		p, _ := n.verify(f.msgs[0], f.commit)
		n.deliver(f.slot, p)
		if env.ev.dups != dups+1 || env.ev.completed != 1 || len(n.reasm) != 0 {
			t.Errorf("a part after completion: dups %d→%d, completed %d, assemblers %d", dups, env.ev.dups, env.ev.completed, len(n.reasm))
		}
	})
}
