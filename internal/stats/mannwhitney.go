package stats

import (
	"errors"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Alternative is the hypothesis a rank test weighs against "x and y come
// from the same distribution".
type Alternative int

// The alternatives.
const (
	TwoSided Alternative = iota // x and y differ
	Greater                     // x tends to be larger than y
	Less                        // x tends to be smaller than y
)

// MaxExactN is the largest pooled sample the Mann–Whitney test counts
// exactly; above it the normal approximation is used. Up to 50 the
// subset counts stay below 2^53, so float64 holds them exactly.
const MaxExactN = 50

// MannWhitney is the outcome of a Mann–Whitney U test.
type MannWhitney struct {
	// U counts the pairs (x_i, y_j) with x_i > y_j, a tie counting one half.
	U float64
	// P is the p-value under the alternative.
	P float64
	// Exact is true when P is the exact permutation probability (ties
	// included: the distribution of the midrank sum over every way to
	// split the pooled sample), false for the normal approximation with
	// tie and continuity corrections.
	Exact bool
}

// MannWhitneyU tests x against y. gonum/stat has no rank-sum test, so it
// is here: exact for pooled samples up to MaxExactN (a sweep compares a
// handful of seeds, where the normal approximation is poor), normal above.
// +Inf values (never completed) rank last and tie with each other.
func MannWhitneyU(x, y []float64, alt Alternative) (MannWhitney, error) {
	nx, ny := len(x), len(y)
	if nx == 0 || ny == 0 {
		return MannWhitney{}, errors.New("mann-whitney: want two non-empty samples")
	}
	pooled := make([]float64, 0, nx+ny)
	pooled = append(append(pooled, x...), y...)
	if slices.ContainsFunc(pooled, math.IsNaN) {
		return MannWhitney{}, errors.New("mann-whitney: NaN in a sample")
	}
	ranks2, ties := doubledMidranks(pooled)
	var w2 int // doubled rank sum of x
	for i := range nx {
		w2 += ranks2[i]
	}
	u := float64(w2)/2 - float64(nx*(nx+1))/2
	res := MannWhitney{U: u}
	n := nx + ny
	if n <= MaxExactN {
		res.Exact = true
		ge, le := exactTails(ranks2, nx, w2)
		res.P = pick(alt, ge, le)
		return res, nil
	}
	mean := float64(nx*ny) / 2
	tieTerm := 0.0
	for _, t := range ties {
		tieTerm += float64(t*t*t - t)
	}
	variance := float64(nx*ny) / 12 * (float64(n+1) - tieTerm/float64(n*(n-1)))
	if variance <= 0 {
		res.P = 1 // every value tied: no evidence either way
		return res, nil
	}
	sd := math.Sqrt(variance)
	norm := distuv.UnitNormal
	ge := norm.Survival((u - mean - 0.5) / sd) // P(U ≥ u)
	le := norm.CDF((u - mean + 0.5) / sd)      // P(U ≤ u)
	res.P = pick(alt, ge, le)
	return res, nil
}

func pick(alt Alternative, ge, le float64) float64 {
	switch alt {
	case Greater:
		return math.Min(ge, 1)
	case Less:
		return math.Min(le, 1)
	}
	return math.Min(1, 2*math.Min(ge, le))
}

// doubledMidranks returns twice each value's midrank (integers, so sums
// are exact) and the sizes of the tie groups.
func doubledMidranks(xs []float64) ([]int, []int) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case xs[a] < xs[b]:
			return -1
		case xs[a] > xs[b]:
			return 1
		}
		return 0
	})
	r := make([]int, len(xs))
	var ties []int
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		// ranks i+1..j+1 share the midrank (i+j+2)/2; doubled: i+j+2.
		for k := i; k <= j; k++ {
			r[idx[k]] = i + j + 2
		}
		if j > i {
			ties = append(ties, j-i+1)
		}
		i = j + 1
	}
	return r, ties
}

// exactTails counts, over every choice of nx of the pooled doubled ranks,
// how many have a sum ≥ w2 and ≤ w2, and returns both as probabilities.
func exactTails(ranks2 []int, nx, w2 int) (ge, le float64) {
	total := 0
	for _, r := range ranks2 {
		total += r
	}
	// ways[k][s]: subsets of size k of the ranks seen so far summing to s.
	ways := make([][]float64, nx+1)
	for k := range ways {
		ways[k] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for _, r := range ranks2 {
		for k := nx; k >= 1; k-- {
			prev, cur := ways[k-1], ways[k]
			for s := total; s >= r; s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	var all, geN, leN float64
	for s, c := range ways[nx] {
		all += c
		if s >= w2 {
			geN += c
		}
		if s <= w2 {
			leN += c
		}
	}
	return geN / all, leN / all
}
