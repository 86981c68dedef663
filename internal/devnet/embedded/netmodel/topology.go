// Package netmodel is the embedded devnet's network model: the topology
// (who connects to whom), the latency between every pair of nodes and each
// node's access link. It is pure and seeded: the same inputs give the same
// network, and nothing here touches a socket.
package netmodel

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/segdiff/segdiff/internal/devnet/embedded/seeds"
)

// Edge is an undirected connection between two node indices, A < B.
type Edge struct{ A, B int }

// RandomRegular returns a connected d-regular graph on n nodes as a sorted
// edge list. It reproduces the prototype's generator: a circulant start
// (each node linked to its d/2 nearest on either side of a ring, plus the
// opposite node when d is odd), then 50 double-edge swaps per edge drawn from
// PCG(seed, seed^0x9e3779b97f4a7c15), rejecting self-loops and duplicate
// edges, and up to 200 further mixing rounds until the graph is connected.
func RandomRegular(n, d int, seed int64) ([]Edge, error) {
	if d >= n || d < 1 {
		return nil, fmt.Errorf("random regular graph: degree %d must be in [1, %d)", d, n)
	}
	if n*d%2 != 0 {
		return nil, fmt.Errorf("random regular graph: n·d = %d·%d is odd", n, d)
	}
	rng := seeds.Topology(seed)
	key := func(a, b int) uint64 {
		if a > b {
			a, b = b, a
		}
		return uint64(a)<<32 | uint64(b)
	}
	edges := make([]Edge, 0, n*d/2)
	have := make(map[uint64]struct{}, n*d/2)
	add := func(a, b int) {
		if a > b {
			a, b = b, a
		}
		if _, dup := have[key(a, b)]; dup || a == b {
			return
		}
		have[key(a, b)] = struct{}{}
		edges = append(edges, Edge{a, b})
	}
	for i := 0; i < n; i++ {
		for k := 1; k <= d/2; k++ {
			add(i, (i+k)%n)
		}
		if d%2 == 1 {
			add(i, (i+n/2)%n)
		}
	}
	if len(edges) != n*d/2 {
		return nil, fmt.Errorf("random regular graph: circulant start has %d edges, want %d", len(edges), n*d/2)
	}
	swap := func() {
		i, j := rng.IntN(len(edges)), rng.IntN(len(edges))
		if i == j {
			return
		}
		e, f := edges[i], edges[j]
		a, b, c, dd := e.A, e.B, f.A, f.B
		if rng.IntN(2) == 1 {
			c, dd = dd, c
		}
		// Rewire (a,b),(c,dd) → (a,dd),(c,b).
		if a == dd || c == b {
			return
		}
		if _, dup := have[key(a, dd)]; dup {
			return
		}
		if _, dup := have[key(c, b)]; dup {
			return
		}
		delete(have, key(a, b))
		delete(have, key(c, dd))
		have[key(a, dd)] = struct{}{}
		have[key(c, b)] = struct{}{}
		edges[i] = ordered(a, dd)
		edges[j] = ordered(c, b)
	}
	for s := 0; s < 50*len(edges); s++ {
		swap()
	}
	for round := 0; !connected(n, edges); round++ {
		if round == 200 {
			return nil, fmt.Errorf("random regular graph: not connected after 200 mixing rounds (n=%d, d=%d)", n, d)
		}
		for s := 0; s < len(edges); s++ {
			swap()
		}
	}
	sortEdges(edges)
	return edges, nil
}

func ordered(a, b int) Edge {
	if a > b {
		a, b = b, a
	}
	return Edge{a, b}
}

func sortEdges(edges []Edge) {
	slices.SortFunc(edges, func(x, y Edge) int {
		if x.A != y.A {
			return cmp.Compare(x.A, y.A)
		}
		return cmp.Compare(x.B, y.B)
	})
}

func connected(n int, edges []Edge) bool {
	adj := adjacency(n, edges)
	seen := make([]bool, n)
	stack := []int{0}
	seen[0] = true
	count := 1
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range adj[v] {
			if !seen[w] {
				seen[w] = true
				count++
				stack = append(stack, w)
			}
		}
	}
	return count == n
}

func adjacency(n int, edges []Edge) [][]int {
	adj := make([][]int, n)
	for _, e := range edges {
		adj[e.A] = append(adj[e.A], e.B)
		adj[e.B] = append(adj[e.B], e.A)
	}
	return adj
}
