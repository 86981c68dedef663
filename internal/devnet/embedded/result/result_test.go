package result_test

import (
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet/embedded/result"
)

func TestMedianSlotWall(t *testing.T) {
	s := time.Second
	tests := []struct {
		walls []time.Duration
		want  time.Duration
	}{
		{nil, 0},
		{[]time.Duration{7 * s}, 7 * s},
		{[]time.Duration{486 * s, 614 * s}, 486 * s},
		{[]time.Duration{210 * s, 183 * s, 216 * s}, 210 * s},
		{[]time.Duration{4 * s, 1 * s, 3 * s, 2 * s}, 2 * s},
	}
	for _, tt := range tests {
		r := &result.Run{SlotWall: tt.walls}
		if got := r.MedianSlotWall(); got != tt.want {
			t.Errorf("MedianSlotWall(%v) = %v, want %v", tt.walls, got, tt.want)
		}
	}
}
