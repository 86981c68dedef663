package flownet

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
)

// TestWindowSlowStartAndKeep_synctest: on a fresh connection the window
// (32 packets, doubling per round trip) holds a 1 MiB transfer back by
// round trips of slow start; a second transfer on the same connection
// later runs at the link's rate, as the window grown stays (quic-go does
// not restart slow start after idle); without the window neither waits.
func TestWindowSlowStartAndKeep_synctest(t *testing.T) {
	const mib = 1 << 20
	ms := time.Millisecond
	rtt := 50 * ms
	alone := serialise(mib, 50) + rtt/2 // 168 ms on the wire, one latency
	second := time.Second
	tests := []struct {
		name  string
		opts  Options
		first span
		// again is the second transfer's finish from its start.
		again span
	}{
		// 40 KB, 80, 160, 320 KB a round trip apart: the link is full
		// after about three round trips, not at once.
		{"flows-cc: slow start, then the window stays", Options{Congestion: true},
			span{alone + 2*rtt, alone + 4*rtt}, near(alone)},
		{"flows: no window", Options{}, near(alone), near(alone)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				home := netmodel.Rates{UpMbps: 50, DownMbps: 100}
				got := runWith(t, tt.opts, []netmodel.Rates{home, home}, []netmodel.Edge{{A: 0, B: 1}}, rtt/2,
					[]transfer{{0, 1, mib, 0}, {0, 1, mib, second}})
				if got[0] < tt.first.lo || got[0] > tt.first.hi {
					t.Errorf("first transfer: finished at %v, want %v..%v", got[0], tt.first.lo, tt.first.hi)
				}
				if d := got[1] - second; d < tt.again.lo || d > tt.again.hi {
					t.Errorf("second transfer: took %v, want %v..%v", d, tt.again.lo, tt.again.hi)
				}
			})
		})
	}
}

// TestCoDelMarks: a chunk is marked once the sojourn has stayed above the
// 5 ms target for a 100 ms interval, then marks come at interval/√count
// after the last;
// a short sojourn, or a backlog under a packet, resets it.
func TestCoDelMarks(t *testing.T) {
	ms := time.Millisecond
	t0 := time.Unix(0, 0)
	type step struct {
		at      time.Duration
		sojourn time.Duration
		backlog int
		want    bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"below the target never marks", []step{{0, 4 * ms, 1 << 20, false}, {200 * ms, 4 * ms, 1 << 20, false}, {400 * ms, 4 * ms, 1 << 20, false}}},
		{"above the target for an interval marks", []step{{0, 10 * ms, 1 << 20, false}, {99 * ms, 10 * ms, 1 << 20, false}, {100 * ms, 10 * ms, 1 << 20, true}}},
		// The second mark an interval after the first (count 1), the
		// third interval/√2 after that.
		{"marks follow at interval/√count", []step{{0, 10 * ms, 1 << 20, false}, {100 * ms, 10 * ms, 1 << 20, true},
			{199 * ms, 10 * ms, 1 << 20, false}, {200 * ms, 10 * ms, 1 << 20, true}, {270 * ms, 10 * ms, 1 << 20, false}, {271 * ms, 10 * ms, 1 << 20, true}}},
		{"a short backlog resets", []step{{0, 10 * ms, 1 << 20, false}, {50 * ms, 10 * ms, 1000, false}, {100 * ms, 10 * ms, 1 << 20, false}, {199 * ms, 10 * ms, 1 << 20, false}, {200 * ms, 10 * ms, 1 << 20, true}}},
		{"a good sojourn ends marking", []step{{0, 10 * ms, 1 << 20, false}, {100 * ms, 10 * ms, 1 << 20, true}, {110 * ms, 1 * ms, 1 << 20, false}, {300 * ms, 10 * ms, 1 << 20, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q codel
			for i, s := range tt.steps {
				if got := q.mark(t0.Add(s.at), s.sojourn, s.backlog); got != s.want {
					t.Errorf("step %d at %v: marked %v, want %v", i, s.at, got, s.want)
				}
			}
		})
	}
}
