package metrics

import "errors"

// Sentinel errors of Parse and FromSamples; test with errors.Is.
var (
	// ErrWrongType: a contract series declared with another metric type.
	ErrWrongType = errors.New("wrong metric type")
	// ErrBadLabel: a required label missing, or its value outside the contract.
	ErrBadLabel = errors.New("bad label")
	// ErrBadValue: NaN, ±Inf, a negative or fractional count, a timestamp ≤ 0.
	ErrBadValue = errors.New("bad value")
	// ErrDuplicate: the same series twice in one exposition.
	ErrDuplicate = errors.New("duplicate series")
	// ErrMissing: Require found a series absent.
	ErrMissing = errors.New("missing series")
)
