// Package stats holds the one statistics convention every segdiff figure
// uses, so the CLI, sweeps, the report and the assertions agree:
//
//   - quantiles are nearest-rank: the value at rank ceil(q·n) of the sorted
//     sample (rank 1 for q = 0), never an interpolation, so a reported
//     quantile is always a value some node measured (gonum's Empirical
//     quantile, guarded: no values or q outside [0, 1] is NaN, not a panic);
//   - the median is the 0.5 quantile (for an even count, the lower middle
//     value, not the mean of the two);
//   - a node that never completed is +Inf (NeverCompleted): it sorts last,
//     and a quantile that lands on it is +Inf ("censored"), never a number.
//
// gonum has no rank-sum test, so Mann–Whitney's U is here too.
package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// NeverCompleted is the value of a completion time that did not happen.
var NeverCompleted = math.Inf(1)

// Quantile returns the nearest-rank q-quantile of xs (0 ≤ q ≤ 1). It
// returns NaN for no values, a NaN value, or q outside [0, 1]. xs is not
// modified.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 || !(q >= 0 && q <= 1) {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return stat.Quantile(q, stat.Empirical, s, nil)
}

// Median is Quantile(xs, 0.5).
func Median(xs []float64) float64 { return Quantile(xs, 0.5) }

// Mean returns the arithmetic mean of xs (NaN for none).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stat.Mean(xs, nil)
}

// Range returns the smallest and largest of xs (NaN, NaN for none).
func Range(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	return floats.Min(xs), floats.Max(xs)
}

// ShareAtMost returns the share of xs at most limit (0 for none).
func ShareAtMost(xs []float64, limit float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	n := 0
	for _, x := range xs {
		if x <= limit {
			n++
		}
	}
	return float64(n) / float64(len(xs))
}

// Censored reports whether v is a censored statistic (a quantile that
// landed on a node that never completed).
func Censored(v float64) bool { return math.IsInf(v, 1) }
