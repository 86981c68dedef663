// Package poll waits for a condition: Until checks it at an interval up to
// a deadline, Retry repeats an attempt with exponential backoff (Backoff)
// up to a number of attempts. Both take their intervals as arguments, so
// tests pass milliseconds, and both end with the context.
package poll

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrTimeout is wrapped, with the condition's last error, by Until's error
// when the deadline passed first.
var ErrTimeout = errors.New("timed out")

// Stop marks err as permanent: Until and Retry return it (unwrapped) at
// once instead of trying again. Stop(nil) is nil.
func Stop(err error) error {
	if err == nil {
		return nil
	}
	return &stopError{err}
}

type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

// final reports whether a call's err ends the loop, and what the loop
// returns then: nil for success, or the error Stop marked.
func final(err error) (bool, error) {
	var stop *stopError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &stop):
		return true, stop.err
	}
	return false, nil
}

// Until calls cond at once and then every interval until it returns nil
// (Until returns nil), returns an error marked by Stop (Until returns that
// error), or the deadline passes (an error wrapping ErrTimeout and cond's
// last error). cond is always called at least once, and once more at the
// deadline if the interval would overshoot it. When ctx ends first, the
// error wraps ctx's error and cond's last one.
func Until(ctx context.Context, deadline time.Time, interval time.Duration, cond func(ctx context.Context) error) error {
	for {
		err := cond(ctx)
		if done, ret := final(err); done {
			return ret
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%w: %w", ErrTimeout, err)
		}
		if werr := sleep(ctx, min(interval, left)); werr != nil {
			return fmt.Errorf("%w (last error: %w)", werr, err)
		}
	}
}

// Backoff is the wait between attempts: Initial before the first retry,
// doubling after each, never more than Max (Max ≥ Initial ≥ 0).
type Backoff struct {
	Initial, Max time.Duration
}

// Wait returns the wait after the n-th failed attempt (n ≥ 1).
func (b Backoff) Wait(n int) time.Duration {
	d := b.Initial
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// GaveUpError is Retry's error when every attempt failed: the count and
// the last attempt's error, which it wraps.
type GaveUpError struct {
	Attempts int
	Last     error
}

func (e *GaveUpError) Error() string {
	if e.Attempts == 1 {
		return e.Last.Error()
	}
	return fmt.Sprintf("give up after %d attempts: %v", e.Attempts, e.Last)
}

func (e *GaveUpError) Unwrap() error { return e.Last }

// Retry calls attempt up to attempts times (at least once) until it returns
// nil (Retry returns nil) or an error marked by Stop (Retry returns that
// error), waiting b.Wait(n) after the n-th failure; onRetry, when not nil,
// is called before each wait with n, the failure and the wait. When every
// attempt failed the error is a *GaveUpError. When ctx ends after a failed
// attempt or during a wait, the error wraps ctx's error and the last
// failure.
func Retry(ctx context.Context, b Backoff, attempts int, attempt func(ctx context.Context) error, onRetry func(n int, err error, wait time.Duration)) error {
	for n := 1; ; n++ {
		err := attempt(ctx)
		if done, ret := final(err); done {
			return ret
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		}
		if n >= attempts {
			return &GaveUpError{Attempts: n, Last: err}
		}
		wait := b.Wait(n)
		if onRetry != nil {
			onRetry(n, err, wait)
		}
		if werr := sleep(ctx, wait); werr != nil {
			return fmt.Errorf("%w (last error: %w)", werr, err)
		}
	}
}

// sleep waits d or until ctx ends, returning ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
