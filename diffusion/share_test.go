package diffusion

import (
	"bytes"
	"testing"

	"github.com/segdiff/segdiff/diffusion/mode"
)

// sharingEnv is an Env of a process that holds many nodes: it hands every
// node the first slice of each part it was offered.
type sharingEnv struct {
	*fakeEnv
	held map[[2]uint64][]byte
}

func (e sharingEnv) SharePart(slot uint64, index int, data []byte) []byte {
	k := [2]uint64{slot, uint64(index)}
	if h, ok := e.held[k]; ok {
		return h
	}
	e.held[k] = data
	return data
}

// The phase-forwarding modes keep, to serve peers, the slice a PartSharer
// returns; without one, the slice that arrived.
func TestPhaseNodesKeepSharedParts(t *testing.T) {
	for _, m := range []mode.Mode{mode.Tier3, mode.Tier4, mode.WholePaced} {
		t.Run(string(m), func(t *testing.T) {
			f := newFixture(t, m)
			held := map[[2]uint64][]byte{}
			var nodes []*phasedNode
			var arrived [][][]byte // per node, per part: the slice it was given
			for range 2 {
				env := sharingEnv{fakeEnv: newFakeEnv(Relay), held: held}
				env.commit[f.slot] = f.commit
				n := f.policy.NewNode(env).(*phasedNode)
				g := n.newGroup(f.commit)
				var in [][]byte
				for _, msg := range f.msgs {
					c := bytes.Clone(msg) // each node's own received bytes
					in = append(in, c)
					n.part(g, "m1", c)
				}
				nodes, arrived = append(nodes, n), append(arrived, in)
			}
			first, second := nodes[0].groups[f.slot], nodes[1].groups[f.slot]
			for i := range f.msgs {
				if !second.held.Has(i) {
					t.Fatalf("part %d not held by the second node", i)
				}
				if &second.msgs[i][0] != &first.msgs[i][0] || &first.msgs[i][0] != &arrived[0][i][0] {
					t.Errorf("part %d: the second node keeps its own copy, not the shared one", i)
				}
			}

			plain := newFakeEnv(Relay)
			plain.commit[f.slot] = f.commit
			n := f.policy.NewNode(plain).(*phasedNode)
			g := n.newGroup(f.commit)
			c := bytes.Clone(f.msgs[0])
			n.part(g, "m1", c)
			if &g.msgs[0][0] != &c[0] {
				t.Error("without a PartSharer the node does not keep the part that arrived")
			}
		})
	}
}
