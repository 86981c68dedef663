package result_test

import (
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet"
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

// slot makes a slot whose builder is node 0 and whose receivers complete
// after the given milliseconds (-1: never), each receiving copies×size
// data bytes.
func slot(n uint64, ms []int, copies float64) result.SlotResult {
	s := result.SlotResult{Slot: n, Warm: n > 1, Builder: 0, CompressedSize: 1000,
		Completion: []time.Duration{0}, DataBytes: []int64{0}, ControlBytes: []int64{0},
		PTC: devnet.PTCVotes{Slot: n, Size: 512, PayloadPresent: 300}}
	for _, m := range ms {
		d := time.Duration(m) * time.Millisecond
		if m < 0 {
			d = -1
		}
		s.Completion = append(s.Completion, d)
		s.DataBytes = append(s.DataBytes, int64(copies*900))
		s.ControlBytes = append(s.ControlBytes, int64(copies*100))
	}
	return s
}

// Summaries pool receivers × slots with nearest-rank quantiles, as the
// report and the assertions do; the builder is not a receiver; a node that
// never completed is never, not a number.
func TestSummarizePoolsReceiversAndSlots(t *testing.T) {
	l := result.Label{Mode: "segmented", Seed: 7, Nodes: 5, Window: 3 * time.Second}
	slots := []result.SlotResult{
		slot(2, []int{100, 200, 300, 400}, 2),
		slot(3, []int{500, 600, 700, 4000}, 4),
	}
	s := result.Summarize(l, slots)
	if s.Slots != 2 || s.P50 != 400*time.Millisecond || s.P90 != 4*time.Second || s.Max != 4*time.Second {
		t.Errorf("p50 %v p90 %v max %v over %d slots; want 400ms, 4s (rank 8 of 8), 4s over 2", s.P50, s.P90, s.Max, s.Slots)
	}
	if s.Within != 7.0/8 {
		t.Errorf("within = %v, want 7/8", s.Within)
	}
	if s.CopiesMean != 3 || s.CopiesMedian != 2 || s.DataCopies != 2.7 {
		t.Errorf("copies mean %v median %v data %v; want 3, 2, 2.7", s.CopiesMean, s.CopiesMedian, s.DataCopies)
	}
	if s.PTCTimely != 2 {
		t.Errorf("PTC timely %d", s.PTCTimely)
	}
	never := result.Summarize(l, []result.SlotResult{slot(2, []int{100, -1, -1, -1}, 1)})
	if never.P50 != -1 || never.Max != -1 || never.Within != 0.25 {
		t.Errorf("with three nodes never complete: p50 %v max %v within %v", never.P50, never.Max, never.Within)
	}
	var b strings.Builder
	if err := result.WriteTable(&b, []result.Summary{s, never}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0.400s", "never", "87.5%", "3.00"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
