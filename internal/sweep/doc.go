// Package sweep runs many embedded simulations as one experiment: a Grid
// (Decode) expands into a Plan of Cells, which a Runner runs as `segdiff
// sim` processes within its job count and memory budget, one folder per
// cell named by its configuration's hash, so an interrupted sweep resumes.
// Write summarises the finished cells (Summary: sweep.md, sweep.json,
// plots), EvaluateBudgets holds the features' budgets against them, Compare
// sets two sweeps side by side, and RunCell with Merge spreads a grid over
// many machines.
package sweep
