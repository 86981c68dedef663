package poll_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/poll"
)

var (
	errNotYet = errors.New("not yet")
	errBroken = errors.New("broken")
)

// script counts its calls in *calls and returns nil on call doneAt, a
// Stop error on call stopAt (0: never), else a transient one.
func script(calls *int, doneAt, stopAt int) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		switch *calls {
		case doneAt:
			return nil
		case stopAt:
			return poll.Stop(fmt.Errorf("call %d: %w", *calls, errBroken))
		}
		return fmt.Errorf("call %d: %w", *calls, errNotYet)
	}
}

func TestUntil(t *testing.T) {
	tests := []struct {
		name      string
		deadline  time.Duration // from now
		doneAt    int           // call that succeeds (0: none)
		stopAt    int           // call that fails permanently (0: none)
		wantCalls int           // exact; -1: at least 2
		wantIs    []error
		wantNil   bool
	}{
		{name: "done at once", deadline: time.Second, doneAt: 1, wantCalls: 1, wantNil: true},
		{name: "done on the third call", deadline: time.Second, doneAt: 3, wantCalls: 3, wantNil: true},
		{name: "stopped", deadline: time.Second, stopAt: 2, wantCalls: 2, wantIs: []error{errBroken}},
		{name: "deadline passes", deadline: 20 * time.Millisecond, wantCalls: -1, wantIs: []error{poll.ErrTimeout, errNotYet}},
		{name: "deadline already passed: one call", deadline: -time.Second, wantCalls: 1, wantIs: []error{poll.ErrTimeout, errNotYet}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := poll.Until(context.Background(), time.Now().Add(tt.deadline), time.Millisecond, script(&calls, tt.doneAt, tt.stopAt))
			if (err == nil) != tt.wantNil {
				t.Fatalf("Until = %v, want nil %v", err, tt.wantNil)
			}
			for _, want := range tt.wantIs {
				if !errors.Is(err, want) {
					t.Errorf("Until = %v, want it to wrap %v", err, want)
				}
			}
			if tt.stopAt > 0 && errors.Is(err, poll.ErrTimeout) {
				t.Errorf("a stopped poll reports a timeout: %v", err)
			}
			if tt.wantCalls >= 0 && calls != tt.wantCalls || tt.wantCalls < 0 && calls < 2 {
				t.Errorf("%d calls, want %d", calls, tt.wantCalls)
			}
		})
	}
}

// TestUntilLastCallAtTheDeadline: an interval longer than the time left
// does not overshoot the deadline; the condition is asked once more then.
func TestUntilLastCallAtTheDeadline(t *testing.T) {
	start := time.Now()
	calls := 0
	err := poll.Until(context.Background(), start.Add(30*time.Millisecond), time.Hour, func(context.Context) error {
		calls++
		return errNotYet
	})
	if !errors.Is(err, poll.ErrTimeout) || calls != 2 {
		t.Errorf("Until = %v after %d calls, want a timeout after 2", err, calls)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v, the deadline was 30ms away", took)
	}
}

func TestUntilContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	err := poll.Until(ctx, time.Now().Add(time.Hour), time.Hour, func(context.Context) error {
		cancel()
		return errNotYet
	})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errNotYet) || errors.Is(err, poll.ErrTimeout) {
		t.Errorf("Until = %v, want context.Canceled and the last error, no timeout", err)
	}
}

func TestBackoffWait(t *testing.T) {
	tests := []struct {
		name string
		b    poll.Backoff
		want []time.Duration // for n = 1, 2, ...
	}{
		{name: "doubles up to the cap", b: poll.Backoff{Initial: 250 * time.Millisecond, Max: 2 * time.Second},
			want: []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second}},
		{name: "cap between doublings", b: poll.Backoff{Initial: 3 * time.Second, Max: 4 * time.Second},
			want: []time.Duration{3 * time.Second, 4 * time.Second, 4 * time.Second}},
		{name: "zero", b: poll.Backoff{Max: time.Second}, want: []time.Duration{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.want {
				if got := tt.b.Wait(i + 1); got != want {
					t.Errorf("Wait(%d) = %v, want %v", i+1, got, want)
				}
			}
		})
	}
}

func TestRetry(t *testing.T) {
	b := poll.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}
	tests := []struct {
		name      string
		attempts  int
		doneAt    int
		stopAt    int
		wantCalls int
		wantErr   string // "" for nil
		wantWaits []time.Duration
	}{
		{name: "done on the third attempt", attempts: 5, doneAt: 3, wantCalls: 3,
			wantWaits: []time.Duration{time.Millisecond, 2 * time.Millisecond}},
		{name: "every attempt fails", attempts: 3, wantCalls: 3, wantErr: "give up after 3 attempts: call 3: not yet",
			wantWaits: []time.Duration{time.Millisecond, 2 * time.Millisecond}},
		{name: "one attempt: its own error", attempts: 1, wantCalls: 1, wantErr: "call 1: not yet"},
		{name: "stopped", attempts: 5, stopAt: 2, wantCalls: 2, wantErr: "call 2: broken",
			wantWaits: []time.Duration{time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var waits []time.Duration
			err := poll.Retry(context.Background(), b, tt.attempts, script(&calls, tt.doneAt, tt.stopAt), func(n int, err error, wait time.Duration) {
				if n != len(waits)+1 || err == nil {
					t.Errorf("onRetry(%d, %v) after %d retries", n, err, len(waits))
				}
				waits = append(waits, wait)
			})
			if got := fmt.Sprint(err); tt.wantErr == "" && err != nil || tt.wantErr != "" && got != tt.wantErr {
				t.Errorf("Retry = %v, want %q", err, tt.wantErr)
			}
			if calls != tt.wantCalls || fmt.Sprint(waits) != fmt.Sprint(tt.wantWaits) {
				t.Errorf("%d calls, waits %v; want %d, %v", calls, waits, tt.wantCalls, tt.wantWaits)
			}
			var gaveUp *poll.GaveUpError
			if errors.As(err, &gaveUp) != (tt.wantErr != "" && tt.stopAt == 0) {
				t.Errorf("Retry = %v (%T): a *GaveUpError exactly when every attempt failed", err, err)
			}
		})
	}
}

func TestRetryContextEndsDuringWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	err := poll.Retry(ctx, poll.Backoff{Initial: time.Hour, Max: time.Hour}, 5, func(context.Context) error {
		return errNotYet
	}, func(int, error, time.Duration) { cancel() })
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errNotYet) {
		t.Errorf("Retry = %v, want context.Canceled and the last error", err)
	}
}
