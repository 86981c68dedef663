package stats_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/segdiff/segdiff/internal/stats"
)

func TestQuantile(t *testing.T) {
	inf := stats.NeverCompleted
	tests := []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{name: "median of odd", xs: []float64{3, 1, 2}, q: 0.5, want: 2},
		{name: "median of even is the lower middle", xs: []float64{4, 1, 3, 2}, q: 0.5, want: 2},
		{name: "q=0 is the minimum", xs: []float64{5, 4}, q: 0, want: 4},
		{name: "q=1 is the maximum", xs: []float64{5, 4}, q: 1, want: 5},
		{name: "p99 of 100 is rank 99", xs: seq(100), q: 0.99, want: 99},
		{name: "p90 of 31 is rank 28", xs: seq(31), q: 0.9, want: 28},
		{name: "p91 of ten rounds up", xs: seq(10), q: 0.91, want: 10},
		{name: "single", xs: []float64{42}, q: 0.5, want: 42},
		{name: "never completed sorts last", xs: []float64{inf, 1, 2}, q: 0.5, want: 2},
		{name: "censored quantile", xs: []float64{inf, inf, 1}, q: 0.5, want: inf},
		{name: "empty", xs: nil, q: 0.5, want: math.NaN()},
		{name: "q out of range", xs: []float64{1}, q: 1.5, want: math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := stats.Quantile(tc.xs, tc.q)
			if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
				t.Fatalf("Quantile(%v, %v) = %v, want %v", tc.xs, tc.q, got, tc.want)
			}
		})
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[n-1-i] = float64(i + 1)
	}
	return out
}

func TestMeanRangeShare(t *testing.T) {
	xs := []float64{1, 2, 3, 6}
	if m := stats.Mean(xs); m != 3 {
		t.Errorf("Mean = %v", m)
	}
	if lo, hi := stats.Range(xs); lo != 1 || hi != 6 {
		t.Errorf("Range = %v, %v", lo, hi)
	}
	if s := stats.ShareAtMost(append(xs, stats.NeverCompleted), 3); s != 0.6 {
		t.Errorf("ShareAtMost = %v", s)
	}
	if !stats.Censored(stats.NeverCompleted) || stats.Censored(3) {
		t.Error("Censored")
	}
	if !math.IsNaN(stats.Mean(nil)) {
		t.Error("Mean(nil) is not NaN")
	}
}

// Quantile is nearest-rank on any sample: the value at rank ceil(q·n)
// (rank 1 for q = 0) of the sorted sample, +Inf included.
func TestQuantileIsNearestRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 500 {
		n := 1 + rng.IntN(40)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(rng.IntN(20))
			if rng.IntN(10) == 0 {
				xs[i] = stats.NeverCompleted
			}
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		for _, q := range []float64{0, 0.01, 0.1, 0.25, 0.5, 0.9, 0.99, 1, rng.Float64()} {
			rank := max(int(math.Ceil(q*float64(n))), 1)
			if got, want := stats.Quantile(xs, q), sorted[rank-1]; got != want {
				t.Fatalf("Quantile(%v, %v) = %v, want rank %d's %v", xs, q, got, rank, want)
			}
		}
	}
}
